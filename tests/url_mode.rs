//! URL-mode questions from resolvers (issue 13, point 1), through the in-memory client on every
//! era: 2026-07-28 input requests with `mode: "url"` and the flow in the URL (no
//! `elicitationId`), completed by the page through `UrlFlows`; 2025-11-25 back-channel requests
//! with an `elicitationId` and `notifications/elicitation/complete`; 2025-06-18, which has no
//! URL mode; and the capability each needs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;
use mcp_resolve::{
    protocol::ProtocolVersion,
    seal::StateKeys,
    url_flow::{FlowError, UrlFlows},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the consent page records.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Connected {
    account: String,
}

#[resolver(key = "connect")]
async fn consent(service: String) -> Elicit<Connected> {
    Elicit::url(
        format!("Sign in to {service} on the page to connect it"),
        format!("https://notes.example/connect?service={service}"),
    )
}

#[tool]
async fn connect_account(service: String, #[resolve(consent)] c: ElicitationResult<Connected>) -> String {
    match c {
        ElicitationResult::Accepted(c) => format!("connected {service} as {}", c.account),
        ElicitationResult::Declined => format!("declined: {service} not connected"),
        ElicitationResult::Cancelled => format!("cancelled: {service} not connected"),
    }
}

#[resolver]
async fn plain_http() -> Elicit<Connected> {
    Elicit::url("Open this", "http://notes.example/connect")
}

#[tool]
async fn insecure(#[resolve(plain_http)] c: Connected) -> String {
    c.account
}

/// The same, asked from the tool body (handshake era only).
#[tool]
async fn connect_now(service: String, cx: Context) -> String {
    let page = format!("https://notes.example/connect?service={service}");
    match cx.elicit_url::<Connected>(format!("Connect {service}"), page).await {
        Ok(ElicitationResult::Accepted(c)) => format!("connected {service} as {}", c.account),
        Ok(other) => format!("not connected: {other:?}"),
        Err(e) => format!("cannot ask: {e}"),
    }
}

/// What each item costs now (each test its own item): the payment page's question quotes the
/// price, so it changes when the price does, between rounds of one call whose arguments stay the
/// same.
static PRICES: Mutex<BTreeMap<String, u32>> = Mutex::new(BTreeMap::new());

fn price(item: &str) -> u32 {
    PRICES.lock().unwrap().get(item).copied().unwrap_or(0)
}

fn set_price(item: &str, euros: u32) {
    PRICES.lock().unwrap().insert(item.to_owned(), euros);
}

/// What the payment page records.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Paid {
    euros: u32,
}

#[derive(Clone, Debug, FormSchema)]
struct Receipt {
    to: String,
}

#[resolver(key = "checkout")]
async fn pay_page(item: String) -> Elicit<Paid> {
    Elicit::url(
        format!("Pay {} EUR for {item} on the page", price(&item)),
        format!("https://shop.example/pay?item={item}"),
    )
}

/// Asked once paid: a second round, while the page's outcome is kept.
#[resolver(key = "receipt")]
async fn ask_receipt(#[resolve(pay_page)] _paid: Paid) -> Elicit<Receipt> {
    Elicit::form("Where should the receipt go?")
}

#[tool]
async fn buy(item: String, #[resolve(pay_page)] paid: Paid, #[resolve(ask_receipt)] receipt: Receipt) -> String {
    format!(
        "{item} at {} EUR, {} EUR paid, receipt to {}",
        price(&item),
        paid.euros,
        receipt.to
    )
}

fn server() -> Arc<Server> {
    Arc::new(
        Server::new("urls")
            // The in-memory client carries no token: these flows are bound to nobody.
            .anonymous_url_flows()
            .state_keys(StateKeys::new(&[9u8; 32]).unwrap())
            .url_wait(Duration::from_millis(100))
            .elicitation_timeout(Duration::from_secs(5))
            .tool(connect_account)
            .tool(connect_now)
            .tool(insecure)
            .tool(buy),
    )
}

const URL_CAPS: &str = r#"{"elicitation": {"form": {}, "url": {}}}"#;

fn url_caps() -> Value {
    serde_json::from_str(URL_CAPS).unwrap()
}

fn text(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {frame}"))
}

/// The `flow` query parameter of a URL.
fn flow_of(url: &str) -> String {
    url.split(['?', '&'])
        .find_map(|p| p.strip_prefix("flow="))
        .unwrap_or_else(|| panic!("no flow in {url}"))
        .to_owned()
}

async fn retry(c: &mut TestClient, answer: Value, state: &Value) -> Value {
    c.request(
        "tools/call",
        json!({"name": "connect_account", "arguments": {"service": "github"},
               "inputResponses": {"connect": answer}, "requestState": state}),
    )
    .await
}

fn flows(server: &Server) -> UrlFlows {
    server.url_flows()
}

// ---------------------------------------------------------------- 2026-07-28

#[tokio::test]
async fn the_call_completes_once_the_page_records_the_step() {
    let server = server();
    let flows = flows(&server);
    let mut c = TestClient::stateless(server.clone(), url_caps());
    let r = c.call_tool("connect_account", json!({"service": "github"})).await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let request = &r["result"]["inputRequests"]["connect"];
    assert_eq!(request["method"], "elicitation/create");
    let params = &request["params"];
    assert_eq!(params["mode"], "url");
    assert_eq!(params["message"], "Sign in to github on the page to connect it");
    assert!(
        params.get("elicitationId").is_none(),
        "2026-07-28 has no elicitationId: {params}"
    );
    let url = params["url"].as_str().unwrap();
    assert!(
        url.starts_with("https://notes.example/connect?service=github&flow="),
        "{url}"
    );
    let flow = flow_of(url);
    let state = r["result"]["requestState"].clone();

    // The page opens; the user consented in the client, but has not finished: asked again, with
    // the same page (after waiting `url_wait`).
    assert_eq!(
        flows.open(&flow, None).await.unwrap().message,
        "Sign in to github on the page to connect it"
    );
    let again = retry(&mut c, json!({"action": "accept"}), &state).await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    assert_eq!(again["result"]["inputRequests"]["connect"]["params"]["url"], url);
    let state = again["result"]["requestState"].clone();

    // The page records the step; the next retry completes.
    flows
        .complete(
            &flow,
            None,
            &Connected {
                account: "octocat".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(flows.open(&flow, None).await, Err(FlowError::Finished));
    let done = retry(&mut c, json!({"action": "accept"}), &state).await;
    assert_eq!(text(&done), "connected github as octocat", "{done}");

    // The outcome was taken once: replaying the final retry gets nothing from the page again.
    let replay = retry(&mut c, json!({"action": "accept"}), &state).await;
    assert_eq!(replay["result"]["isError"], true, "{replay}");
    assert!(
        text(&replay).contains("expired or was completed for another call"),
        "{replay}"
    );
}

// tokio's paused clock: the waits below end only once nothing else can run, so the order of
// events does not depend on the machine's load.
#[tokio::test(start_paused = true)]
async fn a_page_that_completes_while_the_retry_waits_completes_it() {
    let server = server();
    let flows = flows(&server);
    let mut c = TestClient::stateless(server.clone(), url_caps());
    let r = c.call_tool("connect_account", json!({"service": "gitlab"})).await;
    let flow = flow_of(
        r["result"]["inputRequests"]["connect"]["params"]["url"]
            .as_str()
            .unwrap(),
    );
    let state = r["result"]["requestState"].clone();
    let page = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        flows
            .complete(
                &flow,
                None,
                &Connected {
                    account: "tanuki".into(),
                },
            )
            .await
    });
    let done = c
        .request(
            "tools/call",
            json!({"name": "connect_account", "arguments": {"service": "gitlab"},
                   "inputResponses": {"connect": {"action": "accept"}}, "requestState": state}),
        )
        .await;
    page.await.unwrap().unwrap();
    assert_eq!(text(&done), "connected gitlab as tanuki");
}

/// A page's outcome counts only for the question that sent the user there: when the question
/// changes between rounds ("Pay 3 EUR", then "Pay 300 EUR") with the same arguments, the outcome
/// kept from an earlier round is discarded and the user sent to a new page for the new question.
#[tokio::test]
async fn a_kept_page_outcome_is_discarded_when_the_question_changes_and_a_new_page_asked() {
    let server = server();
    let flows = flows(&server);
    let mut c = TestClient::stateless(server.clone(), url_caps());
    let item = "lamp";
    let again = |responses: Value, state: &Value| json!({"name": "buy", "arguments": {"item": item}, "inputResponses": responses, "requestState": state});
    set_price(item, 3);
    let r = c.call_tool("buy", json!({"item": item})).await;
    let params = &r["result"]["inputRequests"]["checkout"]["params"];
    assert_eq!(params["message"], "Pay 3 EUR for lamp on the page", "{r}");
    let first = flow_of(params["url"].as_str().unwrap());
    flows.complete(&first, None, &Paid { euros: 3 }).await.unwrap();
    let r = c
        .request(
            "tools/call",
            again(json!({"checkout": {"action": "accept"}}), &r["result"]["requestState"]),
        )
        .await;
    // Paid: the outcome is kept, and the receipt asked.
    let requests = r["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["receipt"], "{r}");

    // The price goes up before the receipt is answered: the 3 EUR paid do not buy it at 300.
    set_price(item, 300);
    let receipt = json!({"receipt": {"action": "accept", "content": {"to": "me"}}});
    let r = c
        .request("tools/call", again(receipt.clone(), &r["result"]["requestState"]))
        .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let params = &r["result"]["inputRequests"]["checkout"]["params"];
    assert_eq!(params["message"], "Pay 300 EUR for lamp on the page", "{r}");
    let second = flow_of(params["url"].as_str().unwrap());
    assert_ne!(second, first, "a new page, for the new question");
    flows.complete(&second, None, &Paid { euros: 300 }).await.unwrap();
    let r = c
        .request(
            "tools/call",
            again(json!({"checkout": {"action": "accept"}}), &r["result"]["requestState"]),
        )
        .await;
    let r = c
        .request("tools/call", again(receipt, &r["result"]["requestState"]))
        .await;
    assert_eq!(text(&r), "lamp at 300 EUR, 300 EUR paid, receipt to me", "{r}");
}

#[tokio::test]
async fn declined_in_the_client_or_on_the_page_and_cancelled() {
    let server = server();
    let flows = flows(&server);
    for (answer, on_page, expected) in [
        (json!({"action": "decline"}), false, "declined: github not connected"),
        (json!({"action": "cancel"}), false, "cancelled: github not connected"),
        (json!({"action": "accept"}), true, "declined: github not connected"),
    ] {
        let mut c = TestClient::stateless(server.clone(), url_caps());
        let r = c.call_tool("connect_account", json!({"service": "github"})).await;
        let flow = flow_of(
            r["result"]["inputRequests"]["connect"]["params"]["url"]
                .as_str()
                .unwrap(),
        );
        if on_page {
            flows.decline(&flow, None).await.unwrap();
        }
        let done = retry(&mut c, answer, &r["result"]["requestState"]).await;
        assert_eq!(text(&done), expected, "{done}");
    }
}

#[tokio::test]
async fn url_mode_needs_the_url_capability() {
    let mut c = TestClient::stateless(server(), json!({"elicitation": {}}));
    let r = c.call_tool("connect_account", json!({"service": "github"})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {"url": {}}}})
    );
}

#[tokio::test]
async fn a_page_url_that_is_not_https_is_refused_before_anything_is_asked() {
    let mut c = TestClient::stateless(server(), url_caps());
    let r = c.call_tool("insecure", json!({})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        text(&r).contains("the page's URL is refused: it uses plain http"),
        "{r}"
    );
}

// ---------------------------------------------------------------- handshake era

// tokio's paused clock: the waits below end only once nothing else can run, so the order of
// events does not depend on the machine's load.
#[tokio::test(start_paused = true)]
async fn the_back_channel_names_the_elicitation_and_says_when_it_is_complete() {
    let server = server();
    let flows = flows(&server);
    let mut c = TestClient::handshake(server.clone(), ProtocolVersion::V2025_11_25, url_caps()).await;
    let id = c
        .start(
            "tools/call",
            json!({"name": "connect_account", "arguments": {"service": "github"}}),
        )
        .await;
    let req = c.recv().await;
    assert_eq!(req["method"], "elicitation/create", "{req}");
    let params = &req["params"];
    assert_eq!(params["mode"], "url");
    let url = params["url"].as_str().unwrap();
    let flow = flow_of(url);
    assert_eq!(
        params["elicitationId"],
        json!(flow),
        "the elicitation is named by its flow"
    );
    // Consent now; the page is completed a little later.
    c.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}}))
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    flows
        .complete(
            &flow,
            None,
            &Connected {
                account: "octocat".into(),
            },
        )
        .await
        .unwrap();
    let note = c.recv().await;
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": flow}})
    );
    let done = c.response_to(&json!(id)).await;
    assert_eq!(text(&done), "connected github as octocat");
}

// tokio's paused clock: the waits below end only once nothing else can run, so the order of
// events does not depend on the machine's load.
#[tokio::test(start_paused = true)]
async fn the_back_channel_gives_up_on_a_page_never_completed() {
    let server = Arc::new(
        Server::new("urls")
            .anonymous_url_flows()
            .elicitation_timeout(Duration::from_millis(300))
            .tool(connect_account),
    );
    let mut c = TestClient::handshake(server, ProtocolVersion::V2025_11_25, url_caps()).await;
    let id = c
        .start(
            "tools/call",
            json!({"name": "connect_account", "arguments": {"service": "github"}}),
        )
        .await;
    let req = c.recv().await;
    c.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}}))
        .await;
    let r = c.response_to(&json!(id)).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(text(&r), "resolver `connect`: the page was not completed within 300ms");
}

#[tokio::test]
async fn protocol_2025_06_18_has_no_url_mode() {
    let mut c = TestClient::handshake(server(), ProtocolVersion::V2025_06_18, json!({"elicitation": {}})).await;
    let r = c.call_tool("connect_account", json!({"service": "github"})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("which protocol 2025-06-18 does not have"),
        "{r}"
    );
    let mut c = TestClient::handshake(server(), ProtocolVersion::V2025_11_25, json!({"elicitation": {}})).await;
    let r = c.call_tool("connect_account", json!({"service": "github"})).await;
    assert_eq!(
        r["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {"url": {}}}})
    );
}

#[tokio::test]
async fn a_tool_body_asks_in_url_mode_on_the_handshake_era() {
    let server = server();
    let flows = flows(&server);
    let mut c = TestClient::handshake(server.clone(), ProtocolVersion::V2025_11_25, url_caps()).await;
    let id = c
        .start(
            "tools/call",
            json!({"name": "connect_now", "arguments": {"service": "gitea"}}),
        )
        .await;
    let req = c.recv().await;
    assert_eq!(req["params"]["mode"], "url", "{req}");
    let flow = flow_of(req["params"]["url"].as_str().unwrap());
    c.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}}))
        .await;
    flows
        .complete(&flow, None, &Connected { account: "tea".into() })
        .await
        .unwrap();
    assert_eq!(c.recv().await["method"], "notifications/elicitation/complete");
    assert_eq!(text(&c.response_to(&json!(id)).await), "connected gitea as tea");

    let mut c = TestClient::stateless(server, url_caps());
    let r = c.call_tool("connect_now", json!({"service": "gitea"})).await;
    assert!(
        text(&r).starts_with("cannot ask: this request has no back-channel"),
        "{r}"
    );
}

/// The 2025-11-25 -32042 path: a tool may answer "URL elicitation required" (the client shows
/// the page and retries); on 2026-07-28, where the code is reserved, the server refuses to send it.
#[tokio::test]
async fn minus_32042_on_2025_only() {
    #[tool]
    async fn needs_page() -> CallToolResult {
        CallToolResult::protocol_error(mcp_resolve::protocol::ErrorObject::url_elicitation_required(
            "Authorize the calendar",
            "https://notes.example/authorize",
            "cal-1",
        ))
    }
    let server = || Server::new("u").tool(needs_page);
    let mut c = TestClient::handshake(server(), ProtocolVersion::V2025_11_25, url_caps()).await;
    let r = c.call_tool("needs_page", json!({})).await;
    assert_eq!(r["error"]["code"], -32042, "{r}");
    assert_eq!(
        r["error"]["data"]["elicitations"][0]["url"],
        "https://notes.example/authorize"
    );
    let mut c = TestClient::stateless(server(), url_caps());
    let r = c.call_tool("needs_page", json!({})).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
}

/// A page never completed: each re-ask is a round, and past `max_rounds` the call ends saying
/// the page was not completed in time.
#[tokio::test]
async fn a_page_never_completed_ends_after_the_rounds() {
    let server = Arc::new(
        Server::new("urls")
            .anonymous_url_flows()
            .max_rounds(2)
            .url_wait(Duration::from_millis(20))
            .tool(connect_account),
    );
    let mut c = TestClient::stateless(server, url_caps());
    let mut r = c.call_tool("connect_account", json!({"service": "github"})).await;
    for _ in 0..2 {
        r = retry(&mut c, json!({"action": "accept"}), &r["result"]["requestState"]).await;
    }
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        text(&r).ends_with("the page of its URL-mode question was not completed in time: call again"),
        "{r}"
    );
}

// ---------------------------------------------------------------- one caller's flows

#[path = "support/callers.rs"]
mod callers;

#[resolver(once)]
async fn approve(amount: u32) -> Elicit<Confirm> {
    Elicit::form(format!("Transfer {amount}?"))
}

/// Single-use through its resolver: its used answer takes an entry in the store.
#[tool]
async fn transfer(amount: u32, #[resolve(approve)] ok: bool) -> String {
    if ok { format!("sent {amount}") } else { "kept".into() }
}

/// Issue 22, point 2 (the review's finding): URL-mode flows and used single-use answers shared
/// the memory store's one capacity, so one caller's flows could make every single-use call, and
/// every other caller's URL-mode question, fail closed for up to ten minutes. Now one caller has
/// at most 16 flows waiting (the default); past it its call ends saying so, while another
/// caller's URL-mode question and single-use call go through.
#[tokio::test]
async fn one_callers_waiting_flows_are_bounded_and_other_callers_and_single_use_answers_go_through() {
    let server = Server::new("urls")
        .state_keys(StateKeys::new(&[9u8; 32]).unwrap())
        .store(mcp_resolve::store::MemoryStore::with_capacity(20))
        .tool(connect_account)
        .tool(transfer);
    let flows = server.url_flows();
    let addr = callers::serve(server).await;
    let connect = json!({"name": "connect_account", "arguments": {"service": "github"}});
    for i in 0..16 {
        let r = callers::request(addr, "mallory", "tools/call", connect.clone()).await;
        assert_eq!(r["result"]["resultType"], "input_required", "flow {i}: {r}");
    }
    let r = callers::request(addr, "mallory", "tools/call", connect.clone()).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "resolver `connect`: this caller has 16 URL-mode steps waiting for their pages, the most one caller may have at once; complete one, or call again once they expire (600 s after they were asked)"
    );

    // Another caller's URL-mode question: asked, completed by its page, taken by the retry.
    let r = callers::request(addr, "alice", "tools/call", connect.clone()).await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let url = r["result"]["inputRequests"]["connect"]["params"]["url"]
        .as_str()
        .unwrap();
    let alice = callers::caller("alice");
    flows
        .complete(
            &callers::flow_of(url),
            Some(&alice),
            &Connected { account: "a1".into() },
        )
        .await
        .unwrap();
    let mut retry = connect.clone();
    retry["requestState"] = r["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"connect": {"action": "accept"}});
    let done = callers::request(addr, "alice", "tools/call", retry).await;
    assert_eq!(text(&done), "connected github as a1");

    // A single-use call: its answer is recorded as used, and a replay refused.
    let pay = json!({"name": "transfer", "arguments": {"amount": 10}});
    let r = callers::request(addr, "alice", "tools/call", pay.clone()).await;
    let mut retry = pay;
    retry["requestState"] = r["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"approve": {"action": "accept", "content": {"ok": true}}});
    let done = callers::request(addr, "alice", "tools/call", retry.clone()).await;
    assert_eq!(text(&done), "sent 10");
    let replay = callers::request(addr, "alice", "tools/call", retry).await;
    assert_eq!(replay["error"]["data"]["reason"], "invalid_request_state", "{replay}");
}

/// Elicitation, URL mode (both eras): "The MCP Server MUST verify the identity of the user who
/// opens the URL before accepting information"; 2026-07-28 security: possession of a state handle
/// "MUST NOT" be treated as authentication. Without a principal there is nobody to bind a flow
/// to, so by default a URL-mode question of an unauthenticated caller ends the call saying how to
/// fix it, asks nothing and starts no flow; `Server::anonymous_url_flows` opts in.
#[tokio::test]
async fn a_url_mode_question_of_an_unauthenticated_caller_is_refused_unless_the_server_opts_in() {
    let strict = || {
        Arc::new(
            Server::new("urls")
                .state_keys(StateKeys::new(&[9u8; 32]).unwrap())
                .tool(connect_account)
                .tool(connect_now),
        )
    };
    let mut c = TestClient::stateless(strict(), url_caps());
    let r = c.call_tool("connect_account", json!({"service": "github"})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"].get("inputRequests").is_none(), "nothing asked: {r}");
    let why = text(&r);
    assert!(why.contains("needs an authenticated caller"), "{why}");
    assert!(
        why.contains("HttpOptions::bearer") && why.contains("Server::anonymous_url_flows()"),
        "{why}"
    );
    // The handshake era, asked from the tool body: the same refusal, nothing sent.
    let mut c = TestClient::handshake(strict(), ProtocolVersion::V2025_11_25, url_caps()).await;
    let r = c.call_tool("connect_now", json!({"service": "github"})).await;
    assert!(text(&r).contains("needs an authenticated caller"), "{r}");
    // Opted in: asked.
    let mut c = TestClient::stateless(server(), url_caps());
    let r = c.call_tool("connect_account", json!({"service": "github"})).await;
    assert_eq!(r["result"]["inputRequests"]["connect"]["params"]["mode"], "url", "{r}");
}
