//! A tool with the most parameters the macros accept (`MAX_PARAMS`) registers and is callable.
use mcp_resolve::prelude::*;

#[tool]
async fn wide(
    a0: u32,
    a1: u32,
    a2: u32,
    a3: u32,
    a4: u32,
    a5: u32,
    a6: u32,
    a7: u32,
    a8: u32,
    a9: u32,
    a10: u32,
    a11: u32,
    a12: u32,
    a13: u32,
    a14: u32,
    a15: u32,
    a16: u32,
    a17: u32,
    a18: u32,
    a19: u32,
    a20: u32,
    a21: u32,
    a22: u32,
    a23: u32,
) -> String {
    (a0+a1+a2+a3+a4+a5+a6+a7+a8+a9+a10+a11+a12+a13+a14+a15+a16+a17+a18+a19+a20+a21+a22+a23).to_string()
}

#[tokio::main]
async fn main() {
    assert_eq!(mcp_resolve::MAX_PARAMS, 24);
    let server = Server::new("wide").tool(wide);
    assert_eq!(server.tools()[0].input_schema["properties"].as_object().map(|p| p.len()), Some(24));
    assert_eq!(wide(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1).await, "24");
}
