//! The shipped HS256 JWT verifier, end to end over HTTP.
#![cfg(feature = "jwt")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use mcp_resolve::prelude::*;
use mcp_resolve::{
    HttpOptions,
    auth::{Hs256Verifier, TokenVerifier},
};
use serde_json::{Value, json};

/// 32 random bytes (as `openssl rand 32` makes them): the secret tokens are signed with.
const SECRET: &[u8] = &[
    0x3b, 0xf4, 0x1e, 0x8a, 0x07, 0xc2, 0x95, 0x6d, 0xe0, 0x51, 0xaf, 0x18, 0x7c, 0x33, 0xd9, 0x02, 0x8e, 0x64, 0xb7,
    0x1f, 0xca, 0x49, 0x05, 0xee, 0x90, 0x2d, 0x76, 0xb3, 0x5a, 0x0c, 0xf1, 0x88,
];
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
    // The secret as configuration gives it: in base64.
    let encoded = base64::engine::general_purpose::STANDARD.encode(SECRET);
    let verifier = Hs256Verifier::from_encoded(&encoded, AUDIENCE)
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

#[tokio::test]
async fn passphrases_are_refused_and_hex_or_base64_of_32_bytes_taken() {
    // A passphrase, as text or as bytes: refused, saying how to make a secret.
    for passphrase in [
        "a shared secret of at least thirty-two bytes",
        "correct horse battery staple, correct horse battery staple",
    ] {
        let e = Hs256Verifier::from_encoded(passphrase, AUDIENCE)
            .unwrap_err()
            .to_string();
        assert!(e.contains("neither hex nor base64"), "{e}");
        assert!(e.contains("openssl rand -base64 32"), "{e}");
        let e = Hs256Verifier::new(passphrase.as_bytes(), AUDIENCE)
            .unwrap_err()
            .to_string();
        assert!(e.contains("passphrase") && e.contains("from_encoded"), "{e}");
        assert!(e.contains("openssl rand -base64 32"), "{e}");
    }
    // A key still in base64, given as bytes: refused too (its text would be the secret).
    let b64 = base64::engine::general_purpose::STANDARD.encode(SECRET);
    assert!(Hs256Verifier::new(b64.as_bytes(), AUDIENCE).is_err());
    // Hex and base64 (standard or URL-safe, padded or not) of the same 32 bytes: the same secret.
    let hex: String = SECRET.iter().map(|b| format!("{b:02x}")).collect();
    let claims = json!({"sub": "alice", "aud": AUDIENCE, "exp": now() + 60});
    let signed = token(claims, SECRET);
    for encoded in [
        hex.clone(),
        hex.to_uppercase(),
        b64.clone(),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(SECRET),
        format!(" {b64}\n"),
    ] {
        let verifier = Hs256Verifier::from_encoded(&encoded, AUDIENCE).unwrap_or_else(|e| panic!("{encoded}: {e}"));
        assert_eq!(verifier.verify(&signed).await.unwrap().subject, "alice", "{encoded}");
    }
    let raw = Hs256Verifier::new(SECRET, AUDIENCE).unwrap();
    assert_eq!(raw.verify(&signed).await.unwrap().subject, "alice");
    // Shorter than 32 bytes: refused, saying so.
    let short = base64::engine::general_purpose::STANDARD.encode(&SECRET[..31]);
    let e = Hs256Verifier::from_encoded(&short, AUDIENCE).unwrap_err().to_string();
    assert!(e.contains("31 bytes, fewer than 32"), "{e}");
    assert!(Hs256Verifier::from_encoded(&hex[..62], AUDIENCE).is_err());
}

#[tokio::test]
async fn typ_is_checked_when_required() {
    let claims = json!({"sub": "alice", "aud": AUDIENCE, "exp": now() + 60});
    let typed = |typ: Option<&str>| {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
        header.typ = typ.map(str::to_owned);
        jsonwebtoken::encode(
            &header,
            &claims,
            &jsonwebtoken::EncodingKey::from_secret(SECRET).unwrap(),
        )
        .unwrap()
    };
    let strict = Hs256Verifier::new(SECRET, AUDIENCE).unwrap().require_typ("at+jwt");
    for ok in ["at+jwt", "application/at+jwt", "AT+JWT"] {
        assert!(strict.verify(&typed(Some(ok))).await.is_ok(), "{ok}");
    }
    for (what, bad) in [("an ID token's", Some("JWT")), ("none", None)] {
        let e = strict.verify(&typed(bad)).await.unwrap_err();
        assert!(e.to_string().contains("typ"), "{what}: {e}");
    }
    // Not asked for: any `typ`, or none.
    let lax = Hs256Verifier::new(SECRET, AUDIENCE).unwrap();
    for typ in [Some("JWT"), None, Some("at+jwt")] {
        assert!(lax.verify(&typed(typ)).await.is_ok(), "{typ:?}");
    }
}

#[test]
fn the_audience_is_required_when_built() {
    for empty in ["", "  "] {
        let e = Hs256Verifier::new(SECRET, empty).unwrap_err();
        assert!(e.to_string().contains("audience"), "{e}");
    }
}
