//! The shipped HS256 JWT verifier, end to end over HTTP.
#![cfg(feature = "jwt")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::{Hs256Verifier, HttpOptions};
use serde_json::{Value, json};

const SECRET: &[u8] = b"test secret: at least thirty-two bytes long";
/// The server's canonical resource URI: the audience its tokens must name.
const AUDIENCE: &str = "https://notes.test/mcp";

/// Who is calling.
#[tool]
async fn whoami(cx: Context) -> String {
    cx.principal()
        .map(|p| format!("{} from {}", p.subject, p.issuer.as_deref().unwrap_or("?")))
        .unwrap_or_default()
}

fn token(claims: Value, secret: &[u8]) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret).unwrap(),
    )
    .unwrap()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[path = "support/identity.rs"]
mod identity;

use identity::call_whoami as call;

#[tokio::test]
async fn hs256_tokens_are_verified() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let verifier = Hs256Verifier::new(SECRET, AUDIENCE)
        .unwrap()
        .issuer("https://auth.test");
    tokio::spawn(
        Server::new("jwt")
            .tool(whoami)
            .serve_http_on(listener, HttpOptions::default().bearer(verifier)),
    );
    let good = json!({"sub": "alice", "iss": "https://auth.test", "aud": AUDIENCE, "exp": now() + 60});
    let (status, body) = call(addr, &token(good.clone(), SECRET)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "alice from https://auth.test");
    let mut expired = good.clone();
    expired["exp"] = json!(now() - 3600);
    let mut other_audience = good.clone();
    other_audience["aud"] = json!("elsewhere");
    let mut other_issuer = good.clone();
    other_issuer["iss"] = json!("https://evil.test");
    for bad in [
        token(expired, SECRET),
        token(other_audience, SECRET),
        token(other_issuer, SECRET),
        token(good.clone(), b"another secret, also thirty-two bytes long"),
        "not.a.jwt".to_string(),
    ] {
        assert_eq!(call(addr, &bad).await.0, 401, "{bad}");
    }
    // The audience (always) and a configured issuer are required, not only checked when present;
    // `nbf` and a future `iat` are checked (beyond the 60 s leeway).
    let without = |claim: &str| {
        let mut c = good.clone();
        c.as_object_mut().unwrap().remove(claim);
        token(c, SECRET)
    };
    let with = |claim: &str, v: Value| {
        let mut c = good.clone();
        c[claim] = v;
        token(c, SECRET)
    };
    for (what, bad) in [
        ("no aud", without("aud")),
        ("another audience", with("aud", json!("https://other.test/mcp"))),
        (
            "other audiences only",
            with("aud", json!(["https://other.test/mcp", "notes"])),
        ),
        ("no iss", without("iss")),
        ("nbf in an hour", with("nbf", json!(now() + 3600))),
        ("iat in an hour", with("iat", json!(now() + 3600))),
    ] {
        assert_eq!(call(addr, &bad).await.0, 401, "{what}");
    }
    assert_eq!(call(addr, &with("nbf", json!(now() - 10))).await.0, 200);
    assert_eq!(call(addr, &with("iat", json!(now() - 10))).await.0, 200);
    // `aud` may be an array: one of its values must be ours.
    assert_eq!(
        call(addr, &with("aud", json!(["https://other.test/mcp", AUDIENCE])))
            .await
            .0,
        200
    );
}

#[test]
fn short_secrets_are_refused() {
    let e = Hs256Verifier::new(b"x", AUDIENCE).unwrap_err();
    assert!(e.to_string().contains("at least 32 bytes"), "{e}");
    assert!(Hs256Verifier::new(&[7; 31], AUDIENCE).is_err());
    assert!(Hs256Verifier::new(&[7; 32], AUDIENCE).is_ok());
}

#[test]
fn the_audience_is_required_when_built() {
    for empty in ["", "  "] {
        let e = Hs256Verifier::new(SECRET, empty).unwrap_err();
        assert!(e.to_string().contains("audience"), "{e}");
    }
}
