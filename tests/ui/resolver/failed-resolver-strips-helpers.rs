use mcp_resolve::prelude::*;

#[resolver]
async fn ask_ok(path: String) -> Resolution<Confirm> {
    Elicit::form(format!("delete {path}?")).into()
}

struct Notes;

// `#[resolver]` cannot take `self`, and its parameters take only `#[resolve]`: the method is
// given back without the parameter attributes the macros own, so rustc reports nothing else (no
// "cannot find attribute `arg`" or `confirm`).
impl Notes {
    #[resolver]
    async fn confirm_delete(
        &self,
        /// The folder.
        #[arg(rename = "folder")]
        path: String,
        #[resolve(ask_ok)] ok: Confirm,
        #[confirm("Delete {path}?")] sure: bool,
    ) -> Resolution<Confirm> {
        let _ = (path, sure);
        Resolution::Value(ok)
    }
}

fn main() {}
