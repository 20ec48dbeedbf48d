use mcp_resolve::prelude::*;

#[tool]
async fn delete_folder(path: String, #[confirm(path)] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
