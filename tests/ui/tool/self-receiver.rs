use mcp_resolve::tool;

struct Notes;

impl Notes {
    #[tool]
    async fn count(&self) -> String {
        String::new()
    }
}

fn main() {}
