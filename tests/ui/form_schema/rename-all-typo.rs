use mcp_resolve::prelude::*;

#[derive(Clone, Copy, FormSchema)]
#[form(rename_all = "PascalCase")]
enum Environment {
    Staging,
    Production,
}

fn main() {}
