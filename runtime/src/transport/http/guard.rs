//! What every request passes before its body is read: the DNS-rebinding defence (`Host`,
//! `Origin`) and the bearer token.

use super::options::HttpOptions;
use super::{Body, WithStatus, error_response, header_str};
use crate::auth::AuthError;
use crate::authority::{is_loopback_host, parse_host, parse_origin};
use crate::principal::Principal;
use crate::protocol::{ErrorObject, codes};
use http::uri::{Authority, Scheme};
use http::{HeaderMap, Response, StatusCode, header};

/// Whether `authority` (a parsed `Host`) names this server: a loopback name, or one of
/// `allowed` (each `name` or `name:port`, lowercase).
fn host_listed(authority: &Authority, allowed: &[String]) -> bool {
    let whole = authority.as_str().to_ascii_lowercase();
    let name = authority.host().to_ascii_lowercase();
    is_loopback_host(&name) || allowed.iter().any(|a| *a == whole || *a == name)
}

/// DNS-rebinding and cross-origin defence, on every bind. `Host` must parse and name this server
/// (a loopback name or one of `hosts`), unless the server opted out
/// ([`HttpOptions::allow_any_host`]). An `Origin`, when sent, must parse and be a loopback
/// origin, an allowed one ([`HttpOptions::allow_origin`]), or this very server (the same
/// authority as a checked `Host`: a page of the server posting to it).
pub(super) fn hosts_allowed(options: &HttpOptions, hosts: &[String], headers: &HeaderMap) -> bool {
    let host = header_str(headers, "host").and_then(parse_host);
    let host_checked = !options.any_host;
    if host_checked && !host.as_ref().is_some_and(|h| host_listed(h, hosts)) {
        return false;
    }
    let Some(origin) = header_str(headers, "origin") else {
        return true;
    };
    let Some((scheme, authority)) = parse_origin(origin) else {
        return false;
    };
    if scheme != Scheme::HTTP && scheme != Scheme::HTTPS {
        return false;
    }
    let listed = format!("{scheme}://{authority}").to_ascii_lowercase();
    is_loopback_host(authority.host())
        || options.allowed_origins.contains(&listed)
        || (host_checked && host.is_some_and(|h| h.as_str().eq_ignore_ascii_case(authority.as_str())))
}

/// The headers that may appear at most once, and the JSON-RPC code of their refusal: the ones a
/// 2026-07-28 client mirrors from the body (-32020, as for a header that disagrees with the
/// body), and the ones that say who calls and where (-32600). A proxy that reads the last or the
/// joined value of a repeated one would see another request than the server runs.
const SINGLE: [(&str, i64); 6] = [
    ("host", codes::INVALID_REQUEST),
    ("origin", codes::INVALID_REQUEST),
    ("authorization", codes::INVALID_REQUEST),
    ("mcp-session-id", codes::INVALID_REQUEST),
    ("mcp-protocol-version", codes::HEADER_MISMATCH),
    ("mcp-method", codes::HEADER_MISMATCH),
];

/// The first header of a request that appears more than once but may appear once only, with the
/// code of its refusal: those of [`SINGLE`], `Mcp-Name`, and every `Mcp-Param-*`.
pub(super) fn repeated_header(headers: &HeaderMap) -> Option<(String, i64)> {
    if let Some((name, code)) = SINGLE.iter().find(|(name, _)| repeated(headers, name)) {
        return Some(((*name).to_owned(), *code));
    }
    headers
        .keys()
        .map(http::HeaderName::as_str)
        .filter(|name| *name == "mcp-name" || name.starts_with("mcp-param-"))
        .find(|name| repeated(headers, name))
        .map(|name| (name.to_owned(), codes::HEADER_MISMATCH))
}

/// Whether a header that may appear once appears more than once (two `Host` headers are
/// ambiguous: a proxy and this server could each read another one).
fn repeated(headers: &HeaderMap, name: &str) -> bool {
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
            // RFC 6750 §3: no error code when no token came; the metadata link either way, and
            // the scopes a token for this server should carry (the configured
            // `scopes_supported`; what a tool needs beyond them comes as a 403 step-up).
            let scope = options.scopes_supported.join(" ");
            let mut params: Vec<(&str, &str)> = Vec::new();
            if token.is_some() {
                params.push(("error", "invalid_token"));
            }
            if !scope.is_empty() {
                params.push(("scope", &scope));
            }
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                super::metadata::challenge(options, headers, &params),
            );
            Err(r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn allowed(options: &HttpOptions, hosts: &[&str], host: &str, origin: Option<&str>) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            headers.insert("origin", HeaderValue::from_str(o).unwrap());
        }
        let hosts: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
        hosts_allowed(options, &hosts, &headers)
    }

    #[test]
    fn host_and_origin_are_parsed_before_they_are_judged() {
        let o = HttpOptions::default();
        assert!(allowed(&o, &[], "127.0.0.1:8000", None));
        assert!(allowed(&o, &[], "[::1]:8000", Some("http://[::1]:3000")));
        // Found by fuzzing: an unclosed `[` sliced past the end of the header and panicked.
        assert!(!allowed(&o, &[], "[::1", None));
        assert!(!allowed(&o, &[], "[l_b.[nwcfb[", None));
        assert!(!allowed(&o, &[], "127.0.0.1", Some("http://[x")));
        // Held-out probes of issue 22: not loopback, whatever their prefix says.
        assert!(!allowed(&o, &[], "127.0.0.1", Some("http://[::1]evil.com")));
        assert!(!allowed(&o, &[], "127.attacker.example", None));
        assert!(!allowed(&o, &[], "127.0.0.1", Some("http://127.attacker.example")));
        assert!(!allowed(&o, &[], "127.0.0.1:1@evil.com", None));
        assert!(!allowed(&o, &[], "127.0.0.1", Some("null")));
    }

    #[test]
    fn an_allowed_origin_is_served_and_another_refused() {
        let o = HttpOptions::default().allow_origin("https://app.example.com");
        let hosts = ["notes.example.com"];
        assert!(allowed(
            &o,
            &hosts,
            "notes.example.com",
            Some("https://app.example.com")
        ));
        assert!(allowed(
            &o,
            &hosts,
            "notes.example.com",
            Some("HTTPS://APP.example.com")
        ));
        assert!(!allowed(
            &o,
            &hosts,
            "notes.example.com",
            Some("https://evil.example.com")
        ));
        assert!(!allowed(
            &o,
            &hosts,
            "notes.example.com",
            Some("http://app.example.com")
        ));
        // The server's own pages post with their own origin.
        assert!(allowed(
            &o,
            &hosts,
            "notes.example.com",
            Some("https://notes.example.com")
        ));
        assert!(!allowed(
            &o,
            &hosts,
            "evil.example.com",
            Some("https://evil.example.com")
        ));
    }

    /// An allowed host is listed as a name (any port) or as `name:port` (that port only).
    #[test]
    fn an_allowed_host_matches_by_name_or_by_name_and_port() {
        let o = HttpOptions::default();
        assert!(allowed(&o, &["notes.example.com"], "notes.example.com:8443", None));
        assert!(allowed(&o, &["notes.example.com:8443"], "notes.example.com:8443", None));
        assert!(allowed(&o, &["notes.example.com:8443"], "NOTES.example.com:8443", None));
        assert!(!allowed(
            &o,
            &["notes.example.com:8443"],
            "notes.example.com:9000",
            None
        ));
        assert!(!allowed(&o, &["notes.example.com:8443"], "notes.example.com", None));
    }

    #[test]
    fn origin_is_checked_even_when_any_host_is_allowed() {
        let o = HttpOptions::default().allow_any_host();
        assert!(allowed(&o, &[], "whatever.example", None));
        assert!(!allowed(&o, &[], "whatever.example", Some("https://whatever.example")));
        assert!(allowed(&o, &[], "whatever.example", Some("http://localhost:5173")));
    }

    #[test]
    fn repeated_headers_are_named() {
        let mut headers = HeaderMap::new();
        headers.append("mcp-param-region", HeaderValue::from_static("eu-west"));
        assert_eq!(repeated_header(&headers), None);
        headers.append("mcp-param-region", HeaderValue::from_static("us-east"));
        assert_eq!(
            repeated_header(&headers),
            Some(("mcp-param-region".into(), codes::HEADER_MISMATCH))
        );
        let mut headers = HeaderMap::new();
        headers.append("authorization", HeaderValue::from_static("Bearer a"));
        headers.append("authorization", HeaderValue::from_static("Bearer b"));
        assert_eq!(
            repeated_header(&headers),
            Some(("authorization".into(), codes::INVALID_REQUEST))
        );
    }

    #[test]
    fn a_repeated_mcp_name_is_named_as_a_header_mismatch() {
        let mut headers = HeaderMap::new();
        headers.append("mcp-name", HeaderValue::from_static("a"));
        headers.append("mcp-method", HeaderValue::from_static("tools/call"));
        assert_eq!(repeated_header(&headers), None);
        headers.append("mcp-name", HeaderValue::from_static("b"));
        assert_eq!(
            repeated_header(&headers),
            Some(("mcp-name".into(), codes::HEADER_MISMATCH))
        );
    }

    fn with(name: &'static str, values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(name, HeaderValue::from_static(v));
        }
        headers
    }

    #[test]
    fn json_bodies_and_event_streams_are_recognised_by_media_type() {
        for ok in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x=y",
        ] {
            assert!(is_json(&with("content-type", &[ok])), "{ok}");
        }
        for bad in ["text/plain", "application/jsonx", "application/json-seq", ""] {
            assert!(!is_json(&with("content-type", &[bad])), "{bad}");
        }
        assert!(!is_json(&HeaderMap::new()));
        for ok in [
            &["text/event-stream"][..],
            &["application/json, Text/Event-Stream;q=0.9"],
            &["application/json", "text/event-stream"],
        ] {
            assert!(accepts_event_stream(&with("accept", ok)), "{ok:?}");
        }
        for bad in [&["text/html"][..], &["text/event-streams"], &[]] {
            assert!(!accepts_event_stream(&with("accept", bad)), "{bad:?}");
        }
    }

    async fn body_of(r: Response<Body>) -> String {
        use http_body_util::BodyExt;
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_refused_host_or_origin_is_a_403_saying_so() {
        let r = forbidden(&HeaderMap::new());
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(body_of(r).await.contains("Forbidden: Host or Origin not allowed"));
    }

    struct OnlyGood;
    impl crate::auth::TokenVerifier for OnlyGood {
        fn verify<'a>(&'a self, token: &'a str) -> crate::auth::BoxFuture<'a, Result<Principal, AuthError>> {
            Box::pin(async move {
                match token {
                    "good" => Ok(Principal {
                        subject: "alice".into(),
                        issuer: None,
                        scopes: Vec::new(),
                    }),
                    _ => Err(AuthError::new("bad token")),
                }
            })
        }
    }

    #[tokio::test]
    async fn a_bearer_token_is_required_once_a_verifier_is_set() {
        let headers = |auth: Option<&'static str>| {
            let mut h = with("host", &["127.0.0.1:8000"]);
            if let Some(a) = auth {
                h.insert("authorization", HeaderValue::from_static(a));
            }
            h
        };
        // No verifier: no principal, nothing required.
        assert!(matches!(
            principal(&HttpOptions::default(), &headers(None)).await,
            Ok(None)
        ));
        let options = HttpOptions::default().bearer(OnlyGood).scopes_supported(["notes:read"]);
        for auth in ["Bearer good", "bearer good", "BEARER  good "] {
            let p = principal(&options, &headers(Some(auth))).await.ok().flatten();
            assert_eq!(p.map(|p| p.subject), Some("alice".into()), "{auth}");
        }
        let challenge = |r: &Response<Body>| r.headers()[header::WWW_AUTHENTICATE].to_str().unwrap().to_owned();
        // No token: 401, no error code, the scopes to ask for.
        let missing = principal(&options, &headers(None)).await.unwrap_err();
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        let c = challenge(&missing);
        assert!(!c.contains("error=") && c.contains("scope=\"notes:read\""), "{c}");
        assert!(
            body_of(missing)
                .await
                .contains("Unauthorized: a valid bearer token is required")
        );
        // A bad token, or another scheme: 401, invalid_token.
        for auth in ["Bearer bad", "Basic good"] {
            let refused = principal(&options, &headers(Some(auth))).await.unwrap_err();
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
            let c = challenge(&refused);
            assert_eq!(
                c.contains("error=\"invalid_token\""),
                auth == "Bearer bad",
                "{auth}: {c}"
            );
        }
        // No scopes configured: none named.
        let plain = HttpOptions::default().bearer(OnlyGood);
        let c = challenge(&principal(&plain, &headers(None)).await.unwrap_err());
        assert!(!c.contains("scope="), "{c}");
    }
}
