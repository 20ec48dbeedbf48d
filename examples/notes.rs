//! The Notes server of the tutorial: folders of notes kept in memory, a tool that deletes a
//! folder — asking first when it still has files — and a tool that adds two numbers.
//!
//! ```text
//! cargo run --example notes                          # stdio
//! cargo run --example notes -- --http 127.0.0.1:8000 # Streamable HTTP on /mcp
//! ```
//!
//! It serves MCP on whichever protocol era the client speaks: on 2026-07-28 the question travels
//! as an `InputRequiredResult` and a retry, on 2025-06-18 / 2025-11-25 as an `elicitation/create`
//! request. Replicas behind a load balancer share `MCP_RESOLVE_STATE_KEY` (32+ random bytes in
//! hex or base64, e.g. from `openssl rand -base64 32`; a passphrase is refused). Built with
//! `--features jwt`, HTTP requires bearer tokens when the environment says so
//! (`HttpOptions::bearer_from_env`): `MCP_RESOLVE_JWT_SECRET` (HS256) or `MCP_RESOLVE_JWKS_URL`
//! (the authorization server's keys), for the audience `MCP_RESOLVE_JWT_AUDIENCE`, optionally
//! from `MCP_RESOLVE_JWT_ISSUER`, with `MCP_RESOLVE_AUTH_SERVER` published for clients at
//! `/.well-known/oauth-protected-resource`. Logs go to stderr (`RUST_LOG=debug` for more).

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

fn file_count(path: &str) -> usize {
    FOLDERS.lock().map(|f| f.get(path).map_or(0, Vec::len)).unwrap_or(0)
}

/// The confirmation form.
#[derive(Clone, Debug, FormSchema)]
pub(crate) struct Confirm {
    ok: bool,
}

/// Asks before deleting a folder that still has files; an empty folder needs no question.
#[resolver]
async fn confirm_delete(path: String) -> Resolution<Confirm> {
    let count = file_count(&path);
    if count == 0 {
        return Resolution::Value(Confirm { ok: true });
    }
    Elicit::form(format!("{path} has {count} file(s). Delete anyway?")).into()
}

/// Delete a notes folder, asking first when it is not empty.
#[tool(destructive = true)]
pub(crate) async fn delete_folder(
    /// The folder to delete, e.g. `/tmp/notes/drafts`.
    path: String,
    #[resolve(confirm_delete)] confirm: ElicitationResult<Confirm>,
) -> String {
    match confirm {
        ElicitationResult::Accepted(Confirm { ok: true }) => {
            if let Ok(mut folders) = FOLDERS.lock() {
                folders.remove(&path);
            }
            format!("deleted {path}")
        }
        ElicitationResult::Accepted(_) => "kept the folder".into(),
        ElicitationResult::Declined => "declined: folder not deleted".into(),
        ElicitationResult::Cancelled => "cancelled: folder not deleted".into(),
    }
}

/// Add two integers.
#[tool(read_only = true, idempotent = true)]
pub(crate) async fn add(a: i64, b: i64) -> Json<i64> {
    Json(a.saturating_add(b))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let mut server = Server::new("notes")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(delete_folder)
        .tool(add);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let http = match args.as_slice() {
        [] => None,
        [flag, addr] if flag == "--http" => match addr.parse::<std::net::SocketAddr>() {
            Ok(a) => Some(a),
            Err(e) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("--http {addr}: {e}"),
                ));
            }
        },
        _ => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "usage: notes [--http HOST:PORT]",
            ));
        }
    };
    match mcp_resolve::StateKeys::from_env("MCP_RESOLVE_STATE_KEY") {
        Ok(Some(keys)) => server = server.state_keys(keys),
        Ok(None) => {
            tracing::info!("MCP_RESOLVE_STATE_KEY is not set: requestState is sealed with a key made for this process")
        }
        Err(e) => {
            // A plain line, not `main`'s debug print of an error: it says how to make a key.
            eprintln!("MCP_RESOLVE_STATE_KEY: {e}");
            std::process::exit(2);
        }
    }
    match http {
        Some(addr) => {
            // Bearer tokens, as the environment says (built with `--features jwt`):
            // MCP_RESOLVE_JWT_SECRET (HS256) or MCP_RESOLVE_JWKS_URL (the authorization server's
            // keys), for the audience MCP_RESOLVE_JWT_AUDIENCE, optionally from the issuer
            // MCP_RESOLVE_JWT_ISSUER; MCP_RESOLVE_AUTH_SERVER is the authorization server that
            // clients discover through /.well-known/oauth-protected-resource. A mistake stops the
            // server here, with a message naming the variable.
            let options = mcp_resolve::HttpOptions::default()
                .bearer_from_env()
                .unwrap_or_else(|e| {
                    // A plain line naming the variable, not `main`'s debug print of an error.
                    eprintln!("{e}");
                    std::process::exit(2)
                });
            if options.bearer_required() {
                tracing::info!("bearer tokens required");
            }
            tracing::info!(%addr, "serving Streamable HTTP on /mcp");
            server.serve_http(addr, options).await
        }
        None => server.serve_stdio().await,
    }
}
