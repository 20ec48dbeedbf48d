//! The stdio transport: stdin in, stdout out, logs on stderr.

use crate::server::Server;
use std::pin::Pin;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

type Input = Pin<Box<dyn AsyncRead + Send>>;
type Output = Pin<Box<dyn AsyncWrite + Send>>;

impl Server {
    /// Serves this server on the process's stdin and stdout until stdin closes; calls still in
    /// flight then finish before it returns.
    ///
    /// The first request decides the protocol era: a request carrying the 2026-07-28 `_meta`
    /// envelope makes the connection stateless; `initialize` (or anything else) makes it a
    /// handshake-era connection.
    ///
    /// When stdin or stdout is a pipe (as when a client launches the server), it is read or
    /// written directly by the runtime's event loop, in non-blocking mode; anything else (a
    /// terminal, a file) goes through tokio's blocking stdio.
    ///
    /// A stdio server has one client. On either tokio runtime, a call that is done without
    /// waiting is answered on the thread that read its request (one `read`, one `write` and one
    /// `epoll_wait` per sequential call, no `futex`: `tests/syscalls.rs`); on the multi-thread
    /// runtime `#[tokio::main]` gives, the connection runs as a task on one of its workers. A
    /// tool that blocks or computes for long before it awaits holds the connection meanwhile:
    /// hand such work to `tokio::task::spawn_blocking` (the `tool` macro's documentation, "Tools
    /// that compute or block for long").
    ///
    /// It refuses to start (an [`std::io::ErrorKind::InvalidInput`] error naming the type and
    /// the item) when an item, resolver or completer takes a `State<T>` the server does not hold
    /// ([`Server::state`](crate::Server::state)).
    ///
    /// ```no_run
    /// # async fn run() -> std::io::Result<()> {
    /// mcp_resolve_runtime::Server::new("notes").serve_stdio().await
    /// # }
    /// ```
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        if let Err(why) = self.check_states() {
            tracing::error!("{why}");
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, why));
        }
        let server = Arc::new(self);
        // On stderr through the author's subscriber (stdout carries the protocol): a server
        // started by hand otherwise waits in silence.
        tracing::info!(server = %server.info().name, "serving MCP on stdio: waiting for a client on stdin");
        serve_shared(server).await
    }
}

/// Serves `server` on this process's stdin and stdout until stdin ends.
pub(crate) async fn serve_shared(server: Arc<Server>) -> std::io::Result<()> {
    let (input, output) = stdio();
    let _open = crate::telemetry::Open::connection("stdio");
    let connection = super::connection::serve_connection(server, input, output);
    // `#[tokio::main]` polls its future on the main thread, which is not one of the multi-thread
    // runtime's workers: the worker waiting on the event loop would see each request arrive, wake
    // the main thread to read it (a `futex` each way) and wait again. Spawned, the connection
    // runs on the worker that sees its input, and a lone call stays on that thread
    // (tests/syscalls.rs). Dropping this future stops the connection as before.
    if tokio::runtime::Handle::current().runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return connection.await;
    }
    match tokio_util::task::AbortOnDropHandle::new(tokio::spawn(connection)).await {
        Ok(served) => served,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(std::io::Error::other(e)),
    }
}

#[cfg(unix)]
fn stdio() -> (Input, Output) {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    use tokio::net::unix::pipe;

    // A duplicate of the descriptor, if it is a pipe: only pipes are switched to non-blocking
    // mode (the flag is shared with descriptor 0 or 1 themselves, which nothing else here uses).
    fn fifo(fd: std::os::fd::BorrowedFd<'_>) -> Option<std::fs::File> {
        let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
        file.metadata().ok()?.file_type().is_fifo().then_some(file)
    }
    let input: Input = match fifo(std::io::stdin().as_fd()).map(pipe::Receiver::from_file) {
        Some(Ok(r)) => Box::pin(r),
        _ => Box::pin(tokio::io::stdin()),
    };
    let output: Output = match fifo(std::io::stdout().as_fd()).map(pipe::Sender::from_file) {
        Some(Ok(w)) => Box::pin(w),
        _ => Box::pin(tokio::io::stdout()),
    };
    (input, output)
}

#[cfg(not(unix))]
fn stdio() -> (Input, Output) {
    (Box::pin(tokio::io::stdin()), Box::pin(tokio::io::stdout()))
}
