use mcp_resolve::tool;

struct Notes;

// Known poor output: the macro cannot tell it sits in an `impl`, so rustc rejects the items it
// generates (a `static`, a struct, `const _`) with errors on `#[tool]` instead of one clear message.

impl Notes {
    #[tool]
    async fn count() -> String {
        String::new()
    }
}

fn main() {}
