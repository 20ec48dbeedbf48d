//! `#[resolve]` on `#[prompt]` and `#[resource]` parameters: resolvers read the prompt's
//! arguments (required and optional) and the template's variables, take dependencies and the
//! `Context`, and the items take plain values or all three outcomes.
use mcp_resolve::prelude::*;

#[derive(FormSchema, Clone)]
struct Tone {
    tone: String,
}

#[resolver]
async fn ask_tone(topic: String, tone: Option<String>, cx: Context) -> Resolution<Tone> {
    let _ = cx;
    match tone {
        Some(tone) => Resolution::Value(Tone { tone }),
        None => Elicit::form(format!("Which tone for {topic}?")).into(),
    }
}

#[resolver]
async fn confirm_tone(#[resolve(ask_tone)] tone: Tone) -> Elicit<Confirm> {
    Elicit::form(format!("Use {}?", tone.tone))
}

#[prompt]
async fn summarize(
    topic: String,
    tone: Option<String>,
    #[resolve(ask_tone)] picked: Tone,
    #[resolve(confirm_tone)] sure: ElicitationResult<Confirm>,
) -> String {
    format!("{topic} {tone:?} {} {sure:?}", picked.tone)
}

#[resolver]
async fn ask_reason(id: String) -> Elicit<Tone> {
    Elicit::form(format!("Why {id}?"))
}

#[resource(template = "test://items/{id}")]
async fn item(id: String, #[resolve(ask_reason)] why: Tone, cx: Context) -> String {
    let _ = cx;
    format!("{id} {}", why.tone)
}

#[resource(uri = "test://motd")]
async fn motd(#[resolve(ask_sample)] reply: Sampled) -> String {
    reply.text().unwrap_or_default().to_owned()
}

#[resolver]
async fn ask_sample() -> Sample {
    Sample::new("Write a message of the day")
}

fn main() {
    let _ = Server::new("t").prompt(summarize).resource(item).resource(motd);
}
