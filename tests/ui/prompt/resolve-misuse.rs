use mcp_resolve::prelude::*;

#[resolver]
async fn ok() -> Elicit<Confirm> {
    Elicit::form("Go on?")
}

#[prompt]
async fn go(
    #[resolve(ok)]
    #[arg(rename = "yes")]
    a: bool,
    #[resolve(ok)]
    #[resolve(ok)]
    b: bool,
    #[confirm("Really?")] c: bool,
) -> String {
    format!("{a} {b} {c}")
}

fn main() {}
