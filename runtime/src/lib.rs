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
//! The root holds what nearly every server names ([`Server`], [`Context`], [`Principal`],
//! [`Elicit`], [`State`], [`ResolverFn`]); the rest is in a module per concern: [`tool`], [`prompt`] and
//! [`resource`] (the items and their results), [`elicit`] (questions and their answers),
//! [`context`], [`sampling`], [`url_flow`], [`completion`], [`protocol`], [`server`], [`seal`],
//! [`store`], `redis_store`, `auth`, [`form`] and [`testing`]. A name that used to sit at the root
//! still compiles there, and warns with its new path where Rust can say so.
//!
//! Items behind a cargo feature say which on docs.rs (`docsrs`).

#![cfg_attr(docsrs, feature(doc_cfg))]

mod access;
mod app_state;
mod args;
#[cfg(feature = "http")]
pub mod auth;
mod authority;
mod budget;
mod choices;
#[cfg(feature = "client")]
pub mod client;
pub mod completion;
pub mod context;
mod dispatch;
pub mod elicit;
#[cfg(feature = "http")]
pub mod event_store;
mod expiring;
pub mod form;
mod item;
mod moved;
#[cfg(any(feature = "jwt", feature = "client"))]
mod outbound;
mod peer;
mod principal;
pub mod prompt;
pub mod protocol;
mod question;
#[cfg(feature = "redis")]
pub mod redis_store;
mod resolve;
pub mod resource;
pub mod sampling;
pub mod seal;
mod secret;
pub mod server;
pub mod store;
mod tasks;
pub mod telemetry;
pub mod testing;
mod throttle;
pub mod tool;
mod tool_result;
mod transport;
mod updates;
mod uri_template;
pub mod url_flow;

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
pub use app_state::State;
/// The bytes of a page's request and response body.
#[cfg(feature = "http")]
pub use bytes::Bytes;
pub use context::{Context, Principal};
pub use elicit::Elicit;
pub use item::{BodyFuture, MAX_PARAMS};
pub use resolve::checks::ResolverFn;
pub use server::Server;
#[cfg(feature = "http")]
pub use transport::http::{ClientAddr, HttpOptions, HttpService, ResponseBody, ResumeOptions};

// The names the root had before the modules above; each still compiles, and warns with its new
// path where Rust allows it (see `moved.rs`).
#[doc(hidden)]
pub use moved::*;
