use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Contact {
    #[form(format = "e-mail")]
    email: String,
}

fn main() {}
