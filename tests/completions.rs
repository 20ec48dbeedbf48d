//! `completion/complete` on both eras: prompt arguments and template variables with completers,
//! the cap of 100 values, arguments without a completer, unknown refs, the capability.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::testing::TestClient;
use mcp_resolve::{Context, Server, prompt, protocol::ProtocolVersion, resource, tool};
use serde_json::{Value, json};

async fn colours(value: String, _cx: Context) -> Vec<String> {
    ["red", "green", "grey", "blue"]
        .iter()
        .filter(|c| c.starts_with(&value))
        .map(|c| c.to_string())
        .collect()
}

async fn numbers(value: String, cx: Context) -> Vec<String> {
    let _ = cx.protocol_version();
    (0..250).map(|n| format!("{value}{n}")).collect()
}

async fn falls_over(_: String, _: Context) -> Vec<String> {
    panic!("the completer fell over")
}

/// Paint.
#[prompt]
async fn paint(#[arg(complete = colours)] colour: String, shade: Option<String>) -> String {
    format!("{colour} {shade:?}")
}

/// Broken completions.
#[prompt]
async fn broken(#[arg(complete = falls_over)] x: String) -> String {
    x
}

/// An item.
#[resource(template = "test://items/{id}/{part}")]
async fn item(#[arg(complete = numbers)] id: String, part: String) -> String {
    format!("{id}/{part}")
}

#[tool]
async fn noop() -> String {
    String::new()
}

fn server() -> Server {
    Server::new("t").prompt(paint).prompt(broken).resource(item)
}

fn error(frame: &Value) -> &Value {
    frame.get("error").unwrap_or_else(|| panic!("not an error: {frame}"))
}

#[tokio::test]
async fn completions_on_both_eras() {
    let modern = TestClient::stateless(server(), json!({}));
    let legacy = TestClient::handshake(server(), ProtocolVersion::V2025_11_25, json!({})).await;
    for (mut c, stateless) in [(modern, true), (legacy, false)] {
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "paint"}, "argument": {"name": "colour", "value": "gr"}}),
            )
            .await;
        let res = &r["result"];
        assert_eq!(
            res["completion"],
            json!({"values": ["green", "grey"], "total": 2, "hasMore": false}),
            "{r}"
        );
        assert_eq!(res.get("resultType").is_some(), stateless);

        // No completer: no values.
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "paint"}, "argument": {"name": "shade", "value": "x"}}),
            )
            .await;
        assert_eq!(
            r["result"]["completion"],
            json!({"values": [], "total": 0, "hasMore": false})
        );

        // A template variable, capped at 100.
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "test://items/{id}/{part}"}, "argument": {"name": "id", "value": "n"}}),
            )
            .await;
        let completion = &r["result"]["completion"];
        assert_eq!(completion["values"].as_array().unwrap().len(), 100, "{r}");
        assert_eq!(completion["values"][0], "n0");
        assert_eq!(
            (completion["total"].clone(), completion["hasMore"].clone()),
            (json!(250), json!(true))
        );

        // Unknown refs and malformed params: -32602.
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
            )
            .await;
        assert_eq!(error(&r)["code"], -32602);
        assert_eq!(error(&r)["data"], json!({"name": "nope"}));
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "test://nope/{x}"}, "argument": {"name": "x", "value": ""}}),
            )
            .await;
        assert_eq!(error(&r)["data"], json!({"uri": "test://nope/{x}"}));
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/tool", "name": "paint"}, "argument": {"name": "a", "value": ""}}),
            )
            .await;
        assert_eq!(error(&r)["code"], -32602);
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "paint"}}),
            )
            .await;
        assert_eq!(error(&r)["code"], -32602);

        // A panicking completer: -32603, and the connection goes on.
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "broken"}, "argument": {"name": "x", "value": ""}}),
            )
            .await;
        assert_eq!(error(&r)["code"], -32603);
        assert!(!r.to_string().contains("fell over"));
    }
}

#[tokio::test]
async fn the_completions_capability_needs_a_completer() {
    let mut c = TestClient::stateless(server(), json!({}));
    let r = c.request("server/discover", json!({})).await;
    assert_eq!(r["result"]["capabilities"]["completions"], json!({}), "{r}");
    let mut c = TestClient::raw(server());
    let init = c.initialize("2025-11-25", json!({})).await;
    assert_eq!(init["result"]["capabilities"]["completions"], json!({}), "{init}");

    let mut c = TestClient::stateless(Server::new("t").tool(noop), json!({}));
    let r = c.request("server/discover", json!({})).await;
    assert!(r["result"]["capabilities"].get("completions").is_none(), "{r}");
    let r = c
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "paint"}, "argument": {"name": "a", "value": ""}}),
        )
        .await;
    assert_eq!(error(&r)["code"], -32601);
}

/// Completion (both eras): servers "SHOULD … implement appropriate rate limiting": completions
/// count against the caller's call rate (`Server::call_rate_limit`), and past it one is refused
/// with the retry delay while another connection is served.
#[tokio::test]
async fn completions_count_against_the_callers_rate() {
    let server = std::sync::Arc::new(server().call_rate_limit(1, 2));
    let ask = json!({"ref": {"type": "ref/prompt", "name": "paint"}, "argument": {"name": "colour", "value": "gr"}});
    let mut flood = TestClient::stateless(server.clone(), json!({}));
    for _ in 0..2 {
        let r = flood.request("completion/complete", ask.clone()).await;
        assert!(r["result"]["completion"]["values"].is_array(), "{r}");
    }
    let r = flood.request("completion/complete", ask.clone()).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(r["error"]["data"]["retryAfterMs"].as_u64().is_some(), "{r}");
    let mut other = TestClient::stateless(server, json!({}));
    let r = other.request("completion/complete", ask).await;
    assert!(r["result"]["completion"]["values"].is_array(), "another caller: {r}");
}
