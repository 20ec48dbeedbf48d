//! Application state (`Server::state`, `State<T>` parameters): tools, prompts, resources,
//! resolvers and completers receive the server's own value, on both eras, hidden from every
//! schema; two servers (and two tests) have their own; a server missing a state one of its items
//! takes refuses to serve, naming the type and the item.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;
use mcp_resolve::{HttpOptions, protocol::ProtocolVersion};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// What a real server would hold: a tracker client. Tests keep a handle on `closed`.
struct Tracker {
    name: &'static str,
    open: Vec<(u32, &'static str)>,
    /// Issues that need a confirmation before they are closed.
    protected: Vec<u32>,
    closed: Arc<Mutex<Vec<u32>>>,
}

fn tracker(name: &'static str) -> (Tracker, Arc<Mutex<Vec<u32>>>) {
    let closed = Arc::new(Mutex::new(Vec::new()));
    let t = Tracker {
        name,
        open: vec![(101, "crash on start"), (102, "crash on exit"), (104, "typo in docs")],
        protected: vec![104],
        closed: closed.clone(),
    };
    (t, closed)
}

/// Asks only for a protected issue; reads the tracker and the tool's argument.
#[resolver]
async fn confirm_close(tracker: State<Tracker>, id: u32) -> Resolution<Confirm> {
    if tracker.protected.contains(&id) {
        return Elicit::form(format!("#{id} is protected on {}. Close it?", tracker.name)).into();
    }
    Resolution::Value(Confirm { ok: true })
}

/// Close an issue of the tracker.
#[tool]
async fn close(id: u32, tracker: State<Tracker>, #[resolve(confirm_close)] confirmed: Confirm) -> String {
    if !confirmed.ok {
        return format!("#{id} stays open");
    }
    tracker.closed.lock().unwrap().push(id);
    format!("closed #{id} on {}", tracker.name)
}

/// The tracker's open issues.
#[prompt]
async fn triage(tracker: State<Tracker>, #[arg(complete = titles)] focus: String) -> String {
    format!(
        "Triage {} issues on {} about {focus}.",
        tracker.open.len(),
        tracker.name
    )
}

async fn titles(value: String, tracker: State<Tracker>) -> Vec<String> {
    tracker
        .open
        .iter()
        .map(|(_, t)| t.to_string())
        .filter(|t| t.starts_with(&value))
        .collect()
}

/// How many issues are open.
#[resource(uri = "tracker://open")]
async fn open_count(tracker: State<Tracker>) -> String {
    tracker.open.len().to_string()
}

/// A tool whose own parameters take no state: only its resolver does.
#[tool]
async fn close_quietly(id: u32, #[resolve(confirm_close)] confirmed: Confirm) -> String {
    format!("{id}: {}", confirmed.ok)
}

fn server(t: Tracker) -> Server {
    Server::new("triage")
        .tool(close)
        .prompt(triage)
        .resource(open_count)
        .state(t)
}

fn caps() -> Value {
    json!({"elicitation": {}})
}

fn text(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {frame}"))
}

#[tokio::test]
async fn state_parameters_are_in_no_schema() {
    let (t, _) = tracker("alpha");
    let mut c = TestClient::stateless(server(t), caps());
    let tools = c.request("tools/list", json!({})).await;
    let schema = &tools["result"]["tools"][0]["inputSchema"];
    assert_eq!(
        schema["properties"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["id"],
        "{schema}"
    );
    let prompts = c.request("prompts/list", json!({})).await;
    let args: Vec<&str> = prompts["result"]["prompts"][0]["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(args, ["focus"]);
}

#[tokio::test]
async fn tools_resolvers_prompts_resources_and_completers_read_the_state_on_2026_07_28() {
    let (t, closed) = tracker("alpha");
    let mut c = TestClient::stateless(server(t), caps());

    // The resolver reads the state and answers without asking; the body writes to it.
    let r = c.call_tool("close", json!({"id": 101})).await;
    assert_eq!(text(&r), "closed #101 on alpha", "{r}");

    // The resolver asks (a protected issue); the retry runs it again, with the same state.
    let first = c.call_tool("close", json!({"id": 104})).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(
        first["result"]["inputRequests"]["confirm_close"]["params"]["message"],
        "#104 is protected on alpha. Close it?"
    );
    let retry = json!({
        "name": "close",
        "arguments": {"id": 104},
        "inputResponses": {"confirm_close": {"action": "accept", "content": {"ok": true}}},
        "requestState": first["result"]["requestState"],
    });
    let done = c.request("tools/call", retry).await;
    assert_eq!(text(&done), "closed #104 on alpha", "{done}");
    assert_eq!(*closed.lock().unwrap(), [101, 104]);

    let p = c
        .request(
            "prompts/get",
            json!({"name": "triage", "arguments": {"focus": "crashes"}}),
        )
        .await;
    assert_eq!(
        p["result"]["messages"][0]["content"]["text"], "Triage 3 issues on alpha about crashes.",
        "{p}"
    );
    let r = c.request("resources/read", json!({"uri": "tracker://open"})).await;
    assert_eq!(r["result"]["contents"][0]["text"], "3", "{r}");
    let done = c
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "triage"}, "argument": {"name": "focus", "value": "crash"}}),
        )
        .await;
    assert_eq!(
        done["result"]["completion"]["values"],
        json!(["crash on start", "crash on exit"]),
        "{done}"
    );
}

#[tokio::test]
async fn the_resolver_asks_on_the_back_channel_with_the_state_on_2025_11_25() {
    let (t, closed) = tracker("beta");
    let mut c = TestClient::handshake(server(t), ProtocolVersion::V2025_11_25, caps()).await;
    let id = c
        .start("tools/call", json!({"name": "close", "arguments": {"id": 104}}))
        .await;
    let ask = c.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "#104 is protected on beta. Close it?");
    c.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"ok": true}}}))
        .await;
    let done = c.response_to(&json!(id)).await;
    assert_eq!(text(&done), "closed #104 on beta", "{done}");
    assert_eq!(*closed.lock().unwrap(), [104]);
}

#[tokio::test]
async fn two_servers_in_one_process_have_their_own_state() {
    let (a, closed_a) = tracker("alpha");
    let (b, closed_b) = tracker("beta");
    let mut ca = TestClient::stateless(server(a), caps());
    let mut cb = TestClient::stateless(server(b), caps());
    assert_eq!(
        text(&ca.call_tool("close", json!({"id": 101})).await),
        "closed #101 on alpha"
    );
    assert_eq!(
        text(&cb.call_tool("close", json!({"id": 102})).await),
        "closed #102 on beta"
    );
    assert_eq!(*closed_a.lock().unwrap(), [101]);
    assert_eq!(*closed_b.lock().unwrap(), [102]);
}

#[tokio::test]
async fn a_second_state_of_one_type_replaces_the_first() {
    let (a, closed_a) = tracker("alpha");
    let (b, closed_b) = tracker("beta");
    let mut c = TestClient::stateless(server(a).state(b), caps());
    assert_eq!(
        text(&c.call_tool("close", json!({"id": 101})).await),
        "closed #101 on beta"
    );
    assert!(closed_a.lock().unwrap().is_empty());
    assert_eq!(*closed_b.lock().unwrap(), [101]);
}

/// Serving over HTTP without the state fails at once, naming the type and the item.
async fn refusal(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let e = server
        .serve_http_on(listener, HttpOptions::default())
        .await
        .expect_err("a server missing a state must not serve");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    e.to_string()
}

#[tokio::test]
async fn a_server_missing_a_state_refuses_to_serve_naming_the_type_and_the_item() {
    let e = refusal(Server::new("triage").tool(close)).await;
    assert!(
        e.starts_with("tool `close` takes `State<state::Tracker>`, and the server holds no state of that type"),
        "{e}"
    );
    assert!(e.contains("Server::state"), "{e}");

    let e = refusal(Server::new("triage").tool(close_quietly)).await;
    assert!(
        e.starts_with("tool `close_quietly` takes `State<state::Tracker>` (through resolver `confirm_close`)"),
        "{e}"
    );
    let e = refusal(Server::new("triage").resource(open_count)).await;
    assert!(
        e.starts_with("resource `tracker://open` takes `State<state::Tracker>`"),
        "{e}"
    );
    let e = refusal(Server::new("triage").prompt(triage)).await;
    assert!(e.starts_with("prompt `triage` takes `State<state::Tracker>`"), "{e}");
}

#[tokio::test]
#[should_panic(expected = "TestClient: tool `close` takes `State<state::Tracker>`")]
async fn a_test_client_of_a_server_missing_a_state_says_which() {
    let _ = TestClient::stateless(Server::new("triage").tool(close), caps());
}

#[tokio::test]
async fn a_function_taking_state_is_called_directly_with_state_new() {
    let (t, closed) = tracker("gamma");
    let confirmed = Confirm { ok: true };
    assert_eq!(close(7, State::new(t), confirmed).await, "closed #7 on gamma");
    assert_eq!(*closed.lock().unwrap(), [7]);
}
