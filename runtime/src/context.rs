//! The per-call context a tool (and later a resolver) can take as a parameter.

use crate::app_state::{State, States};
use crate::peer::Outbound;
pub use crate::principal::Principal;
use crate::protocol::ErrorObject;
use crate::protocol::jsonrpc::{Outgoing, to_raw};
use crate::protocol::logging::{LogMessage, MESSAGE};
use crate::protocol::messages::{PROGRESS, ProgressParams};
use crate::protocol::{ClientCapabilities, Era, Implementation, LogLevel, ProtocolVersion, RequestId};
use crate::question::{AskSpec, FromResolved, Settled};
use crate::updates::ResourceUpdates;
use futures_util::future::BoxFuture;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The request a tool is serving: who asked, on which protocol era, with which capabilities, and
/// the means to report progress and notice cancellation.
///
/// Take it as a parameter of a `#[tool]` function (any parameter name); it never appears in the
/// tool's `inputSchema`.
///
/// ```
/// use mcp_resolve_runtime::{Context, protocol::{ClientCapabilities, Era, ProtocolVersion}};
/// // A detached context, as unit tests of a tool body may build one.
/// let cx = Context::detached(ProtocolVersion::V2026_07_28, ClientCapabilities::default());
/// assert_eq!(cx.era(), Era::Stateless);
/// assert!(cx.principal().is_none());
/// assert!(!cx.is_cancelled());
/// ```
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<ContextInner>,
}

/// A context's parts, with the handshake era's back-channel last (`asker`): a call's asker lives
/// in the context's own allocation, as an unsized tail, rather than in one of its own.
#[derive(Debug)]
struct ContextInner<A: ?Sized + AskNow = dyn AskNow> {
    request_id: Option<RequestId>,
    version: ProtocolVersion,
    capabilities: ClientCapabilities,
    client_info: Option<Arc<Implementation>>,
    principal: Option<Principal>,
    progress_token: Option<RequestId>,
    log_level: Option<LogLevel>,
    outbound: Option<Outbound>,
    cancel: CancellationToken,
    /// The server's parts every call's context shares (`None` when detached).
    server: Option<Arc<ServerParts>>,
    /// The last progress value sent (progress: "The `progress` value MUST increase with each
    /// notification"), and whether the call answered already (progress notifications "MUST stop
    /// after completion"), shared by every clone.
    progress: std::sync::Mutex<ProgressState>,
    /// The back-channel a tool body may ask on (handshake era only; else [`NoBackChannel`]).
    asker: A,
}

/// The server's parts every call's context shares, made once per server: a call takes one count
/// on them, not one on each.
#[derive(Debug)]
pub(crate) struct ServerParts {
    /// Its resource subscriptions.
    pub(crate) updates: ResourceUpdates,
    /// Its URL-mode flows.
    pub(crate) flows: crate::url_flow::UrlFlows,
    /// Its application state.
    pub(crate) states: Arc<States>,
}

/// What [`Context::progress`] may still send.
#[derive(Debug, Default)]
struct ProgressState {
    last: Option<f64>,
    finished: bool,
}

pub(crate) struct ContextParts {
    pub(crate) request_id: RequestId,
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) principal: Option<Principal>,
    pub(crate) progress_token: Option<RequestId>,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) outbound: Outbound,
    pub(crate) cancel: CancellationToken,
    pub(crate) server: Arc<ServerParts>,
}

impl Context {
    /// A call's context; `asker` is how its body asks now ([`NoBackChannel`] on 2026-07-28).
    pub(crate) fn new(p: ContextParts, asker: impl AskNow + 'static) -> Self {
        Self {
            inner: Arc::new(ContextInner {
                request_id: Some(p.request_id),
                version: p.version,
                capabilities: p.capabilities,
                client_info: p.client_info,
                principal: p.principal,
                progress_token: p.progress_token,
                log_level: p.log_level,
                outbound: Some(p.outbound),
                cancel: p.cancel,
                server: Some(p.server),
                progress: std::sync::Mutex::default(),
                asker,
            }),
        }
    }

    /// This call's context for the body of a task it became: the task's own cancellation, its
    /// questions through the task (`imperative`), its progress (always on, under the call's
    /// token or a stand-in) and log messages into `outbound`, which the task reads.
    pub(crate) fn for_task(
        &self,
        cancel: CancellationToken,
        imperative: impl AskNow + 'static,
        outbound: Outbound,
    ) -> Self {
        let i = &self.inner;
        Self {
            inner: Arc::new(ContextInner {
                request_id: i.request_id.clone(),
                version: i.version,
                capabilities: i.capabilities.clone(),
                client_info: i.client_info.clone(),
                principal: i.principal.clone(),
                progress_token: Some(i.progress_token.clone().unwrap_or_else(|| RequestId::from(0))),
                log_level: i.log_level,
                outbound: Some(outbound),
                cancel,
                server: i.server.clone(),
                progress: std::sync::Mutex::default(),
                asker: imperative,
            }),
        }
    }

    /// A context attached to no connection, for unit tests of tool bodies: progress goes nowhere
    /// and it is never cancelled.
    pub fn detached(version: ProtocolVersion, capabilities: ClientCapabilities) -> Self {
        Self {
            inner: Arc::new(ContextInner {
                request_id: None,
                version,
                capabilities,
                client_info: None,
                principal: None,
                progress_token: None,
                log_level: None,
                outbound: None,
                cancel: CancellationToken::new(),
                server: None,
                progress: std::sync::Mutex::default(),
                asker: NoBackChannel,
            }),
        }
    }

    /// The server's state of type `T` ([`Server::state`](crate::Server::state)); `None` when
    /// the server holds none of that type, or the context is detached. An item's or resolver's
    /// `State<T>` parameter is this, checked when the server starts.
    ///
    /// ```
    /// use mcp_resolve_runtime::{Context, protocol::{ClientCapabilities, ProtocolVersion}};
    /// let cx = Context::detached(ProtocolVersion::V2026_07_28, ClientCapabilities::default());
    /// assert!(cx.state::<String>().is_none());
    /// ```
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.inner.server.as_ref()?.states.get::<T>()
    }

    /// The JSON-RPC id of the request being served (`None` when detached).
    pub fn request_id(&self) -> Option<&RequestId> {
        self.inner.request_id.as_ref()
    }
    /// The protocol version of this request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }
    /// The protocol era of this request.
    pub fn era(&self) -> Era {
        self.inner.version.era()
    }
    /// The client's capabilities for this request (2026-07-28: from this request's `_meta`;
    /// handshake era: from `initialize`).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.capabilities
    }
    /// The client's name and version, when it sent them.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.client_info.as_deref()
    }
    /// The authenticated caller, when the transport has one (never on stdio).
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_ref()
    }
    /// Whether the client asked for progress notifications on this request.
    pub fn wants_progress(&self) -> bool {
        self.inner.progress_token.is_some()
    }
    /// Sends `notifications/progress` when the client supplied a `progressToken`; does nothing
    /// otherwise. The value must increase with every notification, as the specification
    /// requires: one that is not above the last one sent (or not a finite number) is not sent.
    /// Nothing is sent once the call has answered, even from a clone of the context kept by a
    /// task of the tool's.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let (Some(token), Some(out)) = (&self.inner.progress_token, &self.inner.outbound) else {
            return;
        };
        if !self.take_progress(progress) {
            return;
        }
        let params = ProgressParams {
            progress_token: token,
            progress,
            total,
            message,
        };
        if let Ok(params) = to_raw(&params) {
            out.send(Outgoing::Notification {
                method: PROGRESS,
                params,
            })
            .await;
        }
    }
    /// Whether `progress` may be sent now (it increases, and the call has not answered), taking
    /// it as the last value sent.
    fn take_progress(&self, progress: f64) -> bool {
        let Ok(mut state) = self.inner.progress.lock() else {
            return false;
        };
        let increases = progress.is_finite() && state.last.is_none_or(|last| progress > last);
        if state.finished || !increases {
            tracing::debug!(
                progress,
                finished = state.finished,
                "progress not sent: it must increase, and stop once the call answered"
            );
            return false;
        }
        state.last = Some(progress);
        true
    }
    /// The call answered: no progress is sent after this.
    pub(crate) fn finish(&self) {
        if let Ok(mut state) = self.inner.progress.lock() {
            state.finished = true;
        }
    }
    /// Closes this call's event stream now, as a server that polls does (SEP-1699): the client
    /// reconnects after the stream's `retry` delay with `Last-Event-ID`, and gets what the call
    /// sent since, its result included. Only a handshake-era call over Streamable HTTP has such a
    /// stream (`true`); elsewhere nothing happens (`false`). The call itself goes on.
    ///
    /// ```
    /// use mcp_resolve_runtime::{Context, protocol::ProtocolVersion};
    /// let cx = Context::detached(ProtocolVersion::V2025_11_25, Default::default());
    /// assert!(!cx.close_stream(), "no stream to close");
    /// ```
    pub fn close_stream(&self) -> bool {
        self.inner.outbound.as_ref().is_some_and(Outbound::close_stream)
    }
    /// Whether a log message at `level` would reach the client: it asked for messages at that
    /// level or above (`logging/setLevel` on the handshake era, where `info` and above are sent
    /// until it does; `_meta["io.modelcontextprotocol/logLevel"]` on 2026-07-28, where nothing is
    /// sent without it).
    ///
    /// ```
    /// use mcp_resolve_runtime::{Context, protocol::{LogLevel, ProtocolVersion}};
    /// let cx = Context::detached(ProtocolVersion::V2026_07_28, Default::default());
    /// assert!(!cx.logs(LogLevel::Emergency));
    /// ```
    pub fn logs(&self, level: LogLevel) -> bool {
        self.inner.outbound.is_some() && self.inner.log_level.is_some_and(|wanted| level >= wanted)
    }
    /// Sends a log message (`notifications/message`) to the client, if it wants messages at this
    /// level ([`Context::logs`]); `data` is any JSON value, typically a string. Messages go out in
    /// order, before the call's result.
    ///
    /// ```
    /// use mcp_resolve_runtime::{Context, protocol::{LogLevel, ProtocolVersion}};
    ///
    /// /// The body of a tool that says how an import goes.
    /// async fn import(path: &str, cx: &Context) -> String {
    ///     cx.log(LogLevel::Info, format!("importing {path}")).await;
    ///     "imported".into()
    /// }
    /// # let cx = Context::detached(ProtocolVersion::V2025_11_25, Default::default());
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// assert_eq!(rt.block_on(import("a.md", &cx)), "imported"); // detached: the message goes nowhere
    /// ```
    pub async fn log(&self, level: LogLevel, data: impl serde::Serialize) {
        self.log_to(level, None, data).await
    }
    /// [`Context::log`] naming the logger (the component the message is about).
    pub async fn log_to(&self, level: LogLevel, logger: Option<&str>, data: impl serde::Serialize) {
        if !self.logs(level) {
            return;
        }
        let Some(out) = &self.inner.outbound else { return };
        let params = LogMessage {
            level,
            logger,
            data: &data,
        };
        if let Ok(params) = to_raw(&params) {
            out.send(Outgoing::Notification {
                method: MESSAGE,
                params,
            })
            .await;
        }
    }
    /// Says that the resource at `uri` changed, as [`ResourceUpdates::updated`] does: every
    /// handshake-era session subscribed to exactly this URI (whichever client it is) is sent
    /// `notifications/resources/updated`. Returns how many were sent one (0 when detached); never
    /// waits. A tool that writes what a resource reads calls it once the write is done.
    ///
    /// ```
    /// use mcp_resolve_runtime::{Context, protocol::ProtocolVersion};
    ///
    /// /// The body of a tool that saves a note and says so to its subscribers.
    /// fn save(text: &str, cx: &Context) -> usize {
    ///     // … write `text` to the file `notes://today` reads …
    ///     # let _ = text;
    ///     cx.resource_updated("notes://today")
    /// }
    /// let cx = Context::detached(ProtocolVersion::V2025_11_25, Default::default());
    /// assert_eq!(save("hello", &cx), 0); // detached: nobody to tell
    /// ```
    pub fn resource_updated(&self, uri: &str) -> usize {
        self.inner.server.as_ref().map_or(0, |s| s.updates.updated(uri))
    }
    /// The server's URL-mode flows (`None` when detached): what a tool that serves a URL-mode
    /// page's outcome, or a page handler given the context, reads and completes. See
    /// [`UrlFlows`](crate::url_flow::UrlFlows).
    ///
    /// ```
    /// use mcp_resolve_runtime::{Context, protocol::ProtocolVersion};
    /// let cx = Context::detached(ProtocolVersion::V2026_07_28, Default::default());
    /// assert!(cx.url_flows().is_none());
    /// ```
    pub fn url_flows(&self) -> Option<&crate::url_flow::UrlFlows> {
        self.inner.server.as_ref().map(|s| &s.flows)
    }
    /// Asks the user to fill in form `F` now, from a tool body, on the handshake era's
    /// back-channel (an `elicitation/create` request the call waits for), and returns all three
    /// outcomes. On 2026-07-28 there is no back-channel: this is
    /// [`ElicitError::NoBackChannel`], whose message names the
    /// fix: ask from a `#[resolver]`, which works on both eras. Prefer resolvers anyway: they ask
    /// only what is needed, before the body runs, and are checked at compile time.
    ///
    /// ```
    /// use mcp_resolve_runtime::{Context, context::ElicitError, elicit::Confirm, protocol::ProtocolVersion};
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let cx = Context::detached(ProtocolVersion::V2026_07_28, Default::default());
    /// assert_eq!(cx.elicit::<Confirm>("Go on?").await, Err(ElicitError::NoBackChannel));
    /// # });
    /// ```
    pub async fn elicit<F>(
        &self,
        message: impl Into<String>,
    ) -> Result<crate::elicit::ElicitationResult<F>, ElicitError>
    where
        F: crate::form::FormSchema + Clone + Send + Sync + 'static,
    {
        self.ask(crate::elicit::Elicit::<F>::form(message)).await
    }
    /// [`Context::elicit`] in URL mode: the user opens `url` (see [`Elicit::url`](crate::Elicit::url));
    /// the call waits for the page to record the step (up to the elicitation timeout), and the
    /// client is told with `notifications/elicitation/complete`. 2025-11-25 only.
    pub async fn elicit_url<T: crate::elicit::UrlOutcome>(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<crate::elicit::ElicitationResult<T>, ElicitError> {
        self.ask(crate::elicit::Elicit::<T>::url(message, url)).await
    }
    /// Asks any question now from a tool body (a form, a page, a sample, the roots), as
    /// [`Context::elicit`] does.
    pub async fn ask<T: Clone + Send + Sync + 'static>(
        &self,
        ask: impl Into<crate::elicit::Ask<T>>,
    ) -> Result<crate::elicit::ElicitationResult<T>, ElicitError> {
        let spec = AskSpec::erase(ask.into());
        let settled = self.inner.asker.ask(&spec, self).await?;
        // (The kind names the call in a refusal's message; an `ElicitationResult` carries every
        // outcome, so it has none to name.)
        <crate::elicit::ElicitationResult<T> as FromResolved<T>>::from_resolved(&settled, "the question", "call")
            .map_err(ElicitError::Failed)
    }
    /// The request's cancellation.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the client cancelled this request (or the connection closed).
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }
    /// Completes when the request is cancelled; use it in `tokio::select!` around long work.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }
}

/// A parameter a prompt, a resource or a completer reads from the request's context: the
/// [`Context`] itself, or application state ([`State<T>`]).
#[doc(hidden)]
pub trait FromContext: Sized {
    /// Reads it; `Err` names what is missing.
    fn from_context(cx: &Context) -> Result<Self, String>;
    /// The application state it is, which the server checks it holds.
    const STATE: Option<crate::app_state::StateNeed> = None;
}

impl FromContext for Context {
    fn from_context(cx: &Context) -> Result<Self, String> {
        Ok(cx.clone())
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(cx: &Context) -> Result<Self, String> {
        cx.state::<T>().ok_or_else(|| {
            format!(
                "the server holds no state of type `{}`: register one with `Server::state`",
                std::any::type_name::<T>()
            )
        })
    }
    const STATE: Option<crate::app_state::StateNeed> = Some(crate::app_state::StateNeed::of::<T>());
}

/// Why a tool body's question got no answer.
///
/// ```
/// use mcp_resolve_runtime::context::ElicitError;
/// let e = ElicitError::NoBackChannel;
/// assert!(e.to_string().contains("#[resolver]"));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitError {
    /// The request has no back-channel: 2026-07-28 (a tool asks by returning an
    /// `InputRequiredResult`, which resolvers do), or a detached context.
    NoBackChannel,
    /// The client cannot or would not answer: it did not declare the capability the question
    /// needs (-32021, with `data.requiredCapabilities`), or it answered with a JSON-RPC error.
    Refused(ErrorObject),
    /// No answer: a timeout, a malformed answer, the client went away, the question limit.
    Failed(String),
}

impl std::fmt::Display for ElicitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoBackChannel => f.write_str(
                "this request has no back-channel to ask on (2026-07-28 has none): ask from a #[resolver] and take its value with #[resolve(that_resolver)], which asks with an InputRequiredResult on 2026-07-28 and on the back-channel on 2025",
            ),
            Self::Refused(e) => f.write_str(&e.message),
            Self::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ElicitError {}

impl ElicitError {
    /// The tool's result for this error: the JSON-RPC error a refusal stands for (e.g. -32021
    /// for a missing capability), else an `isError` result with the message.
    ///
    /// ```
    /// use mcp_resolve_runtime::context::ElicitError;
    /// assert!(ElicitError::Failed("no answer".into()).into_result().is_error);
    /// ```
    pub fn into_result(self) -> crate::tool_result::CallToolResult {
        match self {
            Self::Refused(e) => crate::tool_result::CallToolResult::protocol_error(e),
            other => crate::tool_result::CallToolResult::error(other.to_string()),
        }
    }
}

/// How a tool body asks now ([`Context::ask`]): the handshake era's back-channel of its call,
/// which the engine provides. Absent on 2026-07-28 and on a detached context.
pub(crate) trait AskNow: Send + Sync + std::fmt::Debug {
    /// Asks `ask` and waits for its answer.
    fn ask<'a>(&'a self, ask: &'a AskSpec, context: &'a Context) -> BoxFuture<'a, Result<Settled, ElicitError>>;
}

/// No back-channel: 2026-07-28 (a body's questions are its resolvers'), or a detached context.
#[derive(Debug)]
pub(crate) struct NoBackChannel;

impl AskNow for NoBackChannel {
    fn ask<'a>(&'a self, _: &'a AskSpec, _: &'a Context) -> BoxFuture<'a, Result<Settled, ElicitError>> {
        Box::pin(std::future::ready(Err(ElicitError::NoBackChannel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each way a tool body's question fails says why, and becomes the result it stands for: a
    /// refusal the JSON-RPC error the client gets, anything else an `isError` result with the
    /// message. (The doctests show it too, but they are not in the unit tests.)
    #[test]
    fn an_elicit_error_says_why_and_becomes_the_result_it_stands_for() {
        let missing = ErrorObject::new(-32021, "Client did not declare the form elicitation capability");
        let refused = ElicitError::Refused(missing.clone());
        assert_eq!(refused.to_string(), missing.message);
        assert_eq!(refused.into_result().as_protocol_error(), Some(&missing));

        let failed = ElicitError::Failed("no answer within 10s".into());
        assert_eq!(failed.to_string(), "no answer within 10s");
        let result = failed.into_result();
        assert!(result.is_error);
        assert!(result.as_protocol_error().is_none());
        assert_eq!(
            serde_json::to_value(&result.content).unwrap(),
            serde_json::json!([{ "type": "text", "text": "no answer within 10s" }])
        );

        let none = ElicitError::NoBackChannel;
        let why = none.to_string();
        assert!(why.starts_with("this request has no back-channel to ask on"), "{why}");
        assert!(why.contains("#[resolver]"), "{why}");
        let result = none.into_result();
        assert!(result.is_error);
        assert_eq!(
            serde_json::to_value(&result.content).unwrap(),
            serde_json::json!([{ "type": "text", "text": why }])
        );
    }
}
