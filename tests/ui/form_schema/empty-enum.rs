use mcp_resolve::prelude::*;

#[derive(Clone, Copy, FormSchema)]
enum Never {}

fn main() {}
