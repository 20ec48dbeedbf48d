use mcp_resolve::prelude::*;

#[derive(FormSchema, Clone)]
struct Tone {
    tone: String,
}

// The prompt's `topic` is required, so it is a `String`, not an `Option<String>`.
#[resolver]
async fn ask_tone(topic: Option<String>) -> Elicit<Tone> {
    Elicit::form(format!("Which tone for {topic:?}?"))
}

#[prompt]
async fn summarize(topic: String, #[resolve(ask_tone)] tone: Tone) -> String {
    format!("{topic} {}", tone.tone)
}

fn main() {}
