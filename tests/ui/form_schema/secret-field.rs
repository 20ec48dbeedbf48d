use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Login {
    username: String,
    password: String,
}

fn main() {}
