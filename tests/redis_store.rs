//! `RedisStore` (feature `redis`) against a real `redis-server` (Debian's, installed by
//! scripts/setup-redis.sh), one per test on a free loopback port with no persistence: each
//! operation, expiry, the compare-and-set, the key prefix, one winner among concurrent
//! `insert_new`s, a Redis that goes away (a `StoreError` within the timeout, never a hang, and
//! service again once it is back), bad URLs and an unreachable Redis at connect, and two servers sharing one Redis refusing a
//! replayed single-use state.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;
use mcp_resolve::{redis_store::RedisStore, seal::StateKeys, store::Store};
use serde_json::json;
use std::time::{Duration, Instant};
use support::RedisServer;

const MINUTE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn each_operation_and_the_compare_and_set() {
    let redis = RedisServer::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    assert!(store.insert_new("k", b"pending", MINUTE).await.unwrap());
    assert!(!store.insert_new("k", b"other", MINUTE).await.unwrap(), "taken already");
    assert_eq!(store.get("k").await.unwrap().as_deref(), Some(&b"pending"[..]));
    assert_eq!(store.get("absent").await.unwrap(), None);
    // Compare and set: only from the expected value, and only once.
    assert!(
        !store.replace("k", b"done", b"x", MINUTE).await.unwrap(),
        "not the value held"
    );
    assert!(store.replace("k", b"pending", b"done", MINUTE).await.unwrap());
    assert!(
        !store.replace("k", b"pending", b"done", MINUTE).await.unwrap(),
        "replaced once"
    );
    assert_eq!(store.get("k").await.unwrap().as_deref(), Some(&b"done"[..]));
    assert!(
        !store.replace("absent", b"", b"x", MINUTE).await.unwrap(),
        "no key, no replace"
    );
    assert_eq!(store.get("absent").await.unwrap(), None);
    // Values are bytes, not text.
    let binary = [0u8, 255, 10, 13, 0];
    assert!(store.insert_new("bin", &binary, MINUTE).await.unwrap());
    assert_eq!(store.get("bin").await.unwrap().as_deref(), Some(&binary[..]));
    assert!(store.replace("bin", &binary, b"", MINUTE).await.unwrap());
    assert_eq!(store.get("bin").await.unwrap().as_deref(), Some(&b""[..]));
}

/// Real time: Redis expires keys by its own clock, in another process. `short` must outlast the
/// round trip from inserting "b" to replacing it (milliseconds; 1 s leaves a loaded machine
/// room); the wait for expiry is `short` plus a margin, one-sided: a slower machine only waits
/// longer.
#[tokio::test]
async fn entries_expire_and_replace_sets_a_new_life() {
    let redis = RedisServer::start();
    let store = RedisStore::connect(&redis.url()).await.unwrap();
    let short = Duration::from_secs(1);
    assert!(store.insert_new("a", b"1", short).await.unwrap());
    assert!(store.insert_new("b", b"1", short).await.unwrap());
    assert!(store.replace("b", b"1", b"2", MINUTE).await.unwrap());
    // A zero TTL is one millisecond, never "no expiry" or an error.
    assert!(store.insert_new("z", b"1", Duration::ZERO).await.unwrap());
    tokio::time::sleep(short + Duration::from_millis(100)).await;
    assert_eq!(store.get("a").await.unwrap(), None, "expired");
    assert_eq!(store.get("z").await.unwrap(), None, "expired");
    assert!(
        store.insert_new("a", b"again", MINUTE).await.unwrap(),
        "an expired key is new again"
    );
    assert_eq!(
        store.get("b").await.unwrap().as_deref(),
        Some(&b"2"[..]),
        "replace gave it a minute"
    );
}

#[tokio::test]
async fn the_key_prefix_keeps_deployments_apart() {
    let redis = RedisServer::start();
    let a = RedisStore::builder(redis.url())
        .key_prefix("a:")
        .connect()
        .await
        .unwrap();
    let b = RedisStore::builder(redis.url())
        .key_prefix("b:")
        .connect()
        .await
        .unwrap();
    let raw = RedisStore::connect(&redis.url()).await.unwrap();
    assert!(a.insert_new("mcp-resolve/used/x", b"", MINUTE).await.unwrap());
    assert!(
        b.insert_new("mcp-resolve/used/x", b"", MINUTE).await.unwrap(),
        "another deployment"
    );
    assert!(!a.insert_new("mcp-resolve/used/x", b"", MINUTE).await.unwrap());
    assert_eq!(
        raw.get("a:mcp-resolve/used/x").await.unwrap().as_deref(),
        Some(&b""[..])
    );
    assert_eq!(raw.get("mcp-resolve/used/x").await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_of_one_key_have_one_winner() {
    let redis = RedisServer::start();
    // Two connections, as two replicas have.
    let one = RedisStore::connect(&redis.url()).await.unwrap();
    let two = RedisStore::connect(&redis.url()).await.unwrap();
    let tries = (0..64).map(|i| {
        let store = if i % 2 == 0 { one.clone() } else { two.clone() };
        tokio::spawn(async move { store.insert_new("once", b"", MINUTE).await.unwrap() })
    });
    let mut won = 0;
    for t in tries {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_goes_away_is_a_store_error_within_the_timeout_and_service_resumes() {
    let mut redis = RedisServer::start();
    let port = redis.port;
    let timeout = Duration::from_millis(500);
    let store = RedisStore::builder(redis.url())
        .timeout(timeout)
        .connect()
        .await
        .unwrap();
    assert!(store.insert_new("k", b"", MINUTE).await.unwrap());
    redis.kill();
    for op in 0..3 {
        let started = Instant::now();
        let r = match op {
            0 => store.insert_new("k2", b"", MINUTE).await.map(|_| ()),
            1 => store.get("k").await.map(|_| ()),
            _ => store.replace("k", b"", b"x", MINUTE).await.map(|_| ()),
        };
        let took = started.elapsed();
        let e = r.expect_err("Redis is gone");
        assert!(e.reason().starts_with("redis: "), "{e}");
        // Real time (Redis is another process): within the timeout, plus 1 s for a loaded
        // machine to schedule the failure; a hang, what this rules out, never ends.
        assert!(took < timeout + Duration::from_secs(1), "op {op} took {took:?}");
        eprintln!("redis gone: op {op} failed in {took:?}: {e}");
    }
    // Back on the same port (empty: nothing persisted): the store reconnects by itself.
    let _back = RedisServer::start_on(port);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match store.insert_new("k", b"", MINUTE).await {
            Ok(fresh) => {
                assert!(fresh, "the new Redis is empty");
                break;
            }
            Err(e) => assert!(Instant::now() < deadline, "not reconnected: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn bad_urls_and_an_unreachable_redis_fail_at_connect_with_a_reason() {
    let e = RedisStore::connect("http://127.0.0.1:6379").await.unwrap_err();
    assert!(e.reason().contains("not a Redis URL"), "{e}");
    // Nothing listens on a port just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let e = RedisStore::builder(format!("redis://127.0.0.1:{port}"))
        .timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap_err();
    assert!(e.reason().contains("cannot connect to Redis"), "{e}");
    // Real time (a real socket): refused at once or at the 300 ms timeout, with a margin for a
    // loaded machine.
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    // `RedisStore::from_env` (the variable named, never its value): tests/scale_out.rs, through
    // the notes example.
}

#[resolver(once)]
async fn approve(amount: u32) -> Elicit<Confirm> {
    Elicit::form(format!("Transfer {amount}?"))
}

/// Single-use through its resolver.
#[tool]
async fn transfer(amount: u32, #[resolve(approve)] ok: bool) -> String {
    if ok { format!("sent {amount}") } else { "kept".into() }
}

#[tokio::test]
async fn two_servers_sharing_redis_refuse_a_state_the_other_consumed() {
    let redis = RedisServer::start();
    let replica = async || {
        let store = RedisStore::builder(redis.url())
            .key_prefix("test:")
            .connect()
            .await
            .unwrap();
        let server = Server::new("bank")
            .state_keys(StateKeys::new(&[9u8; 32]).unwrap())
            .store(store)
            .tool(transfer);
        TestClient::stateless(server, json!({"elicitation": {}}))
    };
    let (mut a, mut b) = (replica().await, replica().await);
    let args = json!({"amount": 10});
    let first = a
        .request("tools/call", json!({"name": "transfer", "arguments": args}))
        .await;
    let state = first["result"]["requestState"].as_str().unwrap().to_string();
    let retry = json!({"name": "transfer", "arguments": args, "requestState": state,
        "inputResponses": {"approve": {"action": "accept", "content": {"ok": true}}}});
    let done = b.request("tools/call", retry.clone()).await;
    assert_eq!(done["result"]["content"][0]["text"], "sent 10", "{done}");
    for c in [&mut a, &mut b] {
        let again = c.request("tools/call", retry.clone()).await;
        assert_eq!(again["error"]["code"], -32602, "{again}");
        assert_eq!(again["error"]["data"]["reason"], "invalid_request_state");
    }
}

#[path = "support/callers.rs"]
mod callers;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Linked {
    account: String,
}

#[resolver(key = "link")]
async fn link() -> Elicit<Linked> {
    Elicit::url("Link your account on the page", "https://bank.example/link")
}

/// Asks a URL-mode question: each call starts a flow.
#[tool]
async fn link_account(#[resolve(link)] linked: Linked) -> String {
    format!("linked {}", linked.account)
}

#[resolver(key = "open")]
async fn open_statement(id: String) -> Elicit<Confirm> {
    Elicit::form(format!("Open statement {id}?"))
}

/// A template whose every URI asks.
#[resource(template = "bank://statements/{id}")]
async fn statement(id: String, #[resolve(open_statement)] ok: bool) -> String {
    if ok { format!("statement {id}") } else { "closed".into() }
}

/// Issue 22, point 2, with the store in Redis: one caller reading many URIs of a template that
/// asks, and starting URL-mode flows until its bound, is refused alone; another caller is
/// still asked, its URL-mode flow completes, and its single-use call goes through once.
#[tokio::test]
async fn with_redis_one_callers_floods_of_questions_and_flows_leave_other_callers_served() {
    let redis = RedisServer::start();
    let store = RedisStore::builder(redis.url())
        .key_prefix("test:")
        .connect()
        .await
        .unwrap();
    let server = Server::new("bank")
        .state_keys(StateKeys::new(&[9u8; 32]).unwrap())
        .store(store)
        .question_limit(3, MINUTE)
        .url_flows_per_caller(2)
        .tool(transfer)
        .tool(link_account)
        .resource(statement);
    let flows = server.url_flows();
    let addr = callers::serve(server).await;

    let read = |id: u32| json!({"uri": format!("bank://statements/{id}")});
    for id in 0..3 {
        let r = callers::request(addr, "mallory", "resources/read", read(id)).await;
        assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    }
    let r = callers::request(addr, "mallory", "resources/read", read(3)).await;
    assert_eq!(
        r["error"]["message"],
        "resource `bank://statements/{id}` stopped: it asked this caller more than 3 questions in 60 s; try again later",
        "{r}"
    );
    let link = json!({"name": "link_account", "arguments": {}});
    for _ in 0..2 {
        let r = callers::request(addr, "mallory", "tools/call", link.clone()).await;
        assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    }
    let r = callers::request(addr, "mallory", "tools/call", link.clone()).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let refused = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        refused.starts_with("resolver `link`: this caller has 2 URL-mode steps waiting for their pages"),
        "{refused}"
    );

    let r = callers::request(addr, "alice", "resources/read", read(3)).await;
    assert_eq!(
        r["result"]["resultType"], "input_required",
        "another caller is asked: {r}"
    );
    let r = callers::request(addr, "alice", "tools/call", link.clone()).await;
    let url = r["result"]["inputRequests"]["link"]["params"]["url"].as_str().unwrap();
    flows
        .complete(
            &callers::flow_of(url),
            Some(&callers::caller("alice")),
            &json!({"account": "a1"}),
        )
        .await
        .unwrap();
    let mut retry = link;
    retry["requestState"] = r["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"link": {"action": "accept"}});
    let done = callers::request(addr, "alice", "tools/call", retry).await;
    assert_eq!(done["result"]["content"][0]["text"], "linked a1", "{done}");

    let pay = json!({"name": "transfer", "arguments": {"amount": 10}});
    let r = callers::request(addr, "alice", "tools/call", pay.clone()).await;
    let mut retry = pay;
    retry["requestState"] = r["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"approve": {"action": "accept", "content": {"ok": true}}});
    let done = callers::request(addr, "alice", "tools/call", retry.clone()).await;
    assert_eq!(done["result"]["content"][0]["text"], "sent 10", "{done}");
    let replay = callers::request(addr, "alice", "tools/call", retry).await;
    assert_eq!(replay["error"]["data"]["reason"], "invalid_request_state", "{replay}");
}
