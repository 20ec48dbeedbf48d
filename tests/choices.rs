//! Choices from data (`Choices`, `Elicit::pick_one`, `Elicit::pick_many`): a resolver offers the
//! options it found when it runs, the client sees exactly those, and the answer is read back into
//! their values, refused when it names anything else, on both eras.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::elicit::{Choices, MAX_CHOICES};
use mcp_resolve::prelude::*;
use mcp_resolve::protocol::ProtocolVersion;
use mcp_resolve::testing::TestClient;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// The open issues: id and title.
type Issues = Arc<Mutex<Vec<(u32, String)>>>;

struct Tracker {
    issues: Issues,
}

impl Tracker {
    fn new() -> Self {
        Self::with_handle().0
    }

    /// A tracker, and a handle on its issues for the test to change.
    fn with_handle() -> (Self, Issues) {
        let issues = [(101, "crash on start"), (102, "crash on exit"), (104, "typo in docs")];
        let issues = Arc::new(Mutex::new(issues.iter().map(|(i, t)| (*i, t.to_string())).collect()));
        (Self { issues: issues.clone() }, issues)
    }

    fn search(&self, query: &str) -> Vec<(u32, String)> {
        if query.is_empty() {
            return self.issues.lock().unwrap().clone();
        }
        let issues = self.issues.lock().unwrap();
        issues.iter().filter(|(_, t)| t.contains(query)).cloned().collect()
    }
}

/// The issues matching `query`: none, the one there is, or the user's pick among them.
#[resolver]
async fn pick_issues(query: String, tracker: State<Tracker>) -> Resolution<Vec<u32>> {
    let found = tracker.search(&query);
    match found.as_slice() {
        [] => return Resolution::Value(Vec::new()),
        [(only, _)] => return Resolution::Value(vec![*only]),
        _ => {}
    }
    let choices = found
        .iter()
        .fold(Choices::new("issues").title("Issues to close"), |c, (id, title)| {
            c.option(id.to_string(), format!("#{id} {title}"), *id)
        });
    Elicit::pick_many(
        format!("{} issues match “{query}”. Which ones?", found.len()),
        choices.min_items(1),
    )
    .into()
}

/// Close the issues matching a query.
#[tool]
async fn close_issues(query: String, #[resolve(pick_issues)] ids: Vec<u32>) -> String {
    let _ = query; // what `pick_issues` searched for
    let ids: Vec<String> = ids.iter().map(|i| format!("#{i}")).collect();
    format!("closed {}", ids.join(", "))
}

/// Confirms the pick, naming what was picked; asked only after the pick, and not at all when
/// the pick was declined (this resolver then cannot run) or nothing matched.
#[resolver]
async fn confirm_close(#[resolve(pick_issues)] ids: Vec<u32>) -> Resolution<Confirm> {
    if ids.is_empty() {
        return Resolution::Value(Confirm { ok: true });
    }
    let ids: Vec<String> = ids.iter().map(|i| format!("#{i}")).collect();
    Elicit::form(format!("Close {}?", ids.join(", "))).into()
}

/// Close the issues matching a query, after a confirmation naming them.
#[tool(destructive = true)]
async fn close_confirmed(
    query: String,
    #[resolve(pick_issues)] ids: ElicitationResult<Vec<u32>>,
    #[resolve(confirm_close)] confirmed: ElicitationResult<Confirm>,
) -> String {
    let _ = query;
    match (ids, confirmed) {
        (ElicitationResult::Accepted(ids), ElicitationResult::Accepted(Confirm { ok: true })) if ids.is_empty() => {
            "nothing matched".into()
        }
        (ElicitationResult::Accepted(ids), ElicitationResult::Accepted(Confirm { ok: true })) => {
            format!("closed {ids:?}")
        }
        (ElicitationResult::Accepted(_), _) => "not confirmed: nothing closed".into(),
        _ => "no pick: nothing closed".into(),
    }
}

/// One of the issues, for a single pick.
#[resolver]
async fn pick_one_issue(tracker: State<Tracker>) -> Elicit<u32> {
    let found = tracker.search("");
    let choices = found.iter().fold(Choices::new("issue"), |c, (id, title)| {
        c.option(id.to_string(), title.clone(), *id)
    });
    Elicit::pick_one("Which issue?", choices)
}

/// Show one issue.
#[tool]
async fn show(#[resolve(pick_one_issue)] id: u32) -> String {
    format!("#{id}")
}

/// A question with more options than allowed.
#[resolver]
async fn too_many() -> Elicit<usize> {
    let choices = (0..=MAX_CHOICES).fold(Choices::new("n"), |c, i| c.option(i.to_string(), i.to_string(), i));
    Elicit::pick_one("Which?", choices)
}

/// Asks a question that cannot be asked.
#[tool]
async fn overflow(#[resolve(too_many)] n: usize) -> String {
    n.to_string()
}

fn server(tracker: Tracker) -> Server {
    Server::new("triage")
        .state(tracker)
        .tool(close_issues)
        .tool(show)
        .tool(overflow)
        .tool(close_confirmed)
}

fn caps() -> Value {
    json!({"elicitation": {}})
}

fn text(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {frame}"))
}

fn offered() -> Value {
    json!({"type": "array", "title": "Issues to close", "minItems": 1, "items": {"anyOf": [
        {"const": "101", "title": "#101 crash on start"},
        {"const": "102", "title": "#102 crash on exit"},
    ]}})
}

fn retry(first: &Value, answer: Value) -> Value {
    json!({
        "name": "close_issues",
        "arguments": {"query": "crash"},
        "inputResponses": {"pick_issues": {"action": "accept", "content": {"issues": answer}}},
        "requestState": first["result"]["requestState"],
    })
}

#[tokio::test]
async fn the_client_is_offered_exactly_the_matches_and_the_pick_comes_back_typed_on_2026_07_28() {
    let mut c = TestClient::stateless(server(Tracker::new()), caps());
    let first = c.call_tool("close_issues", json!({"query": "crash"})).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let question = &first["result"]["inputRequests"]["pick_issues"]["params"];
    assert_eq!(question["message"], "2 issues match “crash”. Which ones?");
    assert_eq!(question["requestedSchema"]["properties"]["issues"], offered());
    assert_eq!(question["requestedSchema"]["required"], json!(["issues"]));

    let done = c.request("tools/call", retry(&first, json!(["102", "101"]))).await;
    assert_eq!(text(&done), "closed #102, #101", "{done}");

    // A key that was not offered (an issue that exists, but did not match) is refused.
    let bad = c.request("tools/call", retry(&first, json!(["101", "104"]))).await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(
        text(&bad).contains("expected one of `101`, `102`, got \"104\""),
        "{bad}"
    );
    let empty = c.request("tools/call", retry(&first, json!([]))).await;
    assert!(text(&empty).contains("at least 1"), "{empty}");

    // One match: nothing is asked.
    let one = c.call_tool("close_issues", json!({"query": "typo"})).await;
    assert_eq!(text(&one), "closed #104", "{one}");
}

#[tokio::test]
async fn an_answer_to_options_that_changed_since_is_not_taken_on_2026_07_28() {
    let (tracker, issues) = Tracker::with_handle();
    let mut c = TestClient::stateless(server(tracker), caps());
    let first = c.call_tool("close_issues", json!({"query": "crash"})).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    // The data changes between the rounds: the question the retry makes offers three issues,
    // so it is another question, and the answer to the first is not taken for it.
    issues.lock().unwrap().push((103, "crash on resume".into()));
    let again = c.request("tools/call", retry(&first, json!(["101"]))).await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    let question = &again["result"]["inputRequests"]["pick_issues"]["params"];
    assert_eq!(question["message"], "3 issues match “crash”. Which ones?", "{again}");
}

#[tokio::test]
async fn the_handshake_era_offers_the_same_options_and_refuses_others() {
    for (answer, want) in [
        (json!(["101"]), Ok("closed #101")),
        (json!(["999"]), Err("got \"999\"")),
    ] {
        let mut c = TestClient::handshake(server(Tracker::new()), ProtocolVersion::V2025_11_25, caps()).await;
        let id = c
            .start(
                "tools/call",
                json!({"name": "close_issues", "arguments": {"query": "crash"}}),
            )
            .await;
        let ask = c.recv().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        assert_eq!(ask["params"]["requestedSchema"]["properties"]["issues"], offered());
        c.send(&json!({"jsonrpc": "2.0", "id": ask["id"],
                       "result": {"action": "accept", "content": {"issues": answer}}}))
            .await;
        let done = c.response_to(&json!(id)).await;
        match want {
            Ok(text_) => assert_eq!(text(&done), text_, "{done}"),
            Err(part) => {
                assert_eq!(done["result"]["isError"], true, "{done}");
                assert!(text(&done).contains(part), "{done}");
            }
        }
    }
}

#[tokio::test]
async fn a_single_pick_is_one_value() {
    let mut c = TestClient::stateless(server(Tracker::new()), caps());
    let first = c.call_tool("show", json!({})).await;
    let field = &first["result"]["inputRequests"]["pick_one_issue"]["params"]["requestedSchema"]["properties"]["issue"];
    assert_eq!(field["type"], "string", "{first}");
    assert_eq!(field["oneOf"][2], json!({"const": "104", "title": "typo in docs"}));
    let done = c
        .request(
            "tools/call",
            json!({"name": "show", "arguments": {},
                   "inputResponses": {"pick_one_issue": {"action": "accept", "content": {"issue": "104"}}},
                   "requestState": first["result"]["requestState"]}),
        )
        .await;
    assert_eq!(text(&done), "#104", "{done}");
}

#[tokio::test]
async fn a_question_with_too_many_options_is_not_asked_and_says_why() {
    let mut c = TestClient::stateless(server(Tracker::new()), caps());
    let r = c.call_tool("overflow", json!({})).await;
    let message = r["error"]["message"]
        .as_str()
        .or(r["result"]["content"][0]["text"].as_str());
    let message = message.unwrap_or_else(|| panic!("no error in {r}"));
    assert!(message.contains("offers 101 options, more than 100"), "{r}");
}

/// The answers of one call on 2026-07-28, by question key; returns the questions asked in each
/// round (key and message) and the final frame.
async fn mrtr(c: &mut TestClient, arguments: Value, answers: &[(&str, Value)]) -> (Vec<Vec<(String, String)>>, Value) {
    let params = json!({"name": "close_confirmed", "arguments": arguments});
    let mut r = c.request("tools/call", params.clone()).await;
    let mut rounds = Vec::new();
    while r["result"]["resultType"] == "input_required" {
        let requests = r["result"]["inputRequests"].as_object().unwrap().clone();
        rounds.push(
            requests
                .iter()
                .map(|(k, q)| (k.clone(), q["params"]["message"].as_str().unwrap().to_owned()))
                .collect::<Vec<_>>(),
        );
        let mut responses = serde_json::Map::new();
        for key in requests.keys() {
            let (_, answer) = answers
                .iter()
                .find(|(k, _)| k == key)
                .unwrap_or_else(|| panic!("no answer for {key}"));
            responses.insert(key.clone(), answer.clone());
        }
        let mut retry = params.clone();
        retry["inputResponses"] = Value::Object(responses);
        retry["requestState"] = r["result"]["requestState"].clone();
        r = c.request("tools/call", retry).await;
    }
    (rounds, r)
}

fn pick(keys: Value) -> Value {
    json!({"action": "accept", "content": {"issues": keys}})
}

#[tokio::test]
async fn the_confirmation_follows_the_pick_and_names_it_on_2026_07_28() {
    let mut c = TestClient::stateless(server(Tracker::new()), caps());
    let yes = json!({"action": "accept", "content": {"ok": true}});
    let answers = [
        ("pick_issues", pick(json!(["101", "102"]))),
        ("confirm_close", yes.clone()),
    ];
    let (rounds, done) = mrtr(&mut c, json!({"query": "crash"}), &answers).await;
    assert_eq!(
        rounds,
        [
            vec![(
                "pick_issues".to_owned(),
                "2 issues match “crash”. Which ones?".to_owned()
            )],
            vec![("confirm_close".to_owned(), "Close #101, #102?".to_owned())],
        ]
    );
    assert_eq!(text(&done), "closed [101, 102]", "{done}");

    // A declined pick: the confirmation is never asked.
    let answers = [("pick_issues", json!({"action": "decline"}))];
    let (rounds, done) = mrtr(&mut c, json!({"query": "crash"}), &answers).await;
    assert_eq!(rounds.len(), 1, "{rounds:?}");
    assert_eq!(text(&done), "no pick: nothing closed", "{done}");

    // Nothing to pick and nothing to confirm: no question at all.
    let (rounds, done) = mrtr(&mut c, json!({"query": "nowhere"}), &[]).await;
    assert!(rounds.is_empty(), "{rounds:?}");
    assert_eq!(text(&done), "nothing matched", "{done}");
}

#[tokio::test]
async fn the_confirmation_follows_the_pick_on_the_back_channel_and_not_after_a_decline() {
    for (pick_answer, want_confirm, want) in [
        (pick(json!(["102"])), Some("Close #102?"), "closed [102]"),
        (json!({"action": "decline"}), None, "no pick: nothing closed"),
    ] {
        let mut c = TestClient::handshake(server(Tracker::new()), ProtocolVersion::V2025_11_25, caps()).await;
        let id = c
            .start(
                "tools/call",
                json!({"name": "close_confirmed", "arguments": {"query": "crash"}}),
            )
            .await;
        let ask = c.recv().await;
        assert_eq!(ask["params"]["message"], "2 issues match “crash”. Which ones?", "{ask}");
        c.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": pick_answer}))
            .await;
        if let Some(message) = want_confirm {
            let ask = c.recv().await;
            assert_eq!(ask["params"]["message"], message, "{ask}");
            c.send(
                &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"ok": true}}}),
            )
            .await;
        }
        let done = c.response_to(&json!(id)).await;
        assert_eq!(text(&done), want, "{done}");
    }
}
