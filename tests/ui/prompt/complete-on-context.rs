use mcp_resolve::{Context, prompt};

async fn names(value: String, _cx: Context) -> Vec<String> {
    vec![value]
}

#[prompt]
async fn greet(name: String, #[arg(complete = names)] cx: Context) -> String {
    let _ = cx;
    name
}

fn main() {}
