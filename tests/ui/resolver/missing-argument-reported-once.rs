use mcp_resolve::prelude::*;

#[derive(FormSchema, Clone)]
struct Approval {
    approver: String,
}

// Reads an argument the tool does not have; the tool reaches it twice (directly and through
// `approver`): one error per `#[resolve]` that reaches it, each naming `currency`.
#[resolver]
async fn approval(amount: u32, currency: String) -> Elicit<Approval> {
    Elicit::form(format!("Who approves {amount} {currency}?"))
}

#[resolver]
async fn approver(#[resolve(approval)] approval: Approval) -> Resolution<String> {
    Resolution::Value(approval.approver)
}

#[tool]
async fn expense(
    amount: u32,
    #[resolve(approval)] approval: Approval,
    #[resolve(approver)] approver: String,
) -> String {
    format!("{amount} {} {approver}", approval.approver)
}

fn main() {}
