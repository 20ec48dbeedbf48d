use mcp_resolve::prelude::*;

#[resolver]
async fn confirm_delete(path: String) -> Resolution<Confirm> {
    Elicit::form(format!("delete {path}?")).into()
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delete)] x: u32) -> String {
    format!("{path} {x}")
}

fn main() {}
