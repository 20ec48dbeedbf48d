use mcp_resolve::prelude::*;

#[derive(FormSchema)]
union Either {
    a: u8,
    b: i8,
}

fn main() {}
