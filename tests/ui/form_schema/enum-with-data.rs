use mcp_resolve::prelude::*;

#[derive(Clone, Copy, FormSchema)]
enum Size {
    Small,
    Custom(u32),
}

fn main() {}
