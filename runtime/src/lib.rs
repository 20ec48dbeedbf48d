//! Runtime of [`mcp-resolve`](https://docs.rs/mcp-resolve): the protocol model of both MCP eras,
//! tool dispatch, and transports.
//!
//! Most users depend on the `mcp-resolve` facade and its `#[tool]` macro instead of this crate.
//!
//! ```
//! use mcp_resolve_runtime::Server;
//! let server = Server::new("notes");
//! assert_eq!(server.info().name, "notes");
//! ```

mod context;
mod elicit;
pub mod form;
pub mod protocol;
pub mod resolve;
mod server;
mod state;
pub mod testing;
mod tool;
mod tool_result;
mod transport;

#[doc(hidden)]
pub mod __private;

pub use context::{Context, Principal};
pub use elicit::{Action, Confirm, Elicit, ElicitationResult, IntoResolution, Resolution};
pub use futures_util::future::BoxFuture;
pub use protocol::{ClientCapabilities, Era, ErrorObject, Implementation, ProtocolVersion, RequestId, codes};
pub use server::{CacheScope, Server};
pub use state::{KeyTooShort, StateKeys};
pub use tool::{ArgsSchema, ArgumentError, Tool, ToolAnnotations, ToolCall, ToolDefinition, ToolParam};
pub use tool_result::{CallToolResult, Content, EmbeddedResource, IntoToolResult, Json};
#[cfg(feature = "jwt")]
pub use transport::auth::Hs256Verifier;
#[cfg(feature = "http")]
pub use transport::auth::{AuthError, TokenVerifier};
#[cfg(feature = "http")]
pub use transport::http::HttpOptions;
