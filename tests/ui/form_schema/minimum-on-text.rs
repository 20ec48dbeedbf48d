use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Person {
    #[form(minimum = 0)]
    name: String,
}

fn main() {}
