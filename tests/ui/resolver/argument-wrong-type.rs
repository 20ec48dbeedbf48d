use mcp_resolve::prelude::*;

#[resolver]
async fn confirm_delete(path: u32) -> Resolution<Confirm> {
    Elicit::form(format!("delete folder {path}?")).into()
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delete)] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
