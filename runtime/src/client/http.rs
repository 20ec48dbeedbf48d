//! The client over Streamable HTTP: every message a POST; an answer in a JSON body or at the end
//! of an SSE stream that may first carry the server's notifications and (handshake era) its
//! requests, which are answered by POSTs of their own.

use super::ClientError;
use super::session::{Shared, lock};
use crate::outbound::{PlainHttp, Target};
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the headers of one POST say besides the body (2026-07-28: `Mcp-Method`, `Mcp-Name`,
/// `Mcp-Param-*`).
#[derive(Debug, Default)]
pub(crate) struct Hints {
    pub(crate) method: String,
    pub(crate) name: Option<String>,
    pub(crate) params: Vec<(String, String)>,
}

/// How often a handshake-era stream that ends before its answer is resumed (`Last-Event-ID`).
const MAX_RESUMES: usize = 5;
/// The longest `retry:` delay obeyed before resuming.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(10);

pub(crate) struct HttpLink {
    target: Target,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// `Mcp-Session-Id` (handshake era).
    pub(crate) session: Mutex<Option<String>>,
    /// `MCP-Protocol-Version` once known.
    pub(crate) version: Mutex<Option<&'static str>>,
    /// Whether requests carry `Mcp-Method` / `Mcp-Name` (2026-07-28).
    pub(crate) stateless: Mutex<bool>,
    max_message: usize,
    shared: Arc<Shared>,
    /// The standalone GET stream's reader (handshake era), stopped on close.
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl HttpLink {
    pub(crate) fn new(
        url: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
        shared: Arc<Shared>,
        max_message: usize,
    ) -> Result<Arc<Self>, ClientError> {
        let target = Target::parse(url, PlainHttp::Anywhere, "")
            .map_err(|why| ClientError::Transport(format!("server URL `{url}`: {why}")))?;
        Ok(Arc::new(Self {
            target,
            headers,
            session: Mutex::new(None),
            version: Mutex::new(None),
            stateless: Mutex::new(false),
            max_message,
            shared,
            listener: Mutex::new(None),
        }))
    }

    fn post(&self, body: &Value, hints: Option<&Hints>) -> Result<Request<Full<Bytes>>, ClientError> {
        let mut r = Request::post(self.target.path())
            .header(header::HOST, self.target.authority())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header(header::USER_AGENT, concat!("mcp-resolve/", env!("CARGO_PKG_VERSION")));
        if let Some(v) = *lock(&self.version) {
            r = r.header("mcp-protocol-version", v);
        }
        if let Some(s) = lock(&self.session).as_deref() {
            r = r.header("mcp-session-id", s);
        }
        if let Some(h) = hints.filter(|_| *lock(&self.stateless)) {
            r = r.header("mcp-method", header_value(&h.method));
            if let Some(n) = &h.name {
                r = r.header("mcp-name", header_value(n));
            }
            for (name, value) in &h.params {
                r = r.header(format!("mcp-param-{name}"), header_value(value));
            }
        }
        for (k, v) in &self.headers {
            r = r.header(k, v);
        }
        r.body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| ClientError::Transport(format!("building the request: {e}")))
    }

    /// POSTs a request and returns its answer (a JSON-RPC response object).
    pub(crate) async fn request(
        self: &Arc<Self>,
        id: &Value,
        frame: &Value,
        hints: &Hints,
    ) -> Result<Value, ClientError> {
        let request = self.post(frame, Some(hints))?;
        let response = self
            .target
            .send(request)
            .await
            .map_err(|e| ClientError::Transport(format!("{}: {e}", self.target.url())))?;
        if hints.method == "initialize"
            && let Some(sid) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())
        {
            *lock(&self.session) = Some(sid.to_owned());
        }
        self.answer(id, response).await
    }

    /// POSTs a notification or the answer to a server's request; the server answers 202.
    pub(crate) async fn send(&self, frame: &Value, hints: Option<&Hints>) -> Result<(), ClientError> {
        let request = self.post(frame, hints)?;
        let response = self
            .target
            .send(request)
            .await
            .map_err(|e| ClientError::Transport(format!("{}: {e}", self.target.url())))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let body = read_body(response.into_body(), self.max_message)
            .await
            .unwrap_or_default();
        Err(ClientError::Http {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }

    async fn answer(self: &Arc<Self>, id: &Value, response: http::Response<Incoming>) -> Result<Value, ClientError> {
        let status = response.status();
        let sse = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
        if sse && status.is_success() {
            return self.stream(id, response.into_body()).await;
        }
        let body = read_body(response.into_body(), self.max_message).await?;
        // A JSON-RPC answer, also with a 4xx (an error the server explains).
        if let Ok(v) = serde_json::from_slice::<Value>(&body)
            && (v.get("result").is_some() || v.get("error").is_some())
        {
            return Ok(v);
        }
        if status == StatusCode::NOT_FOUND && lock(&self.session).is_some() {
            return Err(ClientError::Closed("the server ended the session (404)".into()));
        }
        Err(ClientError::Http {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }

    /// Reads an SSE stream until the answer to `id`; handles every other message on the way.
    /// A handshake-era stream that ends early is resumed with `Last-Event-ID`.
    async fn stream(self: &Arc<Self>, id: &Value, mut body: Incoming) -> Result<Value, ClientError> {
        let mut decoder = SseDecoder::new(self.max_message);
        let mut resumes = 0;
        loop {
            match body.frame().await {
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else { continue };
                    for event in decoder.push(&data)? {
                        if let Some(answer) = self.event(id, event) {
                            return Ok(answer);
                        }
                    }
                }
                Some(Err(e)) if decoder.last_id.is_none() => {
                    return Err(ClientError::Transport(format!("reading the event stream: {e}")));
                }
                Some(Err(_)) | None => {
                    // Ended before the answer: resume where it stopped, if it can be.
                    let Some(last) = decoder.last_id.clone() else {
                        return Err(ClientError::Transport(
                            "the event stream ended before the answer".into(),
                        ));
                    };
                    if resumes == MAX_RESUMES || *lock(&self.stateless) {
                        return Err(ClientError::Transport(format!(
                            "the event stream ended before the answer ({resumes} resumptions)"
                        )));
                    }
                    resumes += 1;
                    tokio::time::sleep(decoder.retry.unwrap_or(Duration::from_millis(500)).min(MAX_RETRY_DELAY)).await;
                    body = self.resume(&last).await?;
                    decoder.reset_partial();
                }
            }
        }
    }

    /// Opens the standalone GET stream (handshake era): the server's requests and notifications
    /// that belong to no POST arrive there. A server without one (405) is fine.
    pub(crate) fn listen(self: &Arc<Self>) {
        let link = Arc::clone(self);
        let task = tokio::spawn(async move {
            let body = match link.get(None).await {
                Ok(b) => b,
                Err(e) => {
                    tracing::debug!(error = %e, "mcp client: no standalone event stream");
                    return;
                }
            };
            let mut body = body;
            let mut decoder = SseDecoder::new(link.max_message);
            let none = Value::Null;
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(data) = frame.into_data() else { continue };
                let Ok(events) = decoder.push(&data) else { break };
                for event in events {
                    link.event(&none, event);
                }
            }
        });
        if let Some(old) = lock(&self.listener).replace(task) {
            old.abort();
        }
    }

    /// Ends the session: the GET stream stopped, `DELETE` sent (its answer does not matter).
    pub(crate) async fn close(&self) {
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
        let Some(session) = lock(&self.session).take() else {
            return;
        };
        let mut r = Request::delete(self.target.path())
            .header(header::HOST, self.target.authority())
            .header("mcp-session-id", session);
        if let Some(v) = *lock(&self.version) {
            r = r.header("mcp-protocol-version", v);
        }
        for (k, v) in &self.headers {
            r = r.header(k, v);
        }
        if let Ok(request) = r.body(Full::new(Bytes::new())) {
            let _ = tokio::time::timeout(Duration::from_secs(2), self.target.send(request)).await;
        }
    }

    /// GET with `Last-Event-ID`: the rest of a stream.
    async fn resume(&self, last: &str) -> Result<Incoming, ClientError> {
        self.get(Some(last)).await
    }

    /// A GET for an event stream, resuming after `last` if given.
    async fn get(&self, last: Option<&str>) -> Result<Incoming, ClientError> {
        let mut r = Request::get(self.target.path())
            .header(header::HOST, self.target.authority())
            .header(header::ACCEPT, "text/event-stream");
        if let Some(last) = last {
            r = r.header("last-event-id", header_value(last));
        }
        if let Some(v) = *lock(&self.version) {
            r = r.header("mcp-protocol-version", v);
        }
        if let Some(s) = lock(&self.session).as_deref() {
            r = r.header("mcp-session-id", s);
        }
        for (k, v) in &self.headers {
            r = r.header(k, v);
        }
        let request = r
            .body(Full::new(Bytes::new()))
            .map_err(|e| ClientError::Transport(format!("building the request: {e}")))?;
        let response = self
            .target
            .send(request)
            .await
            .map_err(|e| ClientError::Transport(format!("{}: {e}", self.target.url())))?;
        if !response.status().is_success() {
            return Err(ClientError::Http {
                status: response.status().as_u16(),
                body: "opening an event stream".into(),
            });
        }
        Ok(response.into_body())
    }

    /// One event: the answer to `id`, or a message handled here.
    fn event(self: &Arc<Self>, id: &Value, data: String) -> Option<Value> {
        let message: Value = match serde_json::from_str(&data) {
            Ok(v) => v,
            // A priming event (empty data) or something else that is not a message.
            Err(_) => return None,
        };
        let is_answer =
            message.get("method").is_none() && (message.get("result").is_some() || message.get("error").is_some());
        if is_answer {
            if message.get("id") == Some(id) {
                return Some(message);
            }
            tracing::debug!(%message, "mcp client: an answer to another request on this stream");
            return None;
        }
        let link = Arc::clone(self);
        self.shared.incoming(message, move |answer| {
            tokio::spawn(async move {
                if let Err(e) = link.send(&answer, None).await {
                    tracing::warn!(error = %e, "mcp client: sending the answer to the server's request");
                }
            });
        });
        None
    }
}

/// A header value: as is when it is visible ASCII, else `=?base64?…?=` (2026-07-28).
pub(crate) fn header_value(s: &str) -> HeaderValue {
    let plain = s.bytes().all(|b| (0x20..0x7f).contains(&b)) && s.trim() == s;
    if plain && let Ok(v) = HeaderValue::from_str(s) {
        return v;
    }
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    HeaderValue::from_str(&format!("=?base64?{encoded}?=")).unwrap_or_else(|_| HeaderValue::from_static(""))
}

async fn read_body(body: Incoming, max: usize) -> Result<Bytes, ClientError> {
    http_body_util::Limited::new(body, max)
        .collect()
        .await
        .map(|b| b.to_bytes())
        .map_err(|e| ClientError::Transport(format!("reading the answer (at most {max} bytes): {e}")))
}

/// Server-sent events, decoded as they arrive: each complete event's data (its `data:` lines
/// joined by `\n`), the last event id and the `retry:` delay kept.
pub(crate) struct SseDecoder {
    buf: Vec<u8>,
    data: Option<String>,
    max: usize,
    pub(crate) last_id: Option<String>,
    pub(crate) retry: Option<Duration>,
}

impl SseDecoder {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            data: None,
            max,
            last_id: None,
            retry: None,
        }
    }

    /// Drops a partly received event (its stream broke).
    pub(crate) fn reset_partial(&mut self) {
        self.buf.clear();
        self.data = None;
    }

    /// Feeds bytes; returns the data of each event they complete.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<String>, ClientError> {
        self.buf.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.buf.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line).into_owned();
            if line.is_empty() {
                if let Some(d) = self.data.take() {
                    events.push(d);
                }
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line.as_str(), ""),
            };
            match field {
                "data" => {
                    let d = self.data.get_or_insert_with(String::new);
                    if !d.is_empty() {
                        d.push('\n');
                    }
                    d.push_str(value);
                }
                "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
                "retry" => {
                    if let Ok(ms) = value.parse::<u64>() {
                        self.retry = Some(Duration::from_millis(ms));
                    }
                }
                _ => {}
            }
            if self.data.as_ref().is_some_and(|d| d.len() > self.max) {
                return Err(ClientError::Transport(format!(
                    "an event of the stream is longer than {} bytes",
                    self.max
                )));
            }
        }
        if self.buf.len() > self.max {
            return Err(ClientError::Transport(format!(
                "a line of the event stream is longer than {} bytes",
                self.max
            )));
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_across_chunks_and_keep_their_id_and_retry() {
        let mut d = SseDecoder::new(1024);
        assert!(d.push(b"id: 7\nretry: 250\ndata: {\"a\"").unwrap().is_empty());
        let events = d.push(b":1}\r\n\r\n: comment\n\ndata: x\ndata: y\n\n").unwrap();
        assert_eq!(events, ["{\"a\":1}", "x\ny"]);
        assert_eq!(d.last_id.as_deref(), Some("7"));
        assert_eq!(d.retry, Some(Duration::from_millis(250)));
        // A priming event: an id and empty data.
        assert_eq!(d.push(b"id: 8\ndata:\n\n").unwrap(), [""]);
        assert_eq!(d.last_id.as_deref(), Some("8"));
    }

    #[test]
    fn an_event_over_the_bound_is_an_error() {
        let mut d = SseDecoder::new(8);
        assert!(d.push(b"data: 0123456789\n").is_err());
        let mut d = SseDecoder::new(8);
        assert!(d.push(b"data: 0123456789").is_err());
    }

    #[test]
    fn header_values_outside_visible_ascii_are_base64_encoded() {
        assert_eq!(header_value("delete_folder"), "delete_folder");
        assert_eq!(header_value("café"), "=?base64?Y2Fmw6k=?=");
        assert_eq!(header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
    }
}
