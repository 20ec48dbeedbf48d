//! The MCP side of the driver: opening a session on either era, rendering calls, reading what
//! comes back, and answering the server's questions with content made from their schema.

pub(crate) mod http;

use serde_json::{Map, Value, json};
use std::time::Instant;

pub(crate) const MODERN: &str = "2026-07-28";

/// One logical call: when it was sent and how many question rounds it has taken.
pub(crate) struct Call {
    pub(crate) started: Instant,
    pub(crate) rounds: u32,
}

impl Call {
    pub(crate) fn new() -> Self {
        Self {
            started: Instant::now(),
            rounds: 0,
        }
    }
}

/// A frame as one line.
pub(crate) fn line(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// What a message from the server is.
pub(crate) enum Inbound {
    ServerRequest { id: Value, method: String },
    Notification,
    Response { id: Value },
}

pub(crate) fn classify(msg: &Value) -> Inbound {
    match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
        (Some(method), Some(id)) => Inbound::ServerRequest {
            id: id.clone(),
            method: method.to_string(),
        },
        (Some(_), None) => Inbound::Notification,
        (None, id) => Inbound::Response {
            id: id.cloned().unwrap_or(Value::Null),
        },
    }
}

/// What a response to a `tools/call` means for the call.
pub(crate) enum Answer {
    /// An `InputRequiredResult`: retry with these answers (and the state, when there is one).
    Retry {
        input_responses: Value,
        state: Option<Value>,
    },
    /// The final result: its first text, and an error when it is one.
    Done { text: String, error: Option<String> },
}

/// A protocol era, as the driver speaks it.
pub(crate) struct Session {
    modern: bool,
    version: String,
    meta: Value,
}

impl Session {
    pub(crate) fn new(version: &str) -> Self {
        let capabilities = json!({"elicitation": {"form": {}, "url": {}}});
        Self {
            modern: version >= MODERN,
            version: version.to_string(),
            meta: json!({
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientInfo": {"name": "mcp-load", "version": "0.1.0"},
                "io.modelcontextprotocol/clientCapabilities": capabilities,
            }),
        }
    }

    /// Whether this is the 2026-07-28 era (stateless, the `_meta` envelope) rather than the
    /// handshake era (`initialize`, sessions).
    pub(crate) fn modern(&self) -> bool {
        self.modern
    }

    /// The protocol version, as the `MCP-Protocol-Version` header carries it.
    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    /// The frames that open a session: `server/discover` on 2026-07-28, `initialize` and
    /// `notifications/initialized` before.
    pub(crate) fn opening(&self) -> Vec<Value> {
        if self.modern {
            vec![self.request("open-1", "server/discover", json!({}))]
        } else {
            vec![
                json!({"jsonrpc": "2.0", "id": "open-1", "method": "initialize", "params": {
                    "protocolVersion": self.version,
                    "capabilities": {"elicitation": {"form": {}, "url": {}}},
                    "clientInfo": {"name": "mcp-load", "version": "0.1.0"},
                }}),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ]
        }
    }

    /// A request, with the `_meta` envelope on 2026-07-28.
    pub(crate) fn request(&self, id: &str, method: &str, mut params: Value) -> Value {
        if self.modern
            && let Some(p) = params.as_object_mut()
        {
            p.insert("_meta".into(), self.meta.clone());
        }
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// The params of a `tools/call`, with the answers of a retry.
    pub(crate) fn call_params(&self, tool: &str, args: &Value, retry: Option<&(Value, Option<Value>)>) -> Value {
        let mut p = Map::new();
        p.insert("name".into(), Value::from(tool));
        p.insert("arguments".into(), args.clone());
        if self.modern {
            p.insert("_meta".into(), self.meta.clone());
        }
        if let Some((responses, state)) = retry {
            p.insert("inputResponses".into(), responses.clone());
            if let Some(s) = state {
                p.insert("requestState".into(), s.clone());
            }
        }
        Value::Object(p)
    }

    /// A `tools/call` frame, as one line.
    pub(crate) fn call_frame(
        &self,
        id: i64,
        tool: &str,
        args: &Value,
        retry: Option<&(Value, Option<Value>)>,
    ) -> Vec<u8> {
        line(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": self.call_params(tool, args, retry),
        }))
    }

    /// Reads the response to a `tools/call`.
    pub(crate) fn answer(&self, msg: &Value) -> Answer {
        if let Some(e) = msg.get("error") {
            return Answer::Done {
                text: String::new(),
                error: Some(format!("JSON-RPC error {e}")),
            };
        }
        let result = msg.get("result").unwrap_or(&Value::Null);
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            let mut responses = Map::new();
            if let Some(reqs) = result.get("inputRequests").and_then(Value::as_object) {
                for (key, req) in reqs {
                    let method = req.get("method").and_then(Value::as_str).unwrap_or("");
                    responses.insert(key.clone(), answer_server_request(method, req));
                }
            }
            return Answer::Retry {
                input_responses: Value::Object(responses),
                state: result.get("requestState").cloned(),
            };
        }
        let text = result
            .get("content")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let error = (result.get("isError") == Some(&Value::Bool(true))).then(|| format!("isError: {text}"));
        Answer::Done { text, error }
    }
}

/// The canned answer to a question from the server (`msg` holds its `params`).
pub(crate) fn answer_server_request(method: &str, msg: &Value) -> Value {
    let params = msg.get("params").unwrap_or(&Value::Null);
    match method {
        "elicitation/create" => {
            if params.get("mode").and_then(Value::as_str) == Some("url") {
                json!({"action": "accept"})
            } else {
                let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
                json!({"action": "accept", "content": content_for(schema)})
            }
        }
        "roots/list" => json!({"roots": []}),
        "sampling/createMessage" => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "ok"},
            "model": "mcp-load",
        }),
        _ => json!({}),
    }
}

/// Form content that fits a flat `requestedSchema`.
pub(crate) fn content_for(schema: &Value) -> Value {
    let mut out = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(out);
    };
    for (name, p) in props {
        let v = if let Some(d) = p.get("default") {
            d.clone()
        } else if let Some(e) = p.get("enum").and_then(|e| e.get(0)) {
            e.clone()
        } else if let Some(c) = p.get("oneOf").and_then(|o| o.get(0)).and_then(|o| o.get("const")) {
            c.clone()
        } else {
            match p.get("type").and_then(Value::as_str) {
                Some("boolean") => Value::Bool(true),
                Some("number") | Some("integer") => p.get("minimum").cloned().unwrap_or(json!(1)),
                Some("array") => {
                    let first = p
                        .get("items")
                        .and_then(|i| {
                            i.get("enum")
                                .and_then(|e| e.get(0))
                                .or_else(|| i.get("anyOf")?.get(0)?.get("const"))
                        })
                        .cloned()
                        .unwrap_or(Value::Null);
                    json!([first])
                }
                _ => {
                    let s = match p.get("format").and_then(Value::as_str) {
                        Some("email") => "bench@example.com".to_string(),
                        Some("uri") => "https://example.com/".to_string(),
                        Some("date") => "2024-12-26".to_string(),
                        Some("date-time") => "2024-12-26T12:00:00Z".to_string(),
                        _ => {
                            let min = p.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
                            if min <= 5 { "bench".to_string() } else { "x".repeat(min) }
                        }
                    };
                    Value::String(s)
                }
            }
        };
        out.insert(name.clone(), v);
    }
    Value::Object(out)
}
