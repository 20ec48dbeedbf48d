//! The server: [`Server`], what its author builds, and [`CacheScope`], who may cache its list
//! results.
//!
//! Inside (not public): what the author builds (`builder`), the protocol state of one connection
//! (`session`), one call from params to result (`call`), `subscriptions/listen` streams
//! (`listen`) and per-caller call rates (`rate`). Transports feed it requests through the
//! dispatcher; it never touches I/O itself.

pub(crate) mod answers;
pub(crate) mod builder;
pub(crate) mod call;
pub(crate) mod config;
pub(crate) mod listen;
pub(crate) mod rate;
pub(crate) mod read;
pub(crate) mod registry;
pub(crate) mod resolving;
pub(crate) mod session;
pub(crate) mod task;

pub use builder::Server;
pub(crate) use call::Route;
pub use config::CacheScope;
pub(crate) use session::Session;
