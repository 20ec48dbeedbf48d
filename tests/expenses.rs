//! The expense-approval server of issue 14, on both eras through the in-memory client: a
//! question asked only for travel expenses (a conditional resolver: `Resolution<Option<F>>`), an
//! approver asked after it (a chained resolver), a confirmation, and a plain tool; and the rule for
//! declines seen through dependencies: the tool's own `ElicitationResult` branch runs when it
//! can, and any error names the question that was declined.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;
use mcp_resolve::{protocol::ProtocolVersion, seal::StateKeys};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

#[derive(Clone, Debug, FormSchema)]
struct TravelDate {
    #[form(format = "date")]
    date: String,
}

#[derive(Clone, Debug, FormSchema)]
struct Approver {
    approver: String,
}

/// Asked for travel expenses only: other expenses have no travel date, and nothing is asked.
#[resolver]
async fn travel_date(category: String) -> Resolution<Option<TravelDate>> {
    if category != "travel" {
        return Resolution::Value(None);
    }
    Elicit::form("When did you travel?").optional()
}

/// Large expenses need an approver, asked once the travel date (if any) is known.
#[resolver]
async fn approval(amount_cents: u64, #[resolve(travel_date)] date: Option<TravelDate>) -> Resolution<Approver> {
    if amount_cents <= 10_000 {
        return Resolution::Value(Approver {
            approver: "nobody (small amount)".into(),
        });
    }
    let when = date.map(|d| format!(" (travel on {})", d.date)).unwrap_or_default();
    Elicit::form(format!("Who approves {amount_cents} cents{when}?")).into()
}

/// Submit an expense.
#[tool]
async fn submit_expense(
    category: String,
    amount_cents: u64,
    #[resolve(travel_date)] date: ElicitationResult<Option<TravelDate>>,
    #[resolve(approval)] approver: ElicitationResult<Approver>,
    #[confirm("Submit {amount_cents} cents for {category}?")] ok: bool,
) -> String {
    let (date, approver) = match (date, approver) {
        (ElicitationResult::Accepted(d), ElicitationResult::Accepted(a)) => (d, a),
        (ElicitationResult::Declined, _) => return "not submitted: no travel date given".into(),
        (ElicitationResult::Cancelled, _) => return "not submitted: cancelled".into(),
        (_, _) => return "not submitted: no approver".into(),
    };
    if !ok {
        return "not submitted".into();
    }
    let date = date.map(|d| format!(", travelled {}", d.date)).unwrap_or_default();
    format!(
        "submitted {amount_cents} cents for {category}{date}, approved by {}",
        approver.approver
    )
}

/// The same, taking the approver as a plain value: a declined travel date stops it, naming the
/// question.
#[tool]
async fn strict_expense(category: String, amount_cents: u64, #[resolve(approval)] approver: Approver) -> String {
    format!("{category} {amount_cents} approved by {}", approver.approver)
}

/// A plain tool.
#[tool(read_only = true)]
async fn expense_limit() -> Json<u64> {
    Json(10_000)
}

fn server() -> Server {
    Server::new("expenses")
        .state_keys(StateKeys::new(&[4u8; 32]).unwrap())
        .tool(submit_expense)
        .tool(strict_expense)
        .tool(expense_limit)
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// One call, every question answered from `answers` by its key (a key missing from it is a
/// test failure); returns the questions as (round, key, message) and the final response.
async fn call(
    legacy: bool,
    tool: &str,
    args: Value,
    answers: &BTreeMap<&str, Value>,
) -> (Vec<(u64, String, String)>, Value) {
    let mut asked = Vec::new();
    if legacy {
        let mut c = TestClient::handshake(server(), ProtocolVersion::V2025_11_25, json!({"elicitation": {}})).await;
        let id = c.start("tools/call", json!({"name": tool, "arguments": args})).await;
        let mut round = 0;
        loop {
            let frame = c.recv().await;
            if frame["id"] == json!(id) && frame.get("method").is_none() {
                return (asked, frame);
            }
            round += 1;
            let message = frame["params"]["message"].as_str().unwrap().to_owned();
            // The back-channel has no keys: find the answer by its message.
            let key = key_of(&message);
            asked.push((round, key.to_owned(), message));
            let answer = answers.get(key).unwrap_or_else(|| panic!("no answer for {key}"));
            c.send(&json!({"jsonrpc": "2.0", "id": frame["id"], "result": answer}))
                .await;
        }
    }
    let mut c = TestClient::stateless(server(), json!({"elicitation": {}}));
    let mut r = c.call_tool(tool, args.clone()).await;
    let mut round = 0;
    while r["result"]["resultType"] == "input_required" {
        round += 1;
        let mut responses = Map::new();
        for (key, q) in r["result"]["inputRequests"].as_object().unwrap() {
            asked.push((round, key.clone(), q["params"]["message"].as_str().unwrap().to_owned()));
            let answer = answers
                .get(key.as_str())
                .unwrap_or_else(|| panic!("no answer for {key}"));
            responses.insert(key.clone(), answer.clone());
        }
        r = c
            .request(
                "tools/call",
                json!({"name": tool, "arguments": args, "inputResponses": responses, "requestState": r["result"]["requestState"]}),
            )
            .await;
    }
    (asked, r)
}

fn key_of(message: &str) -> &'static str {
    if message.starts_with("When did you travel") {
        "travel_date"
    } else if message.starts_with("Who approves") {
        "approval"
    } else {
        "ok"
    }
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}"))
}

fn answers(pairs: &[(&'static str, Value)]) -> BTreeMap<&'static str, Value> {
    pairs.iter().cloned().collect()
}

#[tokio::test]
async fn a_small_meal_asks_only_for_the_confirmation() {
    for legacy in [false, true] {
        let (asked, r) = call(
            legacy,
            "submit_expense",
            json!({"category": "meal", "amount_cents": 2500}),
            &answers(&[("ok", accept(json!({"ok": true})))]),
        )
        .await;
        assert_eq!(asked, [(1, "ok".to_owned(), "Submit 2500 cents for meal?".to_owned())]);
        assert_eq!(
            text(&r),
            "submitted 2500 cents for meal, approved by nobody (small amount)"
        );
    }
}

#[tokio::test]
async fn a_large_trip_asks_the_date_and_the_confirmation_then_the_approver() {
    let all = answers(&[
        ("travel_date", accept(json!({"date": "2026-11-03"}))),
        ("approval", accept(json!({"approver": "Kim"}))),
        ("ok", accept(json!({"ok": true}))),
    ]);
    let args = json!({"category": "travel", "amount_cents": 50_000});
    // 2026-07-28: independent questions share a round; the approver, who needs the date, waits.
    let (asked, r) = call(false, "submit_expense", args.clone(), &all).await;
    assert_eq!(
        asked,
        [
            (1, "ok".to_owned(), "Submit 50000 cents for travel?".to_owned()),
            (1, "travel_date".to_owned(), "When did you travel?".to_owned()),
            (
                2,
                "approval".to_owned(),
                "Who approves 50000 cents (travel on 2026-11-03)?".to_owned()
            ),
        ]
    );
    assert_eq!(
        text(&r),
        "submitted 50000 cents for travel, travelled 2026-11-03, approved by Kim"
    );
    // The handshake era asks in turn, dependencies first.
    let (asked, r) = call(true, "submit_expense", args, &all).await;
    let keys: Vec<&str> = asked.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(keys, ["travel_date", "approval", "ok"]);
    assert_eq!(
        text(&r),
        "submitted 50000 cents for travel, travelled 2026-11-03, approved by Kim"
    );
}

/// A declined travel date, seen through the approver that needs it: the approver is never
/// asked, and the tool's own `Declined` branch runs.
#[tokio::test]
async fn a_declined_date_reaches_the_tools_own_branch() {
    let declined = answers(&[
        ("travel_date", json!({"action": "decline"})),
        ("ok", accept(json!({"ok": true}))),
    ]);
    for legacy in [false, true] {
        let (asked, r) = call(
            legacy,
            "submit_expense",
            json!({"category": "travel", "amount_cents": 50_000}),
            &declined,
        )
        .await;
        assert!(asked.iter().all(|(_, k, _)| k != "approval"), "{asked:?}");
        assert_eq!(text(&r), "not submitted: no travel date given", "legacy={legacy}");
    }
}

/// Where the tool cannot branch (it takes the approver as a plain value), the error names the
/// question that was declined, not the parameter that could not be filled.
#[tokio::test]
async fn an_error_names_the_question_that_was_declined() {
    let declined = answers(&[("travel_date", json!({"action": "cancel"}))]);
    for legacy in [false, true] {
        let (_, r) = call(
            legacy,
            "strict_expense",
            json!({"category": "travel", "amount_cents": 50_000}),
            &declined,
        )
        .await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert_eq!(
            text(&r),
            "`approver` was not resolved: the user cancelled the question `travel_date`, so the tool did not run"
        );
    }
}

#[tokio::test]
async fn the_plain_tool_asks_nothing() {
    let (asked, r) = call(false, "expense_limit", json!({}), &BTreeMap::new()).await;
    assert!(asked.is_empty());
    assert_eq!(text(&r), "10000");
}
