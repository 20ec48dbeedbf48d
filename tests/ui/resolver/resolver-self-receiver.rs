use mcp_resolve::prelude::*;

struct Notes;

impl Notes {
    #[resolver]
    async fn confirm_delete(&self, path: String) -> Resolution<Confirm> {
        Elicit::form(format!("delete {path}?")).into()
    }
}

fn main() {}
