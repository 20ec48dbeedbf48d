use mcp_resolve::prelude::*;

#[derive(Clone, Copy, FormSchema)]
enum Environment {
    Staging,
    #[form(rename = "staging")]
    Stage,
}

fn main() {}
