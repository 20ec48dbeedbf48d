use mcp_resolve::prelude::*;

/// `once` is a word, not a setting.
#[resolver(once = true)]
async fn approve(amount: u32) -> Elicit<Confirm> {
    Elicit::form(format!("Transfer {amount}?"))
}

/// Nor a list.
#[resolver(once("always"))]
async fn approve_again(amount: u32) -> Elicit<Confirm> {
    Elicit::form(format!("Transfer {amount} again?"))
}

#[tool]
async fn transfer(amount: u32, #[resolve(approve)] ok: bool, #[resolve(approve_again)] again: bool) -> String {
    format!("{amount} {ok} {again}")
}

fn main() {}
