use mcp_resolve::prompt;

#[prompt]
async fn greet((first, last): (String, String)) -> String {
    format!("{first} {last}")
}

fn main() {}
