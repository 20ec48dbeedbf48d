use mcp_resolve::prelude::*;

// `#[resolve]` on an item rather than on a parameter of a `#[tool]`.
#[resolve(ask)]
async fn delete_folder(path: String) -> String {
    path
}

fn main() {}
