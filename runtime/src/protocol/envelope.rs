//! The 2026-07-28 per-request `_meta` envelope, client capabilities and implementation info.

use super::jsonrpc::{ErrorObject, RequestId, codes};
use super::version::{Era, ProtocolVersion, SUPPORTED};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};

pub(crate) const KEY_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const KEY_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The name and version of a client or server.
///
/// ```
/// use mcp_resolve_runtime::protocol::Implementation;
/// let i = Implementation::new("notes", "1.0.0");
/// assert_eq!(serde_json::to_value(&i).unwrap(), serde_json::json!({"name": "notes", "version": "1.0.0"}));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    #[serde(default)]
    pub version: String,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl Implementation {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            title: None,
        }
    }
}

/// The capabilities a client declared: in `initialize` (handshake era) or in this request's `_meta`
/// (2026-07-28).
///
/// ```
/// use mcp_resolve_runtime::protocol::ClientCapabilities;
/// let caps = ClientCapabilities::from_value(serde_json::json!({"elicitation": {}}));
/// // `{}` means form mode only.
/// assert!(caps.elicitation_form());
/// assert!(!caps.elicitation_url());
/// assert!(!ClientCapabilities::default().elicitation_form());
/// ```
#[derive(Clone, Debug, Default)]
pub struct ClientCapabilities {
    // Shared: every call of a connection carries the capabilities its handshake declared.
    inner: Option<Arc<Capabilities>>,
}

#[derive(Debug)]
struct Capabilities {
    /// The object as sent; read into a map only if someone asks for it.
    raw: Box<RawValue>,
    map: OnceLock<Map<String, Value>>,
    form: bool,
    url: bool,
    sampling: bool,
    roots: bool,
    /// `extensions["io.modelcontextprotocol/tasks"]`: the client follows tasks (2026-07-28).
    tasks: bool,
}

/// The capabilities this crate reads, found without building the object.
#[derive(Deserialize)]
struct Declared<'a> {
    #[serde(default, borrow)]
    elicitation: Option<&'a RawValue>,
    #[serde(default, borrow)]
    sampling: Option<&'a RawValue>,
    #[serde(default, borrow)]
    roots: Option<&'a RawValue>,
    #[serde(default, borrow)]
    extensions: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ElicitationModes<'a> {
    #[serde(default, borrow, deserialize_with = "super::jsonrpc::present")]
    form: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "super::jsonrpc::present")]
    url: Option<&'a RawValue>,
}

impl PartialEq for ClientCapabilities {
    fn eq(&self, other: &Self) -> bool {
        self.as_map() == other.as_map()
    }
}

impl ClientCapabilities {
    /// Wraps the capabilities object as sent; anything but an object counts as no capability.
    pub fn from_value(v: Value) -> Self {
        match serde_json::value::to_raw_value(&v) {
            Ok(raw) => Self::from_raw(&raw),
            Err(_) => Self::default(),
        }
    }
    /// The capabilities in this raw JSON text; anything but an object counts as no capability.
    pub(crate) fn from_raw(raw: &RawValue) -> Self {
        if !super::jsonrpc::is_object(raw) {
            return Self::default();
        }
        let Ok(declared) = serde_json::from_str::<Declared<'_>>(raw.get()) else {
            return Self::default();
        };
        let object = |r: Option<&RawValue>| r.is_some_and(super::jsonrpc::is_object);
        let (form, url) = match declared.elicitation.filter(|e| object(Some(e))) {
            None => (false, false),
            Some(e) => match serde_json::from_str::<ElicitationModes<'_>>(e.get()) {
                // `elicitation: {}` means form mode.
                Ok(m) => {
                    let empty = e.get().bytes().filter(|b| !b.is_ascii_whitespace()).eq(*b"{}");
                    (m.form.is_some() || empty, m.url.is_some())
                }
                Err(_) => (false, false),
            },
        };
        Self {
            inner: Some(Arc::new(Capabilities {
                raw: raw.to_owned(),
                map: OnceLock::new(),
                form,
                url,
                sampling: object(declared.sampling),
                roots: object(declared.roots),
                tasks: declared
                    .extensions
                    .and_then(|e| serde_json::from_str::<std::collections::HashMap<&str, &RawValue>>(e.get()).ok())
                    .is_some_and(|e| object(e.get(super::tasks::TASKS_EXTENSION).copied())),
            })),
        }
    }
    /// The object as the client sent it.
    pub fn as_map(&self) -> &Map<String, Value> {
        static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
        match &self.inner {
            None => EMPTY.get_or_init(Map::new),
            Some(c) => c
                .map
                .get_or_init(|| serde_json::from_str(c.raw.get()).unwrap_or_default()),
        }
    }
    /// The same capabilities without elicitation: what a version that has no elicitation
    /// (2024-11-05) leaves of them, whatever the client declared.
    pub(crate) fn without_elicitation(self) -> Self {
        match self.inner {
            Some(c) => Self {
                inner: Some(Arc::new(Capabilities {
                    raw: c.raw.clone(),
                    map: OnceLock::new(),
                    form: false,
                    url: false,
                    sampling: c.sampling,
                    roots: c.roots,
                    tasks: c.tasks,
                })),
            },
            None => Self { inner: None },
        }
    }
    /// Whether the client can answer form-mode elicitation (`elicitation: {}` counts as form).
    pub fn elicitation_form(&self) -> bool {
        self.inner.as_ref().is_some_and(|c| c.form)
    }
    /// Whether the client can answer URL-mode elicitation.
    pub fn elicitation_url(&self) -> bool {
        self.inner.as_ref().is_some_and(|c| c.url)
    }
    /// Whether the client declared `sampling`.
    pub fn sampling(&self) -> bool {
        self.inner.as_ref().is_some_and(|c| c.sampling)
    }
    /// Whether the client declared `roots`.
    pub fn roots(&self) -> bool {
        self.inner.as_ref().is_some_and(|c| c.roots)
    }
    /// Whether the client follows tasks: it declared the extension
    /// `io.modelcontextprotocol/tasks` (2026-07-28).
    ///
    /// ```
    /// use mcp_resolve_runtime::protocol::ClientCapabilities;
    /// let c = ClientCapabilities::from_value(serde_json::json!({
    ///     "extensions": { "io.modelcontextprotocol/tasks": {} }
    /// }));
    /// assert!(c.tasks());
    /// assert!(!ClientCapabilities::default().tasks());
    /// ```
    pub fn tasks(&self) -> bool {
        self.inner.as_ref().is_some_and(|c| c.tasks)
    }
}

impl Implementation {
    /// An implementation from raw JSON text; `None` when it does not have the right shape.
    pub(crate) fn from_raw(raw: &RawValue) -> Option<Self> {
        serde_json::from_str(raw.get()).ok()
    }
}

/// What a valid 2026-07-28 envelope told us.
#[derive(Clone, Debug)]
pub(crate) struct Envelope {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) progress_token: Option<RequestId>,
    /// The least severe log message the client wants (`None`: none, on 2026-07-28; on the
    /// handshake era, what `logging/setLevel` said or the default).
    pub(crate) log_level: Option<super::LogLevel>,
}

/// A request's `_meta`, kept as the raw text of the object; its members are read when first
/// asked for. A connection's client sends the same `_meta` on most requests (the 2026-07-28
/// envelope: its version, capabilities and info), and [`Meta::envelope_cached`] answers one it
/// has seen by its text, without reading it again.
#[derive(Debug, Default)]
pub(crate) struct Meta<'a> {
    /// The object's text as sent; `None` when absent or not an object (which has none of the
    /// members).
    raw: Option<&'a str>,
    /// The members, or why they cannot be read (a key given twice).
    members: std::cell::OnceCell<Result<Members<'a>, String>>,
}

/// The members of a request's `_meta` this crate reads, as raw text.
#[derive(Debug, Deserialize)]
struct Members<'a> {
    #[serde(
        default,
        borrow,
        rename = "io.modelcontextprotocol/protocolVersion",
        deserialize_with = "super::jsonrpc::present"
    )]
    protocol_version: Option<&'a RawValue>,
    #[serde(
        default,
        borrow,
        rename = "io.modelcontextprotocol/clientCapabilities",
        deserialize_with = "super::jsonrpc::present"
    )]
    client_capabilities: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "io.modelcontextprotocol/clientInfo")]
    client_info: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "progressToken")]
    progress_token: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "io.modelcontextprotocol/logLevel")]
    log_level: Option<&'a RawValue>,
    /// A W3C trace context (SEP-414), read only when a subscriber records spans.
    #[serde(default, borrow)]
    traceparent: Option<&'a RawValue>,
    #[serde(default, borrow)]
    tracestate: Option<&'a RawValue>,
}

impl Members<'static> {
    /// None of them.
    const NONE: Self = Self {
        protocol_version: None,
        client_capabilities: None,
        client_info: None,
        progress_token: None,
        log_level: None,
        traceparent: None,
        tracestate: None,
    };
}

impl<'a> Meta<'a> {
    /// `_meta` as its raw text: anything but an object has none of the members.
    pub(crate) fn of(raw: &'a RawValue) -> Self {
        Self {
            raw: Some(raw).filter(|r| super::jsonrpc::is_object(r)).map(RawValue::get),
            members: std::cell::OnceCell::new(),
        }
    }

    /// The text of a `_meta` known to be this object (a [`KnownMeta`] found in the frame), not
    /// read again.
    pub(crate) fn known(text: &'a str) -> Self {
        Self {
            raw: Some(text),
            members: std::cell::OnceCell::new(),
        }
    }

    /// The object's text, where it lies in the frame.
    pub(crate) fn text(&self) -> Option<&'a str> {
        self.raw
    }

    /// The members, read on first use. An object whose members cannot be read (one given
    /// twice) counts as having none here; [`Meta::check`] refuses it.
    fn members(&self) -> &Members<'a> {
        self.read_members().as_ref().unwrap_or(&Members::NONE)
    }

    fn read_members(&self) -> &Result<Members<'a>, String> {
        self.members.get_or_init(|| match self.raw {
            None => Ok(Members::NONE),
            Some(r) => serde_json::from_str(r).map_err(|e| e.to_string()),
        })
    }

    /// -32600 when the members cannot be read (a key given twice): the request is invalid, as
    /// it was when `_meta` was read with the whole message.
    pub(crate) fn check(&self) -> Result<(), ErrorObject> {
        match self.read_members() {
            Ok(_) => Ok(()),
            Err(e) => Err(ErrorObject::invalid_request(format!(
                "Invalid Request: params._meta: {e}"
            ))),
        }
    }

    /// Whether it carries the 2026-07-28 envelope marker (the protocol-version key).
    pub(crate) fn has_envelope(&self) -> bool {
        self.members().protocol_version.is_some()
    }

    /// The `progressToken`, in either era (a string or a number; anything else is ignored).
    pub(crate) fn progress_token(&self) -> Option<RequestId> {
        self.members().progress_token.and_then(RequestId::from_raw)
    }

    /// The 2026-07-28 opt-in to log messages, at this level and above (an unknown level is
    /// ignored: no messages).
    pub(crate) fn log_level(&self) -> Option<super::LogLevel> {
        self.members().log_level.and_then(super::LogLevel::from_raw)
    }

    /// The W3C `traceparent` and `tracestate` (SEP-414), as raw text.
    pub(crate) fn trace(&self) -> (Option<&'a RawValue>, Option<&'a RawValue>) {
        let m = self.members();
        (m.traceparent, m.tracestate)
    }

    /// The version string of the envelope, as sent.
    #[cfg(feature = "http")]
    pub(crate) fn version_str(&self) -> Option<std::borrow::Cow<'a, str>> {
        self.members().protocol_version.and_then(super::jsonrpc::raw_str)
    }

    /// Validates the envelope in the peers' order: required keys (-32602), then the version
    /// (-32022), then the capabilities' shape; returns the version.
    pub(crate) fn validate(&self) -> Result<ProtocolVersion, ErrorObject> {
        self.check()?;
        let m = self.members();
        let (Some(requested), Some(capabilities)) = (m.protocol_version, m.client_capabilities) else {
            let missing: Vec<&str> = [
                (KEY_PROTOCOL_VERSION, m.protocol_version.is_none()),
                (KEY_CLIENT_CAPABILITIES, m.client_capabilities.is_none()),
            ]
            .into_iter()
            .filter_map(|(k, missing)| missing.then_some(k))
            .collect();
            return Err(ErrorObject::invalid_params(format!(
                "params._meta is missing the required envelope key(s): {}",
                missing.join(", ")
            )));
        };
        let version = super::jsonrpc::raw_str(requested)
            .and_then(|v| ProtocolVersion::parse(&v))
            .filter(|v| v.era() == Era::Stateless)
            .ok_or_else(|| unsupported_version(serde_json::from_str(requested.get()).unwrap_or(Value::Null)))?;
        if !super::jsonrpc::is_object(capabilities) {
            return Err(ErrorObject::invalid_params(format!(
                "params._meta[\"{KEY_CLIENT_CAPABILITIES}\"] must be an object"
            )));
        }
        // 2026-07-28 logging: an unrecognised level is -32602, as `logging/setLevel`'s is.
        if m.log_level.is_some() && self.log_level().is_none() {
            return Err(ErrorObject::invalid_params(
                "params._meta[\"io.modelcontextprotocol/logLevel\"] must be one of debug, info, notice, warning, error, critical, alert, emergency",
            ));
        }
        Ok(version)
    }

    /// Validates the envelope (as [`Meta::validate`]) and reads what it says, reusing what
    /// `cache` read from the same text in an earlier request: a client sends the same
    /// capabilities and info on every request of a connection.
    pub(crate) fn envelope_cached(&self, cache: &mut EnvelopeCache) -> Result<Envelope, ErrorObject> {
        // The same `_meta` as the last request's: the same envelope, its members not read again.
        if let (Some(raw), Some((known, envelope))) = (self.raw, &cache.last)
            && known.text() == raw.as_bytes()
        {
            return Ok(envelope.clone());
        }
        let envelope = self.read_envelope(cache)?;
        if cache.remember
            && let Some(raw) = self.raw
        {
            cache.last = Some((KnownMeta::new(raw), envelope.clone()));
        }
        Ok(envelope)
    }

    fn read_envelope(&self, cache: &mut EnvelopeCache) -> Result<Envelope, ErrorObject> {
        let version = self.validate()?;
        let m = self.members();
        let capabilities = match m.client_capabilities {
            None => ClientCapabilities::default(),
            Some(raw) => match &cache.capabilities {
                Some((text, caps)) if **text == *raw.get() => caps.clone(),
                _ => {
                    let caps = ClientCapabilities::from_raw(raw);
                    cache.capabilities = Some((raw.get().into(), caps.clone()));
                    caps
                }
            },
        };
        let client_info = match m.client_info {
            None => None,
            Some(raw) => match &cache.client_info {
                Some((text, info)) if **text == *raw.get() => info.clone(),
                _ => {
                    let info = Implementation::from_raw(raw).map(Arc::new);
                    cache.client_info = Some((raw.get().into(), info.clone()));
                    info
                }
            },
        };
        Ok(Envelope {
            version,
            capabilities,
            client_info,
            progress_token: self.progress_token(),
            log_level: self.log_level(),
        })
    }
}

/// What a connection's earlier envelopes said, by their text.
#[derive(Debug, Default)]
pub(crate) struct EnvelopeCache {
    /// Whether to keep `last`: a connection's cache does; a session made for one request (HTTP,
    /// 2026-07-28) would only copy the text to throw it away.
    pub(crate) remember: bool,
    /// The last request's whole `_meta`, and what it said.
    last: Option<(KnownMeta, Envelope)>,
    capabilities: Option<(Box<str>, ClientCapabilities)>,
    client_info: Option<(Box<str>, Option<Arc<Implementation>>)>,
}

impl EnvelopeCache {
    /// The last request's `_meta`, to look for in the next frame ([`classify_knowing`]).
    ///
    /// [`classify_knowing`]: super::inbound::classify_knowing
    pub(crate) fn known(&self) -> Option<&KnownMeta> {
        self.last.as_ref().map(|(known, _)| known)
    }
}

/// The text of a `_meta` a connection's client sent: a client repeats its envelope on every
/// request, and a frame holding the same text again need not have it parsed again
/// ([`classify_knowing`]).
///
/// [`classify_knowing`]: super::inbound::classify_knowing
#[derive(Debug)]
pub(crate) struct KnownMeta(Box<str>);

impl KnownMeta {
    pub(crate) fn new(text: &str) -> Self {
        Self(text.into())
    }

    /// The text, as the client wrote it.
    pub(crate) fn text(&self) -> &[u8] {
        self.0.as_bytes()
    }

    /// Where the text lies in `frame` as the value of its first `"_meta"` key, if it does.
    pub(crate) fn find(&self, frame: &str) -> Option<std::ops::Range<usize>> {
        static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"_meta\""));
        let bytes = frame.as_bytes();
        let key_end = KEY.find(bytes)? + KEY.needle().len();
        let rest = bytes.get(key_end..)?;
        let colon = rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let rest = rest.get(colon..)?.strip_prefix(b":")?;
        let value = rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let start = bytes.len() - rest.len() + value;
        let end = start + self.0.len();
        (bytes.get(start..end)? == self.0.as_bytes()).then_some(start..end)
    }
}

/// -32022 with `{supported, requested}`.
pub(crate) fn unsupported_version(requested: Value) -> ErrorObject {
    ErrorObject::new(codes::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
        .with_data(json!({ "supported": SUPPORTED, "requested": requested }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Meta<'_> {
        Meta::of(serde_json::from_str(text).unwrap())
    }

    fn meta(v: Value) -> Result<Envelope, ErrorObject> {
        let raw = serde_json::value::to_raw_value(&v).unwrap();
        read(raw.get()).envelope_cached(&mut EnvelopeCache::default())
    }

    /// A `_meta` seen before is answered by its text; any other text is read, and a bad one
    /// is refused even after a good one was seen.
    #[test]
    fn the_last_envelope_is_reused_by_its_text() {
        let mut cache = EnvelopeCache {
            remember: true,
            ..EnvelopeCache::default()
        };
        let first = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":1}"#;
        assert!(cache.known().is_none());
        let env = read(first).envelope_cached(&mut cache).unwrap();
        assert_eq!(env.progress_token, Some(RequestId::from(1)));
        // The connection looks for this text in its next frame.
        assert_eq!(cache.known().map(KnownMeta::text), Some(first.as_bytes()));
        let again = read(first);
        let env = again.envelope_cached(&mut cache).unwrap();
        assert!(env.capabilities.elicitation_form());
        assert_eq!(env.progress_token, Some(RequestId::from(1)));
        // Not read again: the cached answer needed none of its members.
        assert!(again.members.get().is_none());
        let other = first.replace("\"progressToken\":1", "\"progressToken\":2");
        let env = read(&other).envelope_cached(&mut cache).unwrap();
        assert_eq!(env.progress_token, Some(RequestId::from(2)));
        let bad = first.replace("2026-07-28", "2027-01-01");
        assert_eq!(read(&bad).envelope_cached(&mut cache).unwrap_err().code, -32022);
        let missing = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        assert_eq!(read(missing).envelope_cached(&mut cache).unwrap_err().code, -32602);
        // Not an object: none of the members. Members that cannot be read (one given twice):
        // none either, and the request is invalid (-32600), even after a good `_meta` was seen.
        assert!(!read("[1]").has_envelope());
        assert!(read("[1]").check().is_ok());
        let twice = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1,"progressToken":2}"#;
        assert!(!read(twice).has_envelope());
        assert_eq!(read(twice).progress_token(), None);
        assert_eq!(read(twice).check().unwrap_err().code, -32600);
        assert_eq!(read(twice).envelope_cached(&mut cache).unwrap_err().code, -32600);
    }

    #[test]
    fn missing_keys_are_named_in_order() {
        let e = meta(json!({KEY_PROTOCOL_VERSION: "2026-07-28"})).unwrap_err();
        assert_eq!(e.code, -32602);
        assert_eq!(
            e.message,
            format!("params._meta is missing the required envelope key(s): {KEY_CLIENT_CAPABILITIES}")
        );
        let e = Meta::default().validate().unwrap_err();
        assert!(
            e.message
                .ends_with(&format!("{KEY_PROTOCOL_VERSION}, {KEY_CLIENT_CAPABILITIES}"))
        );
    }

    #[test]
    fn keys_are_checked_before_the_version() {
        let e = meta(json!({KEY_PROTOCOL_VERSION: "2027-01-01"})).unwrap_err();
        assert_eq!(e.code, -32602);
    }

    /// A handshake-era version in an envelope is not served as one (that era starts with
    /// `initialize`), yet it is listed among the supported: the client may fall back to it.
    #[test]
    fn unsupported_version_names_both_sides() {
        let e = meta(json!({KEY_PROTOCOL_VERSION: "2025-11-25", KEY_CLIENT_CAPABILITIES: {}})).unwrap_err();
        assert_eq!(e.code, -32022);
        assert_eq!(
            e.data,
            Some(
                json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"], "requested": "2025-11-25"})
            )
        );
        let e = meta(json!({KEY_PROTOCOL_VERSION: 7, KEY_CLIENT_CAPABILITIES: {}})).unwrap_err();
        assert_eq!(e.data.unwrap()["requested"], 7);
    }

    #[test]
    fn client_info_is_optional() {
        let env = meta(json!({KEY_PROTOCOL_VERSION: "2026-07-28", KEY_CLIENT_CAPABILITIES: {"elicitation": {"url": {}}}, "progressToken": 5}))
            .unwrap();
        assert!(env.client_info.is_none());
        assert!(env.capabilities.elicitation_url());
        assert!(!env.capabilities.elicitation_form());
        assert_eq!(env.progress_token, Some(RequestId::from(5)));
    }

    #[test]
    fn capabilities_are_read_without_building_them() {
        let caps = |v: Value| ClientCapabilities::from_value(v);
        assert!(caps(json!({"elicitation": {}})).elicitation_form());
        assert!(caps(json!({"elicitation": { }})).elicitation_form());
        assert!(caps(json!({"elicitation": {"form": {}, "url": {}}})).elicitation_url());
        assert!(!caps(json!({"elicitation": {"url": {}}})).elicitation_form());
        assert!(!caps(json!({"elicitation": true})).elicitation_form());
        assert!(caps(json!({"sampling": {}, "roots": {"listChanged": true}})).roots());
        assert!(!caps(json!([])).sampling());
        let c = caps(json!({"elicitation": {"form": {}}, "x": 1}));
        assert_eq!(c.as_map()["x"], 1);
        assert_eq!(c, c.clone());
    }
}
