use mcp_resolve::prelude::*;

/// About the deploy.
#[derive(Clone, FormSchema)]
struct Deploy {
    /// How many replicas?
    #[form(default = 3)]
    replicas: Option<u32>,
}

fn main() {}
