//! Runtime of [`mcp-resolve`](https://docs.rs/mcp-resolve): the protocol model of both MCP eras,
//! tool dispatch, and transports.
//!
//! Most users depend on the `mcp-resolve` facade and its `#[tool]` macro instead of this crate.
//! `docs/ARCHITECTURE.md` follows a request through these modules.
//!
//! ```
//! use mcp_resolve_runtime::Server;
//! let server = Server::new("notes");
//! assert_eq!(server.info().name, "notes");
//! ```
//!
//! Items behind a cargo feature say which on docs.rs (`docsrs`).

#![cfg_attr(docsrs, feature(doc_cfg))]

mod access;
mod args;
#[cfg(feature = "http")]
pub mod auth;
mod authority;
mod budget;
mod completion;
mod context;
mod dispatch;
mod elicit;
mod expiring;
pub mod form;
mod item;
mod peer;
mod principal;
mod prompt;
mod protocol;
mod question;
#[cfg(feature = "redis")]
mod redis_store;
mod register;
mod resolve;
mod resource;
mod sampling;
mod seal;
mod secret;
mod server;
mod store;
pub mod testing;
mod throttle;
mod tool;
mod tool_result;
mod transport;
mod updates;
mod url_flow;

/// Support for generated code, not public API; the name is versioned (`01`) so that macros of
/// another version fail to compile instead of calling into a runtime they do not match.
#[doc(hidden)]
#[path = "__private.rs"]
pub mod __private01;

#[cfg(feature = "bench")]
#[doc(hidden)]
pub mod bench;

/// The `http` crate's types, as [`HttpOptions::page`] handlers take and return them.
#[cfg(feature = "http")]
pub use ::http;
pub use args::ArgumentError;
#[cfg(feature = "http")]
pub use auth::{AuthError, TokenVerifier};
#[cfg(feature = "jwt")]
pub use auth::{Hs256Verifier, JwksVerifier};
/// The bytes of a page's request and response body.
#[cfg(feature = "http")]
pub use bytes::Bytes;
pub use completion::{Completer, MAX_COMPLETIONS};
pub use context::ElicitError;
pub use context::{Context, Principal};
pub use elicit::{Action, Ask, Confirm, Elicit, ElicitationResult, IntoResolution, Resolution, UrlOutcome};
pub use item::{BodyFuture, MAX_PARAMS};
pub use prompt::{
    GetPromptResult, IntoPromptResult, Prompt, PromptArgument, PromptCall, PromptDefinition, PromptMessage, Role,
};
pub use protocol::{
    ClientCapabilities, Era, ErrorObject, Implementation, LogLevel, NumberId, ProtocolVersion, RequestId, codes,
};
#[cfg(feature = "redis")]
pub use redis_store::{RedisStore, RedisStoreBuilder};
pub use register::{IntoPrompt, IntoResource, IntoTool};
pub use resolve::checks::ResolverFn;
pub use resource::{
    Blob, IntoResourceContents, MAX_URI_BYTES, Resource, ResourceCall, ResourceContents, ResourceDefinition,
    ResourceUri, UriTemplate,
};
pub use sampling::{DEFAULT_MAX_TOKENS, ListRoots, Root, Sample, Sampled};
pub use seal::{KeyTooShort, RandomUnavailable, StateKeyError, StateKeys};
pub use server::{CacheScope, Server};
pub use store::{DEFAULT_STORE_ENTRIES, MemoryStore, Store, StoreError};
pub use tool::{ArgsSchema, HeaderArgument, Tool, ToolAnnotations, ToolCall, ToolDefinition, ToolParam};
pub use tool_result::{CallToolResult, Content, EmbeddedResource, IntoToolResult, Json};
#[cfg(feature = "http")]
pub use transport::http::HttpOptions;
pub use updates::ResourceUpdates;
pub use url_flow::{FlowError, UrlFlow, UrlFlows};
