//! The stdio transport: stdin in, stdout out, logs on stderr.

use crate::server::Server;
use std::sync::Arc;

impl Server {
    /// Serves this server on the process's stdin and stdout until stdin closes; calls still in
    /// flight then finish before it returns.
    ///
    /// The first request decides the protocol era: a request carrying the 2026-07-28 `_meta`
    /// envelope makes the connection stateless; `initialize` (or anything else) makes it a
    /// handshake-era connection.
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// mcp_resolve_runtime::Server::new("notes").serve_stdio().await
    /// # }
    /// ```
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let server = Arc::new(self);
        super::serve_connection(server, tokio::io::stdin(), tokio::io::stdout()).await
    }
}
