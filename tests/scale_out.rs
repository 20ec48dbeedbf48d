//! Scale-out: two `notes` replicas sharing one state key, behind nginx doing round-robin. A
//! 2026-07-28 call whose rounds land on different replicas completes; a state sealed for one
//! principal is refused for another; a replica restarted between rounds does not lose the call.
//! With one Redis shared by the replicas (`MCP_RESOLVE_REDIS_URL`, a `redis-server` of the
//! test's own), a single-use confirmation answered through one replica and replayed through the
//! other is refused.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One state key shared by all replicas: 32 random bytes in base64, as `openssl rand -base64 32`
/// makes them (fixed here so a failure reproduces; never deployed).
const STATE_KEY: &str = "3q8xLh0nY6Gd0Z1f1p5u3c8yX7m2bQ9vT4kJ6wR0eHs=";
/// The identity provider's HS256 secret, written the same way.
const JWT_SECRET: &str = "D6ilDZWvzHWIzt9or2yMNlpRStJZknDg4sZemu7J8tQ=";
/// The audience the replicas require in every token.
const JWT_AUDIENCE: &str = "http://scale-out.test/mcp";

fn root() -> PathBuf {
    PathBuf::from(support::MANIFEST_DIR)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn replica(port: u16) -> Proc {
    replica_with(port, &[])
}

/// A replica with more environment (`MCP_RESOLVE_REDIS_URL`).
fn replica_with(port: u16, env: &[(&str, &str)]) -> Proc {
    let child = Command::new(support::notes_bin())
        .args(["--http", &format!("127.0.0.1:{port}")])
        .envs(env.iter().copied())
        .env("MCP_RESOLVE_STATE_KEY", STATE_KEY)
        .env("MCP_RESOLVE_JWT_SECRET", JWT_SECRET)
        .env("MCP_RESOLVE_JWT_AUDIENCE", JWT_AUDIENCE)
        .env("MCP_RESOLVE_AUTH_SERVER", "https://auth.test")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("notes starts");
    wait_for_port(port);
    Proc(child)
}

fn nginx(a: u16, b: u16, listen: u16, work: &Path) -> Proc {
    let child = Command::new("bash")
        .arg(root().join("tests/interop/nginx/run.sh"))
        .args([a.to_string(), b.to_string(), listen.to_string()])
        .arg(work)
        .env("NGINX_BIN", support::nginx())
        .env_remove("NGINX")
        .stdin(Stdio::null())
        .spawn()
        .expect("nginx starts");
    wait_for_port(listen);
    Proc(child)
}

fn token(sub: &str) -> String {
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 300;
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": sub, "iss": "test", "aud": JWT_AUDIENCE, "exp": exp}),
        &jsonwebtoken::EncodingKey::from_base64_secret(JWT_SECRET).unwrap(),
    )
    .unwrap()
}

/// One 2026-07-28 `tools/call`; returns (status, upstream that answered, body).
async fn call(port: u16, user: &str, id: i64, extra: Value) -> (u16, String, Value) {
    tokio::time::timeout(Duration::from_secs(20), exchange(port, user, id, extra))
        .await
        .unwrap_or_else(|_| panic!("no whole response to {user}'s call {id} through port {port} within 20 s"))
}

async fn exchange(port: u16, user: &str, id: i64, extra: Value) -> (u16, String, Value) {
    let mut params = json!({"name": "delete_folder", "arguments": {"path": "/tmp/notes/drafts"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.unwrap();
    tokio::spawn(conn);
    let req = http::Request::post("/mcp")
        .header("host", format!("127.0.0.1:{port}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "delete_folder")
        .header("authorization", format!("Bearer {}", token(user)))
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let status = resp.status().as_u16();
    let upstream = resp
        .headers()
        .get("x-upstream")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes)));
    (status, upstream, body)
}

/// Round 1 of `delete_folder` for alice through nginx, then her accepted answer, which nginx
/// sends to the other replica; returns the answer (with its state) for replays.
async fn delete_drafts_across(listen: u16) -> Value {
    let (status, first, r1) = call(listen, "alice", 1, json!({})).await;
    assert_eq!(status, 200, "{r1}");
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let state = r1["result"]["requestState"].clone();
    let answer = json!({"inputResponses": {"confirm_delete": {"action": "accept", "content": {"ok": true}}}, "requestState": state});
    let (status, second, done) = call(listen, "alice", 2, answer.clone()).await;
    assert_eq!(status, 200, "{done}");
    assert_ne!(first, second, "round-robin sent the rounds to different replicas");
    assert_eq!(
        done["result"]["content"][0]["text"], "deleted /tmp/notes/drafts",
        "{done}"
    );
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_on_different_replicas_complete() {
    let (a, b, listen) = (free_port(), free_port(), free_port());
    let work = tempdir("scale-out");
    let mut replica_a = Some(replica(a));
    let _replica_b = replica(b);
    let _proxy = nginx(a, b, listen, &work);

    let answer = delete_drafts_across(listen).await;
    // The same state replayed with another principal's token is refused, on either replica.
    for id in [3, 4] {
        let (status, upstream, refused) = call(listen, "bob", id, answer.clone()).await;
        assert_eq!(status, 400, "{upstream}: {refused}");
        assert_eq!(refused["error"]["code"], -32602);
        assert_eq!(refused["error"]["data"]["reason"], "invalid_request_state");
    }

    // A replica restarted between rounds: round 1 on A, A restarts, round 2 reaches the new A.
    let (_, on_a, r1) = call(a, "alice", 5, json!({})).await;
    assert!(on_a.is_empty(), "direct to A");
    let state = r1["result"]["requestState"].clone();
    drop(replica_a.take());
    replica_a = Some(replica(a));
    let answer = json!({"inputResponses": {"confirm_delete": {"action": "decline"}}, "requestState": state});
    let (status, _, done) = call(a, "alice", 6, answer).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "declined: folder not deleted");
    drop(replica_a);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_replayed_through_the_other_replica_is_refused_when_they_share_redis() {
    let started = Instant::now();
    let redis = support::RedisServer::start();
    let url = redis.url();
    let env = [("MCP_RESOLVE_REDIS_URL", url.as_str())];
    let (a, b, listen) = (free_port(), free_port(), free_port());
    let work = tempdir("single-use");
    let _replica_a = replica_with(a, &env);
    let _replica_b = replica_with(b, &env);
    let _proxy = nginx(a, b, listen, &work);

    let answer = delete_drafts_across(listen).await;
    // The same state and answer, by the same principal: refused through nginx (both replicas in
    // turn) and directly by each replica, though the first still has the folder.
    let mut upstreams = std::collections::BTreeSet::new();
    for id in [3, 4] {
        let (status, upstream, refused) = call(listen, "alice", id, answer.clone()).await;
        assert_eq!(status, 400, "{upstream}: {refused}");
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert_eq!(refused["error"]["data"]["reason"], "invalid_request_state");
        upstreams.insert(upstream);
    }
    assert_eq!(upstreams.len(), 2, "both replicas refused: {upstreams:?}");
    for (id, port) in [(5, a), (6, b)] {
        let (status, _, refused) = call(port, "alice", id, answer.clone()).await;
        assert_eq!(status, 400, "replica on {port}: {refused}");
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert_eq!(refused["error"]["data"]["reason"], "invalid_request_state");
    }
    // A decline is not turned into an accept either: round 1 again, declined through one
    // replica, accepted through the other.
    let (_, _, r1) = call(listen, "alice", 7, json!({})).await;
    let state = r1["result"]["requestState"].clone();
    let decline = json!({"inputResponses": {"confirm_delete": {"action": "decline"}}, "requestState": state});
    let (status, _, declined) = call(a, "alice", 8, decline).await;
    assert_eq!(status, 200, "{declined}");
    assert_eq!(declined["result"]["content"][0]["text"], "declined: folder not deleted");
    let accept = json!({"inputResponses": {"confirm_delete": {"action": "accept", "content": {"ok": true}}}, "requestState": state});
    let (status, _, refused) = call(b, "alice", 9, accept).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "invalid_request_state", "{refused}");
    eprintln!("single use across two replicas and Redis: {:.1?}", started.elapsed());
}

/// Without a shared store each replica knows only what it consumed: the replay through the
/// other replica runs again. This is why replicas must share one (docs/SECURITY.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_shared_store_the_other_replica_cannot_know() {
    let (a, b) = (free_port(), free_port());
    let (_replica_a, _replica_b) = (replica(a), replica(b));
    let (_, _, r1) = call(a, "alice", 1, json!({})).await;
    let answer = json!({"inputResponses": {"confirm_delete": {"action": "accept", "content": {"ok": true}}}, "requestState": r1["result"]["requestState"]});
    let (_, _, done) = call(b, "alice", 2, answer.clone()).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "deleted /tmp/notes/drafts",
        "{done}"
    );
    let (status, _, refused) = call(b, "alice", 3, answer.clone()).await;
    assert_eq!(status, 400, "the replica that consumed it refuses: {refused}");
    assert_eq!(refused["error"]["data"]["reason"], "invalid_request_state", "{refused}");
    let (_, _, again) = call(a, "alice", 4, answer).await;
    assert_eq!(
        again["result"]["content"][0]["text"], "deleted /tmp/notes/drafts",
        "{again}"
    );
}

/// A bad `MCP_RESOLVE_REDIS_URL`, or a Redis that cannot be reached, stops a replica at start-up
/// with a line naming the variable (never its value: a URL may carry a password).
#[test]
fn a_bad_or_unreachable_redis_url_stops_start_up_naming_the_variable() {
    let nobody = format!("redis://:hunter2@127.0.0.1:{}/0", free_port());
    for (url, why) in [
        ("redis//:hunter2@nowhere", "not a Redis URL"),
        (nobody.as_str(), "cannot connect"),
    ] {
        let stderr = refused_at_start_up("MCP_RESOLVE_REDIS_URL", url);
        assert!(stderr.contains(why), "{stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
}

/// Runs a replica with `var` set to `value`; it must stop at start-up (exit 2) with a line that
/// names the variable. Returns its stderr.
fn refused_at_start_up(var: &str, value: &str) -> String {
    // Bounded: a replica that starts serving instead is killed after 20 s and fails the test.
    let out = support::run_to_end(
        Command::new(support::notes_bin())
            .args(["--http", &format!("127.0.0.1:{}", free_port())])
            .env(var, value)
            .env("RUST_LOG", "warn"),
        var,
        Duration::from_secs(20),
        Duration::from_secs(5),
    );
    let stderr = out.stderr;
    assert!(
        !out.timed_out,
        "notes with {var} set did not stop within 20 s:\n{stderr}"
    );
    assert_eq!(out.status.and_then(|s| s.code()), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("{var}: ")), "{stderr}");
    stderr
}

fn tempdir(name: &str) -> PathBuf {
    let target = std::env::var("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir());
    let dir = target.join(format!("{name}-{}-{}", std::process::id(), free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A replica given a passphrase (or a short key) as its state key does not start: the key goes to
/// HKDF, not a password hash, so a weak one could be guessed from one captured state. The message
/// says how to make a key.
#[test]
fn a_passphrase_or_short_state_key_stops_start_up_with_how_to_make_a_key() {
    let short = "c2hvcnQgYnV0IHZhbGlkIGJhc2U2NA=="; // base64 of 22 bytes
    for (key, why) in [
        (
            "scale-out test: one state key shared by all replicas",
            "neither hex nor base64",
        ),
        (short, "decodes to 22 bytes"),
    ] {
        let stderr = refused_at_start_up("MCP_RESOLVE_STATE_KEY", key);
        assert!(stderr.contains(why), "{stderr}");
        assert!(stderr.contains("openssl rand -base64 32"), "{stderr}");
    }
}
