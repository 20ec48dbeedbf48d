//! Log messages a server sends its client (`notifications/message`), and the levels that decide
//! which are sent: `logging/setLevel` on the handshake era, the request's
//! `_meta["io.modelcontextprotocol/logLevel"]` on 2026-07-28.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The method of a log message.
pub(crate) const MESSAGE: &str = "notifications/message";

/// The severity of a log message (RFC 5424's levels, as MCP names them), from the least to the
/// most severe. A client asks for a level; messages below it are not sent.
///
/// ```
/// use mcp_resolve_runtime::protocol::LogLevel;
/// assert!(LogLevel::Warning > LogLevel::Info);
/// assert_eq!(serde_json::to_value(LogLevel::Warning).unwrap(), "warning");
/// assert_eq!(LogLevel::parse("error"), Some(LogLevel::Error));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed information for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level MCP names `name` (`"debug"` … `"emergency"`); `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "debug" => Self::Debug,
            "info" => Self::Info,
            "notice" => Self::Notice,
            "warning" => Self::Warning,
            "error" => Self::Error,
            "critical" => Self::Critical,
            "alert" => Self::Alert,
            "emergency" => Self::Emergency,
            _ => return None,
        })
    }

    /// The level a raw JSON member names, if it is one of the level strings.
    pub(crate) fn from_raw(raw: &RawValue) -> Option<Self> {
        super::jsonrpc::raw_str(raw).and_then(|s| Self::parse(&s))
    }
}

/// The params of `notifications/message`.
#[derive(Serialize)]
pub(crate) struct LogMessage<'a, T: Serialize> {
    pub(crate) level: LogLevel,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) logger: Option<&'a str>,
    pub(crate) data: &'a T,
}
