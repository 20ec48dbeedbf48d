//! OAuth 2.0 Protected Resource Metadata (RFC 9728): the document that tells an MCP client which
//! authorization server issues tokens for this server and which scopes exist, and the
//! `WWW-Authenticate` challenges (RFC 6750 §3) that point to it.

use super::options::HttpOptions;
use super::{Body, State, WithStatus, full, header_str};
use crate::access::Forbidden;
use crate::protocol::ErrorObject;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use serde::Serialize;

/// Where RFC 9728 §3 puts the document: this, then the resource's path (if any).
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The metadata document (RFC 9728 §2).
#[derive(Serialize)]
struct Document<'a> {
    resource: &'a str,
    /// Never empty: a server with bearer tokens and no authorization server does not start.
    authorization_servers: &'a [String],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    scopes_supported: &'a [String],
    bearer_methods_supported: [&'static str; 1],
    resource_name: &'a str,
}

/// The resource's identifier: the configured one, or `http(s)://<Host><path>` (plain `http` only
/// for a loopback `Host`) when `Host` was checked against the allowed hosts (never under
/// [`HttpOptions::allow_any_host`], which needs the configured one to start with bearer tokens).
pub(super) fn resource(options: &HttpOptions, headers: &HeaderMap) -> String {
    if let Some(r) = &options.resource {
        return r.clone();
    }
    let host = header_str(headers, "host")
        .and_then(crate::authority::parse_host)
        .filter(|_| !options.any_host);
    let Some(host) = host else {
        return format!("https://localhost{}", options.path);
    };
    let scheme = if crate::authority::is_loopback_host(host.host()) {
        "http"
    } else {
        "https"
    };
    format!("{scheme}://{}{}", host.as_str().to_ascii_lowercase(), options.path)
}

/// The document's URL for `resource` (RFC 9728 §3.1: the well-known segment goes between the
/// authority and the path).
/// A `resource` that is no absolute URL (refused when the server starts) keeps its text.
pub(super) fn url_for(resource: &str) -> String {
    let Some((scheme, authority, uri)) = crate::authority::parse_url(resource) else {
        return format!("{}{WELL_KNOWN}", resource.trim_end_matches('/'));
    };
    let path = uri.path().trim_end_matches('/');
    format!("{scheme}://{authority}{WELL_KNOWN}{path}")
}

/// Whether `path` is where this server's document is served: the bare well-known path, or it
/// followed by the endpoint's path or the configured resource's path.
pub(super) fn is_document_path(options: &HttpOptions, path: &str) -> bool {
    let Some(suffix) = path.strip_prefix(WELL_KNOWN) else {
        return false;
    };
    if suffix.is_empty() || suffix == options.path {
        return true;
    }
    options.resource.as_deref().is_some_and(|r| {
        let doc = url_for(r);
        doc.find(WELL_KNOWN)
            .is_some_and(|i| &doc[i + WELL_KNOWN.len()..] == suffix)
    })
}

/// A `WWW-Authenticate` value: `Bearer` with `resource_metadata` and the given parameters.
pub(super) fn challenge(options: &HttpOptions, headers: &HeaderMap, params: &[(&str, &str)]) -> HeaderValue {
    let mut value = String::from("Bearer ");
    for (name, v) in params {
        value.push_str(&format!("{name}=\"{}\", ", quoted(v)));
    }
    let url = url_for(&resource(options, headers));
    value.push_str(&format!("resource_metadata=\"{}\"", quoted(&url)));
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

/// A quoted-string's content (RFC 9110 §5.6.4): `"` and `\` escaped, controls dropped.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().filter(|c| !c.is_control()) {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl State {
    /// `GET /.well-known/oauth-protected-resource[/path]`: the document, when bearer tokens are
    /// required (a server without them protects nothing: 404).
    pub(super) fn metadata(&self, method: &http::Method, headers: &HeaderMap) -> Response<Body> {
        if self.options.verifier.is_none() {
            return super::empty(StatusCode::NOT_FOUND);
        }
        if method != http::Method::GET && method != http::Method::HEAD {
            let mut r = super::empty(StatusCode::METHOD_NOT_ALLOWED);
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
        let resource = resource(&self.options, headers);
        let document = Document {
            resource: &resource,
            authorization_servers: &self.authorization_servers,
            scopes_supported: &self.scopes_supported,
            bearer_methods_supported: ["header"],
            resource_name: &self.server.info().name,
        };
        let body = serde_json::to_vec(&document).unwrap_or_default();
        let mut r = Response::new(full(body));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
        if self.options.resource.is_none() {
            // Made from the (checked) `Host`: a cache keeps one document per host.
            r.headers_mut().insert(header::VARY, HeaderValue::from_static("Host"));
        }
        r
    }

    /// 403 `insufficient_scope` (RFC 6750 §3.1) for a call the caller's token may not make,
    /// naming every scope the tool needs; nothing of the call has run.
    pub(super) fn insufficient_scope(
        &self,
        headers: &HeaderMap,
        id: crate::protocol::RequestId,
        forbidden: &Forbidden,
    ) -> Response<Body> {
        let error: ErrorObject = forbidden.error();
        let mut r = super::error_response(Some(id), error).with_status(StatusCode::FORBIDDEN);
        if self.options.verifier.is_some() {
            let scope = forbidden.scope();
            let value = challenge(
                &self.options,
                headers,
                &[("error", "insufficient_scope"), ("scope", &scope)],
            );
            r.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_sits_between_authority_and_path() {
        assert_eq!(
            url_for("https://notes.example.com/mcp"),
            "https://notes.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            url_for("https://notes.example.com"),
            "https://notes.example.com/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            url_for("http://127.0.0.1:8000/a/b/?q=1"),
            "http://127.0.0.1:8000/.well-known/oauth-protected-resource/a/b"
        );
    }

    #[test]
    fn document_paths() {
        let options = HttpOptions::default().resource("https://api.example.com/tenant/mcp");
        assert!(is_document_path(&options, WELL_KNOWN));
        assert!(is_document_path(&options, "/.well-known/oauth-protected-resource/mcp"));
        assert!(is_document_path(
            &options,
            "/.well-known/oauth-protected-resource/tenant/mcp"
        ));
        assert!(!is_document_path(
            &options,
            "/.well-known/oauth-protected-resource/other"
        ));
        assert!(!is_document_path(&options, "/mcp"));
    }

    #[test]
    fn challenges_quote_their_values() {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("127.0.0.1:9"));
        let v = challenge(&HttpOptions::default(), &headers, &[("error", "a\"b")]);
        assert_eq!(
            v.to_str().unwrap(),
            r#"Bearer error="a\"b", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp""#
        );
    }
}
