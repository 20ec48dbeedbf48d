//! Natural names: a parameter may share its resolver's name, a resolver's parameter its
//! dependency's, a tool's parameter the tool's own name, and a local a tool's, prompt's or
//! resource's name. The generated items are `fn`s, which a binding may shadow.
use mcp_resolve::prelude::*;

#[derive(FormSchema, Clone, Debug)]
struct Approval {
    /// Who approves.
    approver: String,
}

#[resolver]
async fn approval(amount: u32) -> Elicit<Approval> {
    Elicit::form(format!("Who approves {amount}?"))
}

/// Depends on `approval` under the same name.
#[resolver]
async fn approver(#[resolve(approval)] approval: Approval) -> Resolution<String> {
    Resolution::Value(approval.approver)
}

#[tool]
async fn expense(
    amount: u32,
    #[resolve(approval)] approval: ElicitationResult<Approval>,
    #[resolve(approver)] approver: String,
) -> String {
    match approval {
        ElicitationResult::Accepted(a) => format!("{amount} approved by {} ({approver})", a.approver),
        other => format!("{amount}: {other:?}"),
    }
}

/// A parameter named like the tool.
#[tool]
async fn query(query: String) -> String {
    query
}

#[prompt]
async fn summary(topic: String) -> String {
    format!("Summarize {topic}")
}

#[resource(uri = "test://motd")]
async fn motd() -> String {
    "hello".into()
}

#[tokio::main]
async fn main() {
    // Locals named like the items they hold.
    let expense = Server::new("names").tool(expense);
    let query_result = query("direct".into()).await;
    assert_eq!(query_result, "direct");
    let query = expense.tool(query);
    let summary = query.prompt(summary);
    let motd = summary.resource(motd);
    assert_eq!(motd.tools().len(), 2);
    assert_eq!(motd.tools()[0].input_schema["properties"].as_object().map(|p| p.len()), Some(1));
    // A direct call of a resolver, through its name.
    let asked = approval(3).await;
    let _ = asked;
}
