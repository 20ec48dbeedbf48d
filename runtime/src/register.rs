//! What `Server::tool`, `Server::prompt` and `Server::resource` accept: a function made by the
//! attribute macro (its marker type is the item) or a value implementing the trait itself.

use crate::item::{Generated, ItemFn, Itself};
use crate::prompt::Prompt;
use crate::resource::Resource;
use crate::tool::Tool;

macro_rules! into_item {
    ($(#[$doc:meta])* $into:ident, $trait_:ident, $method:ident, $message:literal, $label:literal, $how:literal) => {
        $(#[$doc])*
        #[diagnostic::on_unimplemented(message = $message, label = $label, note = $how)]
        pub trait $into<A> {
            /// The registered value.
            type Item: $trait_;
            /// Makes it.
            fn $method(self) -> Self::Item;
        }

        impl<T: $trait_> $into<Itself> for T {
            type Item = T;
            fn $method(self) -> T {
                self
            }
        }

        #[diagnostic::do_not_recommend]
        impl<F: ItemFn<A>, A> $into<(Generated, A)> for F
        where
            F::Marker: $trait_ + Default,
        {
            type Item = F::Marker;
            fn $method(self) -> F::Marker {
                F::Marker::default()
            }
        }
    };
}

into_item!(
    /// What [`Server::tool`](crate::Server::tool) registers: a `#[tool]` function, or a value
    /// implementing [`Tool`].
    ///
    /// ```
    /// use mcp_resolve_runtime::{IntoTool, Tool};
    /// fn registered<A>(tool: impl IntoTool<A>) -> String {
    ///     tool.into_tool().definition().name
    /// }
    /// ```
    IntoTool,
    Tool,
    into_tool,
    "`{Self}` is not a tool",
    "not a `#[tool]` function",
    "annotate an `async fn` with `#[tool]`, or implement `Tool` by hand"
);

into_item!(
    /// What [`Server::prompt`](crate::Server::prompt) registers: a `#[prompt]` function, or a
    /// value implementing [`Prompt`].
    ///
    /// ```
    /// use mcp_resolve_runtime::{IntoPrompt, Prompt};
    /// fn registered<A>(prompt: impl IntoPrompt<A>) -> String {
    ///     prompt.into_prompt().definition().name
    /// }
    /// ```
    IntoPrompt,
    Prompt,
    into_prompt,
    "`{Self}` is not a prompt",
    "not a `#[prompt]` function",
    "annotate an `async fn` with `#[prompt]`, or implement `Prompt` by hand"
);

into_item!(
    /// What [`Server::resource`](crate::Server::resource) registers: a `#[resource]` function,
    /// or a value implementing [`Resource`].
    ///
    /// ```
    /// use mcp_resolve_runtime::{IntoResource, Resource};
    /// fn registered<A>(resource: impl IntoResource<A>) -> String {
    ///     resource.into_resource().definition().name
    /// }
    /// ```
    IntoResource,
    Resource,
    into_resource,
    "`{Self}` is not a resource",
    "not a `#[resource]` function",
    "annotate an `async fn` with `#[resource(uri = \"…\")]` or `#[resource(template = \"…\")]`, or implement `Resource` by hand"
);
