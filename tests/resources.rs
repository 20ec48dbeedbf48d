//! Resources and URI templates on both eras, through the in-memory client: listing, reading,
//! template matching, unknown URIs, subscriptions, capabilities, caching hints, scopes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::testing::TestClient;
use mcp_resolve::{
    Context, Server,
    protocol::ProtocolVersion,
    resource,
    resource::{Blob, ResourceContents},
    server::CacheScope,
    tool,
};
use serde_json::{Value, json};

/// A static text resource.
#[resource(uri = "test://static-text", mime_type = "text/plain", title = "Static text")]
async fn static_text() -> String {
    "This is the content of the static text resource.".into()
}

/// A static binary resource.
#[resource(uri = "test://static-binary", mime_type = "image/png")]
async fn static_binary() -> Blob {
    Blob(vec![0x89, b'P', b'N', b'G'])
}

/// A watched resource.
#[resource(uri = "test://watched-resource", mime_type = "text/plain", name = "watched")]
async fn watched_resource() -> &'static str {
    "watched"
}

/// Data for one id.
#[resource(template = "test://template/{id}/data", mime_type = "application/json")]
async fn template_data(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

/// Two variables and the context.
#[resource(template = "test://pair/{a}/{b}.json")]
async fn pair(b: String, a: String, cx: Context) -> Vec<ResourceContents> {
    vec![ResourceContents {
        uri: format!("test://pair/{a}/{b}.json"),
        mime_type: Some("application/json".into()),
        text: Some(format!("{a}+{b}+{:?}", cx.era())),
        blob: None,
    }]
}

/// Fails.
#[resource(uri = "test://failing")]
async fn failing() -> Result<String, String> {
    Err("the disk is gone".into())
}

/// Empty.
#[resource(uri = "test://empty")]
async fn empty() -> Vec<String> {
    Vec::new()
}

/// Panics.
#[resource(uri = "test://panics")]
async fn panics() -> String {
    panic!("the resource fell over")
}

/// Needs a scope.
#[resource(uri = "test://guarded", scopes = ["notes:admin"])]
async fn guarded() -> String {
    "secret".into()
}

#[tool]
async fn noop() -> String {
    String::new()
}

fn server() -> Server {
    Server::new("test")
        .tool(noop)
        .resource(static_text)
        .resource(static_binary)
        .resource(watched_resource)
        .resource(template_data)
        .resource(pair)
        .resource(failing)
        .resource(empty)
        .resource(panics)
        .resource(guarded)
        .list_cache(7_000, CacheScope::Private)
}

fn modern() -> TestClient {
    TestClient::stateless(server(), json!({}))
}

async fn legacy() -> TestClient {
    TestClient::handshake(server(), ProtocolVersion::V2025_11_25, json!({})).await
}

fn error(frame: &Value) -> &Value {
    frame.get("error").unwrap_or_else(|| panic!("not an error: {frame}"))
}

#[tokio::test]
async fn lists_carry_static_resources_and_templates_with_cache_hints_on_2026() {
    for (mut c, stateless) in [(modern(), true), (legacy().await, false)] {
        let r = c.request("resources/list", json!({})).await;
        let res = &r["result"];
        let list = res["resources"].as_array().unwrap();
        // Seven static ones registered; the scoped one is hidden where no token comes.
        assert_eq!(list.len(), 6, "{r}");
        assert!(list.iter().all(|x| x["uri"] != "test://guarded"), "{r}");
        assert_eq!(
            list[0],
            json!({"uri": "test://static-text", "name": "static_text", "title": "Static text",
                   "description": "A static text resource.", "mimeType": "text/plain"})
        );
        assert_eq!(list[2]["name"], "watched");
        assert_eq!(res.get("ttlMs").is_some(), stateless, "{r}");
        let r = c.request("resources/templates/list", json!({})).await;
        let res = &r["result"];
        assert_eq!(
            res["resourceTemplates"][0],
            json!({"uriTemplate": "test://template/{id}/data", "name": "template_data",
                   "description": "Data for one id.", "mimeType": "application/json"})
        );
        assert_eq!(res["resourceTemplates"].as_array().unwrap().len(), 2);
        if stateless {
            assert_eq!(
                (res["ttlMs"].clone(), res["cacheScope"].clone()),
                (json!(7000), json!("private"))
            );
            assert_eq!(res["resultType"], "complete");
        } else {
            assert!(res.get("ttlMs").is_none() && res.get("resultType").is_none(), "{r}");
        }
    }
}

#[tokio::test]
async fn reads_text_blobs_and_templates_on_both_eras() {
    for (mut c, stateless) in [(modern(), true), (legacy().await, false)] {
        let r = c.request("resources/read", json!({"uri": "test://static-text"})).await;
        let res = &r["result"];
        assert_eq!(
            res["contents"],
            json!([{"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."}])
        );
        assert_eq!(res.get("ttlMs").is_some(), stateless, "{r}");
        assert_eq!(res.get("cacheScope").is_some(), stateless, "{r}");

        let r = c
            .request("resources/read", json!({"uri": "test://static-binary"}))
            .await;
        assert_eq!(r["result"]["contents"][0]["blob"], "iVBORw==");
        assert_eq!(r["result"]["contents"][0]["mimeType"], "image/png");

        let r = c
            .request("resources/read", json!({"uri": "test://template/123/data"}))
            .await;
        let item = &r["result"]["contents"][0];
        assert_eq!(item["uri"], "test://template/123/data");
        assert_eq!(item["mimeType"], "application/json");
        let data: Value = serde_json::from_str(item["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            data,
            json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
        );

        let r = c
            .request("resources/read", json!({"uri": "test://pair/x/y.json"}))
            .await;
        let era = if stateless { "Stateless" } else { "Handshake" };
        assert_eq!(r["result"]["contents"][0]["text"], format!("x+y+{era}"), "{r}");
    }
}

/// A URI nothing answers is "Resource not found": -32002 on the handshake era (2025-11-25
/// resources: "Servers SHOULD return … Resource not found: `-32002`"), -32602 on 2026-07-28
/// (which does not use -32002), with `data.uri`; never empty contents. A malformed `uri` is
/// -32602 on both.
#[tokio::test]
async fn unknown_uris_are_resource_not_found_with_the_uri_never_empty_contents() {
    for (mut c, not_found) in [(modern(), -32602), (legacy().await, -32002)] {
        for uri in [
            "test://nonexistent-resource-for-conformance-testing",
            "test://template/1/2/data",
            "test://template//data",
            "test://empty",
        ] {
            let r = c.request("resources/read", json!({"uri": uri})).await;
            let e = error(&r);
            assert_eq!(e["code"], not_found, "{uri}: {r}");
            assert_eq!(e["data"], json!({"uri": uri}));
        }
        let long = format!(
            "test://template/{}/data",
            "x".repeat(mcp_resolve::resource::MAX_URI_BYTES)
        );
        let r = c.request("resources/read", json!({"uri": long})).await;
        assert_eq!(error(&r)["code"], -32602);
        let r = c.request("resources/read", json!({})).await;
        assert_eq!(error(&r)["code"], -32602);
        let r = c.request("resources/read", json!({"uri": 5})).await;
        assert_eq!(error(&r)["code"], -32602);
    }
}

#[tokio::test]
async fn failures_panics_and_scopes_are_errors_and_the_connection_goes_on() {
    for mut c in [modern(), legacy().await] {
        let r = c.request("resources/read", json!({"uri": "test://failing"})).await;
        assert_eq!(error(&r)["code"], -32603);
        assert_eq!(error(&r)["message"], "the disk is gone");
        let r = c.request("resources/read", json!({"uri": "test://panics"})).await;
        assert_eq!(error(&r)["code"], -32603);
        assert!(!r.to_string().contains("fell over"), "{r}");
        let r = c.request("resources/read", json!({"uri": "test://guarded"})).await;
        assert_eq!(error(&r)["code"], -32600);
        assert!(
            error(&r)["message"]
                .as_str()
                .unwrap()
                .contains("resource `test://guarded`"),
            "{r}"
        );
        let r = c.request("resources/read", json!({"uri": "test://static-text"})).await;
        assert!(r["result"]["contents"].is_array());
    }
}

#[tokio::test]
async fn subscriptions_exist_on_the_handshake_era_only() {
    let mut c = legacy().await;
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let r = c.request(method, json!({"uri": "test://watched-resource"})).await;
        assert_eq!(r["result"], json!({}), "exactly {{}}: {r}");
        let r = c.request(method, json!({"uri": "test://nope"})).await;
        assert_eq!(error(&r)["code"], -32002);
        assert_eq!(error(&r)["data"], json!({"uri": "test://nope"}));
    }
    let mut c = modern();
    let r = c
        .request("resources/subscribe", json!({"uri": "test://watched-resource"}))
        .await;
    assert_eq!(error(&r)["code"], -32601);
}

#[tokio::test]
async fn one_session_holds_at_most_1024_subscriptions() {
    let mut c = legacy().await;
    let uri = |i: usize| json!({"uri": format!("test://template/{i}/data")});
    for i in 0..1024 {
        let r = c.request("resources/subscribe", uri(i)).await;
        assert_eq!(r["result"], json!({}), "{i}: {r}");
    }
    let r = c.request("resources/subscribe", uri(1024)).await;
    assert_eq!(error(&r)["code"], -32602, "{r}");
    assert!(
        error(&r)["message"].as_str().unwrap().contains("unsubscribe first"),
        "{r}"
    );
    // One already held is no new one; after an unsubscribe there is room again.
    assert_eq!(c.request("resources/subscribe", uri(7)).await["result"], json!({}));
    assert_eq!(c.request("resources/unsubscribe", uri(7)).await["result"], json!({}));
    assert_eq!(c.request("resources/subscribe", uri(1024)).await["result"], json!({}));
}

/// `resources.subscribe` on both eras: `resources/subscribe` on the handshake era,
/// `subscriptions/listen`'s `resourceSubscriptions` on 2026-07-28.
#[tokio::test]
async fn the_resources_capability_offers_subscriptions_on_both_eras_and_needs_a_resource() {
    let mut c = TestClient::raw(server());
    let init = c.initialize("2025-11-25", json!({})).await;
    assert_eq!(
        init["result"]["capabilities"]["resources"],
        json!({"subscribe": true}),
        "{init}"
    );
    let mut c = modern();
    let r = c.request("server/discover", json!({})).await;
    assert_eq!(
        r["result"]["capabilities"]["resources"],
        json!({"subscribe": true}),
        "{r}"
    );

    let mut c = TestClient::raw(Server::new("t").tool(noop));
    let init = c.initialize("2025-11-25", json!({})).await;
    assert!(init["result"]["capabilities"].get("resources").is_none(), "{init}");
    let r = c.request("resources/list", json!({})).await;
    assert_eq!(error(&r)["code"], -32601);
}

// ------------------------------------------------------------------ notifications/resources/updated

const WATCHED: &str = "test://watched-resource";

/// Says that a resource changed, from inside a call.
#[tool]
async fn touch(uri: String, cx: Context) -> String {
    format!("told {}", cx.resource_updated(&uri))
}

fn is_update(frame: &Value, uri: &str) -> bool {
    *frame == json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
}

/// Nothing more arrives within a short while.
async fn quiet(c: &mut TestClient) {
    let frame = c.try_recv(std::time::Duration::from_millis(100)).await;
    assert!(frame.is_none(), "unexpected frame: {frame:?}");
}

#[tokio::test]
async fn an_update_reaches_a_subscriber_of_that_uri_until_it_unsubscribes() {
    let server = server();
    let updates = server.resource_updates();
    let mut c = TestClient::handshake(server, ProtocolVersion::V2025_11_25, json!({})).await;
    assert_eq!(updates.updated(WATCHED), 0, "nobody subscribed yet");
    let r = c.request("resources/subscribe", json!({"uri": WATCHED})).await;
    assert_eq!(r["result"], json!({}));
    assert_eq!(updates.subscribers(WATCHED), 1);

    assert_eq!(updates.updated(WATCHED), 1);
    let frame = c.recv().await;
    assert!(is_update(&frame, WATCHED), "{frame}");
    // From another thread too, and once per call.
    let from_thread = updates.clone();
    assert_eq!(
        std::thread::spawn(move || from_thread.updated(WATCHED)).join().unwrap(),
        1
    );
    assert!(is_update(&c.recv().await, WATCHED));
    quiet(&mut c).await;

    // Another URI, or one that only looks alike: nothing.
    for other in [
        "test://static-text",
        "test://watched-resource/",
        "TEST://watched-resource",
    ] {
        assert_eq!(updates.updated(other), 0, "{other}");
    }
    quiet(&mut c).await;

    let r = c.request("resources/unsubscribe", json!({"uri": WATCHED})).await;
    assert_eq!(r["result"], json!({}));
    assert_eq!(updates.updated(WATCHED), 0);
    assert_eq!(updates.subscribers(WATCHED), 0);
    quiet(&mut c).await;
}

#[tokio::test]
async fn a_template_uri_is_watched_as_written() {
    let server = server();
    let updates = server.resource_updates();
    let mut c = TestClient::handshake(server, ProtocolVersion::V2025_06_18, json!({})).await;
    let uri = "test://template/42/data";
    assert_eq!(
        c.request("resources/subscribe", json!({"uri": uri})).await["result"],
        json!({})
    );
    assert_eq!(updates.updated("test://template/43/data"), 0);
    assert_eq!(updates.updated(uri), 1);
    assert!(is_update(&c.recv().await, uri), "2025-06-18 is told too");
}

#[tokio::test]
async fn of_two_sessions_only_the_subscriber_is_told() {
    let server = server();
    let updates = server.resource_updates();
    let server = std::sync::Arc::new(server);
    let mut subscriber = TestClient::handshake(server.clone(), ProtocolVersion::V2025_11_25, json!({})).await;
    let mut other = TestClient::handshake(server.clone(), ProtocolVersion::V2025_11_25, json!({})).await;
    let mut modern = TestClient::stateless(server, json!({}));
    subscriber.request("resources/subscribe", json!({"uri": WATCHED})).await;
    other
        .request("resources/subscribe", json!({"uri": "test://static-text"}))
        .await;
    assert_eq!(updates.updated(WATCHED), 1);
    assert!(is_update(&subscriber.recv().await, WATCHED));
    quiet(&mut other).await;
    quiet(&mut modern).await;
    assert_eq!(updates.updated("test://static-text"), 1);
    assert!(is_update(&other.recv().await, "test://static-text"));
    quiet(&mut subscriber).await;
}

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Waits until nobody is subscribed to `uri` any more (a stream ended on its task).
async fn unsubscribed(updates: &mcp_resolve::resource::ResourceUpdates, uri: &str) {
    let waited = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while updates.subscribers(uri) > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });
    assert!(
        waited.await.is_ok(),
        "{uri} still has {} subscriber(s)",
        updates.subscribers(uri)
    );
}

/// 2026-07-28 base protocol: "All implementations MUST support … the message patterns" —
/// `subscriptions/listen` (subscriptions: the server "MUST send
/// `notifications/subscriptions/acknowledged` as the first message", whose `notifications`
/// "reflects the subset the server agreed to honor"; "All notifications delivered on the stream
/// carry `io.modelcontextprotocol/subscriptionId`"; the server "MUST NOT send notification
/// types the client has not explicitly requested"). Cancelling it (`notifications/cancelled` on
/// stdio) ends it with no response and leaves nothing behind. `resources/subscribe` is gone.
#[tokio::test]
async fn a_2026_client_is_told_through_subscriptions_listen() {
    let server = server().tool(touch);
    let updates = server.resource_updates();
    let mut c = TestClient::stateless(server, json!({}));
    let r = c.request("resources/subscribe", json!({"uri": WATCHED})).await;
    assert_eq!(error(&r)["code"], -32601, "removed on 2026-07-28");
    let filter = json!({
        "toolsListChanged": true,
        "resourceSubscriptions": [WATCHED, "test://nowhere", "test://guarded", WATCHED, "test://template/7/data"],
    });
    let id = c.start("subscriptions/listen", json!({"notifications": filter})).await;
    // First: the acknowledgment, with what is honoured: known URIs this caller may read, once
    // each; no list changes (this server's lists never change).
    assert_eq!(
        c.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {SUBSCRIPTION_ID: id},
            "notifications": {"resourceSubscriptions": [WATCHED, "test://template/7/data"]},
        }})
    );
    assert_eq!(updates.subscribers(WATCHED), 1);
    assert_eq!(updates.updated("test://static-text"), 0, "not asked for");
    // A call on the same connection announces a change: the stream carries it, tagged.
    let r = c.call_tool("touch", json!({"uri": WATCHED})).await;
    assert_eq!(r["result"]["content"][0]["text"], "told 1", "{r}");
    assert_eq!(
        c.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {
            "_meta": {SUBSCRIPTION_ID: id}, "uri": WATCHED,
        }})
    );
    assert_eq!(updates.updated("test://template/7/data"), 1);
    assert_eq!(c.recv().await["params"]["uri"], "test://template/7/data");
    // Two streams at once, each with its own id.
    let second = c
        .start(
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": [WATCHED]}}),
        )
        .await;
    assert_eq!(c.recv().await["params"]["_meta"][SUBSCRIPTION_ID], second);
    assert_eq!(updates.updated(WATCHED), 2);
    let mut tags = [c.recv().await, c.recv().await].map(|f| f["params"]["_meta"][SUBSCRIPTION_ID].clone());
    tags.sort_by_key(|v| v.as_i64());
    assert_eq!(tags, [json!(id), json!(second)]);
    // Cancelled: no response, and unsubscribed.
    for stream in [id, second] {
        c.notify(
            "notifications/cancelled",
            json!({"requestId": stream, "reason": "done"}),
        )
        .await;
    }
    unsubscribed(&updates, WATCHED).await;
    assert_eq!(updates.updated(WATCHED), 0);
    quiet(&mut c).await;
}

/// Subscriptions, graceful closure: when the server ends a stream itself (here its lifetime,
/// `Server::listen_lifetime`) it answers the `subscriptions/listen` request with a complete
/// result tagged with the subscription id, and the stream's subscriptions are gone.
#[tokio::test(start_paused = true)]
async fn a_listen_stream_ends_gracefully_at_its_lifetime() {
    let server = server().listen_lifetime(std::time::Duration::from_secs(60));
    let updates = server.resource_updates();
    let mut c = TestClient::stateless(server, json!({}));
    let id = c
        .start(
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": [WATCHED]}}),
        )
        .await;
    assert_eq!(c.recv().await["method"], "notifications/subscriptions/acknowledged");
    let started = tokio::time::Instant::now();
    let end = c
        .try_recv(std::time::Duration::from_secs(600))
        .await
        .expect("the graceful end");
    assert_eq!(
        started.elapsed(),
        std::time::Duration::from_secs(60),
        "exactly its lifetime"
    );
    assert_eq!(end["id"], id);
    assert_eq!(end["result"]["resultType"], "complete");
    assert_eq!(end["result"]["_meta"][SUBSCRIPTION_ID], id);
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test"
    );
    assert_eq!(updates.subscribers(WATCHED), 0);
}

/// A filter that is not the specification's is -32602 before anything is sent; the stream's
/// URIs are bounded; the handshake era has no `subscriptions/listen`.
#[tokio::test]
async fn listen_filters_are_checked_and_bounded() {
    let mut c = modern();
    let too_many: Vec<String> = (0..1025).map(|i| format!("test://template/{i}/data")).collect();
    for (notifications, why) in [
        (json!("everything"), "must be an object"),
        (json!({"resourceSubscription": [WATCHED]}), "unknown field"),
        (json!({"resourceSubscriptions": WATCHED}), "must be an object"),
        (json!({"toolsListChanged": "yes"}), "must be an object"),
        (json!({"resourceSubscriptions": too_many}), "at most 1024"),
    ] {
        let r = c
            .request("subscriptions/listen", json!({"notifications": notifications}))
            .await;
        assert_eq!(error(&r)["code"], -32602, "{r}");
        assert!(error(&r)["message"].as_str().unwrap().contains(why), "{why}: {r}");
    }
    // No filter: nothing asked, nothing honoured (acknowledged, then nothing).
    let id = c.start("subscriptions/listen", json!({})).await;
    let ack = c.recv().await;
    assert_eq!(
        ack["params"],
        json!({"_meta": {SUBSCRIPTION_ID: id}, "notifications": {}})
    );
    let mut legacy = legacy().await;
    let r = legacy
        .request("subscriptions/listen", json!({"notifications": {}}))
        .await;
    assert_eq!(error(&r)["code"], -32601);
}

#[tokio::test]
async fn a_tool_announces_a_change_through_its_context() {
    let server = std::sync::Arc::new(server().tool(touch));
    let mut writer = TestClient::stateless(server.clone(), json!({}));
    let mut watcher = TestClient::handshake(server.clone(), ProtocolVersion::V2025_11_25, json!({})).await;
    watcher.request("resources/subscribe", json!({"uri": WATCHED})).await;
    // A 2026-07-28 call tells the handshake-era subscriber.
    let r = writer.call_tool("touch", json!({"uri": WATCHED})).await;
    assert_eq!(r["result"]["content"][0]["text"], "told 1", "{r}");
    assert!(is_update(&watcher.recv().await, WATCHED));
    // The subscriber's own call: the notification comes before the call's response.
    let id = watcher
        .start("tools/call", json!({"name": "touch", "arguments": {"uri": WATCHED}}))
        .await;
    let first = watcher.recv().await;
    assert!(is_update(&first, WATCHED), "{first}");
    let r = watcher.response_to(&json!(id)).await;
    assert_eq!(r["result"]["content"][0]["text"], "told 1", "{r}");
}

#[tokio::test]
async fn a_closed_connection_leaves_no_subscription_behind() {
    let server = server();
    let updates = server.resource_updates();
    let mut c = TestClient::handshake(server, ProtocolVersion::V2025_11_25, json!({})).await;
    let uris: Vec<String> = (0..50).map(|i| format!("test://template/{i}/data")).collect();
    for uri in &uris {
        assert_eq!(
            c.request("resources/subscribe", json!({"uri": uri})).await["result"],
            json!({})
        );
    }
    assert!(uris.iter().all(|u| updates.subscribers(u) == 1));
    let (frames, result) = c.close().await;
    assert!(result.is_ok() && frames.is_empty(), "{frames:?}");
    assert!(
        uris.iter().all(|u| updates.subscribers(u) == 0),
        "unregistered at close"
    );
    assert_eq!(updates.updated(&uris[0]), 0);
    assert_eq!(
        format!("{updates:?}"),
        "ResourceUpdates { uris: 0 }",
        "the registry is empty"
    );
}

#[tokio::test]
async fn a_client_that_does_not_read_loses_updates_never_blocks_the_server() {
    let server = server();
    let updates = server.resource_updates();
    let mut c = TestClient::handshake(server, ProtocolVersion::V2025_11_25, json!({})).await;
    c.request("resources/subscribe", json!({"uri": WATCHED})).await;
    // The client reads nothing: once the connection's queue is full, updates are dropped for it
    // (at once: nothing waits), and the count says so.
    let started = std::time::Instant::now();
    let mut sent = 0;
    let mut dropped = 0;
    for _ in 0..100_000 {
        match updates.updated(WATCHED) {
            1 => sent += 1,
            _ => dropped += 1,
        }
        if dropped > 10 {
            break;
        }
    }
    assert!(dropped > 10, "the queue is bounded ({sent} sent)");
    // Real time: `updated` is synchronous, so no tokio clock applies. The loop takes
    // milliseconds; 5 s only rules out each update waiting a while for the reader (one that
    // waited for it outright would never return, and the per-test time limit names it).
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The connection goes on: the updates that fitted, then the answer.
    let id = c.start("ping", json!({})).await;
    let r = c.response_to(&json!(id)).await;
    assert_eq!(r["result"], json!({}));
    for _ in 0..sent {
        assert!(is_update(&c.recv().await, WATCHED));
    }
}
