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
    a24: u32,
) -> String {
    String::new()
}

fn main() {}
