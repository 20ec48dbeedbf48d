//! Several callers of one in-process server over Streamable HTTP (2026-07-28), told apart by
//! their bearer tokens: each token is the subject of the caller it names. For the limits one
//! caller must not turn against the others (`tests/asking.rs`, `tests/url_mode.rs`,
//! `tests/redis_store.rs`).
#![allow(dead_code, unreachable_pub)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use mcp_resolve::auth::BoxFuture;
use mcp_resolve::{
    HttpOptions, Principal, Server,
    auth::{AuthError, TokenVerifier},
};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;

/// Every non-empty token is a caller: `Principal::new(token)`.
struct AnyName;

impl TokenVerifier for AnyName {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move {
            if token.is_empty() {
                Err(AuthError::new("no token"))
            } else {
                Ok(Principal::new(token))
            }
        })
    }
    fn authorization_server(&self) -> Option<&str> {
        Some("https://auth.test")
    }
}

/// The caller a token names, as the server sees it (for a page completing its flow).
pub(crate) fn caller(token: &str) -> Principal {
    Principal::new(token)
}

/// Serves `server` over HTTP on a free loopback port, every request needing a bearer token.
pub(crate) async fn serve(server: Server) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener, HttpOptions::default().bearer(AnyName)));
    addr
}

/// One 2026-07-28 request to `addr` as the caller `token`, with form and URL elicitation: its
/// JSON-RPC response. Within 10 s, or the test fails.
pub(crate) async fn request(addr: SocketAddr, token: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let exchange = async {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.unwrap();
        tokio::spawn(conn);
        let mut req = http::Request::post("/mcp")
            .header("host", format!("127.0.0.1:{}", addr.port()))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .header("authorization", format!("Bearer {token}"));
        if !name.is_empty() {
            req = req.header("mcp-name", name);
        }
        let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
        let resp = sender.send_request(req).await.unwrap();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice::<Value>(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
    };
    tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .unwrap_or_else(|_| panic!("no whole response to `{method}` from {addr} within 10 s"))
}

/// The `flow` query parameter of a URL-mode question's URL.
pub(crate) fn flow_of(url: &str) -> String {
    url.split(['?', '&'])
        .find_map(|p| p.strip_prefix("flow="))
        .unwrap_or_else(|| panic!("no flow in {url}"))
        .to_owned()
}
