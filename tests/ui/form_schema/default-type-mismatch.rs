use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Person {
    #[form(default = "thirty")]
    age: u8,
}

fn main() {}
