//! Prompts on both eras, through the in-memory client: listing, getting, argument checks,
//! capabilities, caching hints, errors and scopes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::testing::TestClient;
use mcp_resolve::{
    Context, Server, prompt,
    prompt::{GetPromptResult, PromptMessage},
    protocol::ProtocolVersion,
    server::CacheScope,
    tool,
    tool::Content,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A simple prompt.
#[prompt]
async fn test_simple_prompt() -> String {
    "This is a simple prompt for testing.".into()
}

/// A prompt with arguments.
#[prompt(title = "With arguments")]
async fn test_prompt_with_arguments(
    /// First test argument
    arg1: String,
    /// Second test argument
    #[arg(rename = "arg2")]
    second: String,
    /// An optional one
    extra: Option<String>,
) -> Vec<PromptMessage> {
    vec![PromptMessage::user(Content::text(format!(
        "Prompt with arguments: arg1='{arg1}', arg2='{second}', extra={extra:?}"
    )))]
}

/// Embeds a resource.
#[prompt]
async fn test_prompt_with_embedded_resource(#[arg(rename = "resourceUri")] resource_uri: String) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::resource_text(
            resource_uri,
            Some("text/plain".into()),
            "Embedded resource content for testing.",
        )),
        PromptMessage::user(Content::text("Please process the embedded resource above.")),
    ]
}

/// An image.
#[prompt]
async fn test_prompt_with_image() -> GetPromptResult {
    GetPromptResult::new(vec![
        PromptMessage::user(Content::image("iVBORw0KGgo=", "image/png")),
        PromptMessage::user(Content::text("Please analyze the image above.")),
    ])
    .description("An image prompt")
}

/// Fails or not.
#[prompt(name = "fallible")]
async fn fallible_prompt(fail: Option<String>) -> Result<String, String> {
    match fail {
        Some(why) => Err(format!("cannot render: {why}")),
        None => Ok("fine".into()),
    }
}

/// Panics.
#[prompt]
async fn panicky() -> String {
    panic!("the prompt fell over")
}

/// Needs a scope.
#[prompt(scopes = ["prompts:read"])]
async fn guarded() -> String {
    "secret".into()
}

/// The context it sees.
#[prompt]
async fn era(cx: Context) -> String {
    format!("{:?}", cx.era())
}

/// Set when `forever_prompt` starts, and when its future is dropped (only
/// `a_prompt_can_be_cancelled_like_a_call` gets it).
static FOREVER_STARTED: AtomicBool = AtomicBool::new(false);
static FOREVER_DROPPED: AtomicBool = AtomicBool::new(false);

struct DropFlag;
impl Drop for DropFlag {
    fn drop(&mut self) {
        FOREVER_DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Waits forever (until cancelled).
#[prompt]
async fn forever_prompt() -> String {
    let _flag = DropFlag;
    FOREVER_STARTED.store(true, Ordering::SeqCst);
    std::future::pending::<()>().await;
    String::new()
}

/// Waits until `flag` is set; false if it is not within 5 s.
async fn set_soon(flag: &AtomicBool) -> bool {
    tokio::time::timeout(Duration::from_secs(5), async {
        while !flag.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .is_ok()
}

/// A tool, so a server without prompts can be compared.
#[tool]
async fn noop() -> String {
    String::new()
}

fn server() -> Server {
    Server::new("test")
        .tool(noop)
        .prompt(test_simple_prompt)
        .prompt(test_prompt_with_arguments)
        .prompt(test_prompt_with_embedded_resource)
        .prompt(test_prompt_with_image)
        .prompt(fallible_prompt)
        .prompt(panicky)
        .prompt(guarded)
        .prompt(era)
        .prompt(forever_prompt)
        .list_cache(5_000, CacheScope::Private)
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
async fn prompts_list_describes_every_prompt_with_cache_hints_on_2026() {
    let mut c = modern();
    let r = c.request("prompts/list", json!({})).await;
    let res = &r["result"];
    assert_eq!(res["resultType"], "complete", "{r}");
    assert_eq!(res["ttlMs"], 5000);
    assert_eq!(res["cacheScope"], "private");
    let prompts = res["prompts"].as_array().unwrap();
    // Nine registered; the scoped one is hidden where no token comes.
    assert_eq!(prompts.len(), 8);
    assert!(prompts.iter().all(|p| p["name"] != "guarded"), "{r}");
    assert_eq!(
        prompts[1],
        json!({
            "name": "test_prompt_with_arguments",
            "title": "With arguments",
            "description": "A prompt with arguments.",
            "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true},
                {"name": "extra", "description": "An optional one", "required": false},
            ],
        })
    );
    assert_eq!(prompts[0]["arguments"], json!([]));
    assert!(prompts.iter().all(|p| p["description"].is_string()), "{r}");
    assert_eq!(prompts[4]["name"], "fallible");
    assert_eq!(prompts[7]["arguments"], json!([]), "the context is not an argument");
}

#[tokio::test]
async fn prompts_get_renders_each_return_type_on_both_eras() {
    for mut c in [modern(), legacy().await] {
        let stateless = c.request("prompts/list", json!({})).await["result"]["ttlMs"].is_u64();
        let r = c.request("prompts/get", json!({"name": "test_simple_prompt"})).await;
        let res = &r["result"];
        assert_eq!(
            res["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
        );
        assert_eq!(res.get("resultType").is_some(), stateless, "{r}");
        assert!(res.get("ttlMs").is_none(), "no cache hints on prompts/get: {r}");

        let r = c
            .request(
                "prompts/get",
                json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}),
            )
            .await;
        let text = r["result"]["messages"].to_string();
        assert!(text.contains("testValue1") && text.contains("testValue2"), "{r}");

        let r = c
            .request(
                "prompts/get",
                json!({"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://example-resource"}}),
            )
            .await;
        assert_eq!(
            r["result"]["messages"][0]["content"],
            json!({"type": "resource", "resource": {"uri": "test://example-resource", "mimeType": "text/plain", "text": "Embedded resource content for testing."}})
        );

        let r = c
            .request("prompts/get", json!({"name": "test_prompt_with_image"}))
            .await;
        assert_eq!(r["result"]["description"], "An image prompt");
        assert_eq!(r["result"]["messages"][0]["content"]["type"], "image");
        assert_eq!(r["result"]["messages"][0]["content"]["mimeType"], "image/png");

        let r = c.request("prompts/get", json!({"name": "era"})).await;
        let expected = if stateless { "Stateless" } else { "Handshake" };
        assert_eq!(r["result"]["messages"][0]["content"]["text"], expected, "{r}");
    }
}

#[tokio::test]
async fn argument_errors_are_invalid_params_naming_the_argument() {
    for mut c in [modern(), legacy().await] {
        let r = c
            .request(
                "prompts/get",
                json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}}),
            )
            .await;
        let e = error(&r);
        assert_eq!(e["code"], -32602);
        assert!(e["message"].as_str().unwrap().contains("`arg2`"), "{r}");
        assert_eq!(e["data"]["missing"], json!(["arg2"]));

        let r = c
            .request(
                "prompts/get",
                json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x", "arg2": 2}}),
            )
            .await;
        assert_eq!(error(&r)["code"], -32602);
        assert!(error(&r)["message"].as_str().unwrap().contains("`arg2`"), "{r}");

        let r = c
            .request("prompts/get", json!({"name": "test_simple_prompt", "arguments": [1]}))
            .await;
        assert_eq!(error(&r)["code"], -32602, "{r}");

        let r = c.request("prompts/get", json!({})).await;
        assert_eq!(error(&r)["code"], -32602, "{r}");
    }
}

#[tokio::test]
async fn unknown_prompt_is_invalid_params_with_its_name() {
    for mut c in [modern(), legacy().await] {
        let r = c.request("prompts/get", json!({"name": "nope"})).await;
        let e = error(&r);
        assert_eq!(e["code"], -32602);
        assert_eq!(e["message"], "Unknown prompt: nope");
        assert_eq!(e["data"], json!({"name": "nope"}));
    }
}

#[tokio::test]
async fn failures_and_panics_are_internal_errors_and_the_connection_goes_on() {
    for mut c in [modern(), legacy().await] {
        let r = c
            .request(
                "prompts/get",
                json!({"name": "fallible", "arguments": {"fail": "disk"}}),
            )
            .await;
        assert_eq!(error(&r)["code"], -32603);
        assert_eq!(error(&r)["message"], "cannot render: disk");
        let r = c.request("prompts/get", json!({"name": "panicky"})).await;
        assert_eq!(error(&r)["code"], -32603);
        assert!(!r.to_string().contains("fell over"), "the panic stays in the log: {r}");
        let r = c.request("prompts/get", json!({"name": "fallible"})).await;
        assert_eq!(r["result"]["messages"][0]["content"]["text"], "fine");
    }
}

#[tokio::test]
async fn scopes_are_checked_like_tools() {
    for mut c in [modern(), legacy().await] {
        let r = c.request("prompts/get", json!({"name": "guarded"})).await;
        let e = error(&r);
        assert_eq!(e["code"], -32600);
        assert!(e["message"].as_str().unwrap().contains("prompt `guarded`"), "{r}");
        assert_eq!(e["data"]["requiredScopes"], json!(["prompts:read"]));
    }
}

#[tokio::test]
async fn a_prompt_can_be_cancelled_like_a_call() {
    let mut c = legacy().await;
    let id = c.start("prompts/get", json!({"name": "forever_prompt"})).await;
    assert!(set_soon(&FOREVER_STARTED).await, "the prompt started");
    assert!(!FOREVER_DROPPED.load(Ordering::SeqCst));
    c.notify("notifications/cancelled", json!({"requestId": id})).await;
    // Cancelled: the prompt's future is dropped while the connection stays open.
    assert!(set_soon(&FOREVER_DROPPED).await, "the cancelled prompt was not stopped");
    // The connection goes on, and the cancelled request never gets a response.
    let r = c.request("prompts/get", json!({"name": "test_simple_prompt"})).await;
    assert!(r["result"]["messages"].is_array(), "{r}");
    let (frames, result) = c.close().await;
    assert!(result.is_ok());
    assert!(
        frames.iter().all(|f| f["id"] != id),
        "no response to a cancelled request: {frames:?}"
    );
}

#[tokio::test]
async fn the_prompts_capability_is_declared_only_with_prompts() {
    let mut c = TestClient::stateless(Server::new("t").prompt(test_simple_prompt), json!({}));
    let r = c.request("server/discover", json!({})).await;
    assert_eq!(r["result"]["capabilities"]["prompts"], json!({}), "no listChanged: {r}");
    let mut c = TestClient::stateless(Server::new("t").tool(noop), json!({}));
    let r = c.request("server/discover", json!({})).await;
    assert!(r["result"]["capabilities"].get("prompts").is_none(), "{r}");
    assert_eq!(error(&c.request("prompts/list", json!({})).await)["code"], -32601);

    let mut c = TestClient::raw(Server::new("t").prompt(test_simple_prompt));
    let init = c.initialize("2025-11-25", json!({})).await;
    assert_eq!(init["result"]["capabilities"]["prompts"], json!({}), "{init}");
    let mut c = TestClient::raw(Server::new("t").tool(noop));
    let init = c.initialize("2025-11-25", json!({})).await;
    assert!(init["result"]["capabilities"].get("prompts").is_none(), "{init}");
}
