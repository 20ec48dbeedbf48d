use mcp_resolve::prelude::*;

#[resolver]
async fn ask_a(#[resolve(ask_b)] b: Confirm) -> Resolution<Confirm> {
    Resolution::Value(b)
}

#[resolver]
async fn ask_b(#[resolve(ask_c)] c: Confirm) -> Resolution<Confirm> {
    Resolution::Value(c)
}

#[resolver]
async fn ask_c(#[resolve(ask_a)] a: Confirm) -> Resolution<Confirm> {
    Resolution::Value(a)
}

#[tool]
async fn t(#[resolve(ask_a)] a: Confirm) -> String {
    format!("{}", a.ok)
}

fn main() {}
