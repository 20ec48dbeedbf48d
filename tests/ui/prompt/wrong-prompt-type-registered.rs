use mcp_resolve::{Server, tool};

#[tool]
async fn greet(name: String) -> String {
    name
}

fn main() {
    let _ = Server::new("t").prompt(greet);
}
