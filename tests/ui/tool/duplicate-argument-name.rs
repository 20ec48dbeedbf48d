use mcp_resolve::tool;

#[tool]
async fn copy(path: String, #[arg(rename = "path")] target: String) -> String {
    format!("{path} -> {target}")
}

fn main() {}
