use mcp_resolve::prelude::*;

// A generic resolver whose value names its generic parameter: an error at the generics, and one
// at the dependency (it has no value type to offer); the tool using `confirm_delete` stays quiet.
#[resolver]
async fn pick<T: Clone + Send + Sync + 'static>(value: T) -> Resolution<T> {
    Resolution::Value(value)
}

#[resolver]
async fn confirm_delete(#[resolve(pick)] path: String) -> Resolution<Confirm> {
    Elicit::form(format!("delete {path}?")).into()
}

#[tool]
async fn delete_folder(path: String, #[resolve(confirm_delete)] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
