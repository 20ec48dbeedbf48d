//! The Notes server of the tutorial: folders of notes kept in memory, a tool that deletes a
//! folder — asking first when it still has files — and a tool that adds two numbers; a prompt
//! that asks how long a folder's summary should be (unless told), and a resource per folder
//! (`notes://folder/{name}`) that asks before sharing a folder's file names.
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
//! (`HttpOptions::bearer_from_env`): `MCP_RESOLVE_JWT_SECRET` (HS256; 32+ random bytes in hex or
//! base64, like the state key) or `MCP_RESOLVE_JWKS_URL` (the authorization server's keys; then
//! `MCP_RESOLVE_JWT_ISSUER` is required), for the audience `MCP_RESOLVE_JWT_AUDIENCE`, from the
//! issuer `MCP_RESOLVE_JWT_ISSUER`, with `MCP_RESOLVE_AUTH_SERVER` (default: the issuer; one of
//! the two is required) published for clients at `/.well-known/oauth-protected-resource`. Built with `--features redis`, replicas share the
//! single-use answers already used (`delete_folder` is destructive: its confirmations are
//! single-use) through the Redis that `MCP_RESOLVE_REDIS_URL` names (`redis://host:port/db`).
//! `MCP_RESOLVE_SESSION_PREFIX` names the replica: its handshake-era session ids start with it,
//! so a load balancer routes each session to the replica that holds it.
//! Logs go to stderr (`RUST_LOG=debug` for more).

use mcp_resolve::prelude::*;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The folders the server works on (path → file names): its application state, registered once
/// with `Server::state` and taken as `State<Folders>` by the tool, the prompt, the resource and
/// the resolvers. A real server holds a database pool or an API client here.
pub(crate) struct Folders(Mutex<BTreeMap<String, Vec<String>>>);

impl Folders {
    /// Three folders: one empty, two with notes.
    pub(crate) fn sample() -> Self {
        Self(Mutex::new(BTreeMap::from([
            ("/tmp/notes/empty".to_string(), vec![]),
            (
                "/tmp/notes/drafts".to_string(),
                vec!["a.md".to_string(), "b.md".to_string()],
            ),
            (
                "/tmp/notes/ideas".to_string(),
                vec!["garden.md".to_string(), "trip.md".to_string()],
            ),
        ])))
    }

    /// The file names of a folder (`None`: no such folder).
    pub(crate) fn files(&self, path: &str) -> Option<Vec<String>> {
        self.0.lock().ok().and_then(|f| f.get(path).cloned())
    }

    fn file_count(&self, path: &str) -> usize {
        self.files(path).map_or(0, |f| f.len())
    }

    fn remove(&self, path: &str) {
        if let Ok(mut folders) = self.0.lock() {
            folders.remove(path);
        }
    }
}

/// The confirmation form.
#[derive(Clone, Debug, FormSchema)]
pub(crate) struct Confirm {
    ok: bool,
}

/// Asks before deleting a folder that still has files; an empty folder needs no question.
#[resolver]
async fn confirm_delete(path: String, folders: State<Folders>) -> Resolution<Confirm> {
    let count = folders.file_count(&path);
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
    folders: State<Folders>,
    #[resolve(confirm_delete)] confirm: ElicitationResult<Confirm>,
) -> String {
    match confirm {
        ElicitationResult::Accepted(Confirm { ok: true }) => {
            folders.remove(&path);
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

/// How long a summary should be.
#[derive(Clone, Copy, Debug, FormSchema)]
#[form(rename_all = "lowercase")]
pub(crate) enum Length {
    Short,
    Detailed,
}

/// The summary form.
#[derive(Clone, Debug, FormSchema)]
pub(crate) struct SummaryStyle {
    /// How long the summary should be
    length: Length,
}

/// Asks how long the summary should be, unless the prompt was told.
#[resolver(key = "summary_length")]
async fn ask_length(path: String, length: Option<String>) -> Resolution<SummaryStyle> {
    match length.as_deref() {
        Some("short") => Resolution::Value(SummaryStyle { length: Length::Short }),
        Some("detailed") => Resolution::Value(SummaryStyle {
            length: Length::Detailed,
        }),
        _ => Elicit::form(format!("How long should the summary of {path} be?")).into(),
    }
}

/// Summarize the notes of a folder.
#[prompt]
pub(crate) async fn summarize_folder(
    /// The folder, e.g. `/tmp/notes/drafts`.
    path: String,
    /// `short` or `detailed`; asked when left out.
    length: Option<String>,
    #[resolve(ask_length)] style: SummaryStyle,
    folders: State<Folders>,
) -> Vec<PromptMessage> {
    let _ = length;
    let files = folders.files(&path).unwrap_or_default();
    let how = match style.length {
        Length::Short => "in one sentence",
        Length::Detailed => "file by file",
    };
    vec![PromptMessage::user(Content::text(format!(
        "Summarize the notes in {path} ({}) {how}.",
        if files.is_empty() {
            "no files".to_string()
        } else {
            files.join(", ")
        }
    )))]
}

/// Asks before a folder's file names go to the assistant.
#[resolver(key = "share_folder")]
async fn consent_to_share(name: String, folders: State<Folders>) -> Resolution<Confirm> {
    let path = format!("/tmp/notes/{name}");
    match folders.file_count(&path) {
        0 => Resolution::Value(Confirm { ok: true }),
        n => Elicit::form(format!(
            "Share the names of the {n} file(s) in {path} with the assistant?"
        ))
        .into(),
    }
}

/// The file names of a notes folder, one per line; shared only with the user's consent. No
/// contents for an unknown folder: the client gets "resource not found".
#[resource(template = "notes://folder/{name}", mime_type = "text/plain")]
pub(crate) async fn folder(
    name: String,
    folders: State<Folders>,
    #[resolve(consent_to_share)] consent: ElicitationResult<Confirm>,
) -> Result<Vec<String>, String> {
    let path = format!("/tmp/notes/{name}");
    let files = folders.files(&path);
    match (files, consent) {
        (None, _) => Ok(Vec::new()),
        (Some(files), ElicitationResult::Accepted(Confirm { ok: true })) => Ok(vec![files.join("\n")]),
        (Some(_), _) => Err(format!("the user did not agree to share the file names in {path}")),
    }
}

/// The Notes server: the sample folders, both tools, the prompt and the resource. The `axum`
/// example mounts this very server in an application of its own.
pub(crate) fn server() -> Server {
    Server::new("notes")
        .version(env!("CARGO_PKG_VERSION"))
        .state(Folders::sample())
        .tool(delete_folder)
        .tool(add)
        .prompt(summarize_folder)
        .resource(folder)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let mut server = server();
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
    match mcp_resolve::seal::StateKeys::from_env("MCP_RESOLVE_STATE_KEY") {
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
    // Replicas share the single-use answers already used: a confirmation consumed through one is
    // refused by all. A bad URL or an unreachable Redis stops the server here, naming the
    // variable; without it, a memory store serves this process only.
    #[cfg(feature = "redis")]
    match mcp_resolve::redis_store::RedisStore::from_env("MCP_RESOLVE_REDIS_URL").await {
        Ok(Some(store)) => {
            tracing::info!("single-use answers recorded in the Redis of MCP_RESOLVE_REDIS_URL");
            server = server.store(store);
        }
        Ok(None) => {}
        Err(e) => {
            eprintln!("{}", e.reason());
            std::process::exit(2);
        }
    }
    #[cfg(not(feature = "redis"))]
    if std::env::var_os("MCP_RESOLVE_REDIS_URL").is_some() {
        eprintln!("MCP_RESOLVE_REDIS_URL is set, but notes was built without the `redis` feature");
        std::process::exit(2);
    }
    match http {
        Some(addr) => {
            // Bearer tokens, as the environment says (built with `--features jwt`):
            // MCP_RESOLVE_JWT_SECRET (HS256) or MCP_RESOLVE_JWKS_URL (the authorization server's
            // keys), for the audience MCP_RESOLVE_JWT_AUDIENCE, from the issuer
            // MCP_RESOLVE_JWT_ISSUER (required with a JWKS URL, optional with a secret);
            // MCP_RESOLVE_AUTH_SERVER is the authorization server that clients discover through
            // /.well-known/oauth-protected-resource (default: the issuer; one of the two is needed). A mistake stops the
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
            // A replica's name, which starts its session ids, for a load balancer that routes
            // handshake-era sessions by their id.
            let options = match std::env::var("MCP_RESOLVE_SESSION_PREFIX") {
                Ok(prefix) => options.session_id_prefix(prefix),
                Err(_) => options,
            };
            // Ctrl-C or SIGTERM stops it gracefully: calls in flight finish (30 s at most).
            let signal = shutdown_signal()?;
            let listener = tokio::net::TcpListener::bind(addr).await?;
            server.serve_http_until(listener, options, signal).await
        }
        None => server.serve_stdio().await,
    }
}

/// Resolves on Ctrl-C, or on SIGTERM (what a container runtime or systemd sends). The handlers
/// are installed now, not when the future is first polled: a signal that comes as the port
/// opens is not lost.
pub(crate) fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
