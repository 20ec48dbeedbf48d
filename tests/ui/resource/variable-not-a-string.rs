use mcp_resolve::resource;

#[resource(template = "test://items/{id}")]
async fn item(id: u64) -> String {
    id.to_string()
}

fn main() {}
