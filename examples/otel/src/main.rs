//! The projects server over Streamable HTTP, its spans exported over OTLP (HTTP/protobuf) to
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`), each request's in the trace
//! its client carried.
//!
//! ```text
//! cargo run -p mcp-resolve-example-otel -- --http 127.0.0.1:8000   # MCP on /mcp
//! ```
//!
//! Ctrl-C or SIGTERM stops it gracefully: calls in flight finish (30 s at most), then the spans
//! still queued are exported before it exits. See `README.md` beside `Cargo.toml`.

use mcp_resolve::HttpOptions;
use mcp_resolve_example_otel::{otlp_exporter, server, subscriber, tracer_provider};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = match args.as_slice() {
        [flag, addr] if flag == "--http" => match addr.parse::<std::net::SocketAddr>() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("--http {addr}: {e}");
                std::process::exit(2);
            }
        },
        _ => {
            eprintln!("usage: otel --http HOST:PORT");
            std::process::exit(2);
        }
    };
    let exporter = otlp_exporter().unwrap_or_else(|e| {
        // A plain line naming the variable, not `main`'s debug print of an error.
        eprintln!("OTLP exporter: {e}");
        std::process::exit(2)
    });
    let provider = tracer_provider(exporter);
    tracing::subscriber::set_global_default(subscriber(&provider)).map_err(std::io::Error::other)?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let served = server()
        .serve_http_until(listener, HttpOptions::default(), shutdown_signal())
        .await;
    // The spans still queued go out now (a failed export is logged as it happens); the
    // exporter's blocking HTTP client runs on the batch processor's own thread, so wait for it
    // off the runtime's workers.
    match tokio::task::spawn_blocking(move || provider.shutdown()).await {
        Ok(Ok(())) => tracing::info!("span exporter shut down"),
        Ok(Err(e)) => tracing::error!("shutting the span exporter down: {e}"),
        Err(e) => tracing::error!("shutting the span exporter down: {e}"),
    }
    served
}

/// Resolves on Ctrl-C, or on SIGTERM (what a container runtime or systemd sends).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = term => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
