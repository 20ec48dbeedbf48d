use mcp_resolve::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A point on the plane.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

/// Move a point.
#[tool]
async fn shift(at: Point, dx: i32) -> Json<Point> {
    Json(Point { x: at.x + dx, y: at.y })
}

fn main() {
    let server = Server::new("json").tool(shift);
    let def = &server.tools()[0];
    // The argument's struct goes to `$defs`, the output schema is the struct itself.
    assert_eq!(def.input_schema["properties"]["at"]["$ref"], "#/$defs/Point");
    assert_eq!(
        def.input_schema["$defs"]["Point"]["required"],
        serde_json::json!(["x", "y"])
    );
    let output = def.output_schema.as_ref().unwrap();
    assert_eq!(output["type"], "object");
    assert_eq!(output["required"], serde_json::json!(["x", "y"]));

    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let Json(p) = rt.block_on(shift(Point { x: 1, y: 2 }, 3));
    assert_eq!(p, Point { x: 4, y: 2 });
}
