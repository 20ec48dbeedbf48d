//! Prompts and resources that ask (issue 12, point 5), through the in-memory client on both
//! eras: `#[resolve(fn)]` parameters on `#[prompt]` and `#[resource]`, hidden from the argument
//! list, asked over MRTR on 2026-07-28 and on the back-channel on the handshake era, with the
//! state sealed and bound to the method and the prompt's name or the resource's URI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;
use mcp_resolve::{protocol::ProtocolVersion, seal::StateKeys};
use serde_json::{Value, json};

#[derive(FormSchema, Clone, Debug)]
struct Tone {
    /// How the summary should sound
    tone: String,
}

/// Asks how the summary of `topic` should sound, unless the prompt was given a tone.
#[resolver(key = "tone")]
async fn ask_tone(topic: String, tone: Option<String>) -> Resolution<Tone> {
    match tone {
        Some(tone) => Resolution::Value(Tone { tone }),
        None => Elicit::form(format!("How should the summary of {topic} sound?")).into(),
    }
}

/// Summarize a topic in the tone the user picks.
#[prompt]
async fn summarize(topic: String, tone: Option<String>, #[resolve(ask_tone)] picked: Tone) -> String {
    let _ = tone;
    format!("Summarize {topic} in a {} tone.", picked.tone)
}

/// The same, branching on all three outcomes.
#[prompt]
async fn summarize_or_not(
    topic: String,
    tone: Option<String>,
    #[resolve(ask_tone)] picked: ElicitationResult<Tone>,
) -> String {
    match picked {
        ElicitationResult::Accepted(t) => format!("Summarize {topic} in a {} tone.", t.tone),
        ElicitationResult::Declined => format!("Summarize {topic}{}.", tone.map(|_| " as given").unwrap_or_default()),
        ElicitationResult::Cancelled => "Never mind.".into(),
    }
}

#[derive(FormSchema, Clone, Debug)]
struct Reason {
    reason: String,
}

#[resolver(key = "why")]
async fn ask_why(id: String) -> Elicit<Reason> {
    Elicit::form(format!("Why do you want to read secret {id}?"))
}

/// A secret, read only with a reason.
#[resource(template = "test://secrets/{id}", mime_type = "text/plain")]
async fn secret(id: String, #[resolve(ask_why)] why: Reason) -> String {
    format!("secret {id} (read because: {})", why.reason)
}

#[resolver]
async fn agree() -> Elicit<Confirm> {
    Elicit::form("Show the message of the day?")
}

/// A static resource that asks.
#[resource(uri = "test://motd")]
async fn motd(#[resolve(agree)] ok: bool) -> Result<String, String> {
    if ok {
        Ok("Hello!".into())
    } else {
        Err("not shown".into())
    }
}

fn server() -> Server {
    Server::new("asking")
        .state_keys(StateKeys::new(&[3u8; 32]).unwrap())
        .prompt(summarize)
        .prompt(summarize_or_not)
        .resource(secret)
        .resource(motd)
}

fn form_caps() -> Value {
    json!({"elicitation": {}})
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn prompt_text(frame: &Value) -> &str {
    frame["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no message in {frame}"))
}

// ---------------------------------------------------------------- 2026-07-28

#[tokio::test]
async fn resolved_prompt_parameters_are_not_listed_arguments() {
    let mut c = TestClient::stateless(server(), form_caps());
    let r = c.request("prompts/list", json!({})).await;
    let first = &r["result"]["prompts"][0];
    assert_eq!(first["name"], "summarize");
    let names: Vec<&str> = first["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["topic", "tone"]);
}

#[tokio::test]
async fn a_prompt_asks_over_mrtr_and_completes_on_the_retry() {
    let mut c = TestClient::stateless(server(), form_caps());
    let params = json!({"name": "summarize", "arguments": {"topic": "rust"}});
    let r = c.request("prompts/get", params.clone()).await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert_eq!(
        r["result"]["inputRequests"]["tone"]["params"]["message"],
        "How should the summary of rust sound?"
    );
    let state = r["result"]["requestState"].clone();
    let mut retry = params.clone();
    retry["inputResponses"] = json!({"tone": accept(json!({"tone": "cheerful"}))});
    retry["requestState"] = state.clone();
    let done = c.request("prompts/get", retry).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(prompt_text(&done), "Summarize rust in a cheerful tone.");

    // The state is bound to the method and the prompt: it does not open a tool call or another
    // prompt.
    let mut other = json!({"name": "summarize_or_not", "arguments": {"topic": "rust"}});
    other["inputResponses"] = json!({"tone": accept(json!({"tone": "cheerful"}))});
    other["requestState"] = state;
    let r = c.request("prompts/get", other).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Invalid or expired requestState");
    assert_eq!(r["error"]["data"]["reason"], "invalid_request_state", "{r}");
}

#[tokio::test]
async fn a_prompt_asks_only_when_it_must() {
    // With the tone given, no question, and no capability needed.
    let mut c = TestClient::stateless(server(), json!({}));
    let r = c
        .request(
            "prompts/get",
            json!({"name": "summarize", "arguments": {"topic": "tea", "tone": "calm"}}),
        )
        .await;
    assert_eq!(prompt_text(&r), "Summarize tea in a calm tone.");
    // Without it, a client that cannot be asked gets -32021.
    let r = c
        .request(
            "prompts/get",
            json!({"name": "summarize", "arguments": {"topic": "tea"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
}

#[tokio::test]
async fn a_declined_prompt_question_is_an_error_unless_the_prompt_branches() {
    let mut c = TestClient::stateless(server(), form_caps());
    for (name, answer, expected) in [
        ("summarize_or_not", json!({"action": "decline"}), Ok("Summarize rust.")),
        ("summarize_or_not", json!({"action": "cancel"}), Ok("Never mind.")),
        (
            "summarize",
            json!({"action": "decline"}),
            Err("`picked` was not resolved: the user declined the question `tone`, so the prompt did not run"),
        ),
    ] {
        let params = json!({"name": name, "arguments": {"topic": "rust"}});
        let r = c.request("prompts/get", params.clone()).await;
        let mut retry = params;
        retry["inputResponses"] = json!({"tone": answer});
        retry["requestState"] = r["result"]["requestState"].clone();
        let r = c.request("prompts/get", retry).await;
        match expected {
            Ok(text) => assert_eq!(prompt_text(&r), text),
            Err(message) => {
                assert_eq!(r["error"]["code"], -32603, "{r}");
                assert_eq!(r["error"]["message"], message);
            }
        }
    }
}

#[tokio::test]
async fn a_resource_asks_and_its_retried_read_carries_no_caching_hints() {
    let mut c = TestClient::stateless(server(), form_caps());
    let r = c.request("resources/read", json!({"uri": "test://secrets/42"})).await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert!(
        r["result"].get("ttlMs").is_none(),
        "no caching hints on input_required: {r}"
    );
    assert_eq!(
        r["result"]["inputRequests"]["why"]["params"]["message"],
        "Why do you want to read secret 42?"
    );
    let state = r["result"]["requestState"].clone();
    let done = c
        .request(
            "resources/read",
            json!({"uri": "test://secrets/42", "inputResponses": {"why": accept(json!({"reason": "audit"}))}, "requestState": state}),
        )
        .await;
    assert_eq!(
        done["result"]["contents"],
        json!([{"uri": "test://secrets/42", "mimeType": "text/plain", "text": "secret 42 (read because: audit)"}])
    );
    assert!(
        done["result"].get("ttlMs").is_none() && done["result"].get("cacheScope").is_none(),
        "a retry's result must not be cached: {done}"
    );
    // Bound to the URI: the state of secret 42 does not read secret 43.
    let r = c
        .request(
            "resources/read",
            json!({"uri": "test://secrets/43", "inputResponses": {"why": accept(json!({"reason": "audit"}))}, "requestState": state}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "invalid_request_state", "{r}");
}

#[tokio::test]
async fn a_static_resource_that_asks_and_fails_is_an_error() {
    let mut c = TestClient::stateless(server(), form_caps());
    let r = c.request("resources/read", json!({"uri": "test://motd"})).await;
    let state = r["result"]["requestState"].clone();
    let r = c
        .request(
            "resources/read",
            json!({"uri": "test://motd", "inputResponses": {"agree": accept(json!({"ok": false}))}, "requestState": state}),
        )
        .await;
    assert_eq!(r["error"], json!({"code": -32603, "message": "not shown"}));
}

#[tokio::test]
async fn prompt_questions_are_bounded_by_the_round_limit() {
    #[resolver]
    async fn first() -> Elicit<Tone> {
        Elicit::form("one?")
    }
    #[resolver]
    async fn second(#[resolve(first)] a: Tone) -> Elicit<Tone> {
        Elicit::form(format!("two after {}?", a.tone))
    }
    /// Two rounds of questions.
    #[prompt]
    async fn two_rounds(#[resolve(second)] b: Tone) -> String {
        b.tone
    }
    let server = Server::new("r").max_rounds(1).prompt(two_rounds);
    let mut c = TestClient::stateless(server, form_caps());
    let r = c.request("prompts/get", json!({"name": "two_rounds"})).await;
    let state = r["result"]["requestState"].clone();
    let r = c
        .request(
            "prompts/get",
            json!({"name": "two_rounds", "inputResponses": {"first": accept(json!({"tone": "x"}))}, "requestState": state}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(
        r["error"]["message"],
        "prompt `two_rounds` stopped: it needed more than 1 rounds of questions"
    );
}

// ---------------------------------------------------------------- handshake era

async fn legacy() -> TestClient {
    TestClient::handshake(server(), ProtocolVersion::V2025_11_25, form_caps()).await
}

async fn answer_next(c: &mut TestClient, result: Value) -> Value {
    let req = c.recv().await;
    assert_eq!(req["method"], "elicitation/create", "{req}");
    c.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": result}))
        .await;
    req
}

#[tokio::test]
async fn a_prompt_asks_on_the_back_channel() {
    let mut c = legacy().await;
    let id = c
        .start(
            "prompts/get",
            json!({"name": "summarize", "arguments": {"topic": "go"}}),
        )
        .await;
    let q = answer_next(&mut c, accept(json!({"tone": "dry"}))).await;
    assert_eq!(q["params"]["message"], "How should the summary of go sound?");
    assert_eq!(q["params"]["mode"], "form");
    let done = c.response_to(&json!(id)).await;
    assert_eq!(prompt_text(&done), "Summarize go in a dry tone.");
    assert!(done["result"].get("resultType").is_none());
}

#[tokio::test]
async fn a_resource_asks_on_the_back_channel() {
    let mut c = legacy().await;
    let id = c.start("resources/read", json!({"uri": "test://secrets/7"})).await;
    let q = answer_next(&mut c, accept(json!({"reason": "curious"}))).await;
    assert_eq!(q["params"]["message"], "Why do you want to read secret 7?");
    let done = c.response_to(&json!(id)).await;
    assert_eq!(
        done["result"]["contents"][0]["text"],
        "secret 7 (read because: curious)"
    );
    // Cancelled: the resource is not read.
    let id = c.start("resources/read", json!({"uri": "test://secrets/8"})).await;
    answer_next(&mut c, json!({"action": "cancel"})).await;
    let r = c.response_to(&json!(id)).await;
    assert_eq!(
        r["error"]["message"],
        "`why` was not resolved: the user cancelled the question `why`, so the resource did not run"
    );
}

#[path = "support/callers.rs"]
mod callers;

/// Issue 22, point 2 (the review's finding): one caller reading 100 000 distinct URIs of a
/// template that asks filled the question limit's table, and every other caller was refused.
/// The limit counts the template, not each URI, per caller: the flooding caller spends its one
/// budget, and another caller reading the same template is still asked.
#[tokio::test]
async fn one_caller_reading_many_uris_of_a_template_spends_one_budget_and_others_are_still_asked() {
    let limited = server().question_limit(3, std::time::Duration::from_secs(60));
    let addr = callers::serve(limited).await;
    let read = |id: u32| json!({"uri": format!("test://secrets/{id}")});
    for id in 0..3 {
        let r = callers::request(addr, "mallory", "resources/read", read(id)).await;
        assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    }
    let r = callers::request(addr, "mallory", "resources/read", read(3)).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(
        r["error"]["message"],
        "resource `test://secrets/{id}` stopped: it asked this caller more than 3 questions in 60 s; try again later"
    );
    let r = callers::request(addr, "alice", "resources/read", read(4)).await;
    assert_eq!(r["result"]["resultType"], "input_required", "another caller: {r}");
    let r = callers::request(addr, "mallory", "resources/read", json!({"uri": "test://motd"})).await;
    assert_eq!(r["result"]["resultType"], "input_required", "another resource: {r}");
}
