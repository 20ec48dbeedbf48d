//! Tool arguments: reading one from the client's `arguments` object, and the error that names it.
//! Shared by tool parameters and resolver parameters.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fmt;

/// Why an argument could not be extracted.
///
/// ```
/// use mcp_resolve_runtime::{Context, protocol::ProtocolVersion, tool::{ToolCall, ToolParam}};
/// let cx = Context::detached(ProtocolVersion::V2026_07_28, Default::default());
/// let args = serde_json::json!({"path": 42}).as_object().unwrap().clone();
/// let err = <String as ToolParam>::extract(&ToolCall::new(args, cx), "path").unwrap_err();
/// assert_eq!(err.name(), "path");
/// assert_eq!(err.to_string(), "argument `path`: expected a string, got 42");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentError {
    name: String,
    message: String,
}

impl ArgumentError {
    /// The argument's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A `State<T>` parameter whose state the server does not hold (a server checks this before
    /// it serves, so only a hand-built call meets it).
    pub(crate) fn missing_state(name: &str, ty: &str) -> Self {
        Self {
            name: name.to_owned(),
            message: format!("the server holds no state of type `{ty}`: register one with `Server::state`"),
        }
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "argument `{}`: {}", self.name, self.message)
    }
}

impl std::error::Error for ArgumentError {}

fn describe_value(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 60 {
        return s;
    }
    let mut end = 57;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

fn serde_expectation(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    match msg.find(", expected ") {
        Some(i) if msg.starts_with("invalid type") || msg.starts_with("invalid value") => msg[i + 2..].to_string(),
        _ => msg,
    }
}

/// Reads one argument from the `arguments` object.
pub(crate) fn extract_argument<T: DeserializeOwned>(
    arguments: &Map<String, Value>,
    name: &str,
) -> Result<T, ArgumentError> {
    match arguments.get(name) {
        Some(v) => T::deserialize(v).map_err(|e| {
            let expected = serde_expectation(&e);
            let message = if expected.starts_with("expected ") {
                format!("{expected}, got {}", describe_value(v))
            } else {
                expected
            };
            ArgumentError {
                name: name.into(),
                message,
            }
        }),
        None => T::deserialize(&Value::Null).map_err(|e| {
            let expected = serde_expectation(&e);
            let message = match expected.strip_prefix("expected ") {
                Some(what) => format!("missing required argument ({what})"),
                None => "missing required argument".to_string(),
            };
            ArgumentError {
                name: name.into(),
                message,
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn wrong_type_names_argument_and_expectation() {
        let e = extract_argument::<String>(&args(json!({"path": 42})), "path").unwrap_err();
        assert_eq!(e.to_string(), "argument `path`: expected a string, got 42");
        let e = extract_argument::<i64>(&args(json!({"a": "x"})), "a").unwrap_err();
        assert_eq!(e.to_string(), "argument `a`: expected i64, got \"x\"");
    }

    #[test]
    fn missing_argument_is_named() {
        let e = extract_argument::<String>(&args(json!({})), "path").unwrap_err();
        assert_eq!(e.to_string(), "argument `path`: missing required argument (a string)");
        assert_eq!(extract_argument::<Option<String>>(&args(json!({})), "p").unwrap(), None);
    }

    #[test]
    fn long_values_are_shortened() {
        let long = "x".repeat(500);
        let e = extract_argument::<i64>(&args(json!({"a": long})), "a").unwrap_err();
        assert!(e.to_string().len() < 120, "{e}");
    }
}
