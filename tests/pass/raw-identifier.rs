use mcp_resolve::prelude::*;

/// Create a note of a kind.
#[tool]
async fn r#create(r#type: String, r#ref: Option<String>) -> String {
    format!("{type} {ref:?}", type = r#type, ref = r#ref)
}

fn main() {
    let server = Server::new("raw").tool(r#create);
    let def = &server.tools()[0];
    // The `r#` prefix is not part of the wire names.
    assert_eq!(def.name, "create");
    assert_eq!(def.input_schema["required"], serde_json::json!(["type"]));
    assert!(def.input_schema["properties"].get("ref").is_some());

    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(rt.block_on(r#create("todo".to_string(), None)), "todo None");
}
