use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Confirm(bool);

fn main() {}
