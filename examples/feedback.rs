//! Seed 000's `collect_feedback`: a tool that asks the user how something went, with a form of
//! a rating (1 to 5) and an optional comment, and thanks them with a summary of what it recorded.
//! Declining and cancelling each end the call with a result of their own, and nothing is recorded.
//!
//! ```text
//! cargo run --example feedback                              # MCP on stdio
//! cargo run --example feedback -- --http 127.0.0.1:8000     # Streamable HTTP on /mcp
//! ```
//!
//! With `collect_feedback {"topic": "the demo"}` the client shows the form "How was the demo?":
//! `rating`, an integer from 1 to 5 (required), and `comment`, text (optional). Then:
//! - accepted with `{"rating": 4, "comment": "great"}`:
//!   `Thank you! Recorded 4/5 for the demo, with your comment: "great". (response 1 about the demo)`;
//!   without a comment the sentence ends after the rating;
//! - declined (the user does not want to answer): `No feedback recorded for the demo: you
//!   declined. Nothing more will be asked about it.`, so the assistant does not ask again;
//! - cancelled (the user closed the form without deciding): `No feedback recorded for the demo:
//!   the question was dismissed. Ask again later if you like.`
//!
//! A rating outside 1 to 5 is refused by the server before the tool sees it (the form's
//! `minimum` and `maximum` are checked on every answer). The responses are kept in memory
//! (application state, `Server::state`), as a real server would keep them in its database.
//! Logs go to stderr (`RUST_LOG=debug` for more).

use mcp_resolve::HttpOptions;
use mcp_resolve::prelude::*;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// How it went.
#[derive(Clone, Debug, FormSchema)]
pub(crate) struct Feedback {
    /// 1 (bad) to 5 (great).
    #[form(title = "Rating (1-5)", minimum = 1, maximum = 5)]
    pub(crate) rating: u8,
    /// Anything you would like to add (optional).
    #[form(title = "Comment")]
    pub(crate) comment: Option<String>,
}

/// The responses received so far, by topic: a stand-in for the server's database.
#[derive(Debug, Default)]
pub(crate) struct Responses(Mutex<BTreeMap<String, Vec<Feedback>>>);

impl Responses {
    /// Keeps `feedback` about `topic`; how many responses the topic has now.
    fn record(&self, topic: &str, feedback: Feedback) -> usize {
        let mut all = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept = all.entry(topic.to_owned()).or_default();
        kept.push(feedback);
        kept.len()
    }
}

/// Asks the user how `topic` went.
#[resolver(key = "feedback")]
async fn ask_feedback(topic: String) -> Elicit<Feedback> {
    Elicit::form(format!("How was {topic}?"))
}

/// Ask the user how something went (a rating from 1 to 5 and an optional comment) and record it.
#[tool]
pub(crate) async fn collect_feedback(
    /// What to ask about, e.g. "the demo".
    topic: String,
    responses: State<Responses>,
    #[resolve(ask_feedback)] feedback: ElicitationResult<Feedback>,
) -> String {
    match feedback {
        ElicitationResult::Accepted(feedback) => {
            let rating = feedback.rating;
            // An empty comment is no comment.
            let comment = feedback
                .comment
                .as_deref()
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| format!(", with your comment: {c:?}"))
                .unwrap_or_default();
            let count = responses.record(&topic, feedback);
            format!("Thank you! Recorded {rating}/5 for {topic}{comment}. (response {count} about {topic})")
        }
        // The user said no: respect it, and tell the model not to insist.
        ElicitationResult::Declined => {
            format!("No feedback recorded for {topic}: you declined. Nothing more will be asked about it.")
        }
        // The user dismissed the question without deciding: stop now; they may answer later.
        ElicitationResult::Cancelled => {
            format!("No feedback recorded for {topic}: the question was dismissed. Ask again later if you like.")
        }
    }
}

/// The server: the tool, and where it keeps the responses.
pub(crate) fn server() -> Server {
    Server::new("feedback")
        .version(env!("CARGO_PKG_VERSION"))
        .state(Responses::default())
        .tool(collect_feedback)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => server().serve_stdio().await,
        [flag, addr] if flag == "--http" => {
            let addr = addr.parse().map_err(std::io::Error::other)?;
            server().serve_http(addr, HttpOptions::default()).await
        }
        _ => {
            eprintln!("usage: feedback [--http HOST:PORT]");
            std::process::exit(2)
        }
    }
}
