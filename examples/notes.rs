//! The Notes server: folders of notes kept in memory, a tool that deletes one, and a tool that
//! adds two numbers.
//!
//! ```text
//! cargo run --example notes
//! ```
//!
//! It serves MCP over stdio, on whichever protocol era the client speaks. Logs go to stderr
//! (`RUST_LOG=debug` for more).

use mcp_resolve::prelude::*;
use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex};

/// The folders: path → file names.
static FOLDERS: LazyLock<Mutex<BTreeMap<String, Vec<String>>>> = LazyLock::new(|| {
    Mutex::new(BTreeMap::from([
        ("/tmp/notes/empty".to_string(), vec![]),
        (
            "/tmp/notes/drafts".to_string(),
            vec!["a.md".to_string(), "b.md".to_string()],
        ),
    ]))
});

/// Delete a notes folder.
#[tool(destructive = true)]
async fn delete_folder(
    /// The folder to delete, e.g. `/tmp/notes/drafts`.
    path: String,
) -> Result<String, String> {
    let mut folders = FOLDERS
        .lock()
        .map_err(|_| "the folder table is unavailable".to_string())?;
    match folders.remove(&path) {
        Some(_) => Ok(format!("deleted {path}")),
        None => Err(format!("no such folder: {path}")),
    }
}

/// Add two integers.
#[tool(read_only = true, idempotent = true)]
async fn add(a: i64, b: i64) -> Json<i64> {
    Json(a.saturating_add(b))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    Server::new("notes")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(delete_folder)
        .tool(add)
        .serve_stdio()
        .await
}
