use mcp_resolve::prelude::*;

#[resolver]
async fn confirm_delete(path: String) -> String {
    format!("delete {path}?")
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delete)] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
