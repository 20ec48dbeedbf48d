use mcp_resolve::prelude::*;

// The tool's argument is `folderPath` on the wire; the resolver names it by its Rust name.
#[resolver]
async fn confirm_delete(path: String) -> Resolution<Confirm> {
    Elicit::form(format!("delete {path}?")).into()
}

#[tool]
async fn delete_folder(
    #[arg(rename = "folderPath")] path: String,
    force: bool,
    #[resolve(confirm_delete)] ok: bool,
) -> String {
    format!("{path} {force} {ok}")
}

fn main() {}
