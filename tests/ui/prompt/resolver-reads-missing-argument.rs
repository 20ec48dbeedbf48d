use mcp_resolve::prelude::*;

#[derive(FormSchema, Clone)]
struct Tone {
    tone: String,
}

#[resolver]
async fn ask_tone(style: String) -> Elicit<Tone> {
    Elicit::form(format!("Which tone for {style}?"))
}

#[prompt]
async fn summarize(topic: String, #[resolve(ask_tone)] tone: Tone) -> String {
    format!("{topic} {}", tone.tone)
}

fn main() {}
