//! The client over stdio: a child process, one JSON-RPC message per line on its stdin and stdout;
//! its stderr passed through or kept.

use super::ClientError;
use super::session::{Shared, lock};
use crate::transport::frames::{Frame, FrameReader};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::Stdio as StdStdio;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};

/// What becomes of the child's stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stderr {
    /// Written to this process's stderr (the default: a server's logs stay visible).
    #[default]
    Inherit,
    /// Kept (its last 64 KiB), for [`Client::stderr`](super::Client::stderr) and for the error
    /// when the child exits.
    Capture,
    /// Dropped.
    Null,
}

/// How much of a captured stderr is kept.
const STDERR_KEPT: usize = 64 * 1024;

type Pending = Arc<Mutex<Option<HashMap<String, oneshot::Sender<Value>>>>>;

pub(crate) struct StdioLink {
    out: mpsc::UnboundedSender<String>,
    /// The requests waiting for an answer, by id; `None` once the child's stdout ended.
    pending: Pending,
    child: Mutex<Option<Child>>,
    pub(crate) stderr: Arc<Mutex<Vec<u8>>>,
    /// Tells the writer to stop, which closes the child's stdin.
    closing: Arc<tokio::sync::Notify>,
}

impl StdioLink {
    pub(crate) fn spawn(
        mut command: Command,
        stderr: Stderr,
        shared: Arc<Shared>,
        max_message: usize,
    ) -> Result<Arc<Self>, ClientError> {
        command
            .stdin(StdStdio::piped())
            .stdout(StdStdio::piped())
            .stderr(match stderr {
                Stderr::Inherit => StdStdio::inherit(),
                Stderr::Capture => StdStdio::piped(),
                Stderr::Null => StdStdio::null(),
            })
            .kill_on_drop(true);
        let program = command.as_std().get_program().to_string_lossy().into_owned();
        let mut child = command
            .spawn()
            .map_err(|e| ClientError::Transport(format!("starting `{program}`: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Transport("the child's stdin or stdout is missing".into()));
        };
        let kept = Arc::new(Mutex::new(Vec::new()));
        let (stderr_done, stderr_ended) = tokio::sync::watch::channel(false);
        if let Some(mut err) = child.stderr.take() {
            let kept = Arc::clone(&kept);
            tokio::spawn(async move {
                let _done = DoneOnDrop(stderr_done);
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut k = lock(&kept);
                    k.extend_from_slice(&buf[..n]);
                    let over = k.len().saturating_sub(STDERR_KEPT);
                    k.drain(..over);
                }
            });
        }
        Ok(Self::over(
            stdout,
            stdin,
            shared,
            max_message,
            Some(child),
            kept,
            Some(stderr_ended),
        ))
    }

    /// Speaks over any pair of byte streams (the child's pipes, an in-process server's pipe).
    /// `stderr_ended` turns true once the child's stderr is read to its end: when its stdout
    /// ends, the requests waiting learn it only after that (half a second at most), so the error
    /// they get carries what the server said last.
    pub(crate) fn over<R, W>(
        reader: R,
        mut stdin: W,
        shared: Arc<Shared>,
        max_message: usize,
        child: Option<Child>,
        kept: Arc<Mutex<Vec<u8>>>,
        stderr_ended: Option<tokio::sync::watch::Receiver<bool>>,
    ) -> Arc<Self>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let stdout = reader;
        let (out, mut rx) = mpsc::unbounded_channel::<String>();
        let closing = Arc::new(tokio::sync::Notify::new());
        let close_signal = Arc::clone(&closing);
        tokio::spawn(async move {
            loop {
                let line = tokio::select! {
                    line = rx.recv() => line,
                    () = close_signal.notified() => None,
                };
                // Ending the loop drops stdin: the server reads its end of input.
                let Some(line) = line else { break };
                let wrote = async {
                    stdin.write_all(line.as_bytes()).await?;
                    stdin.write_all(b"\n").await?;
                    stdin.flush().await
                };
                if wrote.await.is_err() {
                    break;
                }
            }
        });
        let link = Arc::new(Self {
            out,
            pending: Arc::new(Mutex::new(Some(HashMap::new()))),
            child: Mutex::new(child),
            stderr: kept,
            closing,
        });
        let pending = Arc::clone(&link.pending);
        let answers = link.out.clone();
        tokio::spawn(async move {
            let mut frames = FrameReader::new(stdout, max_message);
            loop {
                match frames.next().await {
                    Ok(Frame::Line(bytes)) => {
                        let Ok(message) = serde_json::from_slice::<Value>(&bytes) else {
                            tracing::warn!("mcp client: the server wrote a line that is not JSON; skipped");
                            continue;
                        };
                        let is_answer = message.get("method").is_none()
                            && (message.get("result").is_some() || message.get("error").is_some());
                        if is_answer {
                            let id = message.get("id").map(Value::to_string).unwrap_or_default();
                            let waiter = lock(&pending).as_mut().and_then(|p| p.remove(&id));
                            match waiter {
                                Some(w) => {
                                    let _ = w.send(message);
                                }
                                None => tracing::debug!(%id, "mcp client: an answer to no request in flight"),
                            }
                        } else {
                            let answers = answers.clone();
                            shared.incoming(message, move |answer| {
                                let _ = answers.send(answer.to_string());
                            });
                        }
                    }
                    Ok(Frame::TooLarge(n)) => {
                        tracing::warn!(
                            bytes = n,
                            limit = max_message,
                            "mcp client: the server wrote a message over the limit; skipped"
                        );
                    }
                    Ok(Frame::Eof) | Err(_) => break,
                }
            }
            if let Some(mut ended) = stderr_ended {
                let _ = tokio::time::timeout(std::time::Duration::from_millis(500), ended.wait_for(|e| *e)).await;
            }
            // Every request still waiting learns that no answer will come.
            lock(&pending).take();
        });
        link
    }

    /// Sends `frame` (a request with `id`) and waits for its answer. Dropping the future before
    /// the answer (a timeout, the caller giving up) sends `notifications/cancelled`.
    pub(crate) async fn request(&self, id: &Value, frame: &Value) -> Result<Value, ClientError> {
        let key = id.to_string();
        let (tx, rx) = oneshot::channel();
        match lock(&self.pending).as_mut() {
            Some(p) => p.insert(key.clone(), tx),
            None => return Err(self.closed()),
        };
        let mut guard = CancelOnDrop {
            link: self,
            id: Some(id.clone()),
            key,
        };
        if self.out.send(frame.to_string()).is_err() {
            guard.id = None;
            return Err(self.closed());
        }
        let answer = rx.await;
        guard.id = None;
        answer.map_err(|_| self.closed())
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, frame: &Value) -> Result<(), ClientError> {
        self.out.send(frame.to_string()).map_err(|_| self.closed())
    }

    fn closed(&self) -> ClientError {
        let tail = String::from_utf8_lossy(&lock(&self.stderr)).trim().to_owned();
        let status = lock(&self.child).as_mut().and_then(|c| c.try_wait().ok().flatten());
        let mut why = "the server closed its stdout".to_owned();
        if let Some(s) = status {
            why = format!("the server exited ({s})");
        }
        if !tail.is_empty() {
            let start = tail.len().saturating_sub(2000);
            let start = (start..tail.len())
                .find(|&i| tail.is_char_boundary(i))
                .unwrap_or(tail.len());
            why = format!("{why}; its stderr ends with:\n{}", &tail[start..]);
        }
        ClientError::Closed(why)
    }

    /// Closes the child's stdin and waits for it to exit (killing it after `grace`).
    pub(crate) async fn close(&self, grace: std::time::Duration) {
        self.closing.notify_one();
        let child = lock(&self.child).take();
        if let Some(mut child) = child
            && tokio::time::timeout(grace, child.wait()).await.is_err()
        {
            let _ = child.kill().await;
        }
    }
}

/// Says "stderr read to its end" when the reader stops, however it stops.
struct DoneOnDrop(tokio::sync::watch::Sender<bool>);

impl Drop for DoneOnDrop {
    fn drop(&mut self) {
        self.0.send_replace(true);
    }
}

/// Removes a request that is given up from the waiting ones and tells the server.
struct CancelOnDrop<'a> {
    link: &'a StdioLink,
    id: Option<Value>,
    key: String,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            if let Some(p) = lock(&self.link.pending).as_mut() {
                p.remove(&self.key);
            }
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "the client gave up waiting"}});
            let _ = self.link.out.send(cancel.to_string());
        }
    }
}
