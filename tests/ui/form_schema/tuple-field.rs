use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Point {
    at: (i32, i32),
}

fn main() {}
