use mcp_resolve::prelude::*;
use std::collections::HashMap;

#[derive(FormSchema)]
struct Settings {
    values: HashMap<String, String>,
}

fn main() {}
