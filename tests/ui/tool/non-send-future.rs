use mcp_resolve::tool;
use std::rc::Rc;

async fn tick() {}

#[tool]
async fn count(n: u32) -> String {
    let shared = Rc::new(n);
    tick().await;
    shared.to_string()
}

fn main() {}
