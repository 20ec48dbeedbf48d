use mcp_resolve::prelude::*;

/// Search notes.
#[tool]
async fn search(query: String, limit: Option<u32>, tag: Option<String>) -> String {
    format!("{query} {limit:?} {tag:?}")
}

fn main() {
    let server = Server::new("opt").tool(search);
    let schema = &server.tools()[0].input_schema;
    assert_eq!(schema["required"], serde_json::json!(["query"]));
    let props = schema["properties"].as_object().unwrap();
    assert_eq!(props.keys().collect::<Vec<_>>(), ["limit", "query", "tag"]);

    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(rt.block_on(search("x".to_string(), Some(3), None)), "x Some(3) None");
}
