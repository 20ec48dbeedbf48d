use mcp_resolve::prelude::*;

/// Show a picture and its caption.
#[tool]
async fn picture(caption: String) -> Vec<Content> {
    vec![Content::image("aGk=", "image/png"), Content::text(caption)]
}

fn main() {
    let server = Server::new("content").tool(picture);
    assert!(server.tools()[0].output_schema.is_none());
    assert_eq!(
        server.tools()[0].input_schema["properties"]["caption"]["type"],
        "string"
    );

    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let items = rt.block_on(picture("hi".to_string()));
    assert_eq!(items.len(), 2);
    assert_eq!(items[1], Content::text("hi"));
}
