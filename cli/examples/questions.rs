//! A small stdio server whose tools ask every kind of question the terminal client renders, for
//! its tests (`cli/tests/terminal.rs`) and for trying it by hand:
//!
//! ```text
//! cargo build -p mcp-resolve-cli --example questions
//! mcp-resolve call order item=pizza -- target/debug/examples/questions
//! mcp-resolve call sign_in -- target/debug/examples/questions
//! mcp-resolve call count_to n=20 -- target/debug/examples/questions
//! ```
//!
//! - `order(item)`: a form with a bounded integer, a titled single choice with a default, a
//!   multi-select with a minimum, a boolean with a default and an optional date;
//! - `sign_in(page?)`: a URL-mode question (the page, by default `https://shop.example/sign-in`;
//!   nothing serves it: the tests refuse it);
//! - `count_to(n)`: progress reports and log messages, no question.

use mcp_resolve::prelude::*;
use std::time::Duration;

/// A pizza's size.
#[derive(Clone, Copy, Debug, FormSchema)]
enum Size {
    #[form(title = "Small (25 cm)")]
    Small,
    #[form(title = "Medium (30 cm)")]
    Medium,
    #[form(title = "Large (35 cm)")]
    Large,
}

/// A topping.
#[derive(Clone, Copy, Debug, FormSchema)]
enum Topping {
    Cheese,
    Olives,
    Peppers,
}

/// The order form.
#[derive(Clone, Debug, FormSchema)]
struct Order {
    /// One to five
    #[form(title = "How many", minimum = 1, maximum = 5)]
    count: u8,
    #[form(title = "Size", default = "medium")]
    size: Size,
    /// At least one
    #[form(title = "Toppings", min_items = 1)]
    toppings: Vec<Topping>,
    #[form(title = "Gift wrap", default = false)]
    gift: bool,
    #[form(title = "Deliver on", format = "date")]
    day: Option<String>,
}

/// Asks how the item should be ordered.
#[resolver]
async fn ask_order(item: String) -> Elicit<Order> {
    Elicit::form(format!("How should the {item} be made?"))
}

/// Order an item, asking how.
#[tool]
async fn order(
    /// What to order, e.g. `pizza`.
    item: String,
    #[resolve(ask_order)] answer: ElicitationResult<Order>,
) -> String {
    let o = match answer {
        ElicitationResult::Accepted(o) => o,
        ElicitationResult::Declined => return format!("declined: no {item} ordered"),
        ElicitationResult::Cancelled => return format!("cancelled: no {item} ordered"),
    };
    let size = match o.size {
        Size::Small => "small",
        Size::Medium => "medium",
        Size::Large => "large",
    };
    let toppings: Vec<&str> = o
        .toppings
        .iter()
        .map(|t| match t {
            Topping::Cheese => "cheese",
            Topping::Olives => "olives",
            Topping::Peppers => "peppers",
        })
        .collect();
    let gift = if o.gift { ", gift-wrapped" } else { "" };
    let day = o.day.map(|d| format!(", on {d}")).unwrap_or_default();
    format!(
        "ordered {} {size} {item} with {}{gift}{day}",
        o.count,
        toppings.join(", ")
    )
}

/// Sends the user to the sign-in page.
#[resolver]
async fn ask_sign_in(page: Option<String>) -> Elicit<serde_json::Value> {
    Elicit::url(
        "Sign in to the shop to go on",
        page.unwrap_or_else(|| "https://shop.example/sign-in".into()),
    )
}

/// Sign in to the shop on its page (URL mode).
#[tool]
async fn sign_in(
    /// The sign-in page (default `https://shop.example/sign-in`).
    page: Option<String>,
    #[resolve(ask_sign_in)] answer: ElicitationResult<serde_json::Value>,
) -> String {
    let _ = page;
    match answer {
        ElicitationResult::Accepted(v) => format!("signed in: {v}"),
        ElicitationResult::Declined => "declined: not signed in".into(),
        ElicitationResult::Cancelled => "cancelled: not signed in".into(),
    }
}

/// Count to `n`, reporting progress and logging each step.
#[tool(read_only = true)]
async fn count_to(
    /// How far (at most 100).
    n: u32,
    cx: Context,
) -> String {
    let n = n.min(100);
    for i in 1..=n {
        cx.progress(f64::from(i), Some(f64::from(n)), Some("counting")).await;
        cx.log(LogLevel::Info, format!("reached {i}")).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    format!("counted to {n}")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    Server::new("questions")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(order)
        .tool(sign_in)
        .tool(count_to)
        // One user on stdio: the unguessable flow id is the proof (see examples/connect.rs).
        .anonymous_url_flows()
        .serve_stdio()
        .await
}
