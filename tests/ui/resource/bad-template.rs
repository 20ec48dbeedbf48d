use mcp_resolve::resource;

#[resource(template = "test://items/{+path}")]
async fn item(path: String) -> String {
    path
}

fn main() {}
