use mcp_resolve::resource;

struct Page;

#[resource(uri = "test://page")]
async fn page() -> Page {
    Page
}

fn main() {}
