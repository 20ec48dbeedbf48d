use mcp_resolve::prelude::*;

#[derive(Clone, Copy, FormSchema)]
enum Environment {
    Stg,
    Prd,
}

#[derive(FormSchema)]
struct Deploy {
    #[form(default = "dev")]
    environment: Environment,
}

fn main() {}
