//! Single-use answers (issue 13, point 5), through the in-memory client (real JSON-RPC frames):
//! a call that reaches a `#[resolver(once)]` resolver, or a destructive tool that asks, consumes
//! every `requestState` it opens. A replay (the same state and answer again, a decline turned
//! into an accept, a fork from an earlier round's state) gets the -32602 every refused state
//! gets; replicas sharing a store refuse what another replica consumed; a store that fails
//! refuses the call (-32603) before anything runs. Other calls' states stay replayable within
//! their life, as before. Of many retries racing with one state on a multi-threaded runtime,
//! exactly one runs; a used state is recorded for as long as any replica could take it, and no
//! longer than `state_ttl` + 2 × `state_leeway`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::prelude::*;
use mcp_resolve::testing::{FailingStore, RecordingStore, TestClient};
use mcp_resolve::{
    protocol::ProtocolVersion,
    seal::StateKeys,
    store::{MemoryStore, Store, StoreError},
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, FormSchema)]
struct Account {
    account: String,
}

#[derive(Clone, Debug, FormSchema)]
struct Amount {
    amount: u32,
}

/// How many times each tool's body ran, by the call: the tool and what names the call (its
/// amount, path or account). The tests of this binary run at once on other threads, each with
/// calls of its own, so each reads its own counts: never a delta of a count shared with others.
static RAN: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

fn count(call: String) {
    *RAN.lock().unwrap().entry(call).or_default() += 1;
}

/// How many times the body of `call` (e.g. `"wipe /data"`) ran.
fn ran(call: &str) -> usize {
    RAN.lock().unwrap().get(call).copied().unwrap_or(0)
}

/// The approval of a transfer: its answer is single-use.
#[resolver(once)]
async fn approve(amount: u32) -> Elicit<Confirm> {
    Elicit::form(format!("Transfer {amount}?"))
}

/// Not destructive, but its approval is `once`: single-use through the resolver.
#[tool]
async fn transfer(amount: u32, #[resolve(approve)] approval: ElicitationResult<Confirm>) -> String {
    count(format!("transfer {amount}"));
    match approval {
        ElicitationResult::Accepted(Confirm { ok: true }) => format!("sent {amount}"),
        ElicitationResult::Accepted(_) => "not approved".into(),
        ElicitationResult::Declined => "declined".into(),
        ElicitationResult::Cancelled => "cancelled".into(),
    }
}

#[resolver(once)]
async fn ask_account() -> Elicit<Account> {
    Elicit::form("Which account?")
}

/// Not `once` itself, but it depends on a `once` resolver.
#[resolver]
async fn ask_amount(#[resolve(ask_account)] account: Account) -> Elicit<Amount> {
    Elicit::form(format!("How much from {}?", account.account))
}

/// Two rounds: the account, then the amount.
#[tool]
async fn pay(#[resolve(ask_amount)] amount: Amount, #[resolve(ask_account)] account: Account) -> String {
    count(format!("pay {}", account.account));
    format!("paid {} from {}", amount.amount, account.account)
}

/// Destructive with a confirmation: single-use by default.
#[tool(destructive = true)]
async fn wipe(path: String, #[confirm("Wipe {path}?")] ok: bool) -> String {
    count(format!("wipe {path}"));
    if ok {
        format!("wiped {path}")
    } else {
        format!("kept {path}")
    }
}

/// Destructive, opted out: its answers replay within the state's life.
#[tool(destructive = true, replayable)]
async fn rebuild(path: String, #[confirm("Rebuild {path}?")] ok: bool) -> String {
    if ok {
        format!("rebuilt {path}")
    } else {
        format!("kept {path}")
    }
}

/// Opted out, but its resolver is `once`: the resolver wins.
#[tool(destructive = true, replayable)]
async fn refund(amount: u32, #[resolve(approve)] approval: ElicitationResult<Confirm>) -> String {
    format!(
        "refund {amount}: {}",
        matches!(approval, ElicitationResult::Accepted(_))
    )
}

#[resolver]
async fn ask_name() -> Elicit<Account> {
    Elicit::form("Whose?")
}

/// Neither destructive nor `once`: replayable, as before.
#[tool]
async fn greet(#[resolve(ask_name)] name: Account) -> String {
    format!("hello {}", name.account)
}

/// A prompt whose question is single-use.
#[prompt]
async fn brief(topic: String, #[resolve(ask_account)] who: Account) -> String {
    format!("Brief {} on {topic}.", who.account)
}

/// A prompt whose question is not.
#[prompt]
async fn brief_again(topic: String, #[resolve(ask_name)] who: Account) -> String {
    format!("Brief {} on {topic} again.", who.account)
}

/// A resource whose question is single-use.
#[resource(template = "test://vault/{id}", mime_type = "text/plain")]
async fn vault(id: String, #[resolve(ask_account)] who: Account) -> String {
    format!("vault {id} opened for {}", who.account)
}

fn server() -> Server {
    Server::new("single-use")
        .state_keys(StateKeys::new(&[7u8; 32]).unwrap())
        .tool(transfer)
        .tool(pay)
        .tool(wipe)
        .tool(rebuild)
        .tool(refund)
        .tool(greet)
        .prompt(brief)
        .prompt(brief_again)
        .resource(vault)
}

fn client(server: impl Into<Arc<Server>>) -> TestClient {
    TestClient::stateless(server, json!({"elicitation": {}}))
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn text(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {frame}"))
}

/// The round's state, checking the round asked `key`.
fn state_asking(frame: &Value, key: &str) -> String {
    let r = &frame["result"];
    assert_eq!(r["resultType"], "input_required", "{frame}");
    assert!(r["inputRequests"].get(key).is_some(), "{key} not asked: {frame}");
    r["requestState"].as_str().unwrap().to_string()
}

fn invalid_state(r: &Value) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Invalid or expired requestState");
    assert_eq!(r["error"]["data"], json!({"reason": "invalid_request_state"}));
}

async fn call(c: &mut TestClient, tool: &str, args: Value) -> Value {
    c.request("tools/call", json!({"name": tool, "arguments": args})).await
}

async fn retry(c: &mut TestClient, tool: &str, args: Value, responses: Value, state: &str) -> Value {
    c.request(
        "tools/call",
        json!({"name": tool, "arguments": args, "inputResponses": responses, "requestState": state}),
    )
    .await
}

#[tokio::test]
async fn replaying_the_last_rounds_state_and_answer_is_refused() {
    let mut c = client(server());
    let args = json!({"amount": 100});
    let state = state_asking(&call(&mut c, "transfer", args.clone()).await, "approve");
    let yes = json!({"approve": accept(json!({"ok": true}))});
    assert_eq!(
        text(&retry(&mut c, "transfer", args.clone(), yes.clone(), &state).await),
        "sent 100"
    );
    invalid_state(&retry(&mut c, "transfer", args, yes, &state).await);
    assert_eq!(ran("transfer 100"), 1, "the body ran once");
}

#[tokio::test]
async fn one_server_refuses_a_replay_on_another_connection() {
    let shared = Arc::new(server());
    let (mut a, mut b) = (client(shared.clone()), client(shared));
    let args = json!({"amount": 7});
    let state = state_asking(&call(&mut a, "transfer", args.clone()).await, "approve");
    let yes = json!({"approve": accept(json!({"ok": true}))});
    assert_eq!(
        text(&retry(&mut a, "transfer", args.clone(), yes.clone(), &state).await),
        "sent 7"
    );
    invalid_state(&retry(&mut b, "transfer", args, yes, &state).await);
    assert_eq!(ran("transfer 7"), 1);
}

/// A store that answers after a millisecond, as one across a network does: a check of the used
/// record and its write that were two steps, not one atomic `insert_new`, would let racers in
/// between.
struct Distant(MemoryStore);

type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

impl Distant {
    async fn later<T>(answer: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
        tokio::time::sleep(Duration::from_millis(1)).await;
        answer.await
    }
}

impl Store for Distant {
    fn insert_new<'a>(&'a self, key: &'a str, value: &'a [u8], ttl: Duration) -> Answer<'a, bool> {
        Box::pin(Self::later(self.0.insert_new(key, value, ttl)))
    }
    fn get<'a>(&'a self, key: &'a str) -> Answer<'a, Option<Vec<u8>>> {
        Box::pin(Self::later(self.0.get(key)))
    }
    fn replace<'a>(&'a self, key: &'a str, expected: &'a [u8], value: &'a [u8], ttl: Duration) -> Answer<'a, bool> {
        Box::pin(Self::later(self.0.replace(key, expected, value, ttl)))
    }
}

/// A real race: 32 retries with one state, each on a connection of its own, released together
/// by a barrier on a runtime of 8 worker threads, 8 times over, against the default memory store
/// and against one that answers a millisecond later. Each time exactly one runs (its body once)
/// and every other gets the refusal of a used state.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn of_many_retries_racing_with_one_state_exactly_one_runs() {
    const RACERS: usize = 32;
    let yes = json!({"approve": accept(json!({"ok": true}))});
    let servers = [
        ("memory", 7_000, Arc::new(server())),
        (
            "distant",
            8_000,
            Arc::new(server().store(Distant(MemoryStore::default()))),
        ),
    ];
    for (store, amounts, shared) in servers {
        for attempt in 0..8u32 {
            let amount = amounts + attempt;
            let args = json!({"amount": amount});
            let mut first = client(shared.clone());
            let state = state_asking(&call(&mut first, "transfer", args.clone()).await, "approve");
            let barrier = Arc::new(tokio::sync::Barrier::new(RACERS));
            let racers: Vec<_> = (0..RACERS)
                .map(|_| {
                    let mut c = client(shared.clone());
                    let (barrier, args, yes, state) = (barrier.clone(), args.clone(), yes.clone(), state.clone());
                    tokio::spawn(async move {
                        barrier.wait().await;
                        retry(&mut c, "transfer", args, yes, &state).await
                    })
                })
                .collect();
            let mut replies = Vec::with_capacity(RACERS);
            for r in racers {
                replies.push(r.await.unwrap());
            }
            let (done, refused): (Vec<&Value>, Vec<&Value>) = replies.iter().partition(|r| r.get("result").is_some());
            let what = format!("{store} store, attempt {attempt}");
            assert_eq!(done.len(), 1, "{what}: {} of {RACERS} retries ran", done.len());
            assert_eq!(text(done[0]), format!("sent {amount}"));
            refused.into_iter().for_each(invalid_state);
            assert_eq!(ran(&format!("transfer {amount}")), 1, "{what}: the body ran once");
        }
    }
}

/// The used state is recorded for the time any replica could still take it: its remaining life
/// plus the leeway, and the leeway once more for replicas whose clocks are behind; never longer
/// than `state_ttl` + 2 × `state_leeway` (here 300 s + 2 × 30 s).
#[tokio::test]
async fn a_used_state_is_recorded_for_its_remaining_life_and_the_leeway_twice_at_most() {
    let store = RecordingStore::default();
    let server = server()
        .store(store.clone())
        .state_ttl(Duration::from_secs(300))
        .state_leeway(Duration::from_secs(30));
    let mut c = client(server);
    let args = json!({"path": "/var/recorded"});
    let before = Instant::now();
    let state = state_asking(&call(&mut c, "wipe", args.clone()).await, "ok");
    let yes = json!({"ok": accept(json!({"ok": true}))});
    assert_eq!(
        text(&retry(&mut c, "wipe", args, yes, &state).await),
        "wiped /var/recorded"
    );
    let elapsed = before.elapsed();
    let writes = store.writes();
    assert_eq!(writes.len(), 1, "one used state: {writes:?}");
    let (key, ttl) = &writes[0];
    assert!(key.starts_with("mcp-resolve/used/"), "{key}");
    let bound = Duration::from_secs(360);
    assert!(*ttl <= bound, "{ttl:?} is past the bound {bound:?}");
    // Its remaining life is the TTL less the time since it was sealed (at most `elapsed`); the
    // margin of 1 s: the state's clock is the system clock, which may be stepped while
    // `Instant` is not.
    assert!(
        *ttl + elapsed + Duration::from_secs(1) >= bound,
        "{ttl:?}: forgotten while a replica whose clock is behind would still take it"
    );
}

#[tokio::test]
async fn a_decline_cannot_be_switched_to_an_accept() {
    let mut c = client(server());
    let args = json!({"amount": 5000});
    let state = state_asking(&call(&mut c, "transfer", args.clone()).await, "approve");
    let declined = retry(
        &mut c,
        "transfer",
        args.clone(),
        json!({"approve": {"action": "decline"}}),
        &state,
    )
    .await;
    assert_eq!(text(&declined), "declined");
    let switched = json!({"approve": accept(json!({"ok": true}))});
    invalid_state(&retry(&mut c, "transfer", args, switched, &state).await);
}

#[tokio::test]
async fn forking_from_an_earlier_rounds_state_is_refused_and_a_once_dependency_counts() {
    let mut c = client(server());
    let first = state_asking(&call(&mut c, "pay", json!({})).await, "ask_account");
    let alice = json!({"ask_account": accept(json!({"account": "alice"}))});
    let second = retry(&mut c, "pay", json!({}), alice, &first).await;
    let second = state_asking(&second, "ask_amount");
    // Fork: round 1's state again, with another account.
    let mallory = json!({"ask_account": accept(json!({"account": "mallory"}))});
    invalid_state(&retry(&mut c, "pay", json!({}), mallory, &first).await);
    // The legitimate chain goes on, once.
    let amount = json!({"ask_amount": accept(json!({"amount": 30}))});
    let done = retry(&mut c, "pay", json!({}), amount.clone(), &second).await;
    assert_eq!(text(&done), "paid 30 from alice");
    invalid_state(&retry(&mut c, "pay", json!({}), amount, &second).await);
    assert_eq!(ran("pay alice"), 1);
    assert_eq!(ran("pay mallory"), 0);
}

#[tokio::test]
async fn other_calls_states_stay_replayable_within_their_life() {
    let mut c = client(server());
    let state = state_asking(&call(&mut c, "greet", json!({})).await, "ask_name");
    let ada = json!({"ask_name": accept(json!({"account": "Ada"}))});
    for _ in 0..3 {
        assert_eq!(
            text(&retry(&mut c, "greet", json!({}), ada.clone(), &state).await),
            "hello Ada"
        );
    }
}

#[tokio::test]
async fn a_destructive_tool_with_a_confirmation_is_single_use_and_replayable_opts_out() {
    let mut c = client(server());
    let args = json!({"path": "/data"});
    let yes = json!({"ok": accept(json!({"ok": true}))});
    let state = state_asking(&call(&mut c, "wipe", args.clone()).await, "ok");
    assert_eq!(
        text(&retry(&mut c, "wipe", args.clone(), yes.clone(), &state).await),
        "wiped /data"
    );
    invalid_state(&retry(&mut c, "wipe", args.clone(), yes.clone(), &state).await);
    assert_eq!(ran("wipe /data"), 1);

    let state = state_asking(&call(&mut c, "rebuild", args.clone()).await, "ok");
    for _ in 0..2 {
        assert_eq!(
            text(&retry(&mut c, "rebuild", args.clone(), yes.clone(), &state).await),
            "rebuilt /data"
        );
    }

    // `replayable` does not outweigh a `once` resolver.
    let args = json!({"amount": 1});
    let state = state_asking(&call(&mut c, "refund", args.clone()).await, "approve");
    let yes = json!({"approve": accept(json!({"ok": true}))});
    assert_eq!(
        text(&retry(&mut c, "refund", args.clone(), yes.clone(), &state).await),
        "refund 1: true"
    );
    invalid_state(&retry(&mut c, "refund", args, yes, &state).await);
}

#[tokio::test]
async fn prompts_and_resources_that_reach_a_once_resolver_are_single_use() {
    let mut c = client(server());
    let get = json!({"name": "brief", "arguments": {"topic": "risk"}});
    let r = c.request("prompts/get", get.clone()).await;
    let state = state_asking(&r, "ask_account");
    let mut retry = get.clone();
    retry["inputResponses"] = json!({"ask_account": accept(json!({"account": "bo"}))});
    retry["requestState"] = json!(state);
    let done = c.request("prompts/get", retry.clone()).await;
    assert_eq!(
        done["result"]["messages"][0]["content"]["text"], "Brief bo on risk.",
        "{done}"
    );
    invalid_state(&c.request("prompts/get", retry).await);

    // A prompt without a `once` resolver replays as before.
    let get = json!({"name": "brief_again", "arguments": {"topic": "risk"}});
    let state = state_asking(&c.request("prompts/get", get.clone()).await, "ask_name");
    let mut retry = get;
    retry["inputResponses"] = json!({"ask_name": accept(json!({"account": "bo"}))});
    retry["requestState"] = json!(state);
    for _ in 0..2 {
        let done = c.request("prompts/get", retry.clone()).await;
        assert_eq!(
            done["result"]["messages"][0]["content"]["text"], "Brief bo on risk again.",
            "{done}"
        );
    }

    let read = json!({"uri": "test://vault/9"});
    let state = state_asking(&c.request("resources/read", read.clone()).await, "ask_account");
    let mut retry = read;
    retry["inputResponses"] = json!({"ask_account": accept(json!({"account": "cy"}))});
    retry["requestState"] = json!(state);
    let done = c.request("resources/read", retry.clone()).await;
    assert_eq!(done["result"]["contents"][0]["text"], "vault 9 opened for cy", "{done}");
    invalid_state(&c.request("resources/read", retry).await);
}

#[tokio::test]
async fn replicas_sharing_a_store_refuse_what_another_consumed() {
    let used = Arc::new(MemoryStore::default());
    let mut a = client(server().store(used.clone()));
    let mut b = client(server().store(used));
    let args = json!({"path": "/srv"});
    let yes = json!({"ok": accept(json!({"ok": true}))});
    let state = state_asking(&call(&mut a, "wipe", args.clone()).await, "ok");
    assert_eq!(
        text(&retry(&mut b, "wipe", args.clone(), yes.clone(), &state).await),
        "wiped /srv"
    );
    invalid_state(&retry(&mut a, "wipe", args.clone(), yes.clone(), &state).await);
    // A replica with a store of its own cannot know: replicas must share one.
    let mut alone = client(server());
    assert_eq!(text(&retry(&mut alone, "wipe", args, yes, &state).await), "wiped /srv");
}

#[tokio::test]
async fn a_failing_store_fails_closed_and_only_single_use_calls_need_it() {
    let mut c = client(server().store(FailingStore));
    let args = json!({"path": "/etc"});
    // The first round has no state to consume: it asks.
    let state = state_asking(&call(&mut c, "wipe", args.clone()).await, "ok");
    let r = retry(&mut c, "wipe", args, json!({"ok": accept(json!({"ok": true}))}), &state).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("single-use") && message.contains("nothing ran"),
        "{message}"
    );
    assert_eq!(ran("wipe /etc"), 0, "nothing ran");
    // A replayable call never asks the store.
    let state = state_asking(&call(&mut c, "greet", json!({})).await, "ask_name");
    let ada = json!({"ask_name": accept(json!({"account": "Ada"}))});
    assert_eq!(text(&retry(&mut c, "greet", json!({}), ada, &state).await), "hello Ada");
}

#[tokio::test]
async fn the_handshake_era_has_no_state_and_asks_single_use_questions_as_before() {
    let mut c = TestClient::handshake(server(), ProtocolVersion::V2025_11_25, json!({"elicitation": {}})).await;
    let id = c
        .start("tools/call", json!({"name": "wipe", "arguments": {"path": "/tmp"}}))
        .await;
    let req = c.recv().await;
    assert_eq!(req["method"], "elicitation/create", "{req}");
    c.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": accept(json!({"ok": true}))}))
        .await;
    let done = c.response_to(&json!(id)).await;
    assert_eq!(text(&done), "wiped /tmp");
}

#[tokio::test]
async fn a_full_memory_store_refuses_single_use_calls_and_nothing_else() {
    let mut c = client(server().store(MemoryStore::with_capacity(1)));
    let yes = json!({"ok": accept(json!({"ok": true}))});
    for (i, path) in ["/a", "/b"].into_iter().enumerate() {
        let args = json!({"path": path});
        let state = state_asking(&call(&mut c, "wipe", args.clone()).await, "ok");
        let r = retry(&mut c, "wipe", args, yes.clone(), &state).await;
        if i == 0 {
            assert_eq!(text(&r), "wiped /a");
        } else {
            // The one entry holds /a's state for its life: fail closed, nothing runs.
            assert_eq!(r["error"]["code"], -32603, "{r}");
        }
    }
    assert_eq!((ran("wipe /a"), ran("wipe /b")), (1, 0));
    let state = state_asking(&call(&mut c, "greet", json!({})).await, "ask_name");
    let ada = json!({"ask_name": accept(json!({"account": "Ada"}))});
    assert_eq!(text(&retry(&mut c, "greet", json!({}), ada, &state).await), "hello Ada");
}
