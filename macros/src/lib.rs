//! Procedural macros for [`mcp-resolve`](https://docs.rs/mcp-resolve). Use them through the
//! facade crate: `use mcp_resolve::tool;`.
//!
//! Every macro runs `parse → validate (collect every error) → generate`. Errors point at the
//! offending token, and the user's item is still emitted next to them.

mod form_schema;
mod item;
mod prompt;
mod resolver;
mod resource;
mod tool;
mod util;

use proc_macro::TokenStream;

#[doc = include_str!("../../docs/tool.md")]
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(args.into(), item.into()).into()
}

#[doc = include_str!("../../docs/prompt.md")]
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(args.into(), item.into()).into()
}

#[doc = include_str!("../../docs/resource.md")]
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(args.into(), item.into()).into()
}

#[doc = include_str!("../../docs/resolver.md")]
#[proc_macro_attribute]
pub fn resolver(args: TokenStream, item: TokenStream) -> TokenStream {
    resolver::expand(args.into(), item.into()).into()
}

#[doc = include_str!("form_schema/README.md")]
#[proc_macro_derive(FormSchema, attributes(form))]
pub fn derive_form_schema(item: TokenStream) -> TokenStream {
    form_schema::expand(item.into()).into()
}

/// `#[resolve(path)]` belongs on a parameter of a `#[tool]`, `#[prompt]`, `#[resource]` or
/// `#[resolver]` function, which reads it; this attribute exists so that anywhere else the
/// compiler says so, instead of suggesting another attribute.
#[doc(hidden)]
#[proc_macro_attribute]
pub fn resolve(_args: TokenStream, item: TokenStream) -> TokenStream {
    let item: proc_macro2::TokenStream = item.into();
    let error = syn::Error::new(
        proc_macro2::Span::call_site(),
        "`#[resolve(...)]` goes on a parameter of a `#[tool]`, `#[prompt]`, `#[resource]` or `#[resolver]` function: annotate the function",
    )
    .into_compile_error();
    quote::quote!(#error #item).into()
}
