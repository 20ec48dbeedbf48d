use mcp_resolve::prelude::*;

#[resolver]
async fn ask_ok(path: String) -> Resolution<Confirm> {
    Elicit::form(format!("delete {path}?")).into()
}

#[resolver]
async fn confirm_delete(#[resolve(ask_ok)] v: String) -> Resolution<Confirm> {
    Resolution::Value(Confirm { ok: v.is_empty() })
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delete)] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
