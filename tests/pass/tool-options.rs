use mcp_resolve::prelude::*;

/// List the folders.
#[tool(name = "notes.list", title = "List folders", read_only = true, scopes = ["notes:read"])]
async fn list_folders() -> &'static str {
    "/tmp/notes"
}

fn main() {
    let server = Server::new("opts").tool(list_folders);
    let def = &server.tools()[0];
    assert_eq!(def.name, "notes.list");
    assert_eq!(def.title.as_deref(), Some("List folders"));
    assert_eq!(def.annotations.read_only_hint, Some(true));
    assert_eq!(def.annotations.destructive_hint, None);
    assert_eq!(def.scopes, ["notes:read"]);
    // No arguments: a closed, empty object.
    assert_eq!(
        serde_json::Value::Object(def.input_schema.clone()),
        serde_json::json!({"type": "object", "additionalProperties": false})
    );

    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(rt.block_on(list_folders()), "/tmp/notes");
}
