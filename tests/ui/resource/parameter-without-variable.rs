use mcp_resolve::resource;

#[resource(template = "test://items/{id}")]
async fn item(id: String, name: String) -> String {
    format!("{id} {name}")
}

fn main() {}
