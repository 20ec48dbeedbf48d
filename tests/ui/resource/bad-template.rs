use mcp_resolve::resource;

/// A query operator: not one a resource template matches.
#[resource(template = "test://items{?path}")]
async fn item(path: String) -> String {
    path
}

/// A variable right after a `{+…}` one, which would take it.
#[resource(template = "test://items/{+path}{/part}")]
async fn part(path: String, part: String) -> String {
    path + &part
}

fn main() {}
