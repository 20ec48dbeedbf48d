use mcp_resolve::prelude::*;

#[derive(FormSchema, Clone)]
struct Approval {
    approver: String,
}

#[resolver]
async fn approval(amount: u32) -> Elicit<Approval> {
    Elicit::form(format!("Who approves {amount}?"))
}

// `#[resolver]` forgotten on a resolver that takes another resolver's value.
async fn approver(#[resolve(approval)] approval: Approval) -> Resolution<String> {
    Resolution::Value(approval.approver)
}

#[tool]
async fn expense(amount: u32, #[resolve(approver)] approver: String) -> String {
    format!("{amount} {approver}")
}

fn main() {}
