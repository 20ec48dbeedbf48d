use mcp_resolve::prelude::*;

#[resolver]
async fn ok() -> Elicit<Confirm> {
    Elicit::form("Go on?")
}

async fn complete_id(_value: String, _cx: Context) -> Vec<String> {
    Vec::new()
}

#[resource(template = "test://items/{id}")]
async fn item(
    id: String,
    #[resolve(ok)]
    #[arg(complete = complete_id)]
    a: bool,
    #[confirm("Really?")] c: bool,
) -> String {
    format!("{id} {a} {c}")
}

fn main() {}
