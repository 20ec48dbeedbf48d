//! The server: what its author builds ([`builder`]), the protocol state of one connection
//! ([`session`]), one tool call from params to result ([`call`]), and resource subscriptions
//! ([`updates`]). Transports feed it requests through the dispatcher; it never touches I/O
//! itself.

pub(crate) mod builder;
pub(crate) mod call;
pub(crate) mod listen;
pub(crate) mod rate;
pub(crate) mod session;
pub(crate) mod updates;

pub use builder::{CacheScope, Server};
pub(crate) use session::{Route, Session};
pub use updates::ResourceUpdates;
