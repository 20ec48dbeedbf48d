//! A resource clients can watch: `notes://today` holds one note, the `write_today` tool replaces
//! it, and every handshake-era client subscribed to `notes://today` (`resources/subscribe`) is sent
//! `notifications/resources/updated` when it does. Another task could announce changes the same
//! way, through `Server::resource_updates()`.
//!
//! ```sh
//! cargo run --example watch                         # stdio
//! cargo run --example watch -- --http 127.0.0.1:8000  # Streamable HTTP on /mcp
//! ```

use mcp_resolve::prelude::*;
use std::sync::Mutex;

const TODAY: &str = "notes://today";

static NOTE: Mutex<String> = Mutex::new(String::new());

/// Today's note.
#[resource(uri = "notes://today", mime_type = "text/plain")]
async fn today() -> String {
    NOTE.lock().map(|n| n.clone()).unwrap_or_default()
}

/// Replaces today's note; its subscribers are told.
#[tool]
async fn write_today(
    /// The new text of the note.
    text: String,
    cx: Context,
) -> String {
    if let Ok(mut note) = NOTE.lock() {
        *note = text;
    }
    let told = cx.resource_updated(TODAY);
    format!("saved; {told} subscriber(s) told")
}

/// The server: one resource, one tool that changes it.
pub(crate) fn server() -> Server {
    Server::new("watch").tool(write_today).resource(today)
}

#[tokio::main(flavor = "current_thread")]
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
            let addr = addr
                .parse()
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("--http {addr}: {e}")))?;
            server().serve_http(addr, mcp_resolve::HttpOptions::default()).await
        }
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "usage: watch [--http HOST:PORT]",
        )),
    }
}
