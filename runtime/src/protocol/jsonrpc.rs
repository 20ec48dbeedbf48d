//! JSON-RPC 2.0 framing: ids, error objects, and classification of inbound frames.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// A JSON-RPC request id: a string or a number.
///
/// A number is kept as the client wrote it and echoed back exactly, however large or however
/// written (`18446744073709551616`, `1.0`, `-0`).
///
/// ```
/// use mcp_resolve_runtime::protocol::RequestId;
/// let id: RequestId = serde_json::from_str("\"probe-1\"").unwrap();
/// assert_eq!(id.to_string(), "\"probe-1\"");
/// assert_eq!(RequestId::from(7).to_string(), "7");
/// let big: RequestId = serde_json::from_str("18446744073709551616").unwrap();
/// assert_eq!(serde_json::to_string(&big).unwrap(), "18446744073709551616");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id, as written.
    Number(NumberId),
    /// A string id.
    String(Arc<str>),
}

/// A numeric request id exactly as the client wrote it: compared, hashed and echoed as its text.
///
/// ```
/// use mcp_resolve_runtime::protocol::RequestId;
/// let RequestId::Number(n) = RequestId::from(42) else { unreachable!() };
/// assert_eq!(n.as_str(), "42");
/// assert_eq!(n.as_i64(), Some(42));
/// ```
#[derive(Clone)]
pub struct NumberId(Digits);

impl fmt::Debug for NumberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NumberId({})", self.as_str())
    }
}

/// A number's text: a short one (a counter, as clients send) inline, allocating nothing.
#[derive(Clone, Debug)]
enum Digits {
    Inline { len: u8, text: [u8; INLINE] },
    Shared(Arc<str>),
}

const INLINE: usize = 22;

impl NumberId {
    /// `text` is a JSON number.
    fn new(text: &str) -> Self {
        let mut inline = [0; INLINE];
        match (inline.get_mut(..text.len()), u8::try_from(text.len())) {
            (Some(head), Ok(len)) => {
                head.copy_from_slice(text.as_bytes());
                Self(Digits::Inline { len, text: inline })
            }
            _ => Self(Digits::Shared(Arc::from(text))),
        }
    }
    /// The number's text.
    pub fn as_str(&self) -> &str {
        // Copied whole from a `str` (and a number's text is ASCII): always UTF-8.
        std::str::from_utf8(self.bytes()).unwrap_or_default()
    }
    /// The number's text as bytes: what ids are compared, hashed and written by, without
    /// checking them as UTF-8 each time.
    fn bytes(&self) -> &[u8] {
        match &self.0 {
            Digits::Inline { len, text } => text.get(..usize::from(*len)).unwrap_or_default(),
            Digits::Shared(text) => text.as_bytes(),
        }
    }
    /// The number, when it is an integer that fits an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_str().parse().ok()
    }
}

impl PartialEq for NumberId {
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for NumberId {}

/// Written as the client wrote it (a raw JSON number).
impl Serialize for NumberId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_str(self.as_str()).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

impl std::hash::Hash for NumberId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.bytes().hash(state);
    }
}

impl RequestId {
    /// An id from its raw JSON text: a string or a number, nothing else.
    pub(crate) fn from_raw(raw: &RawValue) -> Option<Self> {
        let text = raw.get();
        match text.as_bytes().first()? {
            b'"' => raw_str(raw).map(|s| Self::String(Arc::from(s))),
            // `raw` is valid JSON starting like a number: it is a number.
            b'-' | b'0'..=b'9' => Some(Self::Number(NumberId::new(text))),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    /// From JSON text (serde_json only): a string or a number, numbers kept as written.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        Self::from_raw(&raw).ok_or_else(|| serde::de::Error::custom("a request id is a string or a number"))
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => f.write_str(n.as_str()),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(v: i64) -> Self {
        Self::Number(NumberId::new(&v.to_string()))
    }
}

/// Standard and MCP-specific JSON-RPC error codes.
///
/// ```
/// use mcp_resolve_runtime::protocol::codes;
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
    /// A resource that does not exist (handshake era; 2026-07-28 answers -32602).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// HTTP headers disagree with the body (2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a client capability the client did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The request's protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// The request cannot go on until the user completes URL-mode elicitations (2025-11-25
    /// only; 2026-07-28 reserves the code and never sends it).
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
}

/// A JSON-RPC error object.
///
/// ```
/// use mcp_resolve_runtime::protocol::ErrorObject;
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
    /// -32042 `URLElicitationRequiredError` (2025-11-25): the request cannot go on until the user
    /// completed the page at `url` (named `elicitation_id`); the client shows it, and may retry
    /// once `notifications/elicitation/complete` names it. A tool returns it with
    /// [`CallToolResult::protocol_error`](crate::tool::CallToolResult::protocol_error). On 2026-07-28
    /// the code is reserved: the server refuses to send it, and a resolver with
    /// [`Elicit::url`](crate::Elicit::url) is the way to ask on both eras.
    ///
    /// ```
    /// use mcp_resolve_runtime::protocol::ErrorObject;
    /// let e = ErrorObject::url_elicitation_required("Authorize GitHub", "https://notes.example/connect", "gh-1");
    /// assert_eq!(e.code, -32042);
    /// assert_eq!(e.data.unwrap()["elicitations"][0]["elicitationId"], "gh-1");
    /// ```
    pub fn url_elicitation_required(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        let message = message.into();
        Self::new(codes::URL_ELICITATION_REQUIRED, "URL elicitation required").with_data(serde_json::json!({
            "elicitations": [{
                "mode": "url",
                "message": message,
                "url": url.into(),
                "elicitationId": elicitation_id.into(),
            }]
        }))
    }
    /// -32021: the request needs a capability the client did not declare; `required` names it as
    /// the client would declare it (`{"sampling": {}}`), sent as `data.requiredCapabilities`.
    ///
    /// ```
    /// use mcp_resolve_runtime::protocol::ErrorObject;
    /// let e = ErrorObject::missing_capability(serde_json::json!({"sampling": {}}), "this tool samples the client's model");
    /// assert_eq!(e.code, -32021);
    /// assert_eq!(e.data.unwrap()["requiredCapabilities"], serde_json::json!({"sampling": {}}));
    /// ```
    pub fn missing_capability(required: Value, message: impl Into<String>) -> Self {
        Self::new(codes::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
            .with_data(serde_json::json!({ "requiredCapabilities": required }))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

/// A member that is present, even as `null` (plain `Option` would read `null` as absent).
pub(crate) fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A raw JSON string's value; `None` when the text is not a string.
pub(crate) fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    // `raw` is valid JSON: a string without a backslash has no escapes, and is its own text
    // (serde's `Cow<str>` would be an owned copy every time: a method or tool name per call).
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(text).ok().map(Cow::Owned)
}

/// Whether the raw text is a JSON object.
pub(crate) fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// The names of an object's members a reader knows ([`member_names!`]); the rest are `OTHER`.
pub(crate) trait MemberName: Copy + Eq + serde::de::DeserializeOwned {
    /// A member nobody reads.
    const OTHER: Self;
    /// Its place, under 64 (a bit of the members seen).
    fn index(self) -> u32;
    fn text(self) -> &'static str;
}

/// Reads an object's members in place: `read` is given each known name, once, to read its value;
/// the others are skipped (and may repeat). A known name given twice is serde's `duplicate field`
/// error, as with a derived `Deserialize`. The readers of a message and of its params
/// (`inbound.rs`, `messages.rs`) fill their structs with this in the one pass over the frame:
/// derived ones built each struct (hundreds of bytes) on the stack and moved it out several
/// times, which cost a call about a thousand instructions of copying.
#[inline]
pub(crate) fn read_members<'de, A, N>(
    map: &mut A,
    mut read: impl FnMut(N, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error>
where
    A: serde::de::MapAccess<'de>,
    N: MemberName,
{
    let mut seen = 0u64;
    while let Some(name) = map.next_key::<N>()? {
        if name == N::OTHER {
            map.next_value::<serde::de::IgnoredAny>()?;
            continue;
        }
        let bit = 1u64 << name.index();
        if seen & bit != 0 {
            return Err(serde::de::Error::duplicate_field(name.text()));
        }
        seen |= bit;
        read(name, map)?;
    }
    Ok(())
}

/// An enum of the member names a reader knows, with `Other` for the rest, read from a member's
/// name (escapes decoded) for [`read_members`].
macro_rules! member_names {
    ($(#[$doc:meta])* $vis:vis enum $name:ident { $($variant:ident = $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($variant,)*
            /// A member nobody reads.
            Other,
        }

        // One bit per name in the members seen.
        const _: () = assert!(($name::Other as u32) < 64);

        impl $crate::protocol::jsonrpc::MemberName for $name {
            const OTHER: Self = Self::Other;
            fn index(self) -> u32 {
                self as u32
            }
            fn text(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)*
                    Self::Other => "",
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Names;
                impl serde::de::Visitor<'_> for Names {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a member name")
                    }
                    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<$name, E> {
                        Ok(match name {
                            $($text => $name::$variant,)*
                            _ => $name::Other,
                        })
                    }
                }
                d.deserialize_identifier(Names)
            }
        }
    };
}
pub(crate) use member_names;

/// Serializes a value as raw JSON text, for a message body.
pub(crate) fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, ErrorObject> {
    serde_json::value::to_raw_value(value).map_err(|e| {
        tracing::error!(error = %e, "a message body could not be serialized");
        ErrorObject::internal("Internal error: the response could not be serialized")
    })
}

/// The JSON text of an answer's result, as this server wrote it (serialized by serde_json, so
/// valid by construction): sent as it is, never read again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Body(Box<str>);

impl Body {
    /// The text.
    pub(crate) fn get(&self) -> &str {
        &self.0
    }
}

/// An answer to a request: its result's text, or its JSON-RPC error.
pub(crate) type Answer = Result<Body, ErrorObject>;

/// The most of an answer's buffer a thread keeps for the next one: the buffer of a larger
/// answer is freed once it is copied out.
const KEPT_BODY_BYTES: usize = 16 * 1024;

thread_local! {
    /// The buffer answers are written into on this thread ([`to_body`]).
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Serializes `value` as an answer's result. Written into a buffer this thread keeps, then
/// copied out at its length: one allocation of the right size, where `to_raw` grows serde_json's
/// buffer past its first 128 bytes and shrinks it again (a `realloc` each, and the chunk it
/// splits off is a free the allocator's thread cache does not take).
pub(crate) fn to_body<T: Serialize + ?Sized>(value: &T) -> Result<Body, ErrorObject> {
    let write = |buf: &mut Vec<u8>| -> Result<Body, ErrorObject> {
        buf.clear();
        let written = serde_json::to_writer(&mut *buf, value).map_err(|e| {
            tracing::error!(error = %e, "a message body could not be serialized");
            ErrorObject::internal("Internal error: the response could not be serialized")
        });
        let body = written.and_then(|()| match std::str::from_utf8(buf) {
            Ok(text) => Ok(Body(text.into())),
            Err(_) => Err(ErrorObject::internal(
                "Internal error: the response could not be serialized",
            )),
        });
        if buf.capacity() > KEPT_BODY_BYTES {
            *buf = Vec::new();
        }
        body
    };
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut buf) => write(&mut buf),
        // A value whose serialization serializes another answer: a buffer of its own.
        Err(_) => write(&mut Vec::new()),
    })
}

/// One message the server sends: every write path (stdio, in-memory, an HTTP body, an SSE event)
/// carries these. Bodies are serialized when the message is made; framing (a newline, an SSE
/// event) is the transport's.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// The answer to a request (`id` is null when the request's id could not be read).
    Response { id: Option<RequestId>, outcome: Answer },
    /// A request to the client (handshake era: `elicitation/create`).
    Request {
        id: RequestId,
        method: &'static str,
        params: Box<RawValue>,
    },
    /// A notification (`notifications/progress`).
    Notification {
        method: &'static str,
        params: Box<RawValue>,
    },
}

#[derive(Serialize)]
struct Frame<'a> {
    jsonrpc: &'static str,
    /// `Some(None)` is a null id (a response to a request whose id could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Option<&'a RequestId>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorObject>,
}

impl Outgoing {
    /// An error response.
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self::Response {
            id,
            outcome: Err(error),
        }
    }

    /// Whether this is the response that ends a request's exchange.
    pub(crate) fn is_response(&self) -> bool {
        matches!(self, Self::Response { .. })
    }

    /// Appends the message's JSON text (no framing) to `out`.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        // A result, the message of nearly every call: its members written as they are, the
        // result's text already JSON (a third of the serializer's work per call, otherwise).
        if let Self::Response {
            id,
            outcome: Ok(result),
        } = self
        {
            out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
            match id {
                None => out.extend_from_slice(b"null"),
                Some(RequestId::Number(n)) => out.extend_from_slice(n.bytes()),
                // A string into a `Vec` cannot fail to serialize.
                Some(id) => serde_json::to_writer(&mut *out, id).unwrap_or(()),
            }
            out.extend_from_slice(br#","result":"#);
            out.extend_from_slice(result.get().as_bytes());
            out.push(b'}');
            return;
        }
        let frame = match self {
            Self::Response { id, outcome } => Frame {
                jsonrpc: "2.0",
                id: Some(id.as_ref()),
                method: None,
                params: None,
                // A result was written above.
                error: outcome.as_ref().err(),
            },
            Self::Request { id, method, params } => Frame {
                jsonrpc: "2.0",
                id: Some(Some(id)),
                method: Some(method),
                params: Some(params),
                error: None,
            },
            Self::Notification { method, params } => Frame {
                jsonrpc: "2.0",
                id: None,
                method: Some(method),
                params: Some(params),
                error: None,
            },
        };
        // Writing raw JSON, strings and numbers to a Vec cannot fail.
        if serde_json::to_writer(&mut *out, &frame).is_err() {
            out.extend_from_slice(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error: unserializable message"}}"#,
            );
        }
    }

    /// The message's JSON text, without framing.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        self.encode_into(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_str_borrows_plain_strings_and_decodes_escaped_ones() {
        let raw = |t: &str| RawValue::from_string(t.to_owned()).unwrap();
        let plain = raw(r#""tools/call""#);
        assert!(matches!(raw_str(&plain), Some(Cow::Borrowed("tools/call"))));
        let escaped = raw(r#""a\"b\u00e9""#);
        assert_eq!(raw_str(&escaped).as_deref(), Some("a\"bé"));
        assert!(matches!(raw_str(&escaped), Some(Cow::Owned(_))));
        assert_eq!(raw_str(&raw(r#""""#)).as_deref(), Some(""));
        assert_eq!(raw_str(&raw("12")), None);
        assert_eq!(raw_str(&raw("null")), None);
    }
    use serde_json::json;

    /// An answer's text is the value's JSON, whatever was written before it on this thread
    /// (a larger result, a result over the kept buffer's bound); a value whose serialization
    /// writes another answer gets a buffer of its own; one that cannot be written is -32603.
    #[test]
    fn answers_are_written_whole_through_the_reused_buffer() {
        let big = json!({"text": "x".repeat(40_000)});
        let small = json!({"content": [{"type": "text", "text": "hello"}], "isError": false});
        let kept = || SCRATCH.with(|b| b.borrow().capacity());
        for value in [&big, &small, &json!([]), &big, &small] {
            let body = to_body(value).unwrap();
            assert_eq!(&serde_json::from_str::<Value>(body.get()).unwrap(), value);
            assert_eq!(body.get(), serde_json::to_string(value).unwrap());
            assert!(
                kept() <= KEPT_BODY_BYTES,
                "a thread keeps at most {KEPT_BODY_BYTES} bytes"
            );
        }
        assert!(kept() > 0, "the buffer of a small answer is kept for the next");

        struct Nested;
        impl Serialize for Nested {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let inner = to_body(&json!({"inner": true})).map_err(|_| serde::ser::Error::custom("inner"))?;
                s.serialize_str(inner.get())
            }
        }
        assert_eq!(to_body(&Nested).unwrap().get(), r#""{\"inner\":true}""#);

        let unwritable: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
        assert_eq!(to_body(&unwritable).unwrap_err().code, -32603);
        assert_eq!(to_body(&small).unwrap().get(), serde_json::to_string(&small).unwrap());
    }

    #[test]
    fn encodes_every_message_kind() {
        let e = Outgoing::error(None, ErrorObject::parse_error("x"));
        let v: Value = serde_json::from_slice(&e.encode()).unwrap();
        assert_eq!(v["id"], Value::Null);
        assert_eq!(v["error"]["code"], -32700);
        assert!(e.is_response());
        let ok = Outgoing::Response {
            id: Some(RequestId::from(3)),
            outcome: to_body(&json!({"a": 1})),
        };
        assert_eq!(ok.encode(), br#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#);
        // Ids echoed as sent: a string escaped, a large number as written, none as null.
        for (id, text) in [
            (Some(RequestId::String("a\"b".into())), r#""a\"b""#),
            (
                serde_json::from_str("18446744073709551616").ok(),
                "18446744073709551616",
            ),
            (None, "null"),
        ] {
            let ok = Outgoing::Response {
                id,
                outcome: to_body(&json!([])),
            };
            let want = format!(r#"{{"jsonrpc":"2.0","id":{text},"result":[]}}"#);
            assert_eq!(String::from_utf8(ok.encode()).unwrap(), want);
        }
        // A request's numeric id, short (kept inline) or long (shared), comes back exactly as
        // written, in a result and in an error alike; equal texts are equal ids.
        for text in [
            "7",
            "-5",
            "-0",
            "1.0",
            "1E+3",
            "1e400",
            "123456789012345678901234567890",
        ] {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"ping"}}"#);
            let crate::protocol::inbound::Inbound::Request { id, .. } =
                crate::protocol::inbound::classify(frame.as_bytes())
            else {
                panic!("a request")
            };
            let RequestId::Number(n) = &id else { panic!("a number") };
            assert_eq!(n.as_str(), text);
            assert_eq!(format!("{n:?}"), format!("NumberId({text})"));
            let again = RawValue::from_string(text.to_owned()).unwrap();
            assert_eq!(RequestId::from_raw(&again), Some(id.clone()));
            let ok = Outgoing::Response {
                id: Some(id.clone()),
                outcome: to_body(&json!({})),
            };
            let failed = Outgoing::error(Some(id.clone()), ErrorObject::internal("x"));
            for message in [ok, failed] {
                let encoded = String::from_utf8(message.encode()).unwrap();
                assert!(encoded.contains(&format!(r#""id":{text},"#)), "{encoded}");
            }
        }
        let n = Outgoing::Notification {
            method: "notifications/progress",
            params: to_raw(&json!({"progress": 1})).unwrap(),
        };
        assert_eq!(
            n.encode(),
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#
        );
        assert!(!n.is_response());
        let r = Outgoing::Request {
            id: RequestId::from(1),
            method: "elicitation/create",
            params: to_raw(&json!({})).unwrap(),
        };
        assert_eq!(
            r.encode(),
            br#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}"#
        );
    }
}
