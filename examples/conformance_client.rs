//! The client the official conformance suite drives (`conformance client --command …`): the
//! runner starts it with the mock server's URL as its last argument and names the scenario in
//! `MCP_CONFORMANCE_SCENARIO` and the protocol version in `MCP_CONFORMANCE_PROTOCOL_VERSION`
//! (2026-07-28: the stateless era; anything older: the handshake). Each scenario is the calls a
//! host would make; everything on the wire is `mcp_resolve::client`'s.
//!
//! ```text
//! scripts/conformance-client.sh                # every scenario the suite scores for a client
//! MCP_CONFORMANCE_SCENARIO=tools_call cargo run --example conformance_client --features client -- http://127.0.0.1:8000/mcp
//! ```

use mcp_resolve::client::{Answer, Client, ClientError, ElicitationRequest, EraChoice};
use serde_json::{Value, json};

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance_client URL  (with MCP_CONFORMANCE_SCENARIO set)");
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&url, &scenario).await {
        Ok(()) => eprintln!("conformance_client: {scenario}: done"),
        Err(e) => {
            eprintln!("conformance_client: {scenario}: {e}");
            std::process::exit(1);
        }
    }
}

/// Accepts every question; the client fills in the schema's defaults (SEP-1034).
async fn accept(q: ElicitationRequest) -> Answer {
    eprintln!("conformance_client: {} asks: {}", q.server.name, q.message);
    match q.url() {
        Some(_) => Answer::consent(),
        None => Answer::Accept(None),
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), ClientError> {
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let era = if version.as_str() >= "2026-07-28" {
        EraChoice::Stateless
    } else {
        EraChoice::Handshake
    };
    let client = Client::builder()
        .client_info("mcp-resolve-conformance-client", env!("CARGO_PKG_VERSION"))
        .era(era)
        .elicitation(accept)
        .http(url)
        .await?;
    let tools = client.list_all_tools().await?;
    let has = |name: &str| tools.iter().any(|t| t.name == name);
    match scenario {
        "tools_call" => {
            client.call_tool("add_numbers", json!({"a": 2, "b": 3})).await?;
        }
        "elicitation-sep1034-client-defaults" => {
            client.call_tool("test_client_elicitation_defaults", json!({})).await?;
        }
        "sse-retry" => {
            client.call_tool("test_reconnection", json!({})).await?;
        }
        "sep-2322-client-request-state" => {
            for name in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                client.call_tool(name, json!({})).await?;
            }
        }
        "http-standard-headers" => {
            for t in &tools {
                client.call_tool(&t.name, json!({})).await?;
            }
            if let Some(r) = client.list_all_resources().await?.first() {
                client.read_resource(&r.uri).await?;
            }
            if let Some(p) = client.list_all_prompts().await?.first() {
                client.get_prompt(&p.name, &[]).await?;
            }
        }
        "http-custom-headers" => {
            let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
                .ok()
                .and_then(|c| serde_json::from_str(&c).ok())
                .unwrap_or_default();
            for call in context["toolCalls"].as_array().into_iter().flatten() {
                let name = call["name"].as_str().unwrap_or_default();
                client.call_tool(name, call["arguments"].clone()).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // The list keeps only tools whose `x-mcp-header`s are valid: call those.
            for t in &tools {
                client.call_tool(&t.name, json!({"region": "us-west1"})).await?;
            }
        }
        "json-schema-2020-12-preservation" => {
            if let Some(focal) = tools.iter().find(|t| t.name == "json_schema_2020_12_tool")
                && has("json_schema_echo")
            {
                let schema = Value::Object(focal.input_schema.clone());
                client
                    .call_tool("json_schema_echo", json!({ "schema": schema }))
                    .await?;
            }
        }
        // `initialize`, `request-metadata`, `json-schema-ref-no-deref`: connecting and listing
        // the tools is the whole scenario.
        _ => {}
    }
    client.close().await;
    Ok(())
}
