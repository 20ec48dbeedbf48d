//! Identity for tests (`tests/jwt.rs`, `tests/jwks.rs`, `tests/interop_http.rs`): private keys
//! generated on the spot and the JWK an authorization server publishes for each; a local HTTP
//! server publishing a key set that can be swapped while it runs and that counts its fetches; and
//! one `tools/call whoami` with a bearer token.
#![allow(dead_code, unreachable_pub)]

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A private key and the public JWK the authorization server publishes for it.
pub(crate) struct Signer {
    pub(crate) alg: Algorithm,
    pub(crate) kid: String,
    pub(crate) key: EncodingKey,
    pub(crate) jwk: Value,
}

impl Signer {
    pub(crate) fn rsa(kid: &str) -> Self {
        use rsa::pkcs1::EncodeRsaPrivateKey;
        let private = rsa::PrivateKey::new(&mut getrandom::SysRng, 2048).unwrap();
        let key = EncodingKey::from_rsa_der(private.to_pkcs1_der().unwrap().as_bytes());
        Self::with_public_jwk(Algorithm::RS256, kid, key)
    }

    pub(crate) fn p256(kid: &str) -> Self {
        use p256::pkcs8::EncodePrivateKey;
        let mut scalar = [0u8; 32];
        getrandom::fill(&mut scalar).unwrap();
        let private = p256::SecretKey::from_slice(&scalar).unwrap();
        let key = EncodingKey::from_ec_der(private.to_pkcs8_der().unwrap().as_bytes());
        Self::with_public_jwk(Algorithm::ES256, kid, key)
    }

    pub(crate) fn ed25519(kid: &str) -> Self {
        use ed25519_dalek::pkcs8::EncodePrivateKey;
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).unwrap();
        let private = ed25519_dalek::SigningKey::from_bytes(&seed);
        let key = EncodingKey::from_ed_der(private.to_pkcs8_der().unwrap().as_bytes());
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(private.verifying_key().to_bytes());
        let jwk = json!({"kty": "OKP", "crv": "Ed25519", "x": x, "alg": "EdDSA", "use": "sig", "kid": kid});
        Self {
            alg: Algorithm::EdDSA,
            kid: kid.into(),
            key,
            jwk,
        }
    }

    /// The public JWK jsonwebtoken derives from the private key, with our `kid`.
    pub(crate) fn with_public_jwk(alg: Algorithm, kid: &str, key: EncodingKey) -> Self {
        let mut jwk = serde_json::to_value(Jwk::from_encoding_key(&key, alg).unwrap()).unwrap();
        jwk["kid"] = json!(kid);
        Self {
            alg,
            kid: kid.into(),
            key,
            jwk,
        }
    }

    pub(crate) fn sign(&self, claims: &Value) -> String {
        self.sign_as(Some(&self.kid), claims)
    }

    pub(crate) fn sign_as(&self, kid: Option<&str>, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = kid.map(str::to_owned);
        jsonwebtoken::encode(&header, claims, &self.key).unwrap()
    }

    /// A token whose header names this `typ` (or none), under this key's `kid`.
    pub(crate) fn sign_typed(&self, typ: Option<&str>, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        header.typ = typ.map(str::to_owned);
        jsonwebtoken::encode(&header, claims, &self.key).unwrap()
    }
}

/// A JWKS document of these keys.
pub(crate) fn set_of(signers: &[&Signer]) -> String {
    json!({"keys": signers.iter().map(|s| s.jwk.clone()).collect::<Vec<_>>()}).to_string()
}

// ---- the authorization server's JWKS endpoint --------------------------------------------------

/// What the JWKS endpoint answers; swappable while it runs.
pub(crate) struct Published {
    pub(crate) status: u16,
    pub(crate) body: String,
    pub(crate) delay: Duration,
}

pub(crate) struct JwksServer {
    pub(crate) url: String,
    pub(crate) published: Arc<Mutex<Published>>,
    pub(crate) fetches: Arc<AtomicUsize>,
}

impl JwksServer {
    pub(crate) async fn start(body: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let published = Arc::new(Mutex::new(Published {
            status: 200,
            body,
            delay: Duration::ZERO,
        }));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (p, f) = (published.clone(), fetches.clone());
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { return };
                let (p, f) = (p.clone(), f.clone());
                let service = hyper::service::service_fn(move |_req: http::Request<hyper::body::Incoming>| {
                    let (p, f) = (p.clone(), f.clone());
                    async move {
                        f.fetch_add(1, Ordering::SeqCst);
                        let (status, body, delay) = {
                            let p = p.lock().unwrap();
                            (p.status, p.body.clone(), p.delay)
                        };
                        tokio::time::sleep(delay).await;
                        let response = http::Response::builder()
                            .status(status)
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(body)))
                            .unwrap();
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                tokio::spawn(hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tcp), service));
            }
        });
        Self {
            url: format!("http://{addr}/.well-known/jwks.json"),
            published,
            fetches,
        }
    }

    pub(crate) fn publish(&self, body: String) {
        self.published.lock().unwrap().body = body;
    }

    pub(crate) fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

/// One 2026-07-28 `tools/call whoami` to `addr` with this bearer token: the HTTP status and the
/// JSON body (`null` when it is not JSON). Within 10 s, or the test fails saying so.
pub(crate) async fn call_whoami(addr: std::net::SocketAddr, token: &str) -> (u16, Value) {
    tokio::time::timeout(Duration::from_secs(10), exchange_whoami(addr, token))
        .await
        .unwrap_or_else(|_| panic!("no whole response to `tools/call whoami` from {addr} within 10 s"))
}

async fn exchange_whoami(addr: std::net::SocketAddr, token: &str) -> (u16, Value) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.unwrap();
    tokio::spawn(conn);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}});
    let req = http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "whoami")
        .header("authorization", format!("Bearer {token}"))
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}
