use mcp_resolve::prelude::*;

#[derive(FormSchema)]
enum Environment {
    Staging,
    Production,
}

fn main() {}
