//! The server the load benchmark drives (see `docs/PERFORMANCE.md`): the same three tools the
//! rmcp and Python SDK peers under `benches/peers/` serve, so the figures compare like with like.
//!
//! ```text
//! cargo run --release --example bench_server                          # stdio
//! cargo run --release --example bench_server -- --http 127.0.0.1:8000 # Streamable HTTP on /mcp
//! ```
//!
//! - `echo {text}` answers `text`: the cost of the framework around a call;
//! - `add {a, b}` answers the sum as structured content;
//! - `ask_name {}` always asks a one-field form and answers `hello {name}`: one elicitation
//!   round, as an `InputRequiredResult` and a retry on 2026-07-28, as an `elicitation/create`
//!   request on 2025-06-18 / 2025-11-25.
//!
//! A last `--current-thread` runs it on tokio's current-thread runtime instead of the
//! multi-thread one `#[tokio::main]` gives. On both, a stdio call that does not wait stays on
//! the thread that read it (`tests/syscalls.rs`); the benchmark compares the two (see
//! `docs/PERFORMANCE.md`).
//!
//! Replicas behind a load balancer (`benches/replicas.sh`) share `MCP_RESOLVE_STATE_KEY` (32+
//! random bytes in hex or base64, e.g. from `openssl rand -base64 32`; a passphrase is refused).
//! Built with `--features jwt`, bearer tokens are required as `HttpOptions::bearer_from_env`
//! reads the environment (`MCP_RESOLVE_JWT_SECRET` for HS256, 32+ random bytes in hex or base64,
//! with the audience `MCP_RESOLVE_JWT_AUDIENCE` and the authorization server
//! `MCP_RESOLVE_AUTH_SERVER`). Without these variables nothing changes.
//!
//! Logs go to stderr at `warn` unless `RUST_LOG` says otherwise (`RUST_LOG=mcp_resolve=info`
//! turns the request spans on; with `MCP_RESOLVE_BENCH_SPANS=registry` they are recorded by
//! tracing-subscriber's registry alone, filtered by an `EnvFilter`, formatted and written
//! nowhere; `MCP_RESOLVE_BENCH_SPANS=targets` reads `RUST_LOG` as a static `Targets` filter);
//! `MCP_RESOLVE_BENCH_METRICS=1` installs a Prometheus recorder for the metrics of a build with
//! the `metrics` feature.

use mcp_resolve::prelude::*;

/// The one-field form `ask_name` asks.
#[derive(Clone, Debug, FormSchema)]
pub(crate) struct UserInfo {
    name: String,
}

/// Always asks: the benchmark measures the question round, not a shortcut.
#[resolver]
async fn who() -> Resolution<UserInfo> {
    Elicit::form("What is your name?").into()
}

/// Echo the text back.
#[tool(read_only = true, idempotent = true)]
pub(crate) async fn echo(
    /// The text to send back.
    text: String,
) -> String {
    text
}

/// Add two integers.
#[tool(read_only = true, idempotent = true)]
pub(crate) async fn add(a: i64, b: i64) -> Json<i64> {
    Json(a.saturating_add(b))
}

/// Ask the user's name, then greet them.
#[tool]
pub(crate) async fn ask_name(#[resolve(who)] user: ElicitationResult<UserInfo>) -> String {
    match user {
        ElicitationResult::Accepted(u) => format!("hello {}", u.name),
        ElicitationResult::Declined => "declined".into(),
        ElicitationResult::Cancelled => "cancelled".into(),
    }
}

fn main() -> std::io::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let current_thread = args.last().is_some_and(|a| a == "--current-thread");
    if current_thread {
        args.pop();
    }
    let runtime = if current_thread {
        tokio::runtime::Builder::new_current_thread().enable_all().build()?
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()?
    };
    runtime.block_on(serve(args))
}

async fn serve(args: Vec<String>) -> std::io::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let spans = std::env::var("MCP_RESOLVE_BENCH_SPANS").unwrap_or_default();
    if spans == "registry" || spans == "targets" {
        // Spans recorded by the registry and written nowhere: what any subscriber pays before
        // its own work (docs/PERFORMANCE.md, "Spans and metrics turned on"); `targets` filters
        // with RUST_LOG's directives read as a static `Targets` filter instead of an `EnvFilter`
        // (which looks up every span it is told of, to match directives on span fields).
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        if spans == "targets" {
            let targets: tracing_subscriber::filter::Targets = std::env::var("RUST_LOG")
                .unwrap_or_else(|_| "warn".into())
                .parse()
                .map_err(std::io::Error::other)?;
            tracing_subscriber::registry().with(targets).init();
        } else {
            tracing_subscriber::registry().with(filter).init();
        }
    } else {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_env_filter(filter)
            .init();
    }
    // With `MCP_RESOLVE_BENCH_METRICS=1`, the metrics an operator would scrape are recorded
    // (a Prometheus recorder, as in `examples/axum.rs`; the runtime records only when built with
    // the `metrics` feature): what turning them on costs a call (docs/PERFORMANCE.md).
    let _metrics = match std::env::var_os("MCP_RESOLVE_BENCH_METRICS") {
        Some(_) => {
            let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
                .install_recorder()
                .map_err(std::io::Error::other)?;
            // As a deployed exporter does (its listener's upkeep, every 5 s by default): the
            // histograms' samples are folded in, not kept until a scrape that never comes.
            let upkeep = handle.clone();
            tokio::spawn(async move {
                let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
                loop {
                    every.tick().await;
                    upkeep.run_upkeep();
                }
            });
            Some(handle)
        }
        None => None,
    };
    let mut server = Server::new("bench")
        .version(env!("CARGO_PKG_VERSION"))
        // The load driver is one caller calling as fast as it can: a benchmark measures the
        // server, not the per-caller rate limit (100 calls a second by default).
        .unlimited_call_rate()
        // Nor the question limit (100 questions per tool and caller a minute by default, and
        // every unauthenticated caller counts as one): `ask_name` asks on every call, and a
        // run makes hundreds of thousands.
        .question_limit(u32::MAX, std::time::Duration::from_secs(1))
        // And the pipelined runs send every call at once: each `ask_name` waits for its answer,
        // past the 64 questions that may wait per connection by default.
        .max_waiting(1 << 20)
        .tool(echo)
        .tool(add)
        .tool(ask_name);
    match mcp_resolve::seal::StateKeys::from_env("MCP_RESOLVE_STATE_KEY") {
        Ok(Some(keys)) => server = server.state_keys(keys),
        Ok(None) => {}
        Err(e) => {
            // A plain line, not `main`'s debug print of an error: it says how to make a key.
            eprintln!("MCP_RESOLVE_STATE_KEY: {e}");
            std::process::exit(2);
        }
    }
    match args.as_slice() {
        [] => server.serve_stdio().await,
        [flag, addr] if flag == "--http" => {
            let addr: std::net::SocketAddr = addr
                .parse()
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("--http {addr}: {e}")))?;
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("listening on {}", listener.local_addr()?);
            // MCP_RESOLVE_JWT_SECRET or MCP_RESOLVE_JWKS_URL (with MCP_RESOLVE_JWT_AUDIENCE)
            // require bearer tokens (the `jwt` feature).
            let options = mcp_resolve::HttpOptions::default()
                .bearer_from_env()
                .unwrap_or_else(|e| {
                    // A plain line naming the variable, not `main`'s debug print of an error.
                    eprintln!("{e}");
                    std::process::exit(2)
                });
            server.serve_http_on(listener, options).await
        }
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "usage: bench_server [--http HOST:PORT] [--current-thread]",
        )),
    }
}
