use mcp_resolve::resource;

#[resource(uri = "test://motd", template = "test://motd/{id}")]
async fn motd(id: String) -> String {
    id
}

fn main() {}
