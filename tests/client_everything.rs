//! The Rust client against the reference server `@modelcontextprotocol/server-everything`
//! (pinned by `scripts/setup-node.sh`, run with its Node 22) over stdio: a handshake-only server,
//! so `EraChoice::Auto` falls back to `initialize`; its elicitation tools (form with every field
//! kind, URL mode and -32042), progress, logs, prompts, resources, templates, completion and
//! resource links.

#![cfg(all(unix, feature = "client"))]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

mod support;

use mcp_resolve::client::{
    Answer, CallOptions, Client, ElicitationRequest, Notification, Scripted, Stderr, content_text,
};
use mcp_resolve::protocol::{LogLevel, ProtocolVersion};
use serde_json::json;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{MANIFEST_DIR, node};
use tokio::process::Command;

fn everything() -> Command {
    let _ = node();
    let entry = PathBuf::from(MANIFEST_DIR)
        .join("target/interop/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let mut c = Command::new(node());
    c.arg(entry).arg("stdio");
    c
}

/// Connects with `handler`, and waits until the tools that need the declared capabilities
/// are listed (the server adds them after `notifications/initialized`).
async fn connect(handler: Scripted, notes: Arc<Mutex<Vec<Notification>>>) -> Client {
    let client = Client::builder()
        .elicitation(handler)
        .url_wait(Duration::from_millis(300))
        .stderr(Stderr::Capture)
        .on_notification(move |n| notes.lock().unwrap().push(n))
        .stdio(everything())
        .await
        .unwrap();
    for _ in 0..100 {
        let tools = client.list_all_tools().await.unwrap();
        if tools.iter().any(|t| t.name == "trigger-url-elicitation") {
            return client;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the elicitation tools never appeared\n{}", client.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_only_server_is_found_out_and_every_kind_of_call_works() {
    let notes = Arc::new(Mutex::new(Vec::new()));
    let answers = Scripted::new().otherwise(Answer::json(json!({"name": "Ada", "check": true})));
    let client = connect(answers.clone(), Arc::clone(&notes)).await;
    assert_eq!(
        client.protocol_version(),
        ProtocolVersion::V2025_11_25,
        "discover refused: initialize"
    );
    assert_eq!(client.server_info().name, "mcp-servers/everything");
    assert!(client.instructions().is_some());

    let r = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(content_text(&r.content), "Echo: hi");

    // A form with every field kind: the client adds the schema's defaults to what was given.
    let r = client
        .call_tool("trigger-elicitation-request", json!({}))
        .await
        .unwrap();
    let text = content_text(&r.content);
    assert!(text.contains("User provided the requested information"), "{text}");
    assert!(
        text.contains("It was a dark and stormy night."),
        "the default of `firstLine`: {text}"
    );
    let asked: Vec<ElicitationRequest> = answers.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].server.name, "mcp-servers/everything");
    assert!(asked[0].key.is_none(), "another server names no key");
    assert_eq!(asked[0].schema().unwrap()["properties"].as_object().unwrap().len(), 13);

    // Progress reports reach the call's callback.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let options = CallOptions::default().on_progress(move |p| log.lock().unwrap().push((p.progress, p.total)));
    client
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
            options,
        )
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );

    // Prompts, resources, templates, completion, resource links.
    let prompts = client.list_all_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "args-prompt"));
    let p = client.get_prompt("args-prompt", &[("city", "Paris")]).await.unwrap();
    assert_eq!(
        serde_json::to_value(&p.messages[0].content).unwrap()["text"],
        "What's weather in Paris?"
    );
    assert_eq!(client.list_all_resources().await.unwrap().len(), 7);
    let templates = client.list_resource_templates(None).await.unwrap();
    assert_eq!(templates.items.len(), 2);
    let read = client.read_resource("demo://resource/dynamic/text/3").await.unwrap();
    assert!(read.contents[0].text.as_deref().unwrap().starts_with("Resource 3:"));
    let c = client
        .complete(
            json!({"type": "ref/prompt", "name": "completable-prompt"}),
            "department",
            "S",
        )
        .await
        .unwrap();
    assert_eq!(c.values, ["Sales", "Support"]);
    let r = client
        .call_tool("get-resource-links", json!({"count": 2}))
        .await
        .unwrap();
    assert!(
        content_text(&r.content).contains("[resource link demo://resource/dynamic/"),
        "{r:?}"
    );

    // Logs: asked for, then delivered as notifications.
    client.set_log_level(LogLevel::Debug).await.unwrap();
    client.call_tool("toggle-simulated-logging", json!({})).await.unwrap();
    let mut logged = false;
    for _ in 0..100 {
        logged = notes
            .lock()
            .unwrap()
            .iter()
            .any(|n| n.method == "notifications/message");
        if logged {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(logged, "a log message arrived");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_cancel_and_url_mode_with_its_32042_on_the_reference_server() {
    for (answer, expected) in [
        (Answer::Decline, "User declined to provide"),
        (Answer::Cancel, "User cancelled the elicitation dialog"),
    ] {
        let client = connect(Scripted::new().otherwise(answer), Arc::default()).await;
        let r = client
            .call_tool("trigger-elicitation-request", json!({}))
            .await
            .unwrap();
        assert!(
            content_text(&r.content).contains(expected),
            "{}",
            content_text(&r.content)
        );
        client.close().await;
    }
    // URL mode: consent opens the flow; -32042 first, then the retry asks on the back-channel.
    let answers = Scripted::new().otherwise(Answer::consent());
    let client = connect(answers.clone(), Arc::default()).await;
    let r = client
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": "https://example.com/auth", "message": "Sign in"}),
        )
        .await
        .unwrap();
    assert!(content_text(&r.content).contains("User completed the URL elicitation flow"));
    assert_eq!(answers.asked()[0].url(), Some("https://example.com/auth"));
    answers.clear();
    let r = client
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": "https://example.com/auth", "errorPath": true}),
        )
        .await
        .unwrap();
    assert!(!r.is_error, "{}", content_text(&r.content));
    let urls: Vec<String> = answers.asked().iter().map(|q| q.url().unwrap().to_owned()).collect();
    assert_eq!(
        urls,
        ["https://modelcontextprotocol.io", "https://example.com/auth"],
        "the page the -32042 names, then the flow the retry opens"
    );
    client.close().await;
}
