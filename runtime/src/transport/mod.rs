//! Transports move bytes: newline-delimited JSON-RPC over any byte stream ([`connection`]: stdio,
//! in-memory pipes) and Streamable HTTP ([`http`]). What a message means is the dispatcher's.

pub(crate) mod connection;
pub(crate) mod frames;
#[cfg(feature = "http")]
pub(crate) mod http;

#[cfg(feature = "stdio")]
pub(crate) mod stdio;
