use mcp_resolve::prelude::*;

#[resolver]
async fn confirm_delete(path: String) -> Resolution<Confirm> {
    Elicit::form(format!("delete {path}?")).into()
}

struct Notes;

// `#[tool]` cannot take `self`: the method is given back without the parameter attributes
// `#[tool]` owns, so rustc reports nothing else (no "cannot find attribute `resolve`").
impl Notes {
    #[tool]
    async fn delete_folder(
        &self,
        /// The folder.
        #[arg(rename = "folder")]
        path: String,
        #[resolve(confirm_delete)] ok: bool,
        #[confirm("Delete {folder}?")] sure: bool,
    ) -> String {
        format!("{path} {ok} {sure}")
    }
}

// A declaration without a body is not a `#[tool]` either, and is given back the same way.
trait Folders {
    #[tool]
    async fn delete_folder(
        &self,
        #[arg(rename = "folder")] path: String,
        #[resolve(confirm_delete)] ok: bool,
        #[confirm("Delete {folder}?")] sure: bool,
    ) -> String;
}

fn main() {}
