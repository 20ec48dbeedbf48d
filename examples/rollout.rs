//! A rollout that runs as a task and asks mid-run: it deploys a canary, watches it, and when the
//! canary fails it asks the person whether to roll back, then finishes. The call returns at
//! once with a task; the client follows the task (`tasks/get`), answers the question when the
//! task says `input_required` (`tasks/update` on 2026-07-28, `tasks/result` on 2025-11-25), and
//! reads the outcome. See the tasks guide (`docs/tasks.md`).
//!
//! ```text
//! cargo run --example rollout                                   # stdio
//! cargo run --example rollout -- --http 127.0.0.1:8000          # Streamable HTTP on /mcp
//! cargo run -p mcp-resolve-cli -- --url http://127.0.0.1:8000/mcp call rollout service=api canary_fails=true
//! ```
//!
//! Replicas behind a load balancer share `MCP_RESOLVE_STATE_KEY` and, built with
//! `--features redis`, the Redis that `MCP_RESOLVE_REDIS_URL` names: a task created through one
//! replica is seen, answered and cancelled through any of them.

use mcp_resolve::prelude::*;
use std::time::Duration;

/// What to do about a failed canary.
#[derive(Clone, Debug, FormSchema)]
struct CanaryFailed {
    /// Roll the canary back (otherwise the rollout goes on regardless).
    #[form(title = "Roll back", default = true)]
    roll_back: bool,
}

/// Rolls `service` out: a canary first, then every instance. Runs as a task when the client can
/// follow one; if the canary fails, asks whether to roll back.
#[tool(task = "optional", destructive = true)]
async fn rollout(
    /// The service to roll out.
    service: String,
    /// Make the canary fail (to see the question).
    canary_fails: Option<bool>,
    /// How long each step takes, in milliseconds (default 500, at most 60 000).
    step_ms: Option<u64>,
    cx: Context,
) -> Result<String, String> {
    let step = Duration::from_millis(step_ms.unwrap_or(500).min(60_000));
    cx.progress(1.0, Some(4.0), Some(&format!("deploying the canary of {service}")))
        .await;
    tokio::time::sleep(step).await;
    cx.progress(2.0, Some(4.0), Some("watching the canary")).await;
    tokio::time::sleep(step).await;
    if canary_fails.unwrap_or(false) {
        let asked = cx
            .elicit::<CanaryFailed>(format!("The canary of {service} failed its health checks. Roll back?"))
            .await
            .map_err(|e| e.to_string())?;
        match asked {
            ElicitationResult::Accepted(CanaryFailed { roll_back: true }) => {
                cx.progress(3.0, Some(4.0), Some("rolling the canary back")).await;
                tokio::time::sleep(step).await;
                return Ok(format!("rolled back: {service} stays on the previous version"));
            }
            ElicitationResult::Accepted(_) => {}
            ElicitationResult::Declined | ElicitationResult::Cancelled => {
                return Ok(format!(
                    "stopped: {service} was left with its canary for a person to look at"
                ));
            }
        }
    }
    cx.progress(3.0, Some(4.0), Some("rolling out every instance")).await;
    tokio::time::sleep(step).await;
    Ok(format!("rolled out: every instance of {service} runs the new version"))
}

/// The server: the `rollout` tool, with the store and keys replicas share when the environment
/// names them.
async fn server() -> Server {
    let mut server = Server::new("rollout").version(env!("CARGO_PKG_VERSION")).tool(rollout);
    match mcp_resolve::seal::StateKeys::from_env("MCP_RESOLVE_STATE_KEY") {
        Ok(Some(keys)) => server = server.state_keys(keys),
        Ok(None) => {}
        Err(e) => {
            eprintln!("MCP_RESOLVE_STATE_KEY: {e}");
            std::process::exit(2);
        }
    }
    #[cfg(feature = "redis")]
    match mcp_resolve::redis_store::RedisStore::from_env("MCP_RESOLVE_REDIS_URL").await {
        Ok(Some(store)) => {
            tracing::info!("tasks kept in the Redis of MCP_RESOLVE_REDIS_URL");
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
        eprintln!("MCP_RESOLVE_REDIS_URL is set, but rollout was built without the `redis` feature");
        std::process::exit(2);
    }
    if let Some(ms) = std::env::var("MCP_RESOLVE_TASK_LEASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        server = server.task_lease(Duration::from_millis(ms));
    }
    if let Some(n) = std::env::var("MCP_RESOLVE_MAX_TASKS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        // A load run: every task is one anonymous caller's, each asking once.
        let questions = u32::try_from(n).unwrap_or(u32::MAX);
        server = server
            .max_tasks(n, n)
            .unlimited_call_rate()
            .question_limit(questions, Duration::from_secs(60));
    }
    server
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = server().await;
    match args.as_slice() {
        [] => server.serve_stdio().await,
        [flag, addr] if flag == "--http" => match addr.parse::<std::net::SocketAddr>() {
            Ok(a) => server.serve_http(a, mcp_resolve::HttpOptions::default()).await,
            Err(e) => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("--http {addr}: {e}"),
            )),
        },
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "usage: rollout [--http HOST:PORT]",
        )),
    }
}
