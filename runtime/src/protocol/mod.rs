//! The wire model of both protocol eras: JSON-RPC framing, versions, the `_meta` envelope.

pub(crate) mod content;
pub(crate) mod envelope;
pub(crate) mod inbound;
pub(crate) mod jsonrpc;
pub(crate) mod logging;
pub(crate) mod messages;
pub(crate) mod tasks;
pub(crate) mod version;

pub use content::{Content, EmbeddedResource, ResourceContents, Role};
pub use envelope::{ClientCapabilities, Implementation};
pub use jsonrpc::{ErrorObject, NumberId, RequestId, codes};
pub use logging::LogLevel;
pub use tasks::{TaskStatus, TaskSupport};
pub use version::{Era, ProtocolVersion};
