use mcp_resolve::prelude::*;

#[resolver]
async fn confirm_delete(pth: String) -> Resolution<Confirm> {
    Elicit::form(format!("delete {pth}?")).into()
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delete)] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
