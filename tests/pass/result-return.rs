use mcp_resolve::prelude::*;
use mcp_resolve::{protocol::{ClientCapabilities, ProtocolVersion}, tool::{IntoTool, Tool, ToolCall}};

/// Read a file.
#[tool]
async fn read(path: String) -> Result<String, std::io::Error> {
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("no such file: {path}"),
    ))
}

fn main() {
    let server = Server::new("result").tool(read);
    let def = &server.tools()[0];
    assert!(def.output_schema.is_none());
    assert_eq!(def.input_schema["required"], serde_json::json!(["path"]));

    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let err = rt.block_on(read("/x".to_string())).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);

    // Through the `Tool` impl, the error becomes an `isError` result.
    let cx = Context::detached(ProtocolVersion::V2026_07_28, ClientCapabilities::default());
    let args = serde_json::json!({"path": "/x"}).as_object().cloned().unwrap();
    let result = rt.block_on(read.into_tool().call(ToolCall::new(args, cx)));
    assert!(result.is_error);
    assert_eq!(result.content, vec![Content::text("no such file: /x")]);
}
