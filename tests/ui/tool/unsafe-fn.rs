use mcp_resolve::tool;

#[tool]
async unsafe fn answer() -> String {
    String::new()
}

fn main() {}
