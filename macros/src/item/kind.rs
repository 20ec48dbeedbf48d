//! Which item an attribute makes, and the names that differ with it: the attribute, the trait
//! its marker type implements, and the words its messages use.

use crate::util::spans::unraw;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// `#[tool]`, `#[prompt]` or `#[resource]`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

/// Which `#[arg(...)]` attributes a parameter takes.
pub(crate) enum ArgRule {
    /// One, with any options; a second is an error.
    Once,
    /// Any number without `rename` or `description` (the last is kept); one with them is an error
    /// saying the hint.
    Unnamed(&'static str),
}

/// The trait an item's marker type implements: `Tool`, with `definition() -> ToolDefinition` and
/// `call(ToolCall) -> BoxFuture<CallToolResult>`; `Prompt` with `get`; `Resource` with `read`.
pub(crate) struct Trait {
    pub(crate) name: Ident,
    pub(crate) definition: Ident,
    /// The method that runs the item, and the type of its request.
    pub(crate) method: Ident,
    pub(crate) call: Ident,
    /// What the method's future gives.
    pub(crate) output: TokenStream,
}

impl Kind {
    /// The attribute's name: `tool`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }

    /// Whether its parameters may be `#[confirm("…")]` questions (a tool's).
    pub(crate) fn takes_confirm(self) -> bool {
        self == Kind::Tool
    }

    /// Which `#[arg(...)]` attributes its parameters take.
    pub(crate) fn arg_rule(self) -> ArgRule {
        match self {
            Kind::Tool | Kind::Prompt => ArgRule::Once,
            Kind::Resource => ArgRule::Unnamed(
                "`#[arg]` takes only `complete = …` on `#[resource]` parameters: a template variable is named by its parameter",
            ),
        }
    }

    /// What a parameter's name is to the client, which is why it must be a plain name.
    pub(crate) fn param_name(self) -> &'static str {
        match self {
            Kind::Tool => "the argument's JSON key",
            Kind::Prompt => "the argument's name",
            Kind::Resource => "the template variable's",
        }
    }

    /// What the function's concrete parameter types are for, which is why it cannot be generic.
    pub(crate) fn why_concrete(self) -> &'static str {
        match self {
            Kind::Tool => "which the inputSchema is built from",
            Kind::Prompt | Kind::Resource => "which the arguments are read into",
        }
    }

    /// The marker type of the item made from the function `ident`, named in the function's
    /// return type: `__mcp_resolve_tool_{ident}`.
    pub(crate) fn marker(self, ident: &Ident) -> Ident {
        format_ident!("__mcp_resolve_{}_{}", self.name(), unraw(ident))
    }

    /// The trait the marker type implements, its types named through `krate`.
    pub(crate) fn trait_(self, krate: &TokenStream) -> Trait {
        let (name, definition, method, call) = match self {
            Kind::Tool => ("Tool", "ToolDefinition", "call", "ToolCall"),
            Kind::Prompt => ("Prompt", "PromptDefinition", "get", "PromptCall"),
            Kind::Resource => ("Resource", "ResourceDefinition", "read", "ResourceCall"),
        };
        let output = match self {
            Kind::Tool => quote!(#krate::__private01::CallToolResult),
            Kind::Prompt => quote! {
                ::core::result::Result<#krate::__private01::GetPromptResult, #krate::__private01::ErrorObject>
            },
            Kind::Resource => quote! {
                ::core::result::Result<
                    ::std::vec::Vec<#krate::__private01::ResourceContents>,
                    #krate::__private01::ErrorObject
                >
            },
        };
        let ident = |s: &str| Ident::new(s, proc_macro2::Span::call_site());
        Trait {
            name: ident(name),
            definition: ident(definition),
            method: ident(method),
            call: ident(call),
            output,
        }
    }
}
