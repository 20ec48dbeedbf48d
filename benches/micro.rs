//! Micro-benchmarks of the hot paths under a tool call, without transports:
//!
//! - `state/*`: sealing and unsealing a `requestState` of about 1 KiB in the current token format
//!   (`v2.`: a key per token from its salt, AES-256-GCM, bound to the request);
//! - `form/validate_accept`: turning accepted form content into the typed struct, with the
//!   server-side checks;
//! - `dispatch/tool_call/*`: one call through a `#[tool]`'s generated `Tool::call`;
//! - `mrtr/*`: one 2026-07-28 multi-round-trip request from raw bytes to response bytes: the
//!   round that asks (`InputRequiredResult` with a sealed state) and the retry that answers.
//!
//! ```text
//! cargo bench --bench micro --features bench
//! cargo bench --bench micro -- --warm-up-time 1 --measurement-time 2   # quicker
//! cargo bench --bench micro -- mrtr                                    # one group
//! ```
//!
//! Whole servers under load are measured separately, with `examples/bench_server.rs`. The doors
//! into crate-private code come with the non-default `bench` feature.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_resolve::bench::{FrameHandler, StateSealer};
use mcp_resolve::form::FormSchema as _;
use mcp_resolve::prelude::*;
use mcp_resolve::{
    protocol::{ClientCapabilities, ProtocolVersion},
    seal::StateKeys,
    tool::{IntoTool, Tool, ToolCall},
};
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::time::Duration;

// ---------------------------------------------------------------- fixtures

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().build().unwrap()
}

fn keys() -> StateKeys {
    StateKeys::new(b"micro-benchmark secret, 32 bytes or more").unwrap()
}

/// The plan of [`Signup`]: a single-select choice.
#[derive(Clone, Copy, Debug, FormSchema)]
enum Plan {
    #[form(title = "Free")]
    Free,
    #[form(title = "Pro")]
    Pro,
    #[form(title = "Team")]
    Team,
}

/// A signup form with the usual field shapes: an email, a bounded integer, a boolean, a choice.
#[derive(Debug, FormSchema)]
#[form(title = "Sign up")]
struct Signup {
    #[form(title = "Email", format = "email")]
    email: String,
    #[form(title = "Age", minimum = 13, maximum = 120)]
    age: u32,
    #[form(title = "Subscribe to the newsletter", default = false)]
    newsletter: bool,
    #[form(title = "Plan", default = "free")]
    plan: Plan,
}

/// The one-field form of the MRTR benchmarks.
#[derive(Clone, Debug, FormSchema)]
struct UserInfo {
    #[form(min_length = 1, max_length = 64)]
    name: String,
}

#[resolver]
async fn who() -> Elicit<UserInfo> {
    Elicit::form("What is your name?")
}

/// Greets the user, whose name is asked.
#[tool]
async fn greet(greeting: String, #[resolve(who)] user: ElicitationResult<UserInfo>) -> String {
    match user {
        ElicitationResult::Accepted(u) => format!("{greeting} {}", u.name),
        ElicitationResult::Declined => "declined".into(),
        ElicitationResult::Cancelled => "cancelled".into(),
    }
}

/// Echo the text back.
#[tool(read_only = true)]
async fn echo(text: String) -> String {
    text
}

/// Add two integers.
#[tool(read_only = true)]
async fn add(a: i64, b: i64) -> Json<i64> {
    Json(a.saturating_add(b))
}

// ---------------------------------------------------------------- state

/// The arguments of the call a state is bound to.
fn state_arguments() -> Map<String, Value> {
    object(json!({
        "path": "/srv/projects/alpha/notes/2026",
        "recursive": true,
        "tags": ["archive", "quarterly", "finance"],
        "limit": 250,
    }))
}

/// A `requestState` as the engine builds it today (`r`, `outcomes`, `asked`: its `RoundState`)
/// in round 3 of a call with six resolvers: five answers recorded (action, content, question
/// digest), one question asked. Question digests are full SHA-256 in base64url (43 characters),
/// as `seal::question_digest` writes them. Its JSON is about 1 KiB. `bench_state` checks that
/// the token is the current format (`v2.`) and opens as the engine's round state, so this
/// benchmark cannot drift back to a shape or format the engine no longer writes.
fn state_payload() -> Value {
    json!({
        "r": 3,
        "outcomes": {
            "confirm_delete": {
                "action": "accept",
                "content": { "ok": true },
                "q": "cxY_UVMKZPVXth95sKJonGxUWai-PSIPg0DwiNAu100",
            },
            "owner": {
                "action": "accept",
                "content": {
                    "email": "ada.lovelace@example.com",
                    "name": "Ada Lovelace",
                    "team": "finance-reporting",
                    "phone": "+44 20 7946 0958",
                    "notify": true,
                },
                "q": "TBApaX7jWHFdOhSirdgXxLAWUUQN6Ag3H3gWWskNxYE",
            },
            "retention": {
                "action": "accept",
                "content": {
                    "days": 365,
                    "policy": "archive-then-delete",
                    "legal_hold": false,
                    "reason": "Quarterly clean-up of finance notes older than one year, agreed with the records team in the June review.",
                },
                "q": "jiIBJEAdpuGgKIqGtI6zFtJUzSqbk5nPyaB6L7wCU-g",
            },
            "reviewer": {
                "action": "accept",
                "content": {
                    "email": "grace.hopper@example.com",
                    "role": "records-officer",
                    "comment": "Approved for the archive; keep the audit exports and the signed retention memo.",
                },
                "q": "LXCZmuGAXkvO-bSrOkuCf1eMYXQPMAdvzcNceuf1hrM",
            },
            "window": {
                "action": "accept",
                "content": {
                    "start": "2026-08-01T02:00:00Z",
                    "end": "2026-08-01T04:00:00Z",
                    "timezone": "Europe/London",
                    "notify_on_call": true,
                },
                "q": "RP97AsgNOLJt1qox2UcK7YGzLhAzGjyZT7GplF_YR7o",
            },
        },
        "asked": {
            "schedule": "X3IAXoHE7L1ao1iOgOPa8N8GjODPVjiURQigFl_qYJo",
        },
    })
}

fn bench_state(c: &mut Criterion) {
    let sealer = StateSealer::new(keys(), Duration::from_secs(3600));
    let arguments = state_arguments();
    let state = state_payload();
    let size = serde_json::to_vec(&state).unwrap().len();
    assert!(
        (900..=1200).contains(&size),
        "state payload is {size} bytes, not about 1 KiB"
    );
    // The engine keeps answers as the JSON text they came in: the state is sealed from text.
    let state_text = serde_json::value::to_raw_value(&state).unwrap();
    let token = sealer.seal(&state_text, "delete_folder", &arguments, "notes").unwrap();
    assert!(token.starts_with("v2."), "not the current token format: {token:.8}…");
    assert!(
        sealer.opens_round_state(&token, "delete_folder", &arguments, "notes"),
        "the payload is not the engine's round state"
    );
    assert_eq!(
        sealer.unseal(&token, "delete_folder", &arguments, "notes").as_ref(),
        Some(&state)
    );

    let mut g = c.benchmark_group("state");
    g.bench_function("seal", |b| {
        b.iter(|| {
            sealer.seal(
                black_box(&state_text),
                black_box("delete_folder"),
                black_box(&arguments),
                black_box("notes"),
            )
        })
    });
    // `unseal`: authenticate, decrypt, check expiry and binding, and hand back the state's JSON
    // text; `unseal_value` also builds a `serde_json::Value` from it (the engine reads the state
    // into its own types instead, inside `mrtr/answer_round`).
    g.bench_function("unseal", |b| {
        b.iter(|| {
            sealer.unseal_raw(
                black_box(&token),
                black_box("delete_folder"),
                black_box(&arguments),
                black_box("notes"),
            )
        })
    });
    g.bench_function("unseal_value", |b| {
        b.iter(|| {
            sealer.unseal(
                black_box(&token),
                black_box("delete_folder"),
                black_box(&arguments),
                black_box("notes"),
            )
        })
    });
    g.bench_function("seal_unseal_1k", |b| {
        b.iter(|| {
            let token = sealer
                .seal(black_box(&state_text), "delete_folder", black_box(&arguments), "notes")
                .unwrap();
            sealer.unseal_raw(black_box(&token), "delete_folder", black_box(&arguments), "notes")
        })
    });
    g.bench_function("seal_unseal_value_1k", |b| {
        b.iter(|| {
            let token = sealer
                .seal(black_box(&state_text), "delete_folder", black_box(&arguments), "notes")
                .unwrap();
            sealer.unseal(black_box(&token), "delete_folder", black_box(&arguments), "notes")
        })
    });
    g.finish();
}

// ---------------------------------------------------------------- form

fn bench_form(c: &mut Criterion) {
    let content = object(json!({
        "email": "ada.lovelace@example.com",
        "age": 36,
        "newsletter": true,
        "plan": "pro",
    }));
    let parsed = Signup::from_content(&content).unwrap();
    assert!(matches!(parsed.plan, Plan::Pro) && parsed.age == 36 && parsed.newsletter);
    assert_eq!(parsed.email, "ada.lovelace@example.com");
    c.bench_function("form/validate_accept", |b| {
        b.iter(|| Signup::from_content(black_box(&content)))
    });
}

// ---------------------------------------------------------------- dispatch

fn bench_dispatch(c: &mut Criterion) {
    let rt = runtime();
    let version = ProtocolVersion::V2026_07_28;
    let capabilities = ClientCapabilities::default();
    let cases: [(&str, Box<dyn Tool>, Value); 2] = [
        ("echo", Box::new(echo.into_tool()), json!({ "text": "hello, world" })),
        ("add", Box::new(add.into_tool()), json!({ "a": 40, "b": 2 })),
    ];
    let mut g = c.benchmark_group("dispatch/tool_call");
    for (name, tool, arguments) in cases {
        let arguments = object(arguments);
        let check = rt.block_on(tool.call(ToolCall::new(
            arguments.clone(),
            Context::detached(version, capabilities.clone()),
        )));
        assert!(!check.is_error, "{name}: {check:?}");
        // The arguments map is moved into the call, as the server moves the parsed one: cloning
        // it is setup, not measured. Building the context and the call is measured.
        g.bench_function(name, |b| {
            b.to_async(&rt).iter_batched(
                || arguments.clone(),
                |arguments| {
                    let call = ToolCall::new(arguments, Context::detached(version, capabilities.clone()));
                    tool.call(call)
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

// ---------------------------------------------------------------- MRTR

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

fn bench_mrtr(c: &mut Criterion) {
    let rt = runtime();
    let server = FrameHandler::new(
        Server::new("bench")
            .version("1.0.0")
            .tool(greet)
            .state_keys(keys())
            .state_ttl(Duration::from_secs(3600))
            // `mrtr/round` asks on every iteration: past the default question limit (100 a
            // minute) it would time the refusal instead of the round.
            .question_limit(u32::MAX, Duration::from_secs(1)),
    );
    let first = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"greet","arguments":{{"greeting":"hello"}},{META}}}}}"#
    )
    .into_bytes();

    // One real round gives the retry its sealed state.
    let reply = rt.block_on(server.handle(&first)).unwrap();
    let reply: Value = serde_json::from_slice(&reply).unwrap();
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply}");
    assert!(reply["result"]["inputRequests"]["who"].is_object(), "{reply}");
    let state = reply["result"]["requestState"].as_str().unwrap();
    let retry = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"greet","arguments":{{"greeting":"hello"}},"inputResponses":{{"who":{{"action":"accept","content":{{"name":"Ada"}}}}}},"requestState":"{state}",{META}}}}}"#
    )
    .into_bytes();
    let done = rt.block_on(server.handle(&retry)).unwrap();
    let done: Value = serde_json::from_slice(&done).unwrap();
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "hello Ada", "{done}");

    let mut g = c.benchmark_group("mrtr");
    g.bench_function("round", |b| b.to_async(&rt).iter(|| server.handle(black_box(&first))));
    g.bench_function("answer_round", |b| {
        b.to_async(&rt).iter(|| server.handle(black_box(&retry)))
    });
    g.finish();
    // What was timed is still the round, not a refusal.
    let again: Value = serde_json::from_slice(&rt.block_on(server.handle(&first)).unwrap()).unwrap();
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
}

criterion_group!(benches, bench_state, bench_form, bench_dispatch, bench_mrtr);
criterion_main!(benches);
