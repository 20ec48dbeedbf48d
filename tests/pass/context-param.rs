use mcp_resolve::prelude::*;
use mcp_resolve::protocol::{ClientCapabilities, Era, ProtocolVersion};

/// Which era is this?
#[tool]
async fn era(cx: Context, verbose: bool) -> String {
    match (cx.era(), verbose) {
        (Era::Stateless, true) => "stateless (2026-07-28)".to_string(),
        (Era::Stateless, false) => "stateless".to_string(),
        _ => "handshake".to_string(),
    }
}

fn main() {
    let server = Server::new("cx").tool(era);
    let schema = &server.tools()[0].input_schema;
    // The context is not an argument: only `verbose` is in the schema.
    assert_eq!(schema["required"], serde_json::json!(["verbose"]));
    assert_eq!(schema["properties"].as_object().unwrap().len(), 1);

    let cx = Context::detached(ProtocolVersion::V2026_07_28, ClientCapabilities::default());
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(rt.block_on(era(cx, false)), "stateless");
}
