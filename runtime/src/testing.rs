//! An in-memory client for unit tests: it speaks real newline-delimited JSON-RPC frames to a
//! server running on an in-memory pipe, on either protocol era.
//!
//! It is for testing tools and the framework; interoperability is proven against the official
//! SDK clients over real transports.
//!
//! Its methods panic on a broken pipe or a silent server (10 s): in a test that is the failure.
#![allow(clippy::expect_used)]

use crate::protocol::ProtocolVersion;
use crate::server::Server;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

/// How a [`TestClient`] frames its requests.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use mcp_resolve_runtime::{Server, testing::{TestClient, TestEra}};
/// let mut c = TestClient::connect(Server::new("t"), TestEra::Raw);
/// let r = c.request("tools/list", serde_json::json!({})).await;
/// assert_eq!(r["error"]["code"], -32602, "not initialized yet");
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum TestEra {
    /// Sends nothing extra; call [`TestClient::initialize`] yourself (or test what happens without).
    Raw,
    /// Adds the 2026-07-28 `_meta` envelope, with these client capabilities, to every request.
    Stateless(Value),
}

/// A client driving a [`Server`] over an in-memory pipe.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use mcp_resolve_runtime::{Server, testing::TestClient};
/// let mut client = TestClient::stateless(Server::new("t"), serde_json::json!({}));
/// let reply = client.request("tools/list", serde_json::json!({})).await;
/// assert_eq!(reply["result"]["resultType"], "complete");
/// assert_eq!(reply["result"]["tools"], serde_json::json!([]));
/// # }
/// ```
pub struct TestClient {
    writer: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    pending: VecDeque<Value>,
    next_id: i64,
    era: TestEra,
    server: Option<JoinHandle<std::io::Result<()>>>,
    timeout: Duration,
}

impl TestClient {
    /// Starts `server` on an in-memory pipe and connects to it. An `Arc<Server>` may be given
    /// instead, so that several clients connect to one server (each is a connection of its own):
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_resolve_runtime::{Server, testing::{TestClient, TestEra}};
    /// use std::sync::Arc;
    /// let server = Arc::new(Server::new("t"));
    /// let mut a = TestClient::connect(server.clone(), TestEra::Raw);
    /// let mut b = TestClient::connect(server, TestEra::Raw);
    /// assert_eq!(a.initialize("2025-11-25", serde_json::json!({})).await["result"]["serverInfo"]["name"], "t");
    /// assert_eq!(b.initialize("2025-06-18", serde_json::json!({})).await["result"]["protocolVersion"], "2025-06-18");
    /// # }
    /// ```
    ///
    /// # Panics
    /// When the server lacks an application state one of its items takes (as serving it would
    /// fail), with the message naming the type and the item.
    pub fn connect(server: impl Into<Arc<Server>>, era: TestEra) -> Self {
        let server = server.into();
        if let Err(e) = server.check_states() {
            panic!("TestClient: {e}");
        }
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_side);
        let handle = tokio::spawn(crate::transport::connection::serve_connection(server, sr, sw));
        let (cr, cw) = tokio::io::split(client_side);
        Self {
            writer: cw,
            lines: BufReader::new(cr).lines(),
            pending: VecDeque::new(),
            next_id: 1,
            era,
            server: Some(handle),
            timeout: Duration::from_secs(10),
        }
    }
    /// A client that puts the 2026-07-28 envelope with `capabilities` on every request.
    pub fn stateless(server: impl Into<Arc<Server>>, capabilities: Value) -> Self {
        Self::connect(server, TestEra::Stateless(capabilities))
    }
    /// A client that adds nothing to requests.
    pub fn raw(server: impl Into<Arc<Server>>) -> Self {
        Self::connect(server, TestEra::Raw)
    }
    /// A handshake-era client, already through `initialize` and `notifications/initialized`.
    pub async fn handshake(server: impl Into<Arc<Server>>, version: ProtocolVersion, capabilities: Value) -> Self {
        let mut c = Self::raw(server);
        let reply = c.initialize(version.as_str(), capabilities).await;
        assert!(reply.get("result").is_some(), "initialize failed: {reply}");
        c
    }

    /// Sends `initialize` then `notifications/initialized`; returns the `initialize` response.
    pub async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let reply = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": { "name": "mcp-resolve-test", "version": "0" },
                }),
            )
            .await;
        self.notify("notifications/initialized", json!({})).await;
        reply
    }

    /// The `_meta` envelope a stateless request carries.
    pub fn envelope(capabilities: &Value) -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "mcp-resolve-test", "version": "0" },
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        })
    }

    fn with_envelope(&self, params: Value) -> Value {
        match (&self.era, params) {
            (TestEra::Stateless(caps), Value::Object(mut p)) => {
                let mut meta = match p.remove("_meta") {
                    Some(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                if let Value::Object(env) = Self::envelope(caps) {
                    for (k, v) in env {
                        meta.entry(k).or_insert(v);
                    }
                }
                p.insert("_meta".into(), Value::Object(meta));
                Value::Object(p)
            }
            (_, p) => p,
        }
    }

    /// Writes one raw frame (a newline is added).
    pub async fn send_raw(&mut self, frame: &str) {
        let mut bytes = frame.as_bytes().to_vec();
        bytes.push(b'\n');
        self.writer.write_all(&bytes).await.expect("server pipe closed");
        self.writer.flush().await.expect("server pipe closed");
    }

    /// Sends a JSON value as one frame.
    pub async fn send(&mut self, frame: &Value) {
        self.send_raw(&frame.to_string()).await;
    }

    /// Sends a notification (no envelope is added).
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await;
    }

    /// Sends a request without waiting; returns its id.
    pub async fn start(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let params = self.with_envelope(params);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        id
    }

    /// Sends a request and waits for its response frame (frames for other ids are kept for
    /// later).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params).await;
        self.response_to(&json!(id)).await
    }

    /// Waits for the response whose id is `id`.
    pub async fn response_to(&mut self, id: &Value) -> Value {
        if let Some(i) = self
            .pending
            .iter()
            .position(|f| f.get("id") == Some(id) && f.get("method").is_none())
        {
            return self.pending.remove(i).unwrap_or(Value::Null);
        }
        loop {
            let frame = self.recv_frame(|| format!("the response to request {id}")).await;
            if frame.get("id") == Some(id) && frame.get("method").is_none() {
                return frame;
            }
            self.pending.push_back(frame);
        }
    }

    /// The next frame from the server, whatever it is (earlier skipped frames first).
    pub async fn recv(&mut self) -> Value {
        match self.pending.pop_front() {
            Some(f) => f,
            None => self.recv_frame(|| "a frame".to_owned()).await,
        }
    }

    /// The next frame within `wait`, or `None`.
    pub async fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        if let Some(f) = self.pending.pop_front() {
            return Some(f);
        }
        match tokio::time::timeout(wait, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => serde_json::from_str(&line).ok(),
            _ => None,
        }
    }

    /// The next frame; panics naming `awaited` (what the caller waits for) when none comes.
    async fn recv_frame(&mut self, awaited: impl Fn() -> String) -> Value {
        let line = match tokio::time::timeout(self.timeout, self.lines.next_line()).await {
            Err(_) => panic!("TestClient: no {} from the server within {:?}", awaited(), self.timeout),
            Ok(Err(e)) => panic!("TestClient: the pipe failed while waiting for {}: {e}", awaited()),
            Ok(Ok(None)) => panic!("TestClient: the server closed the pipe while {} was awaited", awaited()),
            Ok(Ok(Some(line))) => line,
        };
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("server sent invalid JSON ({e}): {line}"))
    }

    /// Calls a tool and returns the whole response frame.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({ "name": name, "arguments": arguments }))
            .await
    }

    /// Closes the client's side (end of input for the server), collects every frame the server
    /// still sends until it closes, and returns them with what the server's loop returned.
    pub async fn close(mut self) -> (Vec<Value>, std::io::Result<()>) {
        self.writer.shutdown().await.ok();
        drop(self.writer);
        let mut frames: Vec<Value> = self.pending.drain(..).collect();
        while let Ok(Ok(Some(line))) = tokio::time::timeout(self.timeout, self.lines.next_line()).await {
            if let Ok(v) = serde_json::from_str(&line) {
                frames.push(v);
            }
        }
        let result = match self.server.take() {
            Some(h) => match tokio::time::timeout(self.timeout, h).await {
                Ok(ended) => ended.unwrap_or(Ok(())),
                Err(_) => panic!(
                    "TestClient: the server's loop did not end within {:?} of the client closing its side",
                    self.timeout
                ),
            },
            None => Ok(()),
        };
        (frames, result)
    }
}

/// A [`Store`](crate::store::Store) that always fails, as an unreachable Redis does: for testing that
/// single-use calls fail closed (-32603, nothing runs) and that other calls never need it.
///
/// ```
/// use mcp_resolve_runtime::{Server, store::Store, testing::FailingStore};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert!(FailingStore.get("k").await.is_err());
/// # });
/// let server = Server::new("t").store(FailingStore);
/// # let _ = server;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct FailingStore;

impl FailingStore {
    fn fail<'a, T: Send + 'a>() -> futures_util::future::BoxFuture<'a, Result<T, crate::store::StoreError>> {
        Box::pin(async { Err(crate::store::StoreError::new("the test store always fails")) })
    }
}

impl crate::store::Store for FailingStore {
    fn insert_new<'a>(
        &'a self,
        _: &'a str,
        _: &'a [u8],
        _: Duration,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, crate::store::StoreError>> {
        Self::fail()
    }
    fn get<'a>(
        &'a self,
        _: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<Option<Vec<u8>>, crate::store::StoreError>> {
        Self::fail()
    }
    fn replace<'a>(
        &'a self,
        _: &'a str,
        _: &'a [u8],
        _: &'a [u8],
        _: Duration,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, crate::store::StoreError>> {
        Self::fail()
    }
}

/// A [`MemoryStore`](crate::store::MemoryStore) that records the key and time to live of every write
/// (`insert_new` and `replace`, taken or not): for testing how long the server keeps what it
/// keeps, such as a used single-use answer (`mcp-resolve/used/…`, held until no replica would
/// take its state: `state_ttl` + 2 × `state_leeway` at most). Clones share the entries and the
/// record, so a test keeps one and gives the server another.
///
/// ```
/// use mcp_resolve_runtime::{Server, store::Store, testing::RecordingStore};
/// use std::time::Duration;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = RecordingStore::default();
/// let server = Server::new("t").store(store.clone());
/// assert!(store.insert_new("k", b"", Duration::from_secs(5)).await.unwrap());
/// assert!(!store.insert_new("k", b"", Duration::from_secs(9)).await.unwrap());
/// assert_eq!(
///     store.writes(),
///     [("k".to_string(), Duration::from_secs(5)), ("k".to_string(), Duration::from_secs(9))]
/// );
/// # let _ = server;
/// # });
/// ```
#[derive(Clone, Debug, Default)]
pub struct RecordingStore {
    entries: Arc<crate::store::MemoryStore>,
    writes: Arc<std::sync::Mutex<Vec<(String, Duration)>>>,
}

impl RecordingStore {
    /// Every write so far, in order: its key and the time to live it was given.
    pub fn writes(&self) -> Vec<(String, Duration)> {
        self.writes.lock().map(|w| w.clone()).unwrap_or_default()
    }

    fn record(&self, key: &str, ttl: Duration) {
        if let Ok(mut w) = self.writes.lock() {
            w.push((key.to_owned(), ttl));
        }
    }
}

impl crate::store::Store for RecordingStore {
    fn insert_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, crate::store::StoreError>> {
        self.record(key, ttl);
        crate::store::Store::insert_new(self.entries.as_ref(), key, value, ttl)
    }
    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<Option<Vec<u8>>, crate::store::StoreError>> {
        crate::store::Store::get(self.entries.as_ref(), key)
    }
    fn replace<'a>(
        &'a self,
        key: &'a str,
        expected: &'a [u8],
        value: &'a [u8],
        ttl: Duration,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, crate::store::StoreError>> {
        self.record(key, ttl);
        crate::store::Store::replace(self.entries.as_ref(), key, expected, value, ttl)
    }
}
