//! The Notes server (`examples/notes.rs`: `delete_folder`, `add`, `summarize_folder`, the
//! `notes://folder/{name}` resource) mounted at `/mcp` in an axum application, beside the
//! application's own routes and middleware: one port, one set of middleware, one shutdown.
//!
//! ```text
//! cargo run --features tower,metrics --example axum -- --http 127.0.0.1:8000
//! ```
//!
//! - `POST|GET|DELETE /mcp`: MCP (Streamable HTTP), both eras, with every check of
//!   `Server::serve_http` (`Host` and `Origin`, body size and time, sessions);
//! - `GET /health`: `ok`;
//! - `GET /api/folders/{name}`: a folder's file names as JSON, read from the very state the MCP
//!   tools change (`Server::state_of`);
//! - `GET /metrics`: the Prometheus text of the server's metrics (feature `metrics`).
//!
//! Every response carries an `x-request-id` (the client's, or a new UUID), each request runs in
//! a trace span naming it, and a request to the application's own routes that has no response
//! after 30 s gets 408 (not `/mcp`: a tool call may rightly take longer). Ctrl-C or SIGTERM
//! stops it gracefully: no new connections, handshake-era GET and listen streams end, questions
//! still waiting for a client fail (their calls answer), requests in flight finish (30 s at
//! most; then the sessions are closed and what they run is cancelled), and it exits with 0.
//! What a listener does and axum's does not is the application's job (docs/OPERATIONS.md): cap
//! connections and bound the time to send headers, e.g. with a proxy in front.
//! Logs go to stderr (`RUST_LOG=debug` for each request).

use axum::Router;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderName, Request, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::net::SocketAddr;
use std::time::Duration;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

#[allow(dead_code)] // its `main` and the pieces only that `main` uses
#[path = "notes.rs"]
mod notes;

/// How long requests in flight may take to finish once a stop begins.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// How long a request may take to get its response (its headers: an SSE stream then runs on).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let addr = address()?;
    // Registered before the port opens: a signal that comes early is not lost.
    let signal = notes::shutdown_signal()?;

    // The recorder the server's metrics go to, rendered by `GET /metrics`; its upkeep (folding
    // histogram samples) is the application's to run.
    let metrics = PrometheusBuilder::new()
        .install_recorder()
        .map_err(std::io::Error::other)?;
    let upkeep = metrics.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });

    let server = notes::server();
    let folders = server
        .state_of::<notes::Folders>()
        .ok_or_else(|| std::io::Error::other("the notes server holds its folders"))?;
    // The client's address (per-address rate limits) from axum's `ConnectInfo`.
    let mcp = server
        .into_http_service(mcp_resolve::HttpOptions::default())?
        .client_addr_from(|ext| ext.get::<ConnectInfo<SocketAddr>>().map(|c| c.0));

    let x_request_id = HeaderName::from_static("x-request-id");
    // The application's own routes, each bounded by a timeout. Not `/mcp`: a tool call may
    // rightly take longer (a 2026-07-28 call answered as JSON would get 408 and be cancelled),
    // and MCP bounds its own requests (body size and time, questions, rounds).
    let own = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/api/folders/{name}", get(folder).with_state(folders))
        .route("/metrics", get(render).with_state(metrics))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ));
    let app = Router::new()
        .route_service("/mcp", mcp.clone())
        .merge(own)
        // The last layer added runs first: a request id is set (unless the client sent one),
        // copied onto the response, named by the request's span.
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
            let id = req.headers().get("x-request-id").and_then(|v| v.to_str().ok());
            tracing::info_span!("request", method = %req.method(), path = req.uri().path(), id)
        }))
        .layer(PropagateRequestIdLayer::new(x_request_id.clone()))
        .layer(SetRequestIdLayer::new(x_request_id, MakeRequestUuid));
    // No CORS layer: MCP refuses an `Origin` it was not told about (403) whatever CORS says;
    // a browser client of another origin needs `HttpOptions::allow_origin` and a `CorsLayer`
    // that exposes `Mcp-Session-Id`.

    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!("serving on http://{addr}: /mcp, /health, /api/folders/{{name}}, /metrics");
    let (begun, stopping) = tokio::sync::oneshot::channel::<()>();
    let stop = mcp.clone();
    let serve = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(async move {
            signal.await;
            // New requests get 503, GET streams end, waiting questions fail (their calls answer).
            stop.shutdown();
            let _ = begun.send(());
        })
        .into_future();
    tokio::pin!(serve);
    let overdue = async {
        if stopping.await.is_ok() {
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        served = &mut serve => served?,
        () = overdue => {
            // Past the grace: the sessions end, cancelling their calls, which answer; a
            // connection still open a second later is dropped with the runtime.
            tracing::warn!("requests still running after the grace are cancelled");
            mcp.close();
            if let Ok(served) = tokio::time::timeout(Duration::from_secs(1), serve).await {
                served?;
            }
        }
    }
    // Every session ends.
    mcp.close();
    tracing::info!("shut down");
    Ok(())
}

/// `GET /api/folders/{name}`: the folder's file names, or 404.
async fn folder(
    State(folders): State<mcp_resolve::State<notes::Folders>>,
    Path(name): Path<String>,
) -> impl IntoResponse {
    let path = format!("/tmp/notes/{name}");
    match folders.files(&path) {
        Some(files) => (
            StatusCode::OK,
            axum::Json(serde_json::json!({"path": path, "files": files})),
        ),
        None => (
            StatusCode::NOT_FOUND,
            axum::Json(serde_json::json!({"error": format!("no folder {path}")})),
        ),
    }
}

/// `GET /metrics`: the Prometheus text format. (A real deployment serves it where only the
/// scraper reaches, or behind the application's own authentication.)
async fn render(State(metrics): State<PrometheusHandle>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], metrics.render())
}

/// `--http HOST:PORT` (127.0.0.1:8000 when left out).
fn address() -> std::io::Result<SocketAddr> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = match args.as_slice() {
        [] => "127.0.0.1:8000",
        [flag, addr] if flag == "--http" => addr,
        _ => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "usage: axum [--http HOST:PORT]",
            ));
        }
    };
    addr.parse()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("--http {addr}: {e}")))
}
