use mcp_resolve::prelude::*;

#[derive(Clone, FormSchema)]
struct Card {
    holder: String,
}

// A URL-mode answer carries no content: a form cannot be its value.
#[resolver]
async fn pay() -> Elicit<Card> {
    Elicit::url("Pay on the page", "https://shop.example/pay")
}

fn main() {}
