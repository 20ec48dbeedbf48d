use mcp_resolve::resource;

#[resource(uri = "test://motd")]
fn motd() -> String {
    "Hello".into()
}

fn main() {}
