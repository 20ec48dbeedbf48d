//! Sampling and roots as inputs a resolver asks for (issue 12, point 6), through the in-memory
//! client on both eras: `sampling/createMessage` and `roots/list` input requests in an
//! `InputRequiredResult` on 2026-07-28 (several kinds in one round), server→client requests on
//! the handshake era, each checked against the client's capabilities.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;
use mcp_resolve::{protocol::ProtocolVersion, seal::StateKeys};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(FormSchema, Clone, Debug)]
struct Name {
    name: String,
}

#[resolver(key = "user_name")]
async fn ask_name() -> Elicit<Name> {
    Elicit::form("What is your name?")
}

#[resolver(key = "capital")]
async fn ask_capital(country: String) -> Sample {
    Sample::new(format!("What is the capital of {country}?"))
        .system_prompt("Answer with the city only.")
        .max_tokens(100)
}

#[resolver(key = "client_roots")]
async fn ask_roots() -> ListRoots {
    ListRoots
}

/// A resolver that asks what the client can answer: a sample if it can sample, else a form,
/// else nothing.
#[resolver(key = "greeting")]
async fn pick_greeting(cx: Context) -> Resolution<Option<String>> {
    let caps = cx.client_capabilities();
    if caps.sampling() {
        Ask::from(Sample::new("Generate a greeting").max_tokens(50))
            .map(|s| s.text().map(str::to_owned))
            .into()
    } else if caps.elicitation_form() {
        Ask::from(Elicit::<Name>::form("Whom should I greet?"))
            .map(|n| Some(format!("Hello, {}!", n.name)))
            .into()
    } else {
        Resolution::Value(None)
    }
}

/// What each document says now (each test its own document): the summary's sampling request
/// quotes it, so the question changes when the document does, between rounds of one call whose
/// arguments stay the same.
static DOCUMENTS: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

fn write_document(name: &str, text: &str) {
    DOCUMENTS.lock().unwrap().insert(name.to_owned(), text.to_owned());
}

#[resolver(key = "summary")]
async fn ask_summary(doc: String) -> Sample {
    let text = DOCUMENTS.lock().unwrap().get(&doc).cloned().unwrap_or_default();
    Sample::new(format!("Summarize: {text}")).max_tokens(100)
}

/// Asked once summarized: a second round, while the summary is kept.
#[resolver(key = "headline")]
async fn ask_headline(#[resolve(ask_summary)] summary: Sampled) -> Elicit<Name> {
    Elicit::form(format!("A headline for \"{}\"?", summary.text().unwrap_or("")))
}

#[tool]
async fn summarize(
    doc: String,
    #[resolve(ask_summary)] summary: Sampled,
    #[resolve(ask_headline)] headline: Name,
) -> String {
    format!("{doc}: {} — {}", headline.name, summary.text().unwrap_or("?"))
}

#[tool]
async fn capital_of(country: String, #[resolve(ask_capital)] reply: Sampled) -> String {
    format!("{country}: {} (by {})", reply.text().unwrap_or("?"), reply.model)
}

#[tool]
async fn count_roots(#[resolve(ask_roots)] roots: Vec<Root>) -> String {
    let names: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    format!("{} root(s): {}", roots.len(), names.join(", "))
}

#[tool]
async fn all_three(
    country: String,
    #[resolve(ask_name)] name: Name,
    #[resolve(ask_capital)] capital: Sampled,
    #[resolve(ask_roots)] roots: Vec<Root>,
) -> String {
    format!(
        "{} asks about {country}: {}; {} root(s)",
        name.name,
        capital.text().unwrap_or("?"),
        roots.len()
    )
}

#[tool]
async fn greet(#[resolve(pick_greeting)] words: Option<String>) -> String {
    words.unwrap_or_else(|| "nothing to greet with".into())
}

fn server() -> Server {
    Server::new("inputs")
        .state_keys(StateKeys::new(&[5u8; 32]).unwrap())
        .tool(capital_of)
        .tool(count_roots)
        .tool(all_three)
        .tool(greet)
        .tool(summarize)
}

fn text(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {frame}"))
}

fn sampled(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "test-model", "stopReason": "endTurn"})
}

fn roots() -> Value {
    json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}, {"uri": "file:///other"}]})
}

const ALL: &str = r#"{"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}}"#;

fn all_caps() -> Value {
    serde_json::from_str(ALL).unwrap()
}

async fn retry(c: &mut TestClient, tool: &str, args: Value, responses: Value, state: &Value) -> Value {
    c.request(
        "tools/call",
        json!({"name": tool, "arguments": args, "inputResponses": responses, "requestState": state}),
    )
    .await
}

// ---------------------------------------------------------------- 2026-07-28

#[tokio::test]
async fn a_sampling_input_request_carries_the_messages_and_its_answer_completes_the_call() {
    let mut c = TestClient::stateless(server(), all_caps());
    let r = c.call_tool("capital_of", json!({"country": "France"})).await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert_eq!(
        r["result"]["inputRequests"],
        json!({"capital": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
            "maxTokens": 100,
            "systemPrompt": "Answer with the city only."
        }}})
    );
    let state = r["result"]["requestState"].clone();
    let done = retry(
        &mut c,
        "capital_of",
        json!({"country": "France"}),
        json!({"capital": sampled("Paris")}),
        &state,
    )
    .await;
    assert_eq!(text(&done), "France: Paris (by test-model)");
    assert_eq!(done["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_roots_input_request_is_answered_with_the_list() {
    let mut c = TestClient::stateless(server(), all_caps());
    let r = c.call_tool("count_roots", json!({})).await;
    assert_eq!(
        r["result"]["inputRequests"],
        json!({"client_roots": {"method": "roots/list", "params": {}}})
    );
    let state = r["result"]["requestState"].clone();
    let done = retry(
        &mut c,
        "count_roots",
        json!({}),
        json!({"client_roots": roots()}),
        &state,
    )
    .await;
    assert_eq!(text(&done), "2 root(s): file:///test/root, file:///other");
}

#[tokio::test]
async fn three_kinds_of_input_requests_share_one_round() {
    let mut c = TestClient::stateless(server(), all_caps());
    let args = json!({"country": "Peru"});
    let r = c.call_tool("all_three", args.clone()).await;
    let requests = r["result"]["inputRequests"].as_object().unwrap();
    let methods: Vec<(&str, &str)> = requests
        .iter()
        .map(|(k, v)| (k.as_str(), v["method"].as_str().unwrap()))
        .collect();
    assert_eq!(
        methods,
        [
            ("capital", "sampling/createMessage"),
            ("client_roots", "roots/list"),
            ("user_name", "elicitation/create")
        ]
    );
    let state = r["result"]["requestState"].clone();
    // Only two answered: the third is asked again, the two kept in the new state.
    let r = retry(
        &mut c,
        "all_three",
        args.clone(),
        json!({"capital": sampled("Lima"), "client_roots": roots()}),
        &state,
    )
    .await;
    assert_eq!(
        r["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["user_name"]
    );
    let state = r["result"]["requestState"].clone();
    let done = retry(
        &mut c,
        "all_three",
        args,
        json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}}),
        &state,
    )
    .await;
    assert_eq!(text(&done), "Ada asks about Peru: Lima; 2 root(s)");
}

#[tokio::test]
async fn a_missing_capability_is_32021_naming_it_and_nothing_is_asked() {
    let mut c = TestClient::stateless(server(), json!({"elicitation": {}}));
    let r = c.call_tool("capital_of", json!({"country": "France"})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(r["error"]["data"], json!({"requiredCapabilities": {"sampling": {}}}));
    assert!(r["error"]["message"].as_str().unwrap().contains("sampling"), "{r}");
    let r = c.call_tool("count_roots", json!({})).await;
    assert_eq!(r["error"]["data"], json!({"requiredCapabilities": {"roots": {}}}));
}

#[tokio::test]
async fn a_resolver_asks_what_the_client_can_answer() {
    // Sampling declared: a sampling request, never an elicitation.
    let mut c = TestClient::stateless(server(), json!({"sampling": {}}));
    let r = c.call_tool("greet", json!({})).await;
    let requests = &r["result"]["inputRequests"];
    assert_eq!(requests["greeting"]["method"], "sampling/createMessage", "{r}");
    let state = r["result"]["requestState"].clone();
    let done = retry(
        &mut c,
        "greet",
        json!({}),
        json!({"greeting": sampled("Hi there")}),
        &state,
    )
    .await;
    assert_eq!(text(&done), "Hi there");
    // Only forms: the form.
    let mut c = TestClient::stateless(server(), json!({"elicitation": {}}));
    let r = c.call_tool("greet", json!({})).await;
    assert_eq!(r["result"]["inputRequests"]["greeting"]["method"], "elicitation/create");
    let state = r["result"]["requestState"].clone();
    let done = retry(
        &mut c,
        "greet",
        json!({}),
        json!({"greeting": {"action": "accept", "content": {"name": "Bo"}}}),
        &state,
    )
    .await;
    assert_eq!(text(&done), "Hello, Bo!");
    // Neither: no question at all.
    let mut c = TestClient::stateless(server(), json!({}));
    assert_eq!(text(&c.call_tool("greet", json!({})).await), "nothing to greet with");
}

#[tokio::test]
async fn a_malformed_sampling_answer_is_asked_again_and_a_wrong_shape_stops_the_call() {
    let mut c = TestClient::stateless(server(), all_caps());
    let args = json!({"country": "Chad"});
    let r = c.call_tool("capital_of", args.clone()).await;
    let state = r["result"]["requestState"].clone();
    // Not an object: asked again.
    let again = retry(&mut c, "capital_of", args.clone(), json!({"capital": 12345}), &state).await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    // An object that is no sampling result: the call stops, saying why.
    let r = retry(
        &mut c,
        "capital_of",
        args,
        json!({"capital": {"role": "assistant"}}),
        &state,
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        text(&r).starts_with("resolver `capital` received an answer it cannot read: not a sampling result"),
        "{r}"
    );
}

#[tokio::test]
async fn an_answer_is_pinned_to_its_question() {
    // A sampling answer counts only for the very request it answers (the digest of its method
    // and params): when the document changes between rounds, with the same arguments, the
    // summary of the old text is discarded and the new text asked for, whether the answer came
    // with this retry or was kept from an earlier round.
    let mut c = TestClient::stateless(server(), all_caps());
    let args = json!({"doc": "minutes"});
    let asked = |r: &Value| {
        let requests = r["result"]["inputRequests"]
            .as_object()
            .unwrap_or_else(|| panic!("nothing asked: {r}"));
        let (key, request) = requests.iter().next().unwrap();
        assert_eq!(requests.len(), 1, "{r}");
        let text = match request["method"].as_str().unwrap() {
            "sampling/createMessage" => &request["params"]["messages"][0]["content"]["text"],
            _ => &request["params"]["message"],
        };
        (
            format!("{key}: {}", text.as_str().unwrap()),
            r["result"]["requestState"].clone(),
        )
    };
    write_document("minutes", "we met");
    let (q, state) = asked(&c.call_tool("summarize", args.clone()).await);
    assert_eq!(q, "summary: Summarize: we met");
    // Answered with the retry, after the document changed: discarded, the new text asked for.
    write_document("minutes", "we met and agreed");
    let summary = |text: &str| json!({"summary": sampled(text)});
    let r = retry(&mut c, "summarize", args.clone(), summary("They met."), &state).await;
    let (q, state) = asked(&r);
    assert_eq!(q, "summary: Summarize: we met and agreed");
    let r = retry(&mut c, "summarize", args.clone(), summary("They agreed."), &state).await;
    let (q, state) = asked(&r);
    assert_eq!(q, r#"headline: A headline for "They agreed."?"#);
    // Kept from an earlier round, then the document changes: discarded too.
    write_document("minutes", "we met, agreed, then disagreed");
    let headline = json!({"headline": {"action": "accept", "content": {"name": "Deal"}}});
    let r = retry(&mut c, "summarize", args.clone(), headline.clone(), &state).await;
    let (q, state) = asked(&r);
    assert_eq!(q, "summary: Summarize: we met, agreed, then disagreed");
    let r = retry(&mut c, "summarize", args.clone(), summary("They fell out."), &state).await;
    let (q, state) = asked(&r);
    assert_eq!(q, r#"headline: A headline for "They fell out."?"#);
    let no_deal = json!({"headline": {"action": "accept", "content": {"name": "No deal"}}});
    let done = retry(&mut c, "summarize", args, no_deal, &state).await;
    assert_eq!(text(&done), "minutes: No deal — They fell out.");

    // And a state is bound to its arguments: the state of one document does not open for another.
    let r = retry(&mut c, "summarize", json!({"doc": "other"}), headline, &state).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "invalid_request_state", "{r}");
}

// ---------------------------------------------------------------- handshake era

async fn legacy(caps: Value) -> TestClient {
    TestClient::handshake(server(), ProtocolVersion::V2025_11_25, caps).await
}

/// Answers the next server request with `result`, checking its method.
async fn answer_next(c: &mut TestClient, method: &str, result: Value) -> Value {
    let req = c.recv().await;
    assert_eq!(req["method"], method, "{req}");
    c.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": result}))
        .await;
    req
}

#[tokio::test]
async fn the_back_channel_sends_sampling_and_roots_requests_in_turn() {
    let mut c = legacy(all_caps()).await;
    let id = c
        .start(
            "tools/call",
            json!({"name": "all_three", "arguments": {"country": "Japan"}}),
        )
        .await;
    let mut seen = Vec::new();
    for _ in 0..3 {
        let req = c.recv().await;
        let method = req["method"].as_str().unwrap().to_owned();
        let result = match method.as_str() {
            "elicitation/create" => json!({"action": "accept", "content": {"name": "Kai"}}),
            "sampling/createMessage" => {
                assert_eq!(req["params"]["maxTokens"], 100);
                assert_eq!(
                    req["params"]["messages"][0]["content"]["text"],
                    "What is the capital of Japan?"
                );
                sampled("Tokyo")
            }
            "roots/list" => {
                assert_eq!(req["params"], json!({}));
                roots()
            }
            other => panic!("unexpected request {other}"),
        };
        c.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": result}))
            .await;
        seen.push(method);
    }
    seen.sort();
    assert_eq!(seen, ["elicitation/create", "roots/list", "sampling/createMessage"]);
    let done = c.response_to(&json!(id)).await;
    assert_eq!(text(&done), "Kai asks about Japan: Tokyo; 2 root(s)");
}

#[tokio::test]
async fn the_back_channel_checks_the_capabilities_of_initialize() {
    let mut c = legacy(json!({"elicitation": {}})).await;
    let r = c.call_tool("count_roots", json!({})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(r["error"]["data"], json!({"requiredCapabilities": {"roots": {}}}));
    let mut c = legacy(json!({"sampling": {}})).await;
    let id = c.start("tools/call", json!({"name": "greet", "arguments": {}})).await;
    answer_next(&mut c, "sampling/createMessage", sampled("Howdy")).await;
    assert_eq!(text(&c.response_to(&json!(id)).await), "Howdy");
}

#[tokio::test]
async fn a_sampling_refusal_on_the_back_channel_is_relayed() {
    let mut c = legacy(all_caps()).await;
    let id = c
        .start(
            "tools/call",
            json!({"name": "capital_of", "arguments": {"country": "Mali"}}),
        )
        .await;
    let req = c.recv().await;
    assert_eq!(req["method"], "sampling/createMessage");
    c.send(
        &json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -1, "message": "User rejected sampling request"}}),
    )
    .await;
    let r = c.response_to(&json!(id)).await;
    assert_eq!(
        r["error"],
        json!({"code": -1, "message": "User rejected sampling request"})
    );
}
