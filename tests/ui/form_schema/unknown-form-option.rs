use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Person {
    #[form(min_lenght = 1)]
    name: String,
}

fn main() {}
