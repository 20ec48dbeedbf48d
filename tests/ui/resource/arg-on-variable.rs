use mcp_resolve::resource;

#[resource(template = "test://items/{id}")]
async fn item(#[arg(rename = "id")] key: String) -> String {
    key
}

fn main() {}
