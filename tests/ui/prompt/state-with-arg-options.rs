use mcp_resolve::prelude::*;

struct Tracker;

#[prompt]
async fn triage(#[arg(description = "the tracker")] tracker: State<Tracker>) -> String {
    let _ = tracker;
    "triage".into()
}

fn main() {}
