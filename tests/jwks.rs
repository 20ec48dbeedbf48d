//! The JWKS verifier, end to end: keys generated here (RSA 2048, P-256, Ed25519), published by a
//! local HTTP server whose key set can be swapped and which counts its fetches, tokens checked by
//! a server over real HTTP.
#![cfg(feature = "jwt")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_resolve::prelude::*;
use mcp_resolve::{
    HttpOptions,
    auth::{JwksVerifier, TokenVerifier},
};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::LazyLock;
use std::time::Duration;

#[path = "support/identity.rs"]
mod identity;

use identity::{JwksServer, Signer, set_of};

/// The refresh interval and key age of the tests of refresh windows below. Real time: the key
/// set is fetched over a real socket, and tokio's paused clock would jump to the next timer
/// (the fetch's own timeout) whenever the test waits for it; the windows themselves are tested
/// exactly, on the paused clock, in `runtime/src/auth/jwks.rs`. What a test does "within" a
/// window takes a few loopback round trips (milliseconds; 2 s leaves a loaded machine room), and
/// "past" it waits the whole window, which the verifier's own clock then also counts.
const WINDOW: Duration = Duration::from_secs(2);

/// The server's canonical resource URI: the audience its tokens must name.
const AUDIENCE: &str = "https://notes.test/mcp";
const ISSUER: &str = "https://auth.test";

/// Who is calling: `subject|issuer|scopes`.
#[tool]
async fn whoami(cx: Context) -> String {
    cx.principal()
        .map(|p| {
            format!(
                "{}|{}|{}",
                p.subject,
                p.issuer.as_deref().unwrap_or("?"),
                p.scopes.join(" ")
            )
        })
        .unwrap_or_default()
}

/// Keys are generated once per process, each when first used: an RSA key takes a while in a
/// debug build, and under cargo-nextest every test is a process of its own.
struct Keys {
    rsa: LazyLock<Signer>,
    rsa_next: LazyLock<Signer>,
    p256: LazyLock<Signer>,
    ed25519: LazyLock<Signer>,
    ed25519_other: LazyLock<Signer>,
}

static KEYS: Keys = Keys {
    rsa: LazyLock::new(|| Signer::rsa("rsa-1")),
    rsa_next: LazyLock::new(|| Signer::rsa("rsa-2")),
    p256: LazyLock::new(|| Signer::p256("ec-1")),
    ed25519: LazyLock::new(|| Signer::ed25519("ed-1")),
    ed25519_other: LazyLock::new(|| Signer::ed25519("ed-2")),
};

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn claims() -> Value {
    json!({"sub": "alice", "iss": ISSUER, "aud": AUDIENCE, "exp": now() + 300, "scope": "notes:read notes:write"})
}

fn with(claim: &str, value: Value) -> Value {
    let mut c = claims();
    c[claim] = value;
    c
}

fn without(claim: &str) -> Value {
    let mut c = claims();
    c.as_object_mut().unwrap().remove(claim);
    c
}

/// A signed token whose signature is replaced by garbage.
fn garbage_signed(kid: &str) -> String {
    let token = KEYS.ed25519.sign_as(Some(kid), &claims());
    let (signed, _) = token.rsplit_once('.').unwrap();
    format!("{signed}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
}

// ---- the authorization server's JWKS endpoint (tests/support/keys.rs) --------------------------

/// The verifier this file tests, for the keys `jwks` publishes.
trait Verifier {
    fn verifier(&self) -> JwksVerifier;
}

impl Verifier for JwksServer {
    fn verifier(&self) -> JwksVerifier {
        JwksVerifier::new(&self.url, AUDIENCE).unwrap().issuer(ISSUER)
    }
}

// ---- the MCP server ----------------------------------------------------------------------------

async fn serve(verifier: JwksVerifier) -> SocketAddr {
    serve_with(HttpOptions::default().bearer(verifier)).await
}

/// A server with a verifier that knows no issuer names its authorization server in the options,
/// or it refuses to start.
async fn serve_naming_the_authorization_server(verifier: JwksVerifier) -> SocketAddr {
    serve_with(HttpOptions::default().bearer(verifier).authorization_server(ISSUER)).await
}

async fn serve_with(options: HttpOptions) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(Server::new("jwks").tool(whoami).serve_http_on(listener, options));
    addr
}

/// One `tools/call whoami` with this bearer token: (status, the tool's text).
async fn call(addr: SocketAddr, token: &str) -> (u16, String) {
    let (status, body) = identity::call_whoami(addr, token).await;
    let text = body["result"]["content"][0]["text"].as_str().unwrap_or("").to_owned();
    (status, text)
}

// ---- tests -------------------------------------------------------------------------------------

#[tokio::test]
async fn rs256_es256_and_eddsa_tokens_are_verified() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.rsa, &k.p256, &k.ed25519])).await;
    let addr = serve(jwks.verifier()).await;
    for signer in [&k.rsa, &k.p256, &k.ed25519] {
        let (status, text) = call(addr, &signer.sign(&claims())).await;
        assert_eq!(status, 200, "{:?}", signer.alg);
        assert_eq!(
            text,
            format!("alice|{ISSUER}|notes:read notes:write"),
            "{:?}",
            signer.alg
        );
    }
    // Scopes as an array (`scp`), as some authorization servers send them.
    let mut scp = without("scope");
    scp["scp"] = json!(["a", "b"]);
    assert_eq!(
        call(addr, &k.p256.sign(&scp)).await,
        (200, format!("alice|{ISSUER}|a b"))
    );
    // One fetch served them all.
    assert_eq!(jwks.fetches(), 1);
}

#[tokio::test]
async fn claims_are_checked() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.ed25519])).await;
    let addr = serve(jwks.verifier()).await;
    let ed = &k.ed25519;
    assert_eq!(call(addr, &ed.sign(&claims())).await.0, 200);
    for (what, bad) in [
        ("another audience", with("aud", json!("https://other.test/mcp"))),
        (
            "other audiences only",
            with("aud", json!(["https://other.test/mcp", "notes"])),
        ),
        ("no aud", without("aud")),
        ("nbf in an hour", with("nbf", json!(now() + 3600))),
        ("iat in an hour", with("iat", json!(now() + 3600))),
        ("expired an hour ago", with("exp", json!(now() - 3600))),
        ("no exp", without("exp")),
        ("another issuer", with("iss", json!("https://evil.test"))),
        ("no iss", without("iss")),
        ("no sub", without("sub")),
    ] {
        assert_eq!(call(addr, &ed.sign(&bad)).await.0, 401, "{what}");
    }
    // Within the leeway, and an array `aud` holding ours, are fine.
    assert_eq!(call(addr, &ed.sign(&with("nbf", json!(now() + 10)))).await.0, 200);
    assert_eq!(
        call(
            addr,
            &ed.sign(&with("aud", json!(["https://other.test/mcp", AUDIENCE])))
        )
        .await
        .0,
        200
    );
    // Not a JWT at all; a valid token of another key that claims this kid.
    assert_eq!(call(addr, "not.a.jwt").await.0, 401);
    assert_eq!(
        call(addr, &k.ed25519_other.sign_as(Some("ed-1"), &claims())).await.0,
        401
    );
}

#[tokio::test]
async fn algorithm_confusion_is_refused() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.rsa, &k.ed25519])).await;
    let addr = serve(jwks.verifier()).await;
    assert_eq!(call(addr, &k.rsa.sign(&claims())).await.0, 200);
    // HS256 keyed with the public key's bytes (what a verifier that took the JWK for an HMAC
    // secret would accept), under the RSA key's kid.
    for secret in [
        k.rsa.jwk["n"].as_str().unwrap().as_bytes(),
        k.rsa.jwk.to_string().as_bytes(),
    ] {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("rsa-1".into());
        let hs = jsonwebtoken::encode(&header, &claims(), &EncodingKey::from_secret(secret).unwrap()).unwrap();
        assert_eq!(call(addr, &hs).await.0, 401);
    }
    // `alg: none`, unsigned.
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let none = format!("{}.{}.", b64(json!({"alg": "none", "kid": "rsa-1"})), b64(claims()));
    assert_eq!(call(addr, &none).await.0, 401);
    // A valid EdDSA signature under the RSA key's kid, and RS256 under the Ed25519 key's kid:
    // the algorithm must be the key's.
    assert_eq!(call(addr, &k.ed25519.sign_as(Some("rsa-1"), &claims())).await.0, 401);
    assert_eq!(call(addr, &k.rsa.sign_as(Some("ed-1"), &claims())).await.0, 401);
    // None of it fetched the set again (within the refresh interval).
    assert_eq!(jwks.fetches(), 1);
}

#[tokio::test]
async fn unknown_kids_refetch_at_most_once_per_interval() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.ed25519])).await;
    let addr = serve(jwks.verifier().min_refresh_interval(WINDOW)).await;
    assert_eq!(call(addr, &k.ed25519.sign(&claims())).await.0, 200);
    assert_eq!(jwks.fetches(), 1);
    // Within the interval of that fetch: no fetch at all.
    assert_eq!(call(addr, &garbage_signed("made-up-0")).await.0, 401);
    assert_eq!(jwks.fetches(), 1);
    tokio::time::sleep(WINDOW).await;
    // Past it: many tokens with made-up kids, at once and one after the other, cause one fetch.
    let at_once: Vec<_> = (0..16)
        .map(|i| tokio::spawn(async move { call(addr, &garbage_signed(&format!("made-up-{i}"))).await.0 }))
        .collect();
    for t in at_once {
        assert_eq!(t.await.unwrap(), 401);
    }
    for i in 16..24 {
        assert_eq!(call(addr, &garbage_signed(&format!("made-up-{i}"))).await.0, 401);
    }
    assert_eq!(jwks.fetches(), 2);
    // The known key still works without a fetch.
    assert_eq!(call(addr, &k.ed25519.sign(&claims())).await.0, 200);
    assert_eq!(jwks.fetches(), 2);
}

#[tokio::test]
async fn a_rotated_key_is_picked_up() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.rsa])).await;
    let addr = serve(jwks.verifier().min_refresh_interval(WINDOW)).await;
    assert_eq!(call(addr, &k.rsa.sign(&claims())).await.0, 200);
    assert_eq!(jwks.fetches(), 1);
    // The authorization server rotates: the new key replaces the old one.
    jwks.publish(set_of(&[&k.rsa_next]));
    tokio::time::sleep(WINDOW).await;
    let (status, text) = call(addr, &k.rsa_next.sign(&claims())).await;
    assert_eq!(
        (status, text.as_str()),
        (200, "alice|https://auth.test|notes:read notes:write")
    );
    assert_eq!(jwks.fetches(), 2, "exactly one refresh");
    assert_eq!(call(addr, &k.rsa_next.sign(&claims())).await.0, 200);
    // The old key is gone: its tokens are refused, and asking again is not allowed yet.
    assert_eq!(call(addr, &k.rsa.sign(&claims())).await.0, 401);
    assert_eq!(jwks.fetches(), 2);
}

#[tokio::test]
async fn a_failed_fetch_keeps_the_keys_held() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.ed25519])).await;
    let verifier = jwks.verifier().min_refresh_interval(WINDOW);
    assert_eq!(verifier.fetch().await.unwrap(), 1);
    jwks.published.lock().unwrap().status = 503;
    tokio::time::sleep(WINDOW).await;
    let e = verifier.verify(&k.ed25519_other.sign(&claims())).await.unwrap_err();
    assert!(e.to_string().contains("ed-2"), "{e}");
    assert_eq!(jwks.fetches(), 2);
    // The key held still verifies.
    assert_eq!(
        verifier.verify(&k.ed25519.sign(&claims())).await.unwrap().subject,
        "alice"
    );
    // An explicit fetch reports the failure.
    let e = verifier.fetch().await.unwrap_err();
    assert!(e.to_string().contains("503"), "{e}");
    // Not a JWKS document: refused too, keys kept.
    jwks.published.lock().unwrap().status = 200;
    jwks.publish("<html>".into());
    assert!(verifier.fetch().await.is_err());
    assert!(verifier.verify(&k.ed25519.sign(&claims())).await.is_ok());
}

#[tokio::test]
async fn keys_older_than_the_maximum_age_are_fetched_again() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.ed25519])).await;
    let verifier = jwks.verifier().max_key_age(WINDOW).min_refresh_interval(WINDOW / 2);
    let old = k.ed25519.sign(&claims());
    assert!(verifier.verify(&old).await.is_ok());
    // The authorization server withdraws the key; until the set is too old, it is still used.
    jwks.publish(set_of(&[&k.ed25519_other]));
    assert!(verifier.verify(&old).await.is_ok());
    assert_eq!(jwks.fetches(), 1);
    tokio::time::sleep(WINDOW).await;
    // Too old: fetched again before use, and the withdrawn key is gone.
    assert!(verifier.verify(&old).await.is_err());
    assert_eq!(jwks.fetches(), 2);
    let new = k.ed25519_other.sign(&claims());
    assert!(verifier.verify(&new).await.is_ok());
    // When that fetch fails, the keys held are kept.
    jwks.published.lock().unwrap().status = 503;
    tokio::time::sleep(WINDOW).await;
    assert!(verifier.verify(&new).await.is_ok());
    assert_eq!(jwks.fetches(), 3);
}

#[tokio::test]
async fn a_first_fetch_that_fails_is_retried_after_the_interval() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.ed25519])).await;
    jwks.published.lock().unwrap().status = 500;
    let verifier = jwks.verifier().min_refresh_interval(WINDOW);
    let token = k.ed25519.sign(&claims());
    assert!(verifier.verify(&token).await.is_err());
    assert!(verifier.verify(&token).await.is_err());
    assert_eq!(jwks.fetches(), 1);
    jwks.published.lock().unwrap().status = 200;
    tokio::time::sleep(WINDOW).await;
    assert!(verifier.verify(&token).await.is_ok());
    assert_eq!(jwks.fetches(), 2);
}

#[tokio::test]
async fn documents_over_the_size_bound_are_refused() {
    let k = &KEYS;
    let padding = "x".repeat(JwksVerifier::MAX_JWKS_BYTES);
    let big = json!({"keys": [k.ed25519.jwk.clone()], "padding": padding}).to_string();
    let jwks = JwksServer::start(big).await;
    let e = jwks.verifier().fetch().await.unwrap_err();
    assert!(e.to_string().contains(&JwksVerifier::MAX_JWKS_BYTES.to_string()), "{e}");
    // Just under it is fine.
    let room = JwksVerifier::MAX_JWKS_BYTES - set_of(&[&k.ed25519]).len() - 100;
    jwks.publish(json!({"keys": [k.ed25519.jwk.clone()], "padding": "x".repeat(room)}).to_string());
    assert_eq!(jwks.verifier().fetch().await.unwrap(), 1);
}

#[tokio::test]
async fn a_slow_jwks_endpoint_times_out() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.ed25519])).await;
    jwks.published.lock().unwrap().delay = Duration::from_secs(30);
    let timeout = Duration::from_millis(300);
    let verifier = jwks.verifier().fetch_timeout(timeout);
    let started = std::time::Instant::now();
    let e = verifier.fetch().await.unwrap_err();
    // Real time (a real socket): tokio's timers never fire early, so the fetch waited its whole
    // timeout; it gave up long before the endpoint's 30 s (5 s is a margin for a loaded machine).
    let took = started.elapsed();
    assert!(took >= timeout && took < Duration::from_secs(5), "{took:?}");
    assert!(e.to_string().contains("within"), "{e}");
}

#[tokio::test]
async fn a_token_without_kid_needs_a_single_key_for_its_algorithm() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.ed25519, &k.rsa])).await;
    let verifier = jwks.verifier();
    assert!(verifier.verify(&k.ed25519.sign_as(None, &claims())).await.is_ok());
    jwks.publish(set_of(&[&k.ed25519, &k.ed25519_other]));
    let verifier = jwks.verifier();
    let e = verifier.verify(&k.ed25519.sign_as(None, &claims())).await.unwrap_err();
    assert!(e.to_string().contains("exactly one"), "{e}");
}

#[tokio::test]
async fn another_issuers_token_signed_with_the_same_keys_is_refused() {
    // One authorization server, several tenants: the same keys sign every tenant's tokens.
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.ed25519])).await;
    let other_tenant = with("iss", json!("https://auth.test/tenants/other"));
    // Told the issuer: only its tokens are taken.
    let addr = serve(jwks.verifier()).await;
    assert_eq!(call(addr, &k.ed25519.sign(&claims())).await.0, 200);
    assert_eq!(call(addr, &k.ed25519.sign(&other_tenant)).await.0, 401);
    assert_eq!(call(addr, &k.ed25519.sign(&without("iss"))).await.0, 401);
    // Told nothing: no token at all, and the start-up fetch says what to set.
    let untold = JwksVerifier::new(&jwks.url, AUDIENCE).unwrap();
    let e = untold.fetch().await.unwrap_err().to_string();
    assert!(e.contains(".issuer(") && e.contains(".any_issuer()"), "{e}");
    let addr = serve_naming_the_authorization_server(untold).await;
    for token in [k.ed25519.sign(&claims()), k.ed25519.sign(&other_tenant)] {
        assert_eq!(call(addr, &token).await.0, 401);
    }
    // Any issuer, on purpose: every tenant's token is taken.
    let any = JwksVerifier::new(&jwks.url, AUDIENCE).unwrap().any_issuer();
    let addr = serve_naming_the_authorization_server(any).await;
    let (status, text) = call(addr, &k.ed25519.sign(&other_tenant)).await;
    assert_eq!(
        (status, text.as_str()),
        (200, "alice|https://auth.test/tenants/other|notes:read notes:write")
    );
}

#[tokio::test]
async fn typ_is_checked_when_required() {
    let k = &KEYS;
    let jwks = JwksServer::start(set_of(&[&k.p256])).await;
    let strict = jwks.verifier().require_typ("application/at+jwt");
    for ok in ["at+jwt", "application/at+jwt", "AT+JWT"] {
        let token = k.p256.sign_typed(Some(ok), &claims());
        assert!(strict.verify(&token).await.is_ok(), "{ok}");
    }
    for (what, bad) in [
        ("an ID token's", Some("JWT")),
        ("another", Some("secevent+jwt")),
        ("none", None),
    ] {
        let e = strict.verify(&k.p256.sign_typed(bad, &claims())).await.unwrap_err();
        assert!(e.to_string().contains("typ"), "{what}: {e}");
    }
    // Not asked for: any `typ`, or none.
    let lax = jwks.verifier();
    for typ in [Some("JWT"), None] {
        assert!(lax.verify(&k.p256.sign_typed(typ, &claims())).await.is_ok(), "{typ:?}");
    }
}

#[test]
fn urls_and_audiences_are_checked_when_built() {
    let e = JwksVerifier::new("http://auth.example/jwks.json", AUDIENCE).unwrap_err();
    assert!(e.to_string().contains("loopback"), "{e}");
    assert!(JwksVerifier::new("https://auth.example/jwks.json", AUDIENCE).is_ok());
    assert!(JwksVerifier::new("http://127.0.0.1:1/jwks.json", AUDIENCE).is_ok());
    let e = JwksVerifier::new("https://auth.example/jwks.json", "").unwrap_err();
    assert!(e.to_string().contains("audience"), "{e}");
}
