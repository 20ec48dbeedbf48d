use mcp_resolve::resource;

#[resource(uri = "test://items/{id}")]
async fn item(id: String) -> String {
    id
}

fn main() {}
