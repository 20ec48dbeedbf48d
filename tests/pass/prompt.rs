//! Every return type and parameter kind `#[prompt]` takes, registered on one server.

use mcp_resolve::prelude::*;

/// Plain text.
#[prompt]
async fn text_prompt() -> String {
    "Hello".into()
}

/// Static text.
#[prompt(name = "static-text", title = "Static")]
async fn static_text() -> &'static str {
    "Hello"
}

/// One message.
#[prompt]
async fn one(name: String) -> PromptMessage {
    PromptMessage::assistant(Content::text(name))
}

/// Many messages, an optional argument, the context, a renamed argument.
#[prompt(scopes = ["prompts:read"])]
async fn many(
    /// Who.
    #[arg(rename = "who", description = "The person")]
    name: String,
    mood: Option<std::string::String>,
    cx: Context,
) -> Vec<PromptMessage> {
    let _ = cx.protocol_version();
    vec![PromptMessage::user(Content::text(format!("{name} {mood:?}")))]
}

/// A full result, fallibly.
#[prompt]
async fn full(r#type: String) -> Result<GetPromptResult, std::io::Error> {
    Ok(GetPromptResult::new(vec![PromptMessage::user(Content::text(r#type))]).description("d"))
}

fn main() {
    let server = Server::new("t")
        .prompt(text_prompt)
        .prompt(static_text)
        .prompt(one)
        .prompt(many)
        .prompt(full);
    assert_eq!(server.prompts().len(), 5);
    assert_eq!(server.prompts()[3].arguments[0].name, "who");
    assert_eq!(server.prompts()[4].arguments[0].name, "type");
    let _ = one("x".into());
}
