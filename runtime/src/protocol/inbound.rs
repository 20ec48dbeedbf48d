//! Reading one inbound message: the JSON-RPC members and the params' members, found in one pass
//! over the frame and borrowed from it. No `serde_json::Value` tree of the message is built.

use super::jsonrpc::{ErrorObject, ObjectOr, RequestId, present, raw_str};
use super::messages::ParamsHead;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// One inbound message, classified. Borrows the frame it was read from.
#[derive(Debug)]
pub(crate) enum Inbound<'a> {
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: ParamsHead<'a>,
    },
    Notification {
        method: Cow<'a, str>,
        params: ParamsHead<'a>,
    },
    Response {
        id: RequestId,
        outcome: Result<Value, ErrorObject>,
    },
    /// Not a valid message: answer with this error (the id is known when the frame had a usable one).
    Invalid { id: Option<RequestId>, error: ErrorObject },
}

/// The members of a message, each kept as raw text: finding them is one pass over the frame, and
/// nothing is built for members nobody reads.
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    /// Read as the params' members when it is an object.
    #[serde(default, borrow)]
    params: Option<ObjectOr<ParamsHead<'a>>>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn invalid<'a>(id: Option<RequestId>, message: impl Into<String>) -> Inbound<'a> {
    Inbound::Invalid {
        id,
        error: ErrorObject::invalid_request(message),
    }
}

/// Classifies one frame's bytes.
pub(crate) fn classify(bytes: &[u8]) -> Inbound<'_> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return classify_other(bytes);
    }
    // Validated as UTF-8 once, here: raw members read from a `str` are not validated again.
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return Inbound::Invalid {
                id: None,
                error: ErrorObject::parse_error(e),
            };
        }
    };
    let m: Members<'_> = match serde_json::from_str(text) {
        Ok(m) => m,
        // JSON that does not fit (a member given twice): not a request. The read stops at the
        // second member, so the rest of the frame is checked too: if it is not JSON, it is a
        // parse error like any other (found by fuzzing).
        Err(e) if e.is_data() => {
            return match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                Ok(_) => invalid(None, format!("Invalid Request: {e}")),
                Err(syntax) => Inbound::Invalid {
                    id: None,
                    error: ErrorObject::parse_error(syntax),
                },
            };
        }
        Err(e) => {
            return Inbound::Invalid {
                id: None,
                error: ErrorObject::parse_error(e),
            };
        }
    };
    let id = match m.id {
        None => None,
        Some(raw) => match RequestId::from_raw(raw) {
            Some(id) => Some(id),
            None => return invalid(None, "Invalid Request: `id` must be a string or a number"),
        },
    };
    let version_ok = m
        .jsonrpc
        .is_some_and(|raw| raw.get() == "\"2.0\"" || raw_str(raw).is_some_and(|v| v == "2.0"));
    if !version_ok {
        return invalid(id, "Invalid Request: `jsonrpc` must be \"2.0\"");
    }
    if let Some(method) = m.method {
        let Some(method) = raw_str(method) else {
            return invalid(id, "Invalid Request: `method` must be a string");
        };
        let params = match m.params {
            Some(ObjectOr::Object(p)) => p,
            None => ParamsHead::default(),
            Some(ObjectOr::Other) => {
                return match id {
                    Some(id) => Inbound::Invalid {
                        id: Some(id),
                        error: ErrorObject::invalid_params("Invalid params: `params` must be an object"),
                    },
                    // A notification with bad params gets no answer.
                    None => Inbound::Notification {
                        method,
                        params: ParamsHead::default(),
                    },
                };
            }
        };
        return match id {
            Some(id) => Inbound::Request { id, method, params },
            None => Inbound::Notification { method, params },
        };
    }
    let Some(id) = id else {
        return invalid(None, "Invalid Request: no `method`, and no `id`");
    };
    if let Some(result) = m.result {
        // An answer's tree is built only when its estimated memory is within reason (an
        // elicitation answer is a small flat object).
        let outcome = if crate::budget::tree_cost(result.get()) > crate::budget::MAX_RESULT_MEMORY {
            Err(ErrorObject::internal("the client's result is too large"))
        } else {
            serde_json::from_str(result.get()).map_err(|_| ErrorObject::internal("malformed result"))
        };
        return Inbound::Response { id, outcome };
    }
    if let Some(error) = m.error {
        let outcome = match serde_json::from_str::<ErrorObject>(error.get()) {
            Ok(e) => Err(e),
            Err(_) => Err(ErrorObject::internal("malformed error object in response")),
        };
        return Inbound::Response { id, outcome };
    }
    invalid(Some(id), "Invalid Request: no `method`, `result` or `error`")
}

/// Frames that are not a JSON object: a parse error, a batch, or a scalar.
fn classify_other<'a>(bytes: &[u8]) -> Inbound<'a> {
    // Checked as UTF-8 first, as objects are: skipping a value does not validate its strings.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(ErrorObject::parse_error),
        Err(e) => Err(ErrorObject::parse_error(e)),
    };
    match parsed {
        Err(error) => Inbound::Invalid { id: None, error },
        Ok(_) if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') => {
            invalid(None, "Invalid Request: batches are not supported")
        }
        Ok(_) => invalid(None, "Invalid Request: a message must be a JSON object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_every_shape() {
        assert!(matches!(classify(b"{nope"), Inbound::Invalid { id: None, error } if error.code == -32700));
        assert!(matches!(classify(b"[]"), Inbound::Invalid { error, .. } if error.code == -32600));
        assert!(matches!(classify(b"42"), Inbound::Invalid { error, .. } if error.code == -32600));
        // Not UTF-8, so not JSON, whether or not the frame is an object (found by fuzzing: a
        // string or an array with invalid UTF-8 inside was taken as JSON and got -32600).
        for frame in [&b"\"\x8a\""[..], b"[1,\"\xff\"]", b"{\"\x8a\":1}"] {
            assert!(matches!(classify(frame), Inbound::Invalid { id: None, error } if error.code == -32700));
        }
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
        assert!(params.name.is_none() && !params.meta.has_envelope());
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
            Inbound::Invalid { id: None, error } if error.code == -32600
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#),
            Inbound::Invalid { error, .. } if error.code == -32600
        ));
        // A member given twice in a frame that is not JSON further on: a parse error.
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x" nope"#),
            Inbound::Invalid { id: None, error } if error.code == -32700
        ));
        let Inbound::Request { id, method, .. } =
            classify(br#"{"jsonrpc":"2.0","id":"a\u0062","method":"tools\/list"}"#)
        else {
            panic!("escapes are read")
        };
        assert_eq!(id, RequestId::String("ab".into()));
        assert_eq!(method, "tools/list");
    }
}
