use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Person {
    #[form(min_length = 10, max_length = 2)]
    name: String,
}

fn main() {}
