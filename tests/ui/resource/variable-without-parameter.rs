use mcp_resolve::resource;

#[resource(template = "test://items/{id}/{part}")]
async fn item(id: String) -> String {
    id
}

fn main() {}
