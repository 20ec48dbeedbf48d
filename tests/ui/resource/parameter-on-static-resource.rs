use mcp_resolve::resource;

#[resource(uri = "test://items")]
async fn items(id: String) -> String {
    id
}

fn main() {}
