//! The 2026-07-28 per-request `_meta` envelope, client capabilities and implementation info.

use super::jsonrpc::{ErrorObject, codes};
use super::version::{Era, ProtocolVersion, supported_stateless};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub(crate) const META: &str = "_meta";
pub(crate) const KEY_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const KEY_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const KEY_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const KEY_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The name and version of a client or server.
///
/// ```
/// use mcp_resolve_runtime::Implementation;
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
/// use mcp_resolve_runtime::{ClientCapabilities, ProtocolVersion};
/// let caps = ClientCapabilities::from_value(serde_json::json!({"elicitation": {}}));
/// // `{}` means form mode only.
/// assert!(caps.elicitation_form());
/// assert!(!caps.elicitation_url());
/// assert!(!ClientCapabilities::default().elicitation_form());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientCapabilities {
    // Shared: every call of a connection carries the capabilities its handshake declared.
    raw: std::sync::Arc<Map<String, Value>>,
}

impl ClientCapabilities {
    /// Wraps the capabilities object as sent; anything but an object counts as no capability.
    pub fn from_value(v: Value) -> Self {
        match v {
            Value::Object(raw) => Self { raw: raw.into() },
            _ => Self::default(),
        }
    }
    /// The object as the client sent it.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.raw
    }
    fn elicitation(&self) -> Option<&Map<String, Value>> {
        self.raw.get("elicitation").and_then(Value::as_object)
    }
    /// Whether the client can answer form-mode elicitation (`elicitation: {}` counts as form).
    pub fn elicitation_form(&self) -> bool {
        self.elicitation()
            .is_some_and(|e| e.is_empty() || e.contains_key("form"))
    }
    /// Whether the client can answer URL-mode elicitation.
    pub fn elicitation_url(&self) -> bool {
        self.elicitation().is_some_and(|e| e.contains_key("url"))
    }
    /// Whether the client declared `sampling`.
    pub fn sampling(&self) -> bool {
        self.raw.get("sampling").is_some_and(Value::is_object)
    }
    /// Whether the client declared `roots`.
    pub fn roots(&self) -> bool {
        self.raw.get("roots").is_some_and(Value::is_object)
    }
}

/// What a valid 2026-07-28 envelope told us.
#[derive(Clone, Debug)]
pub(crate) struct Envelope {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<std::sync::Arc<Implementation>>,
    pub(crate) progress_token: Option<Value>,
}

/// Whether the params carry the 2026-07-28 envelope marker (the protocol-version key).
pub(crate) fn has_envelope(params: Option<&Map<String, Value>>) -> bool {
    params
        .and_then(|p| p.get(META))
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(KEY_PROTOCOL_VERSION))
}

/// The `progressToken` of a request's `_meta`, in either era.
pub(crate) fn progress_token(params: Option<&Map<String, Value>>) -> Option<Value> {
    params
        .and_then(|p| p.get(META))
        .and_then(Value::as_object)
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_number())
        .cloned()
}

/// The version string of the envelope, as sent.
#[cfg(feature = "http")]
pub(crate) fn meta_version(params: Option<&Map<String, Value>>) -> Option<&str> {
    params
        .and_then(|p| p.get(META))
        .and_then(Value::as_object)
        .and_then(|m| m.get(KEY_PROTOCOL_VERSION))
        .and_then(Value::as_str)
}

/// Validates the envelope in the peers' order: required keys (-32602), then the version (-32022),
/// then the capabilities' shape; returns the version.
pub(crate) fn validate(params: Option<&Map<String, Value>>) -> Result<ProtocolVersion, ErrorObject> {
    let meta = params.and_then(|p| p.get(META)).and_then(Value::as_object);
    let Some(meta) = meta.filter(|m| m.contains_key(KEY_PROTOCOL_VERSION) && m.contains_key(KEY_CLIENT_CAPABILITIES))
    else {
        let missing: Vec<&str> = [KEY_PROTOCOL_VERSION, KEY_CLIENT_CAPABILITIES]
            .into_iter()
            .filter(|k| !meta.is_some_and(|m| m.contains_key(*k)))
            .collect();
        return Err(ErrorObject::invalid_params(format!(
            "params._meta is missing the required envelope key(s): {}",
            missing.join(", ")
        )));
    };
    let requested = meta.get(KEY_PROTOCOL_VERSION);
    let version = requested
        .and_then(Value::as_str)
        .and_then(ProtocolVersion::parse)
        .filter(|v| v.era() == Era::Stateless)
        .ok_or_else(|| unsupported_version(requested.cloned().unwrap_or(Value::Null)))?;
    if !meta.get(KEY_CLIENT_CAPABILITIES).is_some_and(Value::is_object) {
        return Err(ErrorObject::invalid_params(format!(
            "params._meta[\"{KEY_CLIENT_CAPABILITIES}\"] must be an object"
        )));
    }
    Ok(version)
}

/// Validates the envelope (as [`validate`]) and moves what it says out of the params, which lose
/// their `_meta`.
pub(crate) fn take(mut params: Option<&mut Map<String, Value>>) -> Result<Envelope, ErrorObject> {
    let version = validate(params.as_deref())?;
    let progress_token = progress_token(params.as_deref());
    let mut meta = match params.as_mut().and_then(|p| p.remove(META)) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let capabilities = ClientCapabilities::from_value(meta.remove(KEY_CLIENT_CAPABILITIES).unwrap_or_default());
    let client_info = meta
        .remove(KEY_CLIENT_INFO)
        .and_then(|v| serde_json::from_value(v).ok())
        .map(std::sync::Arc::new);
    Ok(Envelope {
        version,
        capabilities,
        client_info,
        progress_token,
    })
}

/// -32022 with `{supported, requested}`.
pub(crate) fn unsupported_version(requested: Value) -> ErrorObject {
    ErrorObject::new(codes::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
        .with_data(json!({ "supported": supported_stateless(), "requested": requested }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn missing_keys_are_named_in_order() {
        let e = validate(Some(&params(json!({"_meta": {KEY_PROTOCOL_VERSION: "2026-07-28"}})))).unwrap_err();
        assert_eq!(e.code, -32602);
        assert_eq!(
            e.message,
            format!("params._meta is missing the required envelope key(s): {KEY_CLIENT_CAPABILITIES}")
        );
        let e = validate(None).unwrap_err();
        assert!(
            e.message
                .ends_with(&format!("{KEY_PROTOCOL_VERSION}, {KEY_CLIENT_CAPABILITIES}"))
        );
    }

    #[test]
    fn keys_are_checked_before_the_version() {
        let e = validate(Some(&params(json!({"_meta": {KEY_PROTOCOL_VERSION: "2027-01-01"}})))).unwrap_err();
        assert_eq!(e.code, -32602);
    }

    #[test]
    fn unsupported_version_names_both_sides() {
        let p = params(json!({"_meta": {KEY_PROTOCOL_VERSION: "2025-11-25", KEY_CLIENT_CAPABILITIES: {}}}));
        let e = validate(Some(&p)).unwrap_err();
        assert_eq!(e.code, -32022);
        assert_eq!(
            e.data,
            Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}))
        );
    }

    #[test]
    fn client_info_is_optional() {
        let p = params(
            json!({"_meta": {KEY_PROTOCOL_VERSION: "2026-07-28", KEY_CLIENT_CAPABILITIES: {"elicitation": {"url": {}}}, "progressToken": 5}}),
        );
        let mut p = p;
        let env = take(Some(&mut p)).unwrap();
        assert!(!p.contains_key(META), "the envelope is moved out of the params");
        assert!(env.client_info.is_none());
        assert!(env.capabilities.elicitation_url());
        assert!(!env.capabilities.elicitation_form());
        assert_eq!(env.progress_token, Some(json!(5)));
    }
}
