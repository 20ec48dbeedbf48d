use mcp_resolve::prelude::*;

#[resolver(once, key = "approval", once)]
async fn approve(amount: u32) -> Elicit<Confirm> {
    Elicit::form(format!("Transfer {amount}?"))
}

#[tool]
async fn transfer(amount: u32, #[resolve(approve)] ok: bool) -> String {
    format!("{amount} {ok}")
}

fn main() {}
