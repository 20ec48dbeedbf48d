//! Procedural macros for [`mcp-resolve`](https://docs.rs/mcp-resolve). Use them through the
//! facade crate: `use mcp_resolve::tool;`.
//!
//! Every macro runs `parse → validate (collect every error) → generate`. Errors point at the
//! offending token, and the user's item is still emitted next to them.

mod tool;
mod util;

use proc_macro::TokenStream;

/// Turns an `async fn` into an MCP tool.
///
/// The function keeps its name, and becomes a value that can be registered with
/// `Server::tool(name)` and still be called like the function (`name(args).await`, which boxes
/// the future). See the `mcp_resolve` crate docs for the full option table and examples.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(args.into(), item.into()).into()
}
