use mcp_resolve::prelude::*;
use mcp_resolve::testing::TestClient;

#[derive(Clone, Debug, FormSchema)]
struct Name {
    name: String,
}

#[resolver(key = "user_name")]
async fn ask_name() -> Elicit<Name> {
    Elicit::form("What is your name?")
}

#[tool]
async fn greet(#[resolve(ask_name)] who: Name) -> String {
    format!("hello {}", who.name)
}

fn main() {
    let server = Server::new("key").tool(greet);
    // No arguments at all: the name is asked.
    let schema = &server.tools()[0].input_schema;
    let properties = schema.get("properties").and_then(|p| p.as_object());
    assert!(properties.is_none_or(|p| p.is_empty()), "{schema:?}");

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = TestClient::stateless(server, serde_json::json!({"elicitation": {"form": {}}}));
        let r = c.call_tool("greet", serde_json::json!({})).await;
        // The question is keyed by `key`, not by the function's name.
        let requests = r["result"]["inputRequests"].as_object().unwrap();
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["user_name"]);
    });
}
