use mcp_resolve::prompt;

struct Prompts;

impl Prompts {
    #[prompt]
    async fn greet(&self, name: String) -> String {
        name
    }
}

fn main() {}
