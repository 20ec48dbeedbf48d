use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Nothing;

fn main() {}
