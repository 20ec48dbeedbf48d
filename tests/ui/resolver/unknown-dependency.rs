// A resolver names a dependency that does not exist (a typo): rustc's "cannot find" at the
// path, with its suggestion, and nothing else.
use mcp_resolve::prelude::*;

#[resolver]
async fn ask_ok(path: String) -> Resolution<Confirm> {
    Elicit::form(format!("delete {path}?")).into()
}

#[resolver]
async fn confirm_delete(#[resolve(ask_okk)] first: Confirm) -> Resolution<Confirm> {
    Resolution::Value(first)
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delete)] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
