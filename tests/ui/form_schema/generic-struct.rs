use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Answer<T> {
    value: T,
}

fn main() {}
