use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Person {
    #[form(min_length = 1)]
    age: u8,
}

fn main() {}
