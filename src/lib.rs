#![doc = include_str!("../README.md")]

#[doc(inline)]
pub use mcp_resolve_runtime::*;

#[cfg(feature = "macros")]
#[doc(inline)]
pub use mcp_resolve_macros::{FormSchema, resolver, tool};

/// Support for generated code. Not public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "macros")]
    pub use mcp_resolve_macros::__resolver_visit as resolver_visit;
    pub use mcp_resolve_runtime::__private::*;
}

/// The names most servers need: `use mcp_resolve::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "macros")]
    pub use mcp_resolve_macros::{FormSchema, resolver, tool};
    pub use mcp_resolve_runtime::{
        CallToolResult, Confirm, Content, Context, Elicit, ElicitationResult, IntoToolResult, Json, Resolution, Server,
    };
}
