//! Every return type and parameter kind `#[resource]` takes, registered on one server.

use mcp_resolve::prelude::*;

/// Text.
#[resource(uri = "test://text", mime_type = "text/plain", title = "Text", name = "text")]
async fn text_resource() -> String {
    "Hello".into()
}

/// Bytes.
#[resource(uri = "test://bytes", scopes = ["notes:read"])]
async fn bytes(cx: Context) -> Blob {
    let _ = cx.protocol_version();
    Blob(vec![1, 2, 3])
}

/// Several contents, fallibly, from a template.
#[resource(template = "test://items/{id}/{part}", mime_type = "application/json")]
async fn item(part: String, id: String) -> Result<Vec<ResourceContents>, std::io::Error> {
    Ok(vec![ResourceContents {
        uri: format!("test://items/{id}/{part}"),
        mime_type: None,
        text: Some(String::new()),
        blob: None,
    }])
}

fn main() {
    let server = Server::new("t").resource(text_resource).resource(bytes).resource(item);
    assert_eq!(server.resources().len(), 3);
    assert_eq!(server.resources()[0].name, "text");
}
