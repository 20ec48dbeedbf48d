use mcp_resolve::{Server, tool};

/// A scope list written as one string.
#[tool(scopes = "notes:write")]
async fn one_string() -> String {
    String::new()
}

/// An empty list requires nothing.
#[tool(scopes = [])]
async fn empty_list() -> String {
    String::new()
}

/// Two scopes in one string, an empty scope, a repeated scope, and a number.
#[tool(scopes = ["notes:read notes:write", "", "notes:admin", "notes:admin", 7])]
async fn bad_entries() -> String {
    String::new()
}

fn main() {
    // The tools are still usable values: no cascade of errors here.
    let _ = Server::new("s").tool(one_string).tool(empty_list).tool(bad_entries);
}
