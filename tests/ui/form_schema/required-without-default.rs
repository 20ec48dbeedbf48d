use mcp_resolve::prelude::*;

/// About the deploy.
#[derive(Clone, FormSchema)]
struct Deploy {
    /// Which service?
    #[form(required)]
    service: String,
}

fn main() {}
