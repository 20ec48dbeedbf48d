//! Scopes: what a caller's token must grant before a tool, a prompt or a resource runs. One rule, used by every
//! transport: HTTP answers a refusal with 403 `insufficient_scope` before anything runs; the call
//! itself checks again, so a transport without tokens (stdio, the in-memory client) gets a clear
//! JSON-RPC error.

use crate::principal::Principal;
use crate::protocol::ErrorObject;
use serde_json::json;
use std::sync::Arc;

/// A call refused for want of scopes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Forbidden {
    /// What was refused: `tool`, `prompt` or `resource`.
    pub(crate) kind: &'static str,
    /// The tool's or prompt's name, or the resource's URI (template).
    pub(crate) tool: String,
    /// Every scope the tool needs (what a client should ask for, RFC 6750 §3.1).
    pub(crate) required: Arc<[String]>,
    /// Whether the caller was authenticated at all.
    pub(crate) authenticated: bool,
}

/// Whether `principal` holds every one of `required`; no principal (no token) holds none.
pub(crate) fn allows(required: &[String], principal: Option<&Principal>) -> bool {
    required.iter().all(|s| principal.is_some_and(|p| p.has_scope(s)))
}

/// `Err` when `principal` lacks one of `required`; no principal (no token) lacks them all.
pub(crate) fn check(
    kind: &'static str,
    tool: &str,
    required: &Arc<[String]>,
    principal: Option<&Principal>,
) -> Result<(), Forbidden> {
    if allows(required, principal) {
        return Ok(());
    }
    Err(Forbidden {
        kind,
        tool: tool.to_owned(),
        required: required.clone(),
        authenticated: principal.is_some(),
    })
}

impl Forbidden {
    /// The scopes, space-separated, as the `scope` of a challenge.
    pub(crate) fn scope(&self) -> String {
        self.required.join(" ")
    }

    /// The JSON-RPC error: -32600 with the scopes in `data`.
    pub(crate) fn error(&self) -> ErrorObject {
        let list = self
            .required
            .iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let message = if self.authenticated {
            format!(
                "Forbidden: {} `{}` needs the scope(s) {list}, which the caller's token does not grant",
                self.kind, self.tool
            )
        } else {
            format!(
                "Forbidden: {} `{}` needs the scope(s) {list}, and this connection carries no token; serve it over HTTP with bearer authentication",
                self.kind, self.tool
            )
        };
        ErrorObject::invalid_request(message)
            .with_data(json!({ "error": "insufficient_scope", "requiredScopes": &*self.required }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(scopes: &[&str]) -> Principal {
        Principal {
            subject: "alice".into(),
            issuer: None,
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn every_required_scope_must_be_granted() {
        let required: Arc<[String]> = vec!["a".to_string(), "b".to_string()].into();
        assert!(check("tool", "t", &required, Some(&principal(&["b", "a", "c"]))).is_ok());
        let denied = check("tool", "t", &required, Some(&principal(&["a"]))).unwrap_err();
        assert_eq!(denied.scope(), "a b");
        assert!(denied.authenticated);
        let e = denied.error();
        assert_eq!(e.code, -32600);
        assert!(e.message.contains("`a`, `b`"), "{}", e.message);
        let anonymous = check("tool", "t", &required, None).unwrap_err();
        assert!(anonymous.error().message.contains("carries no token"));
        assert!(
            check("tool", "t", &Arc::from(Vec::new()), None).is_ok(),
            "no scopes, no check"
        );
    }
}
