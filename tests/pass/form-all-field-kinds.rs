use mcp_resolve::form::{FormSchema as _, RenderOptions};
use mcp_resolve::prelude::*;
use serde_json::json;

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Size {
    #[form(title = "Small")]
    S,
    #[form(title = "Large")]
    L,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
#[form(rename_all = "kebab-case")]
enum Topping {
    ExtraCheese,
    Olives,
}

/// Order a pizza.
#[derive(FormSchema)]
#[form(title = "Order")]
struct Order {
    /// Who it is for.
    #[form(min_length = 1)]
    name: String,
    #[form(minimum = 1, maximum = 9, default = 1)]
    count: u8,
    #[form(minimum = -0.5)]
    tip: Option<f64>,
    #[form(default = false)]
    urgent: bool,
    size: Size,
    #[form(max_items = 2)]
    toppings: Vec<Topping>,
}

fn main() {
    let schema = serde_json::Value::Object(Order::requested_schema(RenderOptions::default().top_level_title(true)));
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "title": "Order",
            "description": "Order a pizza.",
            "properties": {
                "name": { "type": "string", "description": "Who it is for.", "minLength": 1 },
                "count": { "type": "integer", "minimum": 1, "maximum": 9, "default": 1 },
                "tip": { "type": "number", "minimum": -0.5 },
                "urgent": { "type": "boolean", "default": false },
                "size": { "type": "string", "oneOf": [ { "const": "s", "title": "Small" }, { "const": "l", "title": "Large" } ] },
                "toppings": { "type": "array", "maxItems": 2, "items": { "type": "string", "enum": ["extra-cheese", "olives"] } }
            },
            "required": ["name", "size", "toppings"]
        })
    );
    let order = Order::from_content(
        json!({ "name": "Ada", "size": "l", "toppings": ["olives"] })
            .as_object()
            .unwrap(),
    )
    .unwrap();
    assert_eq!((order.count, order.tip, order.urgent), (1, None, false));
    assert_eq!((order.size, order.toppings), (Size::L, vec![Topping::Olives]));
    assert_eq!(order.name, "Ada");
}
