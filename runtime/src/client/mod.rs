//! A client of MCP servers, ours or anyone's (feature `client`): over stdio (a child process) or
//! Streamable HTTP, on 2026-07-28 (`server/discover`, the `_meta` envelope on every request,
//! questions as `InputRequiredResult` answered by retries) or the handshake era (`initialize`,
//! questions as `elicitation/create` requests on the same connection), or whichever the server
//! speaks (the default: discover, and fall back to `initialize`).
//!
//! One [`ElicitationHandler`] answers the questions of both eras; the retries of 2026-07-28
//! (fresh ids, the echoed `requestState`, at most [`ClientBuilder::max_rounds`] rounds) happen
//! inside [`Client::call_tool`], [`Client::get_prompt`] and [`Client::read_resource`].
//!
//! ```no_run
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_resolve_runtime::client::ClientError> {
//! use mcp_resolve_runtime::client::{Answer, Client, ElicitationRequest};
//! use tokio::process::Command;
//!
//! let mut server = Command::new("python");
//! server.arg("notes_server.py");
//! let client = Client::builder()
//!     .elicitation(|q: ElicitationRequest| async move {
//!         println!("{} asks: {}", q.server.name, q.message);
//!         Answer::Accept(Some(serde_json::json!({"ok": true}).as_object().cloned().unwrap_or_default()))
//!     })
//!     .stdio(server)
//!     .await?;
//! let result = client.call_tool("delete_folder", serde_json::json!({"path": "notes/drafts"})).await?;
//! println!("{:?}", result.content);
//! client.close().await;
//! # Ok(())
//! # }
//! ```

mod elicitation;
mod http;
mod scripted;
mod session;
mod stdio;

pub use elicitation::{Answer, ElicitationHandler, ElicitationKind, ElicitationRequest, apply_defaults};
pub use scripted::Scripted;
pub use stdio::Stderr;

use crate::prompt::{GetPromptResult, PromptDefinition};
use crate::protocol::{Content, ErrorObject, Implementation, LogLevel, ProtocolVersion, ResourceContents, codes};
use crate::tool::ToolDefinition;
use crate::tool_result::CallToolResult;
use ::http::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use session::{Shared, lock};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::process::Command;

/// Which protocol era the client speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EraChoice {
    /// Whichever the server speaks: `server/discover` first, `initialize` when the server does
    /// not know it (as the official SDKs do).
    #[default]
    Auto,
    /// 2026-07-28 only.
    Stateless,
    /// The handshake era only (`initialize`, 2025-11-25 offered).
    Handshake,
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// The connection could not be made or broke.
    Transport(String),
    /// The server is gone (its process exited, its session ended).
    Closed(String),
    /// An HTTP status without a JSON-RPC answer.
    Http {
        /// The status code.
        status: u16,
        /// The body, as text.
        body: String,
    },
    /// The server sent something the protocol does not allow.
    Protocol(String),
    /// No answer within the request's time limit (the request was cancelled).
    Timeout(Duration),
    /// The server asked more rounds of questions than the limit.
    TooManyRounds(usize),
    /// The server asked something this client has no handler for.
    Unanswerable(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rpc(e) => write!(f, "the server answered error {}: {}", e.code, e.message),
            Self::Transport(why) => write!(f, "transport: {why}"),
            Self::Closed(why) => write!(f, "connection closed: {why}"),
            Self::Http { status, body } => write!(f, "HTTP {status}: {body}"),
            Self::Protocol(why) => write!(f, "protocol: {why}"),
            Self::Timeout(d) => write!(f, "no answer within {d:?}; the request was cancelled"),
            Self::TooManyRounds(n) => write!(
                f,
                "the server asked questions for more than {n} rounds; giving up (raise `max_rounds` if this is expected)"
            ),
            Self::Unanswerable(what) => write!(f, "the server asked what this client cannot answer: {what}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// A notification from the server (progress, log messages, list changes, …).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Notification {
    /// E.g. `notifications/message`.
    pub method: String,
    /// Its params.
    pub params: Value,
}

/// A progress report on a request.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How far (grows with each report).
    pub progress: f64,
    /// Out of how much, if known.
    pub total: Option<f64>,
    /// What is being done.
    pub message: Option<String>,
}

/// Answers the server's sampling requests (`sampling/createMessage`, deprecated on 2026-07-28
/// but still served): given the request's params, the `CreateMessageResult` (`role`, `content`,
/// `model`, `stopReason`), or why not. Implemented for any
/// `Fn(Value) -> impl Future<Output = Result<Value, String>>`.
///
/// ```
/// use mcp_resolve_runtime::client::Client;
/// let builder = Client::builder().sampling(|params: serde_json::Value| async move {
///     let _ = params; // the messages, the system prompt, maxTokens…
///     Ok(serde_json::json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
///                           "model": "my-llm", "stopReason": "endTurn"}))
/// });
/// # let _ = builder;
/// ```
pub trait SamplingHandler: Send + Sync + 'static {
    /// The model's answer to a sampling request, or why there is none (the user refused, no
    /// model is available).
    fn create_message(&self, params: Value) -> futures_util::future::BoxFuture<'static, Result<Value, String>>;
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, String>> + Send + 'static,
{
    fn create_message(&self, params: Value) -> futures_util::future::BoxFuture<'static, Result<Value, String>> {
        Box::pin(self(params))
    }
}

/// Options of one call.
///
/// ```
/// use mcp_resolve_runtime::client::CallOptions;
/// use std::time::Duration;
/// let options = CallOptions::default()
///     .timeout(Duration::from_secs(5))
///     .on_progress(|p| eprintln!("{} of {:?}", p.progress, p.total));
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    timeout: Option<Duration>,
    progress: Option<session::ProgressFn>,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl CallOptions {
    /// The time each request of the call may take (each round of questions is a request; time
    /// spent by the person answering is not counted).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }
    /// Asks for progress reports and hands each to `f`.
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// Sets up a [`Client`]: who it is, its handlers and limits, then the transport.
///
/// ```
/// use mcp_resolve_runtime::client::{Client, EraChoice};
/// use std::time::Duration;
/// let builder = Client::builder()
///     .client_info("my-agent", "1.0.0")
///     .era(EraChoice::Handshake)
///     .request_timeout(Duration::from_secs(30))
///     .max_rounds(5);
/// # let _ = builder;
/// ```
pub struct ClientBuilder {
    info: Implementation,
    era: EraChoice,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    sampling: Option<Arc<dyn SamplingHandler>>,
    roots: Option<Vec<crate::sampling::Root>>,
    on_notification: Option<session::NotificationFn>,
    timeout: Duration,
    max_rounds: usize,
    max_message: usize,
    url_wait: Option<Duration>,
    tasks: bool,
    task_wait: Duration,
    stderr: Stderr,
    headers: Vec<(HeaderName, HeaderValue)>,
    header_error: Option<String>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("era", &self.era)
            .field("elicitation", &self.elicitation.is_some())
            .field("timeout", &self.timeout)
            .field("max_rounds", &self.max_rounds)
            .finish_non_exhaustive()
    }
}

/// The default time limit of a request.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The default limit on rounds of questions in one call (as the official SDK clients).
pub const DEFAULT_MAX_ROUNDS: usize = 10;
/// The default limit on one message from the server.
pub const DEFAULT_MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// How many pages [`Client::list_all_tools`] and its siblings follow at most.
pub const MAX_PAGES: usize = 1000;

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            info: Implementation::new("mcp-resolve", env!("CARGO_PKG_VERSION")),
            era: EraChoice::Auto,
            elicitation: None,
            sampling: None,
            roots: None,
            on_notification: None,
            timeout: DEFAULT_TIMEOUT,
            max_rounds: DEFAULT_MAX_ROUNDS,
            max_message: DEFAULT_MAX_MESSAGE,
            url_wait: None,
            tasks: true,
            task_wait: DEFAULT_TASK_WAIT,
            stderr: Stderr::Inherit,
            headers: Vec::new(),
            header_error: None,
        }
    }
}

impl ClientBuilder {
    /// The client's name and version (`clientInfo`).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }
    /// Which era to speak (default [`EraChoice::Auto`]).
    pub fn era(mut self, era: EraChoice) -> Self {
        self.era = era;
        self
    }
    /// Answers the server's questions; the client declares the elicitation modes the handler
    /// takes. Without one, the client declares no elicitation and servers must not ask.
    pub fn elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.elicitation = Some(Arc::new(handler));
        self
    }
    /// Answers the server's sampling requests; the client declares `sampling`.
    pub fn sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.sampling = Some(Arc::new(handler));
        self
    }
    /// Offers these roots (`roots/list`); the client declares `roots`.
    ///
    /// ```
    /// use mcp_resolve_runtime::client::Client;
    /// use mcp_resolve_runtime::sampling::Root;
    /// let builder = Client::builder().roots(vec![Root::new("file:///work/notes").name("notes")]);
    /// # let _ = builder;
    /// ```
    pub fn roots(mut self, roots: Vec<crate::sampling::Root>) -> Self {
        self.roots = Some(roots);
        self
    }
    /// Hands every notification of the server's to `f` (progress reports go to the call's own
    /// callback too).
    pub fn on_notification(mut self, f: impl Fn(Notification) + Send + Sync + 'static) -> Self {
        self.on_notification = Some(Arc::new(f));
        self
    }
    /// The time limit of each request (default [`DEFAULT_TIMEOUT`]); time spent answering a
    /// question is not counted.
    pub fn request_timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }
    /// The most rounds of questions in one call (default [`DEFAULT_MAX_ROUNDS`]).
    pub fn max_rounds(mut self, n: usize) -> Self {
        self.max_rounds = n;
        self
    }
    /// The largest message accepted from the server (default [`DEFAULT_MAX_MESSAGE`]).
    pub fn max_message_bytes(mut self, n: usize) -> Self {
        self.max_message = n;
        self
    }
    /// How long, after the user agreed to open the pages a -32042 error names (2025-11-25), the
    /// client waits for the server to say they are complete before it sends the call again
    /// (default: the request time limit). A server that never says so is retried when it ends.
    pub fn url_wait(mut self, t: Duration) -> Self {
        self.url_wait = Some(t);
        self
    }
    /// Whether calls may run as tasks (default yes): the client declares the tasks extension
    /// (2026-07-28) and asks for a task when a tool supports one (2025-11-25, tools listed
    /// first). A call that becomes a task is followed to its end as any call is: the client
    /// polls the task (at the interval the server suggests, at least every 50 ms and at most
    /// every 10 s), puts the task's questions to the same handlers, reports its status message
    /// as progress, and returns its result. `false`: calls answer in their responses, and a
    /// tool that runs only as a task is refused by the server.
    ///
    /// ```
    /// let builder = mcp_resolve_runtime::client::Client::builder().tasks(false);
    /// # let _ = builder;
    /// ```
    pub fn tasks(mut self, follow: bool) -> Self {
        self.tasks = follow;
        self
    }
    /// The longest a call that became a task is followed (default [`DEFAULT_TASK_WAIT`]); then
    /// the task is cancelled and the call ends with [`ClientError::Timeout`].
    ///
    /// ```
    /// let builder = mcp_resolve_runtime::client::Client::builder().task_wait(std::time::Duration::from_secs(600));
    /// # let _ = builder;
    /// ```
    pub fn task_wait(mut self, t: Duration) -> Self {
        self.task_wait = t;
        self
    }
    /// What becomes of a stdio server's stderr (default: passed through).
    pub fn stderr(mut self, s: Stderr) -> Self {
        self.stderr = s;
        self
    }
    /// An HTTP header sent with every request (e.g. an API key).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(n), Ok(v)) => self.headers.push((n, v)),
            _ => self.header_error = Some(format!("`{name}` is not a valid HTTP header name and value")),
        }
        self
    }
    /// `Authorization: Bearer TOKEN` on every HTTP request.
    pub fn bearer(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }

    fn shared(&self) -> Arc<Shared> {
        Arc::new(Shared {
            elicitation: self.elicitation.clone(),
            sampling: self.sampling.clone(),
            roots: self.roots.clone(),
            on_notification: self.on_notification.clone(),
            progress: Mutex::new(HashMap::new()),
            server: RwLock::new(Implementation::new("(server)", "")),
            completed: Mutex::new(Default::default()),
            completion: tokio::sync::Notify::new(),
        })
    }

    /// Starts `command` and speaks MCP over its stdin and stdout.
    pub async fn stdio(self, command: Command) -> Result<Client, ClientError> {
        let shared = self.shared();
        let program = command.as_std().get_program().to_string_lossy().into_owned();
        *shared.server.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Implementation::new(program, "");
        let link = stdio::StdioLink::spawn(command, self.stderr, Arc::clone(&shared), self.max_message)?;
        Client::start(self, Link::Stdio(link), shared).await
    }

    /// Starts `server` in this process and speaks to it over an in-memory pipe: real JSON-RPC
    /// frames through the server's own connection loop, without a child process or a socket.
    /// For tests (see [`Scripted`]); several clients may share one `Arc<Server>`, each a
    /// connection of its own. An application state the server's items take but lacks is an
    /// error here, naming the type and the item.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mcp_resolve_runtime::client::ClientError> {
    /// use mcp_resolve_runtime::{Server, client::Client};
    /// let client = Client::builder().in_process(Server::new("t")).await?;
    /// assert_eq!(client.server_info().name, "t");
    /// assert!(client.list_all_tools().await?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn in_process(self, server: impl Into<Arc<crate::server::Server>>) -> Result<Client, ClientError> {
        let server = server.into();
        server.check_states().map_err(ClientError::Transport)?;
        let shared = self.shared();
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_side);
        tokio::spawn(crate::transport::connection::serve_connection(server, sr, sw));
        let (cr, cw) = tokio::io::split(client_side);
        let link = stdio::StdioLink::over(
            cr,
            cw,
            Arc::clone(&shared),
            self.max_message,
            None,
            Default::default(),
            None,
        );
        Client::start(self, Link::Stdio(link), shared).await
    }

    /// Speaks MCP to the Streamable HTTP endpoint at `url` (`http://` or `https://`).
    pub async fn http(self, url: &str) -> Result<Client, ClientError> {
        if let Some(e) = &self.header_error {
            return Err(ClientError::Transport(e.clone()));
        }
        let shared = self.shared();
        *shared.server.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Implementation::new(url, "");
        let link = http::HttpLink::new(url, self.headers.clone(), Arc::clone(&shared), self.max_message)?;
        Client::start(self, Link::Http(link), shared).await
    }
}

enum Link {
    Stdio(Arc<stdio::StdioLink>),
    Http(Arc<http::HttpLink>),
}

/// How long a call that became a task is followed by default ([`ClientBuilder::task_wait`]).
pub const DEFAULT_TASK_WAIT: Duration = Duration::from_secs(3600);

/// The wait between two polls of a task: what the server suggests, within 50 ms and 10 s
/// (1 s when it suggests nothing).
fn poll_interval(suggested: Option<&Value>) -> Duration {
    Duration::from_millis(suggested.and_then(Value::as_u64).unwrap_or(1000).clamp(50, 10_000))
}

/// A followed task's status messages, each new one reported once as progress (counted).
#[derive(Default)]
struct StatusReports {
    last: Option<String>,
    count: f64,
}

impl StatusReports {
    fn report(&mut self, task: &Value, options: &CallOptions) {
        let message = task.get("statusMessage").and_then(Value::as_str).map(str::to_owned);
        if message.is_none() || message == self.last {
            return;
        }
        self.count += 1.0;
        if let Some(report) = &options.progress {
            report(Progress {
                progress: self.count,
                total: None,
                message: message.clone(),
            });
        }
        self.last = message;
    }
}

/// A connection to one MCP server. Methods take `&self`: calls may run concurrently.
pub struct Client {
    link: Link,
    shared: Arc<Shared>,
    info: Implementation,
    version: ProtocolVersion,
    capabilities: Value,
    instructions: Option<String>,
    next_id: AtomicU64,
    timeout: Duration,
    max_rounds: usize,
    url_wait: Duration,
    log_level: Mutex<Option<LogLevel>>,
    /// Per tool, its `x-mcp-header` arguments: (header suffix, argument name), from `tools/list`.
    param_headers: Mutex<HashMap<String, Vec<(String, String)>>>,
    /// Calls may run as tasks ([`ClientBuilder::tasks`]), followed for at most `task_wait`.
    tasks: bool,
    task_wait: Duration,
    /// The tools that may run as tasks, from `tools/list` (2025-11-25 asks for a task only then).
    task_tools: Mutex<HashMap<String, crate::tool::TaskSupport>>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.shared.server())
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// One page of a list.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// Where the next page starts, if there is one.
    pub next_cursor: Option<String>,
}

/// A resource as `resources/list` shows it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceInfo {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A human-readable title.
    #[serde(default)]
    pub title: Option<String>,
    /// What it is.
    #[serde(default)]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default)]
    pub mime_type: Option<String>,
}

/// A resource template as `resources/templates/list` shows it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplateInfo {
    /// Its RFC 6570 template.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A human-readable title.
    #[serde(default)]
    pub title: Option<String>,
    /// What it is.
    #[serde(default)]
    pub description: Option<String>,
    /// The MIME type of what it names.
    #[serde(default)]
    pub mime_type: Option<String>,
}

/// What `resources/read` returns.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// The contents.
    pub contents: Vec<ResourceContents>,
}

/// What `completion/complete` returns.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// The suggestions.
    pub values: Vec<String>,
    /// How many there are in all, if the server said.
    #[serde(default)]
    pub total: Option<u64>,
    /// Whether there are more than those given.
    #[serde(default)]
    pub has_more: bool,
}

impl Client {
    /// A builder with the defaults.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    async fn start(b: ClientBuilder, link: Link, shared: Arc<Shared>) -> Result<Self, ClientError> {
        let mut client = Self {
            link,
            shared,
            info: b.info.clone(),
            version: ProtocolVersion::V2026_07_28,
            capabilities: Value::Null,
            instructions: None,
            next_id: AtomicU64::new(1),
            timeout: b.timeout,
            max_rounds: b.max_rounds,
            url_wait: b.url_wait.unwrap_or(b.timeout),
            log_level: Mutex::new(None),
            param_headers: Mutex::new(HashMap::new()),
            tasks: b.tasks,
            task_wait: b.task_wait,
            task_tools: Mutex::new(HashMap::new()),
        };
        match b.era {
            EraChoice::Stateless => client.discover().await?,
            EraChoice::Handshake => client.initialize().await?,
            EraChoice::Auto => match client.discover().await {
                Ok(()) => {}
                // Any error of a server that does not speak 2026-07-28 (-32601, a 400 without a
                // modern error, …): the handshake.
                Err(ClientError::Rpc(_) | ClientError::Http { .. } | ClientError::Protocol(_)) => {
                    tracing::debug!("mcp client: server/discover refused; falling back to initialize");
                    client.initialize().await?;
                }
                Err(e) => return Err(e),
            },
        }
        Ok(client)
    }

    /// The client capabilities this client declares.
    fn client_capabilities(&self, version: ProtocolVersion) -> Value {
        let mut caps = Map::new();
        if let Some(h) = &self.shared.elicitation {
            // Modes exist from 2025-11-25 on; before, elicitation is form mode only (`{}`). A
            // handler that takes no mode the version knows declares nothing.
            let modes = version >= ProtocolVersion::V2025_11_25;
            let mut declared = Map::new();
            if modes && h.form() {
                declared.insert("form".into(), json!({}));
            }
            if modes && h.url() {
                declared.insert("url".into(), json!({}));
            }
            if (modes && !declared.is_empty()) || (!modes && h.form()) {
                caps.insert("elicitation".into(), Value::Object(declared));
            }
        }
        if self.shared.sampling.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.shared.roots.is_some() {
            // The list never changes during a connection (2026-07-28 has no `listChanged`).
            let roots = if version < ProtocolVersion::V2026_07_28 {
                json!({"listChanged": false})
            } else {
                json!({})
            };
            caps.insert("roots".into(), roots);
        }
        if self.tasks && version.era() == crate::protocol::Era::Stateless {
            caps.insert(
                "extensions".into(),
                json!({ crate::protocol::tasks::TASKS_EXTENSION: {} }),
            );
        }
        Value::Object(caps)
    }

    fn stateless(&self) -> bool {
        self.version >= ProtocolVersion::V2026_07_28
    }

    async fn discover(&mut self) -> Result<(), ClientError> {
        self.version = ProtocolVersion::V2026_07_28;
        if let Link::Http(h) = &self.link {
            *lock(&h.version) = Some(self.version.as_str());
            *lock(&h.stateless) = true;
        }
        let result = self
            .round("server/discover", Map::new(), &CallOptions::default(), None)
            .await;
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                if let Link::Http(h) = &self.link {
                    *lock(&h.version) = None;
                    *lock(&h.stateless) = false;
                }
                return Err(e);
            }
        };
        let supported = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|s| s == self.version.as_str()));
        if !supported {
            return Err(ClientError::Protocol(format!(
                "server/discover does not list {} among the supported versions",
                self.version.as_str()
            )));
        }
        self.capabilities = result.get("capabilities").cloned().unwrap_or(json!({}));
        self.instructions = result.get("instructions").and_then(Value::as_str).map(str::to_owned);
        if let Some(info) = result
            .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
            .and_then(|v| Implementation::deserialize(v).ok())
        {
            *self
                .shared
                .server
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = info;
        }
        Ok(())
    }

    async fn initialize(&mut self) -> Result<(), ClientError> {
        let offered = ProtocolVersion::LATEST_HANDSHAKE;
        self.version = offered;
        if let Link::Http(h) = &self.link {
            *lock(&h.version) = None;
            *lock(&h.stateless) = false;
        }
        let mut params = Map::new();
        params.insert("protocolVersion".into(), offered.as_str().into());
        params.insert("capabilities".into(), self.client_capabilities(offered));
        params.insert("clientInfo".into(), json!(self.info));
        let result = self.round("initialize", params, &CallOptions::default(), None).await?;
        let agreed = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .and_then(ProtocolVersion::parse)
            .filter(|v| *v < ProtocolVersion::V2026_07_28)
            .ok_or_else(|| {
                ClientError::Protocol(format!(
                    "initialize answered protocol version {}, which this client does not speak",
                    result.get("protocolVersion").unwrap_or(&Value::Null)
                ))
            })?;
        self.version = agreed;
        self.capabilities = result.get("capabilities").cloned().unwrap_or(json!({}));
        self.instructions = result.get("instructions").and_then(Value::as_str).map(str::to_owned);
        if let Some(info) = result
            .get("serverInfo")
            .and_then(|v| Implementation::deserialize(v).ok())
        {
            *self
                .shared
                .server
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = info;
        }
        if let Link::Http(h) = &self.link {
            *lock(&h.version) = Some(agreed.as_str());
        }
        self.notify("notifications/initialized", None).await?;
        if let Link::Http(h) = &self.link {
            h.listen();
        }
        Ok(())
    }

    /// The server's name and version.
    pub fn server_info(&self) -> Implementation {
        self.shared.server()
    }
    /// The protocol version in use (2026-07-28, or the one `initialize` agreed).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }
    /// The server's capabilities.
    pub fn server_capabilities(&self) -> &Value {
        &self.capabilities
    }
    /// The server's instructions, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }
    /// What a stdio server wrote on stderr (its last 64 KiB), when built with
    /// [`Stderr::Capture`].
    pub fn stderr(&self) -> String {
        match &self.link {
            Link::Stdio(s) => String::from_utf8_lossy(&lock(&s.stderr)).into_owned(),
            Link::Http(_) => String::new(),
        }
    }

    fn fresh_id(&self) -> Value {
        json!(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a notification.
    async fn notify(&self, method: &str, params: Option<Map<String, Value>>) -> Result<(), ClientError> {
        let mut frame = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            frame["params"] = Value::Object(p);
        }
        match &self.link {
            Link::Stdio(s) => s.notify(&frame),
            Link::Http(h) => {
                let hints = http::Hints {
                    method: method.to_owned(),
                    ..Default::default()
                };
                h.send(&frame, Some(&hints)).await
            }
        }
    }

    /// One request and its result (a JSON-RPC error is [`ClientError::Rpc`]); the envelope
    /// added on 2026-07-28. A 2026-07-28 request refused with -32022 (unsupported version) is
    /// sent again, once, when the versions the server lists include one this client speaks.
    async fn round(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<Value, ClientError> {
        match self.round_once(method, params.clone(), options, headers.clone()).await {
            Err(ClientError::Rpc(e)) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION && self.stateless() => {
                let ours = e
                    .data
                    .as_ref()
                    .and_then(|d| d.get("supported"))
                    .and_then(Value::as_array)
                    .is_some_and(|v| v.iter().any(|s| s == self.version.as_str()));
                if !ours {
                    return Err(ClientError::Rpc(e));
                }
                tracing::debug!("mcp client: -32022 lists {}; sending again", self.version.as_str());
                self.round_once(method, params, options, headers).await
            }
            r => r,
        }
    }

    async fn round_once(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        options: &CallOptions,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<Value, ClientError> {
        let progress_token = options.progress.as_ref().map(|f| {
            let token = self.fresh_id();
            lock(&self.shared.progress).insert(session::token_key(&token), Arc::clone(f));
            token
        });
        if self.stateless() || progress_token.is_some() {
            let meta = params
                .entry("_meta")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .map(std::mem::take)
                .unwrap_or_default();
            let mut meta = meta;
            if self.stateless() {
                meta.insert(
                    "io.modelcontextprotocol/protocolVersion".into(),
                    self.version.as_str().into(),
                );
                meta.insert(
                    "io.modelcontextprotocol/clientCapabilities".into(),
                    self.client_capabilities(self.version),
                );
                meta.insert("io.modelcontextprotocol/clientInfo".into(), json!(self.info));
                if let Some(level) = *lock(&self.log_level) {
                    meta.insert("io.modelcontextprotocol/logLevel".into(), json!(level));
                }
            }
            if let Some(t) = &progress_token {
                meta.insert("progressToken".into(), t.clone());
            }
            params.insert("_meta".into(), Value::Object(meta));
        }
        let id = self.fresh_id();
        let name = match method {
            "tools/call" | "prompts/get" => params.get("name"),
            "resources/read" => params.get("uri"),
            // SEP-2663: task methods name their task, for load balancers.
            "tasks/get" | "tasks/update" | "tasks/cancel" => params.get("taskId"),
            _ => None,
        }
        .and_then(Value::as_str)
        .map(str::to_owned);
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let timeout = options.timeout.unwrap_or(self.timeout);
        let exchange = async {
            match &self.link {
                Link::Stdio(s) => s.request(&id, &frame).await,
                Link::Http(h) => {
                    let hints = http::Hints {
                        method: method.to_owned(),
                        name,
                        params: headers.unwrap_or_default(),
                    };
                    h.request(&id, &frame, &hints).await
                }
            }
        };
        let answer = tokio::time::timeout(timeout, exchange).await;
        if let Some(t) = &progress_token {
            lock(&self.shared.progress).remove(&session::token_key(t));
        }
        let answer = answer.map_err(|_| ClientError::Timeout(timeout))??;
        if let Some(e) = answer.get("error") {
            let e = ErrorObject::deserialize(e)
                .map_err(|_| ClientError::Protocol(format!("a malformed error object: {e}")))?;
            return Err(ClientError::Rpc(e));
        }
        match answer.get("result") {
            Some(r @ Value::Object(_)) => Ok(r.clone()),
            _ => Err(ClientError::Protocol(format!(
                "an answer without a result object: {answer}"
            ))),
        }
    }

    /// A request that may be answered with questions (2026-07-28 `InputRequiredResult`,
    /// handshake-era -32042): asks them, retries, and returns the final result.
    async fn asking(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
        headers: Option<Vec<(String, String)>>,
    ) -> Result<Value, ClientError> {
        let mut responses: Option<Map<String, Value>> = None;
        let mut state: Option<Value> = None;
        let mut backoff = Duration::from_millis(50);
        for round in 0..=self.max_rounds {
            let mut p = params.clone();
            if let Some(r) = responses.take() {
                p.insert("inputResponses".into(), Value::Object(r));
            }
            if let Some(s) = &state {
                p.insert("requestState".into(), s.clone());
            }
            let result = match self.round(method, p, options, headers.clone()).await {
                Err(ClientError::Rpc(e)) if e.code == codes::URL_ELICITATION_REQUIRED && !self.stateless() => {
                    if round == self.max_rounds {
                        return Err(ClientError::TooManyRounds(self.max_rounds));
                    }
                    self.url_required(e).await?;
                    continue;
                }
                r => r?,
            };
            match result.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => return Ok(result),
                Some("task") if method == "tools/call" && self.tasks => {
                    return self.follow_task(result, options).await;
                }
                Some("input_required") => {}
                Some(other) => {
                    return Err(ClientError::Protocol(format!("unknown resultType `{other}`")));
                }
            }
            if round == self.max_rounds {
                return Err(ClientError::TooManyRounds(self.max_rounds));
            }
            state = result.get("requestState").cloned();
            match result.get("inputRequests") {
                Some(Value::Object(requests)) => {
                    responses = Some(self.answer_all(requests).await?);
                }
                Some(other) => {
                    return Err(ClientError::Protocol(format!(
                        "inputRequests is not an object: {other}"
                    )));
                }
                None if state.is_none() => {
                    return Err(ClientError::Protocol(
                        "an InputRequiredResult with neither inputRequests nor requestState".into(),
                    ));
                }
                None => {
                    // State only: the server wants the call again; not at once.
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(250));
                }
            }
        }
        Err(ClientError::TooManyRounds(self.max_rounds))
    }

    /// A call that became a task (2026-07-28): polls `tasks/get` until the task is over, puts
    /// each question it shows to the handlers once (the same key is never answered twice) and
    /// answers with `tasks/update`, reports a new status message as progress, and returns the
    /// task's result. Past [`ClientBuilder::task_wait`] the task is cancelled.
    async fn follow_task(&self, created: Value, options: &CallOptions) -> Result<Value, ClientError> {
        let id = created
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| ClientError::Protocol("a CreateTaskResult without a taskId".into()))?
            .to_owned();
        let deadline = tokio::time::Instant::now() + self.task_wait;
        let mut answered = std::collections::HashSet::new();
        let mut status = StatusReports::default();
        let params = |extra: Option<(&str, Value)>| {
            let mut p = Map::new();
            p.insert("taskId".into(), json!(id));
            if let Some((k, v)) = extra {
                p.insert(k.into(), v);
            }
            p
        };
        let mut task = created.clone();
        loop {
            let poll = poll_interval(task.get("pollIntervalMs"));
            status.report(&task, options);
            match task.get("status").and_then(Value::as_str) {
                Some("completed") => {
                    return match task.get("result") {
                        Some(r @ Value::Object(_)) => Ok(r.clone()),
                        _ => Err(ClientError::Protocol(format!("task {id} completed without a result"))),
                    };
                }
                Some("failed") => {
                    let e = task
                        .get("error")
                        .and_then(|e| ErrorObject::deserialize(e).ok())
                        .unwrap_or_else(|| ErrorObject::internal(format!("task {id} failed")));
                    return Err(ClientError::Rpc(e));
                }
                Some("cancelled") => return Err(ClientError::Closed(format!("task {id} was cancelled"))),
                Some("input_required") => {
                    let pending: Map<String, Value> = task
                        .get("inputRequests")
                        .and_then(Value::as_object)
                        .map(|r| {
                            r.iter()
                                .filter(|(k, _)| !answered.contains(*k))
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect()
                        })
                        .unwrap_or_default();
                    if !pending.is_empty() {
                        if answered.len() + pending.len() > 64 * self.max_rounds.max(1) {
                            return Err(ClientError::TooManyRounds(self.max_rounds));
                        }
                        let answers = self.answer_all(&pending).await?;
                        answered.extend(answers.keys().cloned());
                        self.round(
                            "tasks/update",
                            params(Some(("inputResponses", Value::Object(answers)))),
                            options,
                            None,
                        )
                        .await?;
                        task = self.round("tasks/get", params(None), options, None).await?;
                        continue;
                    }
                }
                Some("working") => {}
                other => {
                    return Err(ClientError::Protocol(format!(
                        "task {id} has an unknown status {other:?}"
                    )));
                }
            }
            if tokio::time::Instant::now() + poll > deadline {
                let _ = self.round("tasks/cancel", params(None), options, None).await;
                return Err(ClientError::Timeout(self.task_wait));
            }
            tokio::time::sleep(poll).await;
            task = self.round("tasks/get", params(None), options, None).await?;
        }
    }

    /// A call that became a task (2025-11-25): polls `tasks/get` until the task needs input or
    /// is over, then `tasks/result`, on whose stream the server puts the task's questions (the
    /// handlers answer them as any request from the server) before the result.
    async fn follow_core_task(&self, task: Value, options: &CallOptions) -> Result<Value, ClientError> {
        let id = task
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| ClientError::Protocol("a CreateTaskResult without a taskId".into()))?
            .to_owned();
        let deadline = tokio::time::Instant::now() + self.task_wait;
        let task_params = || {
            let mut p = Map::new();
            p.insert("taskId".into(), json!(id));
            p
        };
        let mut task = task;
        let mut status = StatusReports::default();
        loop {
            status.report(&task, options);
            let status = task.get("status").and_then(Value::as_str).unwrap_or("working");
            if status != "working" {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let wait = CallOptions {
                    timeout: Some(left.max(Duration::from_secs(1))),
                    progress: None,
                };
                return self.round("tasks/result", task_params(), &wait, None).await;
            }
            let poll = poll_interval(task.get("pollInterval"));
            if tokio::time::Instant::now() + poll > deadline {
                let _ = self.round("tasks/cancel", task_params(), options, None).await;
                return Err(ClientError::Timeout(self.task_wait));
            }
            tokio::time::sleep(poll).await;
            task = self.round("tasks/get", task_params(), options, None).await?;
        }
    }

    /// The answers to one round's `inputRequests`, by key.
    async fn answer_all(&self, requests: &Map<String, Value>) -> Result<Map<String, Value>, ClientError> {
        let mut out = Map::new();
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            if matches!(method, "sampling/createMessage" | "roots/list") {
                let params = request.get("params").unwrap_or(&Value::Null);
                let result = self.shared.input(method, params).await.map_err(|(_, why)| {
                    ClientError::Unanswerable(format!("`{method}` (input request `{key}`): {why}"))
                })?;
                out.insert(key.clone(), result);
                continue;
            }
            if method != "elicitation/create" {
                return Err(ClientError::Unanswerable(format!("`{method}` (input request `{key}`)")));
            }
            let Some(handler) = &self.shared.elicitation else {
                return Err(ClientError::Unanswerable(format!(
                    "an elicitation (`{key}`), and no elicitation handler is installed"
                )));
            };
            let params = request.get("params").unwrap_or(&Value::Null);
            let q = elicitation::read_request(&self.shared.server(), Some(key.clone()), params)
                .ok_or_else(|| ClientError::Protocol(format!("input request `{key}` is no elicitation")))?;
            let declared = if q.url().is_some() {
                handler.url()
            } else {
                handler.form()
            };
            if !declared {
                return Err(ClientError::Protocol(format!(
                    "input request `{key}` uses an elicitation mode the client did not declare"
                )));
            }
            let answer = elicitation::ask(handler.as_ref(), q).await;
            out.insert(key.clone(), answer.to_wire());
        }
        Ok(out)
    }

    /// -32042 (2025-11-25): the URL elicitations the request waits for, each put to the handler;
    /// all accepted, waits (at most the request time limit) for the server to say they are
    /// complete. Anything else ends the call with the error.
    async fn url_required(&self, e: ErrorObject) -> Result<(), ClientError> {
        let elicitations: Vec<Value> = e
            .data
            .as_ref()
            .and_then(|d| d.get("elicitations"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let Some(handler) = self.shared.elicitation.clone().filter(|h| h.url()) else {
            return Err(ClientError::Rpc(e));
        };
        if elicitations.is_empty() {
            return Err(ClientError::Rpc(e));
        }
        let mut ids = Vec::new();
        for el in &elicitations {
            let Some(q) = elicitation::read_request(&self.shared.server(), None, el).filter(|q| q.url().is_some())
            else {
                return Err(ClientError::Rpc(e));
            };
            if let ElicitationKind::Url {
                elicitation_id: Some(id),
                ..
            } = &q.kind
            {
                ids.push(id.clone());
            }
            if elicitation::ask(handler.as_ref(), q).await != Answer::consent() {
                return Err(ClientError::Rpc(e));
            }
        }
        let wait = async {
            loop {
                let notified = self.shared.completion.notified();
                if ids.iter().all(|id| lock(&self.shared.completed).contains(id)) {
                    return;
                }
                notified.await;
            }
        };
        // Not told in time: retry anyway; the server asks again if the page is not done.
        let _ = tokio::time::timeout(self.url_wait, wait).await;
        Ok(())
    }

    fn page<T: DeserializeOwned>(result: &Value, member: &str) -> Result<Page<T>, ClientError> {
        let items = match result.get(member) {
            Some(v) => {
                Vec::<T>::deserialize(v).map_err(|e| ClientError::Protocol(format!("`{member}` of the result: {e}")))?
            }
            None => return Err(ClientError::Protocol(format!("the result has no `{member}`"))),
        };
        let next_cursor = result.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
        Ok(Page { items, next_cursor })
    }

    async fn list<T: DeserializeOwned>(
        &self,
        method: &str,
        member: &str,
        cursor: Option<&str>,
    ) -> Result<Page<T>, ClientError> {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), c.into());
        }
        let result = self.round(method, params, &CallOptions::default(), None).await?;
        Self::page(&result, member)
    }

    /// Every item of any list method (`method`, its items in `member`), following the pages (at
    /// most [`MAX_PAGES`]; a cursor that repeats is an error), each read as `T`
    /// (`serde_json::Value` keeps them as sent).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mcp_resolve_runtime::client::ClientError> {
    /// use mcp_resolve_runtime::{Server, client::Client};
    /// let client = Client::builder().in_process(Server::new("t")).await?;
    /// let tools: Vec<serde_json::Value> = client.list_all("tools/list", "tools").await?;
    /// assert!(tools.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_all<T: DeserializeOwned>(&self, method: &str, member: &str) -> Result<Vec<T>, ClientError> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page = self.list::<T>(method, member, cursor.as_deref()).await?;
            all.extend(page.items);
            match page.next_cursor {
                Some(c) if Some(&c) != cursor.as_ref() => cursor = Some(c),
                Some(_) => {
                    return Err(ClientError::Protocol(format!(
                        "{method} returned the same cursor twice"
                    )));
                }
                None => return Ok(all),
            }
        }
        Err(ClientError::Protocol(format!(
            "{method} has more than {MAX_PAGES} pages"
        )))
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<Page<ToolDefinition>, ClientError> {
        let mut page = self.list::<ToolDefinition>("tools/list", "tools", cursor).await?;
        self.learn_headers(&mut page.items);
        Ok(page)
    }

    /// Every tool, following the pages.
    pub async fn list_all_tools(&self) -> Result<Vec<ToolDefinition>, ClientError> {
        let mut tools = self.list_all::<ToolDefinition>("tools/list", "tools").await?;
        self.learn_headers(&mut tools);
        Ok(tools)
    }

    /// Remembers each tool's `x-mcp-header` arguments, mirrored into `Mcp-Param-*` headers on
    /// HTTP (2026-07-28), and drops (over HTTP) the tools whose annotations are invalid: a
    /// Streamable HTTP client must not call them.
    fn learn_headers(&self, tools: &mut Vec<ToolDefinition>) {
        let http = matches!(self.link, Link::Http(_));
        {
            let mut tasks = lock(&self.task_tools);
            for t in tools.iter() {
                tasks.insert(t.name.clone(), t.execution.task_support);
            }
        }
        let mut map = lock(&self.param_headers);
        tools.retain(|t| match mcp_headers(&t.input_schema) {
            Ok(headers) => {
                map.insert(t.name.clone(), headers);
                true
            }
            Err(why) if http => {
                tracing::warn!(tool = %t.name, %why, "mcp client: a tool with an invalid x-mcp-header is left out");
                false
            }
            Err(_) => true,
        });
    }

    /// Calls a tool, answering its questions; the result may be a tool error
    /// (`is_error`), which is not a [`ClientError`].
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::default()).await
    }

    /// [`Client::call_tool`] with options (time limit, progress).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        let headers = self.stateless().then(|| {
            let known = lock(&self.param_headers).get(name).cloned().unwrap_or_default();
            known
                .into_iter()
                .filter_map(|(header, arg)| {
                    let v = arguments.get(&arg)?;
                    let text = match v {
                        Value::String(s) => s.clone(),
                        Value::Bool(_) | Value::Number(_) => v.to_string(),
                        _ => return None,
                    };
                    Some((header, text))
                })
                .collect()
        });
        let mut params = Map::new();
        params.insert("name".into(), name.into());
        params.insert("arguments".into(), arguments);
        // 2025-11-25: a task is the client's to ask for, for a tool that supports one.
        let core_tasks = self.tasks && !self.stateless() && self.version >= ProtocolVersion::V2025_11_25;
        if core_tasks
            && lock(&self.task_tools)
                .get(name)
                .is_some_and(|s| *s != crate::tool::TaskSupport::Forbidden)
        {
            params.insert("task".into(), json!({}));
        }
        let result = self.asking("tools/call", params, &options, headers).await?;
        let result = match result.get("task") {
            Some(task) if core_tasks && result.get("content").is_none() => {
                self.follow_core_task(task.clone(), &options).await?
            }
            _ => result,
        };
        CallToolResult::deserialize(&result)
            .map_err(|e| ClientError::Protocol(format!("a tools/call result that is not one: {e}")))
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<Page<PromptDefinition>, ClientError> {
        self.list("prompts/list", "prompts", cursor).await
    }

    /// Every prompt, following the pages.
    pub async fn list_all_prompts(&self) -> Result<Vec<PromptDefinition>, ClientError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// Gets a prompt, answering its questions.
    pub async fn get_prompt(&self, name: &str, arguments: &[(&str, &str)]) -> Result<GetPromptResult, ClientError> {
        let args: Map<String, Value> = arguments.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
        let mut params = Map::new();
        params.insert("name".into(), name.into());
        params.insert("arguments".into(), Value::Object(args));
        let result = self
            .asking("prompts/get", params, &CallOptions::default(), None)
            .await?;
        GetPromptResult::deserialize(&result)
            .map_err(|e| ClientError::Protocol(format!("a prompts/get result that is not one: {e}")))
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Result<Page<ResourceInfo>, ClientError> {
        self.list("resources/list", "resources", cursor).await
    }

    /// Every resource, following the pages.
    pub async fn list_all_resources(&self) -> Result<Vec<ResourceInfo>, ClientError> {
        self.list_all("resources/list", "resources").await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<ResourceTemplateInfo>, ClientError> {
        self.list("resources/templates/list", "resourceTemplates", cursor).await
    }

    /// Reads a resource, answering its questions.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), uri.into());
        let result = self
            .asking("resources/read", params, &CallOptions::default(), None)
            .await?;
        ReadResourceResult::deserialize(&result)
            .map_err(|e| ClientError::Protocol(format!("a resources/read result that is not one: {e}")))
    }

    /// Completes argument `argument` (typed so far: `value`) of a prompt
    /// (`{"type": "ref/prompt", "name": …}`) or a resource template
    /// (`{"type": "ref/resource", "uri": …}`).
    pub async fn complete(&self, reference: Value, argument: &str, value: &str) -> Result<Completion, ClientError> {
        let mut params = Map::new();
        params.insert("ref".into(), reference);
        params.insert("argument".into(), json!({"name": argument, "value": value}));
        let result = self
            .round("completion/complete", params, &CallOptions::default(), None)
            .await?;
        result
            .get("completion")
            .map(Completion::deserialize)
            .transpose()
            .map_err(|e| ClientError::Protocol(format!("a completion result that is not one: {e}")))?
            .ok_or_else(|| ClientError::Protocol("a completion result without `completion`".into()))
    }

    /// Asks for log messages at `level` and above: `logging/setLevel` on the handshake era; on
    /// 2026-07-28 the level travels in every later request's `_meta`.
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), ClientError> {
        *lock(&self.log_level) = Some(level);
        if self.stateless() {
            return Ok(());
        }
        let mut params = Map::new();
        params.insert("level".into(), json!(level));
        self.round("logging/setLevel", params, &CallOptions::default(), None)
            .await
            .map(drop)
    }

    /// Any request, by method and params (the envelope added on 2026-07-28); the result object.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let params = match params {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => return Err(ClientError::Protocol(format!("params must be an object, not {other}"))),
        };
        self.round(method, params, &CallOptions::default(), None).await
    }

    /// Ends the connection: a stdio server's stdin is closed (and the process killed if it has
    /// not exited within 2 s); an HTTP session is deleted.
    pub async fn close(self) {
        match &self.link {
            Link::Stdio(s) => s.close(Duration::from_secs(2)).await,
            Link::Http(h) => h.close().await,
        }
    }
}

/// A tool's `x-mcp-header` arguments as (header name, argument name), or why they are invalid:
/// a name that is empty, not a token or repeated (case-insensitively), or set on a property
/// that is not a string, an integer or a boolean.
pub(crate) fn mcp_headers(input_schema: &Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    let Some(Value::Object(props)) = input_schema.get("properties") else {
        return Ok(Vec::new());
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for (arg, schema) in props {
        let Some(h) = schema.get("x-mcp-header") else { continue };
        let Some(h) = h.as_str() else {
            return Err(format!("`{arg}`: x-mcp-header is not a string"));
        };
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if h.is_empty() || !h.chars().all(token) {
            return Err(format!("`{arg}`: `{h}` is not a header name"));
        }
        let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
        if !matches!(ty, "string" | "integer" | "boolean") {
            return Err(format!("`{arg}`: x-mcp-header on a property of type `{ty}`"));
        }
        if out.iter().any(|(o, _)| o.eq_ignore_ascii_case(h)) {
            return Err(format!("`{arg}`: header `{h}` named twice"));
        }
        out.push((h.to_owned(), arg.clone()));
    }
    Ok(out)
}

/// Text of a result's content, for printing: text items joined by newlines, other items named.
///
/// ```
/// use mcp_resolve_runtime::client::content_text;
/// use mcp_resolve_runtime::protocol::Content;
/// let c = [Content::text("a"), Content::resource_link("notes://x", "x"), Content::image("AA==", "image/png")];
/// assert_eq!(content_text(&c), "a\n[resource link notes://x]\n[image image/png]");
/// ```
pub fn content_text(content: &[Content]) -> String {
    content
        .iter()
        .map(|c| match c {
            Content::Text { text, .. } => text.clone(),
            Content::Image { mime_type, .. } => format!("[image {mime_type}]"),
            Content::Audio { mime_type, .. } => format!("[audio {mime_type}]"),
            Content::Resource { resource } => format!("[resource {}]", resource.uri),
            Content::ResourceLink { uri, .. } => format!("[resource link {uri}]"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
