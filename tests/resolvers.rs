//! Resolvers on both protocol eras, through the in-memory client (real JSON-RPC frames): batching,
//! dependent rounds, partial answers, sealed state, capabilities, validation, round limits, and
//! the back-channel.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;
use mcp_resolve::{protocol::ProtocolVersion, seal::StateKeys};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Clone, Debug, FormSchema)]
struct Name {
    #[form(min_length = 1, max_length = 20)]
    name: String,
}

#[derive(Clone, Debug, FormSchema)]
struct Age {
    #[form(minimum = 0, maximum = 150)]
    age: u32,
}

#[derive(Clone, Debug, FormSchema)]
struct Pet {
    pet: String,
}

#[resolver]
async fn ask_name() -> Elicit<Name> {
    Elicit::form("What is your name?")
}

#[resolver(key = "user_age")]
async fn ask_age() -> Elicit<Age> {
    Elicit::form("How old are you?")
}

#[resolver]
async fn ask_pet(#[resolve(ask_name)] name: Name) -> Elicit<Pet> {
    Elicit::form(format!("{}, what is your pet called?", name.name))
}

/// Two independent questions.
#[tool]
async fn two_questions(#[resolve(ask_name)] name: Name, #[resolve(ask_age)] age: Age) -> String {
    format!("{} is {}", name.name, age.age)
}

/// A question that depends on another.
#[tool]
async fn chained(#[resolve(ask_pet)] pet: Pet, #[resolve(ask_name)] name: Name) -> String {
    format!("{} has {}", name.name, pet.pet)
}

/// Plain consumer: decline or cancel stop the call.
#[tool]
async fn unwrapped(#[resolve(ask_name)] name: Name) -> String {
    format!("hello {}", name.name)
}

#[resolver]
async fn maybe_ask(path: String) -> Resolution<Name> {
    if path == "known" {
        return Resolution::Value(Name { name: "Ada".into() });
    }
    Elicit::form(format!("Who owns {path}?")).into()
}

/// Asks only for unknown paths.
#[tool]
async fn owner(path: String, #[resolve(maybe_ask)] name: ElicitationResult<Name>) -> String {
    match name {
        ElicitationResult::Accepted(n) => format!("{path}: {}", n.name),
        ElicitationResult::Declined => "declined".into(),
        ElicitationResult::Cancelled => "cancelled".into(),
    }
}

static ROUNDS: AtomicUsize = AtomicUsize::new(0);

#[resolver]
async fn ever_changing() -> Elicit<Name> {
    let n = ROUNDS.fetch_add(1, Ordering::SeqCst);
    Elicit::form(format!("Question number {n}"))
}

/// Never satisfied: each round asks a new question.
#[tool]
async fn endless(#[resolve(ever_changing)] name: Name) -> String {
    name.name
}

/// How many files each folder holds now (each test its own folder): the confirmation quotes
/// the number, so its question changes when the folder does, between rounds of one call whose
/// arguments stay the same.
static FILES: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

fn files_in(dir: &str) -> usize {
    FILES.lock().unwrap().get(dir).copied().unwrap_or(0)
}

fn put_files(dir: &str, n: usize) {
    FILES.lock().unwrap().insert(dir.to_owned(), n);
}

#[derive(Clone, Debug, FormSchema)]
struct Note {
    note: String,
}

#[resolver]
async fn confirm_purge(dir: String) -> Elicit<Confirm> {
    Elicit::form(format!("Delete {} files in {dir}?", files_in(&dir)))
}

/// Asked once the purge is confirmed: a second round, while the confirmation is kept.
#[resolver]
async fn purge_note(#[resolve(confirm_purge)] _ok: Confirm) -> Elicit<Note> {
    Elicit::form("What should the log say?")
}

#[tool]
async fn purge(dir: String, #[resolve(confirm_purge)] ok: Confirm, #[resolve(purge_note)] note: Note) -> String {
    if ok.ok {
        format!("deleted {} files in {dir} ({})", files_in(&dir), note.note)
    } else {
        format!("kept {dir}")
    }
}

/// The yes/no shorthand.
#[tool]
async fn wipe(path: String, #[confirm("Wipe {path}? {{really}}")] ok: bool) -> String {
    if ok {
        format!("wiped {path}")
    } else {
        format!("kept {path}")
    }
}

fn server() -> Server {
    Server::new("resolvers")
        .tool(two_questions)
        .tool(chained)
        .tool(unwrapped)
        .tool(owner)
        .tool(endless)
        .tool(wipe)
        .tool(purge)
}

fn keys() -> StateKeys {
    StateKeys::new(&[42u8; 32]).unwrap()
}

fn form_client() -> TestClient {
    TestClient::stateless(server().state_keys(keys()), json!({"elicitation": {"form": {}}}))
}

fn text(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {frame}"))
}

fn input_required(frame: &Value) -> (&serde_json::Map<String, Value>, String) {
    let r = &frame["result"];
    assert_eq!(r["resultType"], "input_required", "{frame}");
    let requests = r["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("no inputRequests: {frame}"));
    (requests, r["requestState"].as_str().unwrap().to_string())
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

async fn retry(c: &mut TestClient, tool: &str, args: Value, responses: Value, state: &str) -> Value {
    c.request(
        "tools/call",
        json!({"name": tool, "arguments": args, "inputResponses": responses, "requestState": state}),
    )
    .await
}

// ---------------------------------------------------------------- 2026-07-28

#[tokio::test]
async fn independent_questions_share_one_round() {
    let mut c = form_client();
    let r = c.call_tool("two_questions", json!({})).await;
    let (requests, state) = input_required(&r);
    assert_eq!(requests.len(), 2, "{r}");
    assert_eq!(requests["ask_name"]["method"], "elicitation/create");
    assert_eq!(requests["ask_name"]["params"]["message"], "What is your name?");
    assert_eq!(requests["ask_name"]["params"]["mode"], "form");
    assert_eq!(
        requests["user_age"]["params"]["requestedSchema"],
        json!({"type": "object", "properties": {"age": {"type": "integer", "minimum": 0, "maximum": 150}}, "required": ["age"]})
    );
    assert!(r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    let done = retry(
        &mut c,
        "two_questions",
        json!({}),
        json!({"ask_name": accept(json!({"name": "Ada"})), "user_age": accept(json!({"age": 36})), "extra": 1}),
        &state,
    )
    .await;
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(text(&done), "Ada is 36");
}

#[tokio::test]
async fn a_dependent_question_takes_a_second_round() {
    let mut c = form_client();
    let r = c.call_tool("chained", json!({})).await;
    let (requests, state) = input_required(&r);
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        vec!["ask_name"],
        "only the first level is asked"
    );
    let r = retry(
        &mut c,
        "chained",
        json!({}),
        json!({"ask_name": accept(json!({"name": "Zed"}))}),
        &state,
    )
    .await;
    let (requests, state) = input_required(&r);
    assert_eq!(requests.keys().collect::<Vec<_>>(), vec!["ask_pet"]);
    assert_eq!(
        requests["ask_pet"]["params"]["message"],
        "Zed, what is your pet called?"
    );
    // Only the newest answer is sent; the first rides in the state.
    let done = retry(
        &mut c,
        "chained",
        json!({}),
        json!({"ask_pet": accept(json!({"pet": "Rex"}))}),
        &state,
    )
    .await;
    assert_eq!(text(&done), "Zed has Rex");
}

#[tokio::test]
async fn partial_answers_are_kept_and_missing_ones_asked_again() {
    let mut c = form_client();
    let (_, state) = input_required(&c.call_tool("two_questions", json!({})).await).clone();
    let r = retry(
        &mut c,
        "two_questions",
        json!({}),
        json!({"ask_name": accept(json!({"name": "Ada"}))}),
        &state,
    )
    .await;
    let (requests, state) = input_required(&r);
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        vec!["user_age"],
        "the answered question is not asked again"
    );
    let done = retry(
        &mut c,
        "two_questions",
        json!({}),
        json!({"user_age": accept(json!({"age": 7}))}),
        &state,
    )
    .await;
    assert_eq!(text(&done), "Ada is 7");
}

#[tokio::test]
async fn malformed_answers_never_complete_the_call() {
    let mut c = form_client();
    let (_, state) = input_required(&c.call_tool("unwrapped", json!({})).await).clone();
    for bad in [json!(12345), Value::Null, json!({"action": "maybe"}), json!("accept")] {
        let r = retry(&mut c, "unwrapped", json!({}), json!({ "ask_name": bad }), &state).await;
        let (requests, _) = input_required(&r);
        assert!(requests.contains_key("ask_name"), "{bad} must be asked again: {r}");
    }
    // An answer without the state it belongs to is not trusted: asked again.
    let r = c.request("tools/call", json!({"name": "unwrapped", "arguments": {}, "inputResponses": {"ask_name": accept(json!({"name": "Ada"}))}})).await;
    input_required(&r);
}

#[tokio::test]
async fn invalid_accepted_content_is_an_error_result_naming_the_rule() {
    let mut c = form_client();
    let (_, state) = input_required(&c.call_tool("two_questions", json!({})).await).clone();
    let r = retry(
        &mut c,
        "two_questions",
        json!({}),
        json!({"ask_name": accept(json!({"name": "Ada"})), "user_age": accept(json!({"age": 200}))}),
        &state,
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "resolver `user_age` received an answer that does not match its form: field `age`: must be at most 150, got 200"
    );
    let r = retry(
        &mut c,
        "two_questions",
        json!({}),
        json!({"ask_name": {"action": "accept"}}),
        &state,
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text(&r).contains("no content"), "{r}");
}

#[tokio::test]
async fn decline_and_cancel_are_three_different_outcomes() {
    let mut c = form_client();
    for (action, expected) in [("decline", "declined"), ("cancel", "cancelled")] {
        let (_, state) = input_required(&c.call_tool("owner", json!({"path": "x"})).await).clone();
        let r = retry(
            &mut c,
            "owner",
            json!({"path": "x"}),
            json!({"maybe_ask": {"action": action}}),
            &state,
        )
        .await;
        assert_eq!(r["result"]["isError"], false);
        assert_eq!(text(&r), expected);
    }
    // A plain consumer stops the call, naming the parameter and the action.
    let (_, state) = input_required(&c.call_tool("unwrapped", json!({})).await).clone();
    let r = retry(
        &mut c,
        "unwrapped",
        json!({}),
        json!({"ask_name": {"action": "decline"}}),
        &state,
    )
    .await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        text(&r),
        "`name` was not resolved: the user declined the question `ask_name`, so the tool did not run"
    );
    assert!(r.get("error").is_none(), "not a JSON-RPC error");
}

#[tokio::test]
async fn a_resolver_returning_a_value_asks_nothing_even_without_the_capability() {
    let mut c = TestClient::stateless(server(), json!({}));
    let r = c.call_tool("owner", json!({"path": "known"})).await;
    assert_eq!(text(&r), "known: Ada");
    let r = c.call_tool("owner", json!({"path": "x"})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["message"],
        "Client did not declare the form elicitation capability required by resolver 'maybe_ask'"
    );
    assert_eq!(
        r["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {"form": {}}}})
    );
    // URL-only elicitation is not form elicitation.
    let mut c = TestClient::stateless(server(), json!({"elicitation": {"url": {}}}));
    assert_eq!(
        c.call_tool("owner", json!({"path": "x"})).await["error"]["code"],
        -32021
    );
}

#[tokio::test]
async fn resolved_parameters_are_not_arguments() {
    let mut c = form_client();
    let list = c.request("tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let owner_def = tools.iter().find(|t| t["name"] == "owner").unwrap();
    assert_eq!(
        owner_def["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["path"]
    );
    let wipe_def = tools.iter().find(|t| t["name"] == "wipe").unwrap();
    assert_eq!(wipe_def["inputSchema"]["required"], json!(["path"]));
    // A value the model puts in `arguments` for a resolved parameter is no argument: refused
    // before anything is asked, so it can never stand in for the user's answer.
    let r = c
        .call_tool("owner", json!({"path": "x", "name": {"name": "Mallory"}}))
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "argument `name`: tool `owner` has no such argument; it takes `path`"
    );
    input_required(&c.call_tool("owner", json!({"path": "x"})).await);
}

#[tokio::test]
async fn confirm_shorthand_formats_the_message_and_gives_a_bool() {
    let mut c = form_client();
    let r = c.call_tool("wipe", json!({"path": "/tmp/a"})).await;
    let (requests, state) = input_required(&r);
    assert_eq!(requests["ok"]["params"]["message"], "Wipe /tmp/a? {really}");
    assert_eq!(
        requests["ok"]["params"]["requestedSchema"]["properties"],
        json!({"ok": {"type": "boolean"}})
    );
    let r = retry(
        &mut c,
        "wipe",
        json!({"path": "/tmp/a"}),
        json!({"ok": accept(json!({"ok": false}))}),
        &state,
    )
    .await;
    assert_eq!(text(&r), "kept /tmp/a");
    let r = retry(
        &mut c,
        "wipe",
        json!({"path": "/tmp/a"}),
        json!({"ok": {"action": "cancel"}}),
        &state,
    )
    .await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        text(&r),
        "`ok` was not resolved: the user cancelled the question `ok`, so the tool did not run"
    );
}

#[tokio::test]
async fn the_round_limit_stops_an_endless_call() {
    let mut c = TestClient::stateless(server().max_rounds(3), json!({"elicitation": {}}));
    let mut r = c.call_tool("endless", json!({})).await;
    let mut rounds = 0;
    while r["result"]["resultType"] == "input_required" {
        rounds += 1;
        let (_, state) = input_required(&r);
        r = retry(
            &mut c,
            "endless",
            json!({}),
            json!({"ever_changing": accept(json!({"name": "x"}))}),
            &state,
        )
        .await;
        assert!(rounds <= 3, "{r}");
    }
    assert_eq!(rounds, 3);
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        text(&r),
        "tool `endless` stopped: it needed more than 3 rounds of questions"
    );
}

/// An answer counts only for the question it answered: when a resolver's question changes
/// between rounds ("Delete 3 files?", then "Delete 300 files?") with the same arguments, the
/// answer is discarded and the new question asked, whether the answer came with this retry or
/// was kept from an earlier round.
#[tokio::test]
async fn an_answer_to_a_question_that_changed_is_discarded_and_the_new_question_asked() {
    let mut c = form_client();
    let (dir, args) = ("/srv/purge-form", json!({"dir": "/srv/purge-form"}));
    let yes = json!({"confirm_purge": accept(json!({"ok": true}))});
    let asked = |r: &Value| {
        let (requests, state) = input_required(r);
        let keys: Vec<&String> = requests.keys().collect();
        let message = requests.values().next().unwrap()["params"]["message"].clone();
        (format!("{keys:?} {message}"), state)
    };

    // Answered with the retry, to a question that changed since it was asked.
    put_files(dir, 3);
    let (q, state) = asked(&c.call_tool("purge", args.clone()).await);
    assert_eq!(q, r#"["confirm_purge"] "Delete 3 files in /srv/purge-form?""#);
    put_files(dir, 300);
    let (q, state) = asked(&retry(&mut c, "purge", args.clone(), yes.clone(), &state).await);
    assert_eq!(q, r#"["confirm_purge"] "Delete 300 files in /srv/purge-form?""#);

    // Kept from an earlier round: the folder holds 30 files when the user confirms (the "yes"
    // to 300 is discarded too), then the note is asked...
    put_files(dir, 30);
    let (q, state) = asked(&retry(&mut c, "purge", args.clone(), yes.clone(), &state).await);
    assert_eq!(q, r#"["confirm_purge"] "Delete 30 files in /srv/purge-form?""#);
    let (q, state) = asked(&retry(&mut c, "purge", args.clone(), yes.clone(), &state).await);
    assert_eq!(q, r#"["purge_note"] "What should the log say?""#);
    // ...the folder grows before the note is answered: the kept "yes" to 30 files does not
    // delete 3000; the confirmation is asked again.
    put_files(dir, 3000);
    let note = json!({"purge_note": accept(json!({"note": "cleanup"}))});
    let (q, state) = asked(&retry(&mut c, "purge", args.clone(), note.clone(), &state).await);
    assert_eq!(q, r#"["confirm_purge"] "Delete 3000 files in /srv/purge-form?""#);
    let (q, state) = asked(&retry(&mut c, "purge", args.clone(), yes, &state).await);
    assert_eq!(q, r#"["purge_note"] "What should the log say?""#);
    let done = retry(&mut c, "purge", args, note, &state).await;
    assert_eq!(text(&done), "deleted 3000 files in /srv/purge-form (cleanup)");
}

// ---------------------------------------------------------------- sealed state

fn invalid_state(r: &Value) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Invalid or expired requestState");
    assert_eq!(r["error"]["data"], json!({"reason": "invalid_request_state"}));
}

#[tokio::test]
async fn tampered_state_is_refused() {
    let mut c = form_client();
    let (_, state) = input_required(&c.call_tool("owner", json!({"path": "x"})).await).clone();
    let answers = json!({"maybe_ask": accept(json!({"name": "Eve"}))});
    invalid_state(
        &retry(
            &mut c,
            "owner",
            json!({"path": "x"}),
            answers.clone(),
            &format!("{state}-TAMPERED"),
        )
        .await,
    );
    let mut flipped = state.clone().into_bytes();
    let i = flipped.len() - 5;
    flipped[i] = if flipped[i] == b'A' { b'B' } else { b'A' };
    invalid_state(
        &retry(
            &mut c,
            "owner",
            json!({"path": "x"}),
            answers.clone(),
            &String::from_utf8(flipped).unwrap(),
        )
        .await,
    );
    invalid_state(&retry(&mut c, "owner", json!({"path": "x"}), answers.clone(), "garbage").await);
    let r = c
        .request(
            "tools/call",
            json!({"name": "owner", "arguments": {"path": "x"}, "requestState": 123}),
        )
        .await;
    invalid_state(&r);
    // The genuine retry still works.
    let done = retry(&mut c, "owner", json!({"path": "x"}), answers, &state).await;
    assert_eq!(text(&done), "x: Eve");
}

#[tokio::test]
async fn state_rebound_to_other_arguments_or_tools_is_refused() {
    let mut c = form_client();
    let (_, state) = input_required(&c.call_tool("owner", json!({"path": "x"})).await).clone();
    let answers = json!({"maybe_ask": accept(json!({"name": "Eve"}))});
    invalid_state(&retry(&mut c, "owner", json!({"path": "y"}), answers.clone(), &state).await);
    invalid_state(&retry(&mut c, "wipe", json!({"path": "x"}), answers, &state).await);
}

#[tokio::test]
async fn expired_state_is_refused() {
    let mut c = TestClient::stateless(
        server()
            .state_ttl(Duration::from_millis(50))
            .state_leeway(Duration::ZERO),
        json!({"elicitation": {}}),
    );
    let (_, state) = input_required(&c.call_tool("owner", json!({"path": "x"})).await).clone();
    // Real time: a sealed state carries a wall-clock expiry (replicas share it), which tokio's
    // paused clock does not move. The wait is one-sided: a slower machine only waits longer.
    // (The exact bounds: `seal.rs`' `expired_tokens_are_refused_past_the_leeway_and_taken_within_it`.)
    tokio::time::sleep(Duration::from_millis(120)).await;
    invalid_state(
        &retry(
            &mut c,
            "owner",
            json!({"path": "x"}),
            json!({"maybe_ask": {"action": "decline"}}),
            &state,
        )
        .await,
    );
}

#[tokio::test]
async fn replicas_sharing_keys_serve_each_others_rounds() {
    let mut first = form_client();
    let (_, state) = input_required(&first.call_tool("owner", json!({"path": "x"})).await).clone();
    let mut second = form_client();
    let done = retry(
        &mut second,
        "owner",
        json!({"path": "x"}),
        json!({"maybe_ask": {"action": "decline"}}),
        &state,
    )
    .await;
    assert_eq!(text(&done), "declined");
    // Another key (another deployment, or a restart without a configured key) refuses it.
    let mut stranger = TestClient::stateless(server(), json!({"elicitation": {}}));
    invalid_state(
        &retry(
            &mut stranger,
            "owner",
            json!({"path": "x"}),
            json!({"maybe_ask": {"action": "decline"}}),
            &state,
        )
        .await,
    );
    // So does a server with another audience.
    let mut other = TestClient::stateless(
        server().state_keys(keys()).state_audience("elsewhere"),
        json!({"elicitation": {}}),
    );
    invalid_state(
        &retry(
            &mut other,
            "owner",
            json!({"path": "x"}),
            json!({"maybe_ask": {"action": "decline"}}),
            &state,
        )
        .await,
    );
}

// ---------------------------------------------------------------- handshake era

async fn legacy(caps: Value) -> TestClient {
    TestClient::handshake(server(), ProtocolVersion::V2025_11_25, caps).await
}

/// Answers the next server request with `result`, checking it is an `elicitation/create`.
async fn answer_next(c: &mut TestClient, result: Value) -> Value {
    let req = c.recv().await;
    assert_eq!(req["method"], "elicitation/create", "{req}");
    assert!(req["id"].is_i64(), "{req}");
    c.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": result}))
        .await;
    req
}

#[tokio::test]
async fn the_back_channel_asks_each_question_in_turn() {
    let mut c = legacy(json!({"elicitation": {"form": {}}})).await;
    let id = c
        .start("tools/call", json!({"name": "two_questions", "arguments": {}}))
        .await;
    let q1 = answer_next(&mut c, accept(json!({"name": "Ada"}))).await;
    assert_eq!(q1["params"]["message"], "What is your name?");
    assert_eq!(q1["params"]["mode"], "form");
    let q2 = answer_next(&mut c, accept(json!({"age": 36}))).await;
    assert_eq!(q2["params"]["message"], "How old are you?");
    assert_ne!(q1["id"], q2["id"]);
    let done = c.response_to(&json!(id)).await;
    assert_eq!(text(&done), "Ada is 36");
    assert!(done["result"].get("resultType").is_none());
}

#[tokio::test]
async fn the_back_channel_handles_decline_cancel_and_dependencies() {
    let mut c = legacy(json!({"elicitation": {}})).await;
    let id = c
        .start("tools/call", json!({"name": "owner", "arguments": {"path": "x"}}))
        .await;
    answer_next(&mut c, json!({"action": "cancel"})).await;
    assert_eq!(text(&c.response_to(&json!(id)).await), "cancelled");
    let id = c.start("tools/call", json!({"name": "chained", "arguments": {}})).await;
    answer_next(&mut c, accept(json!({"name": "Zed"}))).await;
    let q = answer_next(&mut c, accept(json!({"pet": "Rex"}))).await;
    assert_eq!(q["params"]["message"], "Zed, what is your pet called?");
    assert_eq!(text(&c.response_to(&json!(id)).await), "Zed has Rex");
}

/// The handshake era asks on the back-channel, without rounds: a call may ask `max_rounds`
/// questions there (the same bound), and one more stops it before that question is sent.
#[tokio::test]
async fn the_back_channel_asks_at_most_max_rounds_questions_per_call() {
    let mut c = TestClient::handshake(
        server().max_rounds(1),
        ProtocolVersion::V2025_11_25,
        json!({"elicitation": {}}),
    )
    .await;
    let id = c
        .start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    answer_next(&mut c, accept(json!({"name": "Ada"}))).await;
    assert_eq!(text(&c.response_to(&json!(id)).await), "hello Ada");
    let id = c
        .start("tools/call", json!({"name": "two_questions", "arguments": {}}))
        .await;
    answer_next(&mut c, accept(json!({"name": "Ada"}))).await;
    let next = c.recv().await;
    assert!(
        next.get("method").is_none() && next["id"] == id,
        "the second question is not asked, the call ends: {next}"
    );
    assert_eq!(next["result"]["isError"], true, "{next}");
    assert_eq!(
        text(&next),
        "tool `two_questions` stopped: it needed more than 1 questions"
    );
}

#[tokio::test]
async fn a_client_error_on_the_back_channel_is_relayed() {
    let mut c = legacy(json!({"elicitation": {}})).await;
    let id = c
        .start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    let req = c.recv().await;
    c.send(&json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32000, "message": "user closed the app"}}))
        .await;
    let r = c.response_to(&json!(id)).await;
    assert_eq!(r["error"], json!({"code": -32000, "message": "user closed the app"}));
}

#[tokio::test]
async fn the_back_channel_times_out_and_checks_capabilities() {
    let mut c = TestClient::handshake(
        server().elicitation_timeout(Duration::from_millis(100)),
        ProtocolVersion::V2025_06_18,
        json!({"elicitation": {}}),
    )
    .await;
    let id = c
        .start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    let req = c.recv().await;
    assert!(req["params"].get("mode").is_none(), "2025-06-18 has no mode: {req}");
    let r = c.response_to(&json!(id)).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(text(&r), "resolver `ask_name`: no answer within 100ms");
    let mut c = legacy(json!({})).await;
    let r = c.call_tool("unwrapped", json!({})).await;
    assert_eq!(r["error"]["code"], -32021);
}

#[tokio::test]
async fn a_client_that_vanishes_mid_question_does_not_hang_the_server() {
    let mut c = legacy(json!({"elicitation": {}})).await;
    c.start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    let req = c.recv().await;
    assert_eq!(req["method"], "elicitation/create");
    let (_, result) = tokio::time::timeout(Duration::from_secs(5), c.close())
        .await
        .expect("the server finished");
    assert!(result.is_ok());
}

#[tokio::test]
async fn bad_arguments_are_reported_before_any_question() {
    let mut c = form_client();
    let r = c.call_tool("owner", json!({"path": 42})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(text(&r), "argument `path`: expected a string, got 42");
    let r = c.call_tool("wipe", json!({})).await;
    assert_eq!(text(&r), "argument `path`: missing required argument (a string)");
}

#[tokio::test]
async fn a_call_cancelled_while_its_question_is_open_ends_quietly() {
    let mut c = legacy(json!({"elicitation": {}})).await;
    let id = c
        .start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    let question = c.recv().await;
    c.notify("notifications/cancelled", json!({"requestId": id})).await;
    // A late answer to the abandoned question is ignored, and the connection goes on.
    c.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": accept(json!({"name": "late"}))}))
        .await;
    let r = c.call_tool("owner", json!({"path": "known"})).await;
    assert_eq!(text(&r), "known: Ada");
    let (frames, _) = c.close().await;
    assert!(
        frames.iter().all(|f| f["id"] != json!(id)),
        "no response for the cancelled call: {frames:?}"
    );
}

/// Starts `n` calls of `unwrapped` at once, then answers every question as it comes, until
/// each call has its response (or 20 s pass): the responses by id, and the ids in order.
async fn pipeline_then_answer(server: Server, n: usize) -> (HashMap<i64, Value>, Vec<i64>) {
    let mut c = TestClient::handshake(
        server,
        ProtocolVersion::V2025_11_25,
        json!({"elicitation": {"form": {}}}),
    )
    .await;
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(
            c.start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
                .await,
        );
    }
    let mut done = HashMap::new();
    let finished = tokio::time::timeout(Duration::from_secs(20), async {
        while done.len() < ids.len() {
            let frame = c.recv().await;
            if frame["method"] == "elicitation/create" {
                c.send(&json!({"jsonrpc": "2.0", "id": frame["id"], "result": accept(json!({"name": "Ada"}))}))
                    .await;
            } else {
                done.insert(frame["id"].as_i64().unwrap(), frame);
            }
        }
    })
    .await;
    assert!(finished.is_ok(), "stalled after {} of {} calls", done.len(), ids.len());
    (done, ids)
}

/// A client that sends many calls before answering any question: the calls beyond the server's
/// slots wait, yet the answers behind them are still read, so nothing stalls. (The reader used
/// to stop reading when its queue was full, leaving every running call waiting for an answer it
/// would never read.)
#[tokio::test]
async fn many_pipelined_calls_with_questions_do_not_stall() {
    let (done, ids) = pipeline_then_answer(server().max_in_flight(2).max_waiting(64), 40).await;
    for id in ids {
        assert_eq!(text(&done[&id]), "hello Ada", "{}", done[&id]);
    }
}

/// Past the bound on questions waiting for the client, a call that would ask stops at once with
/// an `isError` result saying why, rather than waiting; the ones already asked still finish.
#[tokio::test]
async fn questions_past_the_waiting_bound_fail_at_once() {
    let (done, ids) = pipeline_then_answer(server().max_in_flight(1).max_waiting(4), 40).await;
    let busy: Vec<_> = done.values().filter(|f| f["result"]["isError"] == true).collect();
    for f in &busy {
        assert!(text(f).contains("4 questions already wait"), "{f}");
    }
    let served = done.values().filter(|f| text(f) == "hello Ada").count();
    assert!(served >= 4, "the calls that asked first finish: {served}");
    assert!(!busy.is_empty(), "the calls past the bound are refused");
    assert_eq!(served + busy.len(), ids.len());
}

/// A gate the `held` tool waits at until the test opens it.
#[derive(Clone)]
struct Gate(std::sync::Arc<tokio::sync::Semaphore>);

/// Runs until the test opens its gate: a call that keeps its running slot and its admission.
#[tool]
async fn held(gate: State<Gate>) -> String {
    drop(gate.0.acquire().await);
    "released".into()
}

/// A stdio connection keeps reading while the client owes an answer (or the answer would never
/// get through), so requests that find no room queue; past 8 × `max_frame_bytes` of queued
/// frames each further request is refused at once with -32603 "busy" (docs/SECURITY.md, calls
/// running at once per connection). The bound is exact, and what was queued is served.
#[tokio::test]
async fn requests_past_the_queued_bytes_while_the_client_owes_an_answer_are_refused_busy() {
    // 8 × 256 bytes of queue: exactly 16 frames of 128 bytes.
    const FRAME: usize = 128;
    let gate = Gate(std::sync::Arc::new(tokio::sync::Semaphore::new(0)));
    let server = server()
        .tool(held)
        .state(gate.clone())
        .max_in_flight(1)
        .max_frame_bytes(256);
    let mut c = TestClient::handshake(
        server,
        ProtocolVersion::V2025_11_25,
        json!({"elicitation": {"form": {}}}),
    )
    .await;
    // A question out and unanswered: the client owes an answer from here on.
    let asking = c
        .start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    let question = c.recv().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    // Calls of `held`, each frame padded in `_meta` to exactly FRAME bytes.
    let frame = |id: i64| {
        let mut pad = String::new();
        loop {
            let text = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "held", "arguments": {}, "_meta": {"pad": pad}}})
            .to_string();
            if text.len() >= FRAME {
                assert_eq!(text.len(), FRAME);
                return text;
            }
            pad.push('x');
        }
    };
    // The first runs (the one running slot), the second is admitted and waits for that slot
    // (admission is twice `max_in_flight`), the next 16 queue; the last 12 find the queue full.
    let ids: Vec<i64> = (1000..1030).collect();
    for id in &ids {
        c.send_raw(&frame(*id)).await;
    }
    let mut busy = Vec::new();
    while busy.len() < 12 {
        let f = c.recv().await;
        assert_eq!(
            f["error"]["code"], -32603,
            "only refusals come before the gate opens: {f}"
        );
        assert!(
            f["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Server busy: too many requests are waiting")),
            "{f}"
        );
        busy.push(f["id"].as_i64().unwrap());
    }
    assert_eq!(busy, ids[18..], "exactly the frames past 16 queued ones are refused");
    // Nothing queued is lost: the held calls finish once the gate opens, the asking one once
    // answered.
    gate.0.add_permits(1);
    c.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": accept(json!({"name": "Ada"}))}))
        .await;
    let mut done = HashMap::new();
    let finished = tokio::time::timeout(Duration::from_secs(20), async {
        while done.len() < 19 {
            let f = c.recv().await;
            done.insert(f["id"].as_i64().unwrap(), f);
        }
    })
    .await;
    assert!(finished.is_ok(), "stalled after {} of 19 calls: {done:?}", done.len());
    assert_eq!(text(&done[&asking]), "hello Ada");
    for id in &ids[..18] {
        assert_eq!(text(&done[id]), "released", "{}", done[id]);
    }
}

/// Handshake era: calls waiting for the client's answers leave their running slots, so plain
/// calls run while 64 questions (every running slot of the default configuration) wait.
#[tokio::test]
async fn a_plain_call_runs_while_64_questions_wait() {
    let mut c = TestClient::handshake(
        server().max_waiting(64),
        ProtocolVersion::V2025_11_25,
        json!({"elicitation": {"form": {}}}),
    )
    .await;
    for _ in 0..64 {
        c.start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
            .await;
    }
    let mut questions = Vec::new();
    while questions.len() < 64 {
        let frame = c.recv().await;
        assert_eq!(frame["method"], "elicitation/create", "{frame}");
        questions.push(frame["id"].clone());
    }
    // Every question is out and unanswered; a call that asks nothing is answered now.
    let r = tokio::time::timeout(Duration::from_secs(10), c.call_tool("owner", json!({"path": "known"})))
        .await
        .expect("a plain call is not kept waiting by calls that wait for the client");
    assert_eq!(text(&r), "known: Ada");
    // The waiting calls then finish as their answers come.
    for id in &questions {
        c.send(&json!({"jsonrpc": "2.0", "id": id, "result": accept(json!({"name": "Ada"}))}))
            .await;
    }
    let mut finished = 0;
    while finished < 64 {
        let frame = c.recv().await;
        assert_eq!(text(&frame), "hello Ada", "{frame}");
        finished += 1;
    }
}

/// Issue 13, point 6: one tool may ask one caller at most so many questions per window; past it
/// the question is not asked and the call ends with an `isError` result saying so, on both eras,
/// while other tools keep their own budget.
#[tokio::test]
async fn a_tool_may_ask_a_caller_only_so_often() {
    let limited = || server().question_limit(2, Duration::from_secs(60));
    let mut c = TestClient::stateless(limited(), json!({"elicitation": {}}));
    for _ in 0..2 {
        let r = c.call_tool("unwrapped", json!({})).await;
        assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    }
    let r = c.call_tool("unwrapped", json!({})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "tool `unwrapped` stopped: it asked this caller more than 2 questions in 60 s; try again later"
    );
    let r = c.call_tool("two_questions", json!({})).await;
    assert_eq!(
        r["result"]["resultType"], "input_required",
        "another tool has its own budget: {r}"
    );

    let mut c = TestClient::handshake(limited(), ProtocolVersion::V2025_11_25, json!({"elicitation": {}})).await;
    for _ in 0..2 {
        let id = c
            .start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
            .await;
        answer_next(&mut c, accept(json!({"name": "Ada"}))).await;
        assert_eq!(text(&c.response_to(&json!(id)).await), "hello Ada");
    }
    let r = c.call_tool("unwrapped", json!({})).await;
    assert_eq!(r["result"]["isError"], true, "asked nothing: {r}");
}

/// The next frame, which must be a notification or a request, within 5 s.
async fn next_notification(c: &mut TestClient) -> Value {
    let frame = c.try_recv(Duration::from_secs(5)).await.expect("a frame within 5 s");
    assert!(frame.get("method").is_some(), "a notification or request: {frame}");
    frame
}

/// Cancellation (both pages): a party that stops waiting for its own request SHOULD tell the
/// other with `notifications/cancelled`. When a question times out, or the call that asked is
/// cancelled, the server cancels its `elicitation/create`, saying why.
#[tokio::test]
async fn a_question_the_server_stops_waiting_for_is_cancelled_with_the_client() {
    let mut c = TestClient::handshake(
        server().elicitation_timeout(Duration::from_millis(100)),
        ProtocolVersion::V2025_11_25,
        json!({"elicitation": {}}),
    )
    .await;
    let id = c
        .start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    let asked = c.recv().await;
    assert_eq!(asked["method"], "elicitation/create");
    let cancelled = next_notification(&mut c).await;
    assert_eq!(cancelled["method"], "notifications/cancelled", "{cancelled}");
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);
    assert_eq!(
        cancelled["params"]["reason"],
        "the server stopped waiting: no answer in time"
    );
    assert_eq!(c.response_to(&json!(id)).await["result"]["isError"], true);

    // The client cancels the call while its question waits: the question is cancelled too.
    let mut c = legacy(json!({"elicitation": {}})).await;
    let id = c
        .start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    let asked = c.recv().await;
    c.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user pressed stop"}),
    )
    .await;
    let cancelled = next_notification(&mut c).await;
    assert_eq!(cancelled["method"], "notifications/cancelled", "{cancelled}");
    assert_eq!(cancelled["params"]["requestId"], asked["id"]);
    assert_eq!(
        cancelled["params"]["reason"],
        "the server stopped waiting: the call it asked for was cancelled"
    );
    // An answered question is never cancelled.
    let mut c = legacy(json!({"elicitation": {}})).await;
    let id = c
        .start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    answer_next(&mut c, json!({"action": "decline"})).await;
    c.response_to(&json!(id)).await;
    assert!(c.try_recv(Duration::from_millis(100)).await.is_none(), "nothing more");
}

/// Lifecycle: "The server SHOULD NOT send requests other than pings and logging before receiving
/// the initialized notification". A call that asks before it comes waits; the question goes out
/// once the client sends `notifications/initialized`.
#[tokio::test]
async fn no_question_goes_out_before_the_client_is_initialized() {
    let mut c = TestClient::raw(server());
    let init = c
        .start(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await;
    c.response_to(&json!(init)).await;
    c.start("tools/call", json!({"name": "unwrapped", "arguments": {}}))
        .await;
    assert!(
        c.try_recv(Duration::from_millis(200)).await.is_none(),
        "nothing asked before notifications/initialized"
    );
    c.notify("notifications/initialized", json!({})).await;
    let asked = c.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
}
