use mcp_resolve::prelude::*;

/// Delete a notes folder.
///
/// Asks nothing; the folder is gone.
#[tool]
async fn delete_folder(
    /// The folder to delete.
    path: String,
    /// Also delete non-empty folders.
    #[arg(rename = "force")]
    recursive: bool,
) -> String {
    format!("{path} {recursive}")
}

fn main() {
    let server = Server::new("docs").tool(delete_folder);
    let def = &server.tools()[0];
    assert_eq!(def.name, "delete_folder");
    assert_eq!(
        def.description.as_deref(),
        Some("Delete a notes folder.\n\nAsks nothing; the folder is gone.")
    );
    let props = &def.input_schema["properties"];
    assert_eq!(props["path"]["description"], "The folder to delete.");
    assert_eq!(props["force"]["description"], "Also delete non-empty folders.");
    assert_eq!(def.input_schema["required"], serde_json::json!(["path", "force"]));

    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(rt.block_on(delete_folder("/tmp/x".to_string(), true)), "/tmp/x true");
}
