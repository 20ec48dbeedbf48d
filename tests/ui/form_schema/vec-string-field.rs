use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Labels {
    labels: Vec<String>,
}

fn main() {}
