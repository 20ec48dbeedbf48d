use mcp_resolve::resource;

#[resource(mime_type = "text/plain")]
async fn motd() -> String {
    "Hello".into()
}

fn main() {}
