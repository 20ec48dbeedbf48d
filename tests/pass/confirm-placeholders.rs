use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;

#[tool]
async fn move_note(from: String, to: String, #[confirm("Move {from} to {to}? {{keeps history}}")] ok: bool) -> String {
    format!("{from} → {to}: {ok}")
}

fn main() {
    let server = Server::new("confirm").tool(move_note);
    let schema = &server.tools()[0].input_schema;
    // `ok` is asked, not an argument.
    assert_eq!(schema["required"], serde_json::json!(["from", "to"]));
    assert!(schema["properties"].get("ok").is_none());

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = TestClient::stateless(server, serde_json::json!({"elicitation": {"form": {}}}));
        let r = c
            .call_tool("move_note", serde_json::json!({"from": "a.md", "to": "b.md"}))
            .await;
        // Both placeholders are filled; `{{…}}` are literal braces.
        assert_eq!(
            r["result"]["inputRequests"]["ok"]["params"]["message"],
            "Move a.md to b.md? {keeps history}"
        );
    });
}
