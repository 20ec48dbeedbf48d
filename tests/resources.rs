//! Resources and URI templates on both eras, through the in-memory client: listing, reading,
//! template matching, unknown URIs, subscriptions, capabilities, caching hints, scopes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::testing::TestClient;
use mcp_resolve::{Blob, CacheScope, Context, ProtocolVersion, ResourceContents, Server, resource, tool};
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
        assert_eq!(list.len(), 7, "{r}");
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

#[tokio::test]
async fn unknown_uris_are_invalid_params_with_the_uri_never_empty_contents() {
    for mut c in [modern(), legacy().await] {
        for uri in [
            "test://nonexistent-resource-for-conformance-testing",
            "test://template/1/2/data",
            "test://template//data",
            "test://empty",
        ] {
            let r = c.request("resources/read", json!({"uri": uri})).await;
            let e = error(&r);
            assert_eq!(e["code"], -32602, "{uri}: {r}");
            assert_eq!(e["data"], json!({"uri": uri}));
        }
        let long = format!("test://template/{}/data", "x".repeat(mcp_resolve::MAX_URI_BYTES));
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
        assert_eq!(error(&r)["code"], -32602);
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

#[tokio::test]
async fn the_resources_capability_differs_by_era_and_needs_a_resource() {
    let mut c = TestClient::raw(server());
    let init = c.initialize("2025-11-25", json!({})).await;
    assert_eq!(
        init["result"]["capabilities"]["resources"],
        json!({"subscribe": true}),
        "{init}"
    );
    let mut c = modern();
    let r = c.request("server/discover", json!({})).await;
    assert_eq!(r["result"]["capabilities"]["resources"], json!({}), "{r}");

    let mut c = TestClient::raw(Server::new("t").tool(noop));
    let init = c.initialize("2025-11-25", json!({})).await;
    assert!(init["result"]["capabilities"].get("resources").is_none(), "{init}");
    let r = c.request("resources/list", json!({})).await;
    assert_eq!(error(&r)["code"], -32601);
}
