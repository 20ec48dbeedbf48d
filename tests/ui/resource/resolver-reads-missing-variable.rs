use mcp_resolve::prelude::*;

#[derive(FormSchema, Clone)]
struct Reason {
    reason: String,
}

#[resolver]
async fn ask_why(name: String) -> Elicit<Reason> {
    Elicit::form(format!("Why read {name}?"))
}

#[resource(template = "test://items/{id}")]
async fn item(id: String, #[resolve(ask_why)] why: Reason) -> String {
    format!("{id} {}", why.reason)
}

fn main() {}
