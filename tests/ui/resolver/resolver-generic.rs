use mcp_resolve::prelude::*;

#[resolver]
async fn confirm_delete<P: std::fmt::Display>(path: P) -> Resolution<Confirm> {
    Elicit::form(format!("delete {path}?")).into()
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delete)] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
