use mcp_resolve::tool;
use schemars::JsonSchema;

#[derive(JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

#[tool]
async fn plot(at: Point) -> String {
    format!("{},{}", at.x, at.y)
}

fn main() {}
