use mcp_resolve::prelude::*;

#[resolver]
async fn confirm_delete(path: String) -> Resolution<Confirm> {
    Elicit::form(format!("delete {path}?")).into()
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delet)] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
