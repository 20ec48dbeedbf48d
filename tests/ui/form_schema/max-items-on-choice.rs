use mcp_resolve::prelude::*;

#[derive(Clone, Copy, FormSchema)]
enum Color {
    Red,
    Green,
}

#[derive(FormSchema)]
struct Paint {
    #[form(max_items = 2)]
    color: Color,
}

fn main() {}
