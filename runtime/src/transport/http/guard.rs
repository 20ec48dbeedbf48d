//! What every request passes before its body is read: the DNS-rebinding defence (`Host`,
//! `Origin`) and the bearer token.

use super::options::HttpOptions;
use super::{Body, WithStatus, error_response, header_str};
use crate::auth::AuthError;
use crate::context::Principal;
use crate::protocol::ErrorObject;
use http::{HeaderMap, Response, StatusCode, header};

pub(super) fn is_loopback_name(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "::1")
}

/// `host[:port]` → host.
pub(super) fn host_part(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        // `[v6]:port` → `[v6]`. A `[` never closed is kept whole, and names no host of ours.
        return rest.find(']').map_or(authority, |end| &authority[..end + 2]);
    }
    authority.rsplit_once(':').map_or(authority, |(h, _)| h)
}

/// DNS-rebinding defence: `Host` and `Origin` must name this server (when `check` is on).
pub(super) fn hosts_allowed(options: &HttpOptions, check: bool, headers: &HeaderMap) -> bool {
    if !check {
        return true;
    }
    let host_ok = match header_str(headers, "host") {
        None => false,
        // `user@host` is not a host: a parser that reads the part after `@` would be fooled.
        Some(h) if h.contains('@') => false,
        Some(h) => {
            let h = h.to_ascii_lowercase();
            is_loopback_name(host_part(&h)) || options.allowed_hosts.iter().any(|a| *a == h || *a == host_part(&h))
        }
    };
    let origin_ok = match header_str(headers, "origin") {
        None => true,
        Some(o) => {
            let o = o.to_ascii_lowercase();
            let authority = o.split_once("://").map_or("", |(_, rest)| rest);
            !authority.contains('@') && (is_loopback_name(host_part(authority)) || options.allowed_origins.contains(&o))
        }
    };
    host_ok && origin_ok
}

/// Whether a header that may appear once appears more than once (two `Host` headers are
/// ambiguous: a proxy and this server could each read another one).
pub(super) fn repeated(headers: &HeaderMap, name: &str) -> bool {
    headers.get_all(name).iter().nth(1).is_some()
}

/// Whether `Content-Type` is the JSON media type (`application/json`, parameters allowed).
pub(super) fn is_json(headers: &HeaderMap) -> bool {
    header_str(headers, "content-type").is_some_and(|c| {
        let media = c.split(';').next().unwrap_or("").trim();
        media.eq_ignore_ascii_case("application/json")
    })
}

/// Whether `Accept` lists the media type `text/event-stream` (parameters allowed), as a GET
/// stream's request must.
pub(super) fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let media = range.split(';').next().unwrap_or("").trim();
            media.eq_ignore_ascii_case("text/event-stream")
        })
}

/// The 403 of a refused `Host` or `Origin`.
pub(super) fn forbidden(headers: &HeaderMap) -> Response<Body> {
    static REFUSED: crate::throttle::Throttle = crate::throttle::Throttle::new();
    if let Some(left_out) = REFUSED.admit() {
        tracing::warn!(host = ?headers.get("host"), origin = ?headers.get("origin"), left_out, "request refused: Host or Origin not allowed");
    }
    error_response(
        None,
        ErrorObject::invalid_request("Forbidden: Host or Origin not allowed"),
    )
    .with_status(StatusCode::FORBIDDEN)
}

/// The caller, when a verifier is configured: `Ok(None)` without one, `Err` with the 401 to send.
pub(super) async fn principal(options: &HttpOptions, headers: &HeaderMap) -> Result<Option<Principal>, Response<Body>> {
    let Some(verifier) = &options.verifier else {
        return Ok(None);
    };
    // The scheme is case-insensitive (RFC 7235): `Bearer`, `bearer`, `BEARER`.
    let token = header_str(headers, "authorization").and_then(|a| {
        let (scheme, token) = a.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    });
    let verified = match token {
        Some(t) => verifier.verify(t).await,
        None => Err(AuthError::new("no bearer token")),
    };
    match verified {
        Ok(p) => Ok(Some(p)),
        Err(e) => {
            static REFUSED: crate::throttle::Throttle = crate::throttle::Throttle::new();
            if let Some(left_out) = REFUSED.admit() {
                tracing::info!(reason = %e, left_out, "request refused: bearer token");
            }
            let mut r = error_response(
                None,
                ErrorObject::invalid_request("Unauthorized: a valid bearer token is required"),
            )
            .with_status(StatusCode::UNAUTHORIZED);
            // RFC 6750 §3: no error code when no token came; the metadata link either way.
            let params: &[(&str, &str)] = if token.is_some() {
                &[("error", "invalid_token")]
            } else {
                &[]
            };
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                super::metadata::challenge(options, headers, params),
            );
            Err(r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn host_part_of_bracketed_and_unclosed_authorities() {
        assert_eq!(host_part("[::1]:8000"), "[::1]");
        assert_eq!(host_part("127.0.0.1:8000"), "127.0.0.1");
        // Found by fuzzing: an unclosed `[` sliced past the end of the header and panicked.
        assert_eq!(host_part("[l_b.[nwcfb["), "[l_b.[nwcfb[");
        assert_eq!(host_part("[é"), "[é");
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("[::1"));
        assert!(!hosts_allowed(&HttpOptions::default(), true, &headers));
        headers.insert("host", HeaderValue::from_static("127.0.0.1"));
        headers.insert("origin", HeaderValue::from_static("http://[x"));
        assert!(!hosts_allowed(&HttpOptions::default(), true, &headers));
    }
}
