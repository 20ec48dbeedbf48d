//! Natural names: a parameter may share its resolver's name, a resolver's parameter its
//! dependency's, a tool's parameter the tool's own name, and a local a tool's, prompt's or
//! resource's name. The generated items are `fn`s, which a binding may shadow; and a parameter
//! never shadows a `#[resolve(path)]` read after it, in a tool, prompt, resource or resolver.
#![deny(warnings)]
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

#[resolver]
async fn headline(topic: String) -> Resolution<String> {
    Resolution::Value(topic.to_uppercase())
}

/// The first parameter is named like the resolver the second one reads.
#[resolver]
async fn twice(#[resolve(headline)] headline: String, #[resolve(headline)] again: String) -> Resolution<String> {
    Resolution::Value(format!("{headline} {again}"))
}

#[prompt]
async fn brief(
    topic: String,
    #[resolve(headline)] headline: String,
    #[resolve(headline)] again: String,
    #[resolve(twice)] twice: String,
) -> String {
    format!("{topic}: {headline} / {again} / {twice}")
}

#[resource(template = "test://brief/{topic}")]
async fn brief_page(
    topic: String,
    #[resolve(headline)] headline: String,
    #[resolve(headline)] again: String,
    #[resolve(twice)] twice: String,
) -> String {
    format!("{topic}: {headline} / {again} / {twice}")
}

#[tool]
async fn brief_tool(
    topic: String,
    #[resolve(headline)] headline: String,
    #[resolve(headline)] again: String,
    #[resolve(twice)] twice: String,
) -> String {
    format!("{topic}: {headline} / {again} / {twice}")
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
    let server = motd.prompt(brief).resource(brief_page).tool(brief_tool);
    assert_eq!(server.tools().len(), 3);
    let motd = server;
    assert_eq!(motd.tools()[0].input_schema["properties"].as_object().map(|p| p.len()), Some(1));
    // A direct call of a resolver, through its name.
    let asked = approval(3).await;
    let _ = asked;
}
