use mcp_resolve::prompt;

struct Messages;

#[prompt]
async fn greet(name: String) -> Messages {
    let _ = name;
    Messages
}

fn main() {}
