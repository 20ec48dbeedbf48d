//! JSON-RPC 2.0 framing: ids, error objects, and classification of inbound frames.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// A JSON-RPC request id: a string or a number.
///
/// ```
/// use mcp_resolve_runtime::RequestId;
/// let id: RequestId = serde_json::from_str("\"probe-1\"").unwrap();
/// assert_eq!(id.to_string(), "\"probe-1\"");
/// assert_eq!(RequestId::from(7).to_string(), "7");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id.
    Number(serde_json::Number),
    /// A string id.
    String(Arc<str>),
}

impl RequestId {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Number(n) => Some(Self::Number(n.clone())),
            Value::String(s) => Some(Self::String(Arc::from(s.as_str()))),
            _ => None,
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(v: i64) -> Self {
        Self::Number(v.into())
    }
}

/// Standard and MCP-specific JSON-RPC error codes.
///
/// ```
/// use mcp_resolve_runtime::codes;
/// assert_eq!(codes::UNSUPPORTED_PROTOCOL_VERSION, -32022);
/// ```
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available in this era.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (also: missing envelope keys, unknown tool, bad `requestState`).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// HTTP headers disagree with the body (2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a client capability the client did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The request's protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A JSON-RPC error object.
///
/// ```
/// use mcp_resolve_runtime::ErrorObject;
/// let e = ErrorObject::method_not_found("ping");
/// assert_eq!(e.code, -32601);
/// assert_eq!(serde_json::to_string(&e).unwrap(), r#"{"code":-32601,"message":"Method not found","data":"ping"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`codes`]).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Extra data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }
    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
    /// -32700.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(codes::PARSE_ERROR, format!("Parse error: {detail}"))
    }
    /// -32600.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_REQUEST, message)
    }
    /// -32601 with the method name as `data`, as the Python SDK answers.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(codes::METHOD_NOT_FOUND, "Method not found").with_data(Value::String(method.into()))
    }
    /// -32602.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_PARAMS, message)
    }
    /// -32603.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(codes::INTERNAL_ERROR, message)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

/// One inbound frame, classified.
#[derive(Debug)]
pub(crate) enum Inbound {
    Request {
        id: RequestId,
        method: String,
        params: Option<Map<String, Value>>,
    },
    Notification {
        method: String,
        params: Option<Map<String, Value>>,
    },
    Response {
        id: RequestId,
        outcome: Result<Value, ErrorObject>,
    },
    /// Not a valid message: answer with this error (the id is known when the frame had a usable one).
    Invalid { id: Option<RequestId>, error: ErrorObject },
}

/// Classifies one frame's bytes.
pub(crate) fn classify(bytes: &[u8]) -> Inbound {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Inbound::Invalid {
                id: None,
                error: ErrorObject::parse_error(e),
            };
        }
    };
    classify_value(value)
}

pub(crate) fn classify_value(value: Value) -> Inbound {
    let mut obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Inbound::Invalid {
                id: None,
                error: ErrorObject::invalid_request("Invalid Request: batches are not supported"),
            };
        }
        _ => {
            return Inbound::Invalid {
                id: None,
                error: ErrorObject::invalid_request("Invalid Request: a message must be a JSON object"),
            };
        }
    };
    let raw_id = obj.remove("id");
    let id = match &raw_id {
        None => None,
        Some(v) => match RequestId::from_value(v) {
            Some(id) => Some(id),
            None => {
                return Inbound::Invalid {
                    id: None,
                    error: ErrorObject::invalid_request("Invalid Request: `id` must be a string or a number"),
                };
            }
        },
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Inbound::Invalid {
            id,
            error: ErrorObject::invalid_request("Invalid Request: `jsonrpc` must be \"2.0\""),
        };
    }
    match obj.remove("method") {
        Some(Value::String(method)) => {
            let params = match obj.remove("params") {
                None | Some(Value::Null) => None,
                Some(Value::Object(p)) => Some(p),
                Some(_) => {
                    return match id {
                        Some(id) => Inbound::Invalid {
                            id: Some(id),
                            error: ErrorObject::invalid_params("Invalid params: `params` must be an object"),
                        },
                        // A notification with bad params gets no answer.
                        None => Inbound::Notification { method, params: None },
                    };
                }
            };
            match id {
                Some(id) => Inbound::Request { id, method, params },
                None => Inbound::Notification { method, params },
            }
        }
        Some(_) => Inbound::Invalid {
            id,
            error: ErrorObject::invalid_request("Invalid Request: `method` must be a string"),
        },
        None => {
            let Some(id) = id else {
                return Inbound::Invalid {
                    id: None,
                    error: ErrorObject::invalid_request("Invalid Request: no `method`, and no `id`"),
                };
            };
            if let Some(result) = obj.remove("result") {
                Inbound::Response {
                    id,
                    outcome: Ok(result),
                }
            } else if let Some(err) = obj.remove("error") {
                match serde_json::from_value::<ErrorObject>(err) {
                    Ok(e) => Inbound::Response { id, outcome: Err(e) },
                    Err(_) => Inbound::Response {
                        id,
                        outcome: Err(ErrorObject::internal("malformed error object in response")),
                    },
                }
            } else {
                Inbound::Invalid {
                    id: Some(id),
                    error: ErrorObject::invalid_request("Invalid Request: no `method`, `result` or `error`"),
                }
            }
        }
    }
}

#[derive(Serialize)]
struct ResponseFrame<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorObject>,
}

/// Serializes a response frame, newline-terminated.
pub(crate) fn encode_response(id: Option<&RequestId>, outcome: Result<&Value, &ErrorObject>) -> Vec<u8> {
    let frame = match outcome {
        Ok(r) => ResponseFrame {
            jsonrpc: "2.0",
            id,
            result: Some(r),
            error: None,
        },
        Err(e) => ResponseFrame {
            jsonrpc: "2.0",
            id,
            result: None,
            error: Some(e),
        },
    };
    let mut out = serde_json::to_vec(&frame).unwrap_or_else(|_| {
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error: unserializable response"}}"#
            .to_vec()
    });
    out.push(b'\n');
    out
}

#[derive(Serialize)]
struct RequestFrame<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: &'a Value,
}

/// Serializes a request frame (server to client), newline-terminated.
pub(crate) fn encode_request(id: &RequestId, method: &str, params: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(&RequestFrame {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
    .unwrap_or_default();
    out.push(b'\n');
    out
}

#[derive(Serialize)]
struct NotificationFrame<'a> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a Value,
}

/// Serializes a notification frame, newline-terminated.
pub(crate) fn encode_notification(method: &str, params: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(&NotificationFrame {
        jsonrpc: "2.0",
        method,
        params,
    })
    .unwrap_or_default();
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_every_shape() {
        assert!(matches!(classify(b"{nope"), Inbound::Invalid { id: None, error } if error.code == -32700));
        assert!(matches!(classify(b"[]"), Inbound::Invalid { error, .. } if error.code == -32600));
        assert!(matches!(classify(b"42"), Inbound::Invalid { error, .. } if error.code == -32600));
        assert!(matches!(
            classify(br#"{"jsonrpc":"1.0","id":3,"method":"x"}"#),
            Inbound::Invalid { id: Some(_), error } if error.code == -32600
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#),
            Inbound::Invalid { id: None, error } if error.code == -32600
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":"a","method":"x","params":[1]}"#),
            Inbound::Invalid { error, .. } if error.code == -32602
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Inbound::Notification { .. }
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Inbound::Response { .. }
        ));
        let Inbound::Request { id, method, params } =
            classify(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}}"#)
        else {
            panic!("not a request")
        };
        assert_eq!(id, RequestId::from(7));
        assert_eq!(method, "tools/list");
        assert_eq!(params.map(Value::Object), Some(json!({"a":1})));
    }

    #[test]
    fn encodes_null_id_for_unknown_ids() {
        let e = ErrorObject::parse_error("x");
        let bytes = encode_response(None, Err(&e));
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["id"], Value::Null);
        assert_eq!(v["error"]["code"], -32700);
    }
}
