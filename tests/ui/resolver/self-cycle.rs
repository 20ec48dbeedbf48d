use mcp_resolve::prelude::*;

#[resolver]
async fn confirm_delete(#[resolve(confirm_delete)] again: Confirm) -> Resolution<Confirm> {
    Resolution::Value(again)
}

#[tool]
async fn delete_folder(#[resolve(confirm_delete)] ok: bool) -> String {
    format!("{ok}")
}

fn main() {}
