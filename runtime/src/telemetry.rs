//! What a server tells its operators: spans (`tracing`) and, with the `metrics` feature, metrics
//! (the `metrics` facade). Neither has an exporter here: install a `tracing` subscriber (e.g.
//! `tracing-opentelemetry` for OTLP) and a `metrics` recorder (e.g. a Prometheus exporter) in
//! your binary. With none installed, each costs a check per event.
//!
//! # Spans
//!
//! Target `mcp_resolve`, level `INFO`; field names follow OpenTelemetry's conventions for MCP
//! where one exists, and so does the shape: one span per request, a call's fields on its
//! request's span (a second span per call cost a short call about 9 % of its CPU with spans
//! recorded). Never recorded: arguments, answers, tokens, `requestState`, session ids.
//!
//! | span | when | fields |
//! |---|---|---|
//! | `mcp.request` | each JSON-RPC request | `otel.name` (the method), `otel.kind` = `server`, `mcp.method.name`, `mcp.outcome` (`ok`, `error`, `forbidden`, `cancelled`), `error.type` (the JSON-RPC code), `enduser.hash` |
//! | | and for a tool call, prompt, resource read or completion the dispatcher read (run, or refused once read: a duplicate id, the call rate, missing scopes) | `otel.name` = `tools/call NAME` (`prompts/get NAME`, `resources/read TEMPLATE`, `completion/complete NAME`), `mcp.item.kind`, `mcp.item.name` (a resource's template), `mcp.protocol.version`, `mcp.era` (`2026-07-28` or `handshake`), `mcp.round` (1 for a first request, 2 for its first retry…), `mcp.outcome` (`ok`, `tool_error`, `input_required`, `task`, `error`, `cancelled`) |
//! | `mcp.resolver` (child of the request's) | a resolver running | `mcp.resolver.name`, `mcp.outcome` (`value`, `asked`, `answered`, `refused`, `failed`) |
//! | `mcp.question` (child) | a question asked (back-channel) or put to the client (`inputRequests`), or its answer read in a retry | `mcp.question.key`, `mcp.question.mode` (`form`, `url`, `sampling`, `roots`), `mcp.outcome` (`input_required`, `accept`, `decline`, `cancel`, `failed`, `error`) |
//!
//! `enduser.hash` is the first 16 hex digits of the SHA-256 of the caller's issuer and subject:
//! stable across replicas and restarts (one caller's calls can be grouped), never the name.
//!
//! A request carrying a W3C trace context (`traceparent`, `tracestate` in `params._meta`, as
//! SEP-414 says; over HTTP also the `traceparent` header) hands it to the hook set with
//! [`Server::on_trace_context`](crate::server::Server::on_trace_context), which makes it the
//! parent of `mcp.request`: with `tracing-opentelemetry`, `span.set_parent(…)`. Then each round
//! of a 2026-07-28 call, on whichever replica, joins the client's trace.
//!
//! # Metrics (feature `metrics`)
//!
//! | name | kind | labels |
//! |---|---|---|
//! | `mcp_requests_total` | counter | `method` (a method of MCP, else `other`), `outcome` (`ok`, `error`, `forbidden`, `cancelled`: a call's `tool_error`, `input_required` and `task` count as `ok`) |
//! | `mcp_calls_total` | counter | `kind` (`tool`, `prompt`, `resource`, `completion`), `name`, `outcome` as a call's `mcp.outcome` on `mcp.request` |
//! | `mcp_call_duration_seconds` | histogram | `kind`, `name` (one request: a round, not the whole call) |
//! | `mcp_call_rounds` | histogram | `kind`, `name`: the round a call ended in (1: it asked nothing) |
//! | `mcp_questions_asked_total` | counter | `name` (the tool, prompt or resource), `mode` |
//! | `mcp_questions_answered_total` | counter | `name`, `action` (`accept`, `decline`, `cancel`, `expired`) |
//! | `mcp_states_refused_total` | counter | `reason` (`tampered`, `mismatched`, `expired`, `replayed`) |
//! | `mcp_limit_hits_total` | counter | `limit` (`body_bytes`, `buffered_bytes`, `connections`, `sessions`, `sessions_per_principal`, `call_rate`, `questions`, `rounds` (a call's rounds, or on the handshake era its questions, past `Server::max_rounds`), `waiting_questions`) |
//! | `mcp_sessions_open` | gauge | handshake-era HTTP sessions |
//! | `mcp_connections_open` | gauge | `transport` (`http`, `stdio`); `http` only for this crate's own listener (`Server::serve_http`): under an `HttpService` the application's server holds the connections |
//!
//! `name` is always a name this server registered, never a client's text.

use crate::principal::Principal;
use sha2::{Digest, Sha256};

/// A W3C trace context a request carried (`traceparent`, and `tracestate` when present), checked
/// against the format: version `00`-style fields of hex digits, ids not all zero.
///
/// ```
/// use mcp_resolve_runtime::telemetry::TraceContext;
/// let t = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Some("a=1")).unwrap();
/// assert_eq!(t.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert_eq!(t.parent_id(), "00f067aa0ba902b7");
/// assert!(t.sampled());
/// assert_eq!(t.tracestate(), Some("a=1"));
/// assert!(TraceContext::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None).is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

/// The longest `tracestate` taken (W3C: 32 members of up to 256 bytes would be more; 512 is
/// what vendors propagate).
pub const MAX_TRACESTATE_BYTES: usize = 512;

impl TraceContext {
    /// A context from its header values; `None` when `traceparent` is malformed. A malformed or
    /// oversized `tracestate` is dropped (the parent is kept), as W3C says.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let t = traceparent.trim();
        let b = t.as_bytes();
        let hex = |r: std::ops::Range<usize>| b[r].iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
        let zero = |r: std::ops::Range<usize>| b[r].iter().all(|&c| c == b'0');
        // `00` is exactly 55 bytes; a later version may append `-…` fields.
        let ok = (55..=256).contains(&b.len())
            && (b.len() == 55 || (b[55] == b'-' && &b[..2] != b"00"))
            && b[2] == b'-'
            && b[35] == b'-'
            && b[52] == b'-'
            && hex(0..2)
            && &b[..2] != b"ff"
            && hex(3..35)
            && !zero(3..35)
            && hex(36..52)
            && !zero(36..52)
            && hex(53..55)
            && t.is_ascii();
        if !ok {
            return None;
        }
        let tracestate = tracestate
            .map(str::trim)
            .filter(|s| {
                !s.is_empty() && s.len() <= MAX_TRACESTATE_BYTES && s.bytes().all(|c| (0x20..0x7f).contains(&c))
            })
            .map(str::to_owned);
        Some(Self {
            traceparent: t.to_owned(),
            tracestate,
        })
    }

    /// The `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, when one was carried and well-formed.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The trace id: 32 hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The caller's span id: 16 hex digits.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// Whether the caller sampled the trace (flag `01`).
    pub fn sampled(&self) -> bool {
        u8::from_str_radix(&self.traceparent[53..55], 16).is_ok_and(|f| f & 1 == 1)
    }
}

/// What [`Server::on_trace_context`](crate::server::Server::on_trace_context) installs.
#[derive(Clone)]
pub(crate) struct TraceHook(pub(crate) std::sync::Arc<JoinTrace>);

/// The hook's function.
type JoinTrace = dyn Fn(&tracing::Span, &TraceContext) + Send + Sync;

impl std::fmt::Debug for TraceHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceHook")
    }
}

/// `enduser.hash`: 16 hex digits of SHA-256 over the issuer and subject.
pub(crate) fn principal_hash(p: &Principal) -> String {
    let mut h = Sha256::new();
    h.update(b"mcp-resolve principal\0");
    h.update(p.issuer.as_deref().unwrap_or_default().as_bytes());
    h.update([0]);
    h.update(p.subject.as_bytes());
    let digest = h.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The methods of MCP, as metric labels; `other` last.
const METHODS: [&str; 21] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/result",
    "tasks/list",
    "other",
];

/// A method as a metric label: a method of MCP, else `other` (a client's text never becomes a
/// label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Method(u8);

impl Method {
    pub(crate) fn of(method: &str) -> Self {
        let i = match method {
            "initialize" => 0,
            "ping" => 1,
            "tools/list" => 2,
            "tools/call" => 3,
            "prompts/list" => 4,
            "prompts/get" => 5,
            "resources/list" => 6,
            "resources/templates/list" => 7,
            "resources/read" => 8,
            "resources/subscribe" => 9,
            "resources/unsubscribe" => 10,
            "completion/complete" => 11,
            "logging/setLevel" => 12,
            "server/discover" => 13,
            "subscriptions/listen" => 14,
            "tasks/get" => 15,
            "tasks/update" => 16,
            "tasks/cancel" => 17,
            "tasks/result" => 18,
            "tasks/list" => 19,
            _ => 20,
        };
        Self(i)
    }

    pub(crate) fn as_str(self) -> &'static str {
        METHODS[usize::from(self.0)]
    }

    /// Whether the method's work is an item's call or a completion (the dispatcher only reads
    /// its params; the work runs later, in the request's span).
    pub(crate) fn is_call(self) -> bool {
        matches!(self.0, 3 | 5 | 8 | 11)
    }
}

/// A call's `kind`, its `name` (registered: never a client's text), and the protocol version
/// it came in: what a call's [`request_span`] names.
pub(crate) struct Called<'a> {
    pub(crate) verb: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) name: &'a str,
    pub(crate) version: crate::protocol::ProtocolVersion,
}

/// A span's `otel.name`: the method, or a call's method and item (`tools/call NAME`), written
/// only by a subscriber that formats it.
struct SpanName<'a>(Method, Option<(&'static str, &'a str)>);

impl std::fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some((verb, name)) => write!(f, "{verb} {name}"),
            None => f.write_str(self.0.as_str()),
        }
    }
}

/// A request's `mcp.request` span: for a call (`tools/call`, `prompts/get`, `resources/read`,
/// `completion/complete`) made once the call is known, with every field known before it runs
/// (one span per request; a value recorded later costs a filter's lookup). The caller's hash is
/// computed only when a subscriber records the span.
pub(crate) fn request_span(method: Method, called: Option<Called<'_>>, principal: Option<&Principal>) -> tracing::Span {
    use tracing::field::Empty;
    let era = |v: crate::protocol::ProtocolVersion| match v.era() {
        crate::protocol::Era::Stateless => "2026-07-28",
        crate::protocol::Era::Handshake => "handshake",
    };
    tracing::info_span!(
        target: "mcp_resolve",
        "mcp.request",
        otel.name = %SpanName(method, called.as_ref().map(|c| (c.verb, c.name))),
        otel.kind = "server",
        mcp.method.name = method.as_str(),
        mcp.outcome = Empty,
        error.type = Empty,
        enduser.hash = principal.map(principal_hash),
        mcp.item.kind = called.as_ref().map(|c| c.kind),
        mcp.item.name = called.as_ref().map(|c| c.name),
        mcp.protocol.version = called.as_ref().map(|c| c.version.as_str()),
        mcp.era = called.as_ref().map(|c| era(c.version)),
        mcp.round = Empty,
    )
}

/// Records how a request ended on its `mcp.request` span, in one record (a filter layer looks the
/// span up on each record): `mcp.outcome`, `error.type` (the JSON-RPC code) when it failed, and a
/// call's `mcp.round`. The three fields are looked up by name once per process:
/// `tracing::record_all!` searches the span's thirteen names for each field on every record.
pub(crate) fn record_ended(span: &tracing::Span, outcome: &'static str, error: Option<i64>, round: Option<u64>) {
    use tracing::field::{Field, Value};
    static FIELDS: std::sync::OnceLock<Option<[Field; 3]>> = std::sync::OnceLock::new();
    // A disabled span (no subscriber wants it) has no metadata: nothing to record.
    let Some(meta) = span.metadata() else { return };
    let fields = meta.fields();
    let found = FIELDS.get_or_init(|| {
        Some([
            fields.field("mcp.outcome")?,
            fields.field("error.type")?,
            fields.field("mcp.round")?,
        ])
    });
    match found {
        // Fields belong to one callsite: the cached ones serve only spans made where they were.
        Some([o, e, r]) if o.callsite() == meta.callsite() => {
            span.record_all(&fields.value_set(&[
                (r, round.as_ref().map(|c| c as &dyn Value)),
                (o, Some(&outcome as &dyn Value)),
                (e, error.as_ref().map(|c| c as &dyn Value)),
            ]));
        }
        _ => tracing::record_all!(span, mcp.round = round, mcp.outcome = outcome, error.type = error),
    }
}

/// How a request other than a call ended, as `mcp.outcome` on `mcp.request`, and any request as
/// a metric label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RequestOutcome {
    Ok,
    Error,
    Forbidden,
    Cancelled,
}

impl RequestOutcome {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Forbidden => "forbidden",
            Self::Cancelled => "cancelled",
        }
    }
}

/// How a call (a request of it) ended, as `mcp.outcome` on its `mcp.request` and a metric label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallOutcome {
    Ok,
    ToolError,
    InputRequired,
    Task,
    Error,
    Cancelled,
}

impl CallOutcome {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::InputRequired => "input_required",
            Self::Task => "task",
            Self::Error => "error",
            Self::Cancelled => "cancelled",
        }
    }
}

/// One registered item's metric handles, registered with the recorder at first use and kept:
/// a call then builds no key and allocates nothing, and with no recorder installed (handles
/// that do nothing) costs a load per metric. A recorder installed after the first use is not
/// seen by these handles: install it before serving, as the `metrics` crate asks.
pub(crate) struct ItemMetrics {
    /// The item's name (a resource's template), its `name` label.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    name: String,
    #[cfg(feature = "metrics")]
    calls: std::sync::OnceLock<CallHandles>,
    #[cfg(feature = "metrics")]
    questions: std::sync::OnceLock<QuestionHandles>,
}

impl std::fmt::Debug for ItemMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ItemMetrics")
    }
}

#[cfg(feature = "metrics")]
struct CallHandles {
    calls: [metrics::Counter; 6],
    duration: metrics::Histogram,
    rounds: metrics::Histogram,
}

/// The modes a question is asked in, and the actions it is answered with, in label order.
#[cfg(feature = "metrics")]
const MODES: [&str; 4] = ["form", "url", "sampling", "roots"];
#[cfg(feature = "metrics")]
const ACTIONS: [&str; 4] = ["accept", "decline", "cancel", "expired"];

#[cfg(feature = "metrics")]
struct QuestionHandles {
    asked: [metrics::Counter; 4],
    answered: [metrics::Counter; 4],
}

impl ItemMetrics {
    /// The handles of the item `name`.
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            #[cfg(feature = "metrics")]
            calls: std::sync::OnceLock::new(),
            #[cfg(feature = "metrics")]
            questions: std::sync::OnceLock::new(),
        }
    }

    /// One call (a request of it) of the item, a `kind`, ended.
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn call(&self, kind: &'static str, outcome: CallOutcome, seconds: f64, round: u64) {
        #[cfg(feature = "metrics")]
        {
            let h = self.calls.get_or_init(|| {
                let outcomes = [
                    CallOutcome::Ok,
                    CallOutcome::ToolError,
                    CallOutcome::InputRequired,
                    CallOutcome::Task,
                    CallOutcome::Error,
                    CallOutcome::Cancelled,
                ];
                let name = metrics::SharedString::from_owned(self.name.clone());
                CallHandles {
                    calls: outcomes.map(|o| {
                        metrics::counter!("mcp_calls_total", "kind" => kind, "name" => name.clone(), "outcome" => o.as_str())
                    }),
                    duration: metrics::histogram!("mcp_call_duration_seconds", "kind" => kind, "name" => name.clone()),
                    rounds: metrics::histogram!("mcp_call_rounds", "kind" => kind, "name" => name),
                }
            });
            h.calls[outcome as usize].increment(1);
            h.duration.record(seconds);
            if outcome != CallOutcome::InputRequired {
                h.rounds.record(round as f64);
            }
        }
    }

    #[cfg(feature = "metrics")]
    fn questions(&self) -> &QuestionHandles {
        self.questions.get_or_init(|| {
            let name = metrics::SharedString::from_owned(self.name.clone());
            QuestionHandles {
                asked: MODES
                    .map(|m| metrics::counter!("mcp_questions_asked_total", "name" => name.clone(), "mode" => m)),
                answered: ACTIONS
                    .map(|a| metrics::counter!("mcp_questions_answered_total", "name" => name.clone(), "action" => a)),
            }
        })
    }

    /// A question of the item was put to the client, in `mode`.
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn question_asked(&self, mode: &str) {
        #[cfg(feature = "metrics")]
        if let Some(i) = MODES.iter().position(|m| *m == mode) {
            self.questions().asked[i].increment(1);
        }
    }

    /// A question of the item got `action` (`accept`, `decline`, `cancel`), or none in time
    /// (`expired`).
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn question_answered(&self, action: &str) {
        #[cfg(feature = "metrics")]
        if let Some(i) = ACTIONS.iter().position(|a| *a == action) {
            self.questions().answered[i].increment(1);
        }
    }
}

/// One server's `mcp_requests_total` handles, by method and outcome, each registered with the
/// recorder at its first use and kept, like [`ItemMetrics`]: the server's own, not the process's,
/// so two servers in one process (each under its own local recorder, as tests have them) count
/// apart.
#[derive(Default)]
pub(crate) struct RequestMetrics {
    #[cfg(feature = "metrics")]
    counters: [[std::sync::OnceLock<metrics::Counter>; 4]; 21],
}

impl RequestMetrics {
    /// One request ended.
    #[inline]
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn request(&self, method: Method, outcome: RequestOutcome) {
        #[cfg(feature = "metrics")]
        self.counters[usize::from(method.0)][outcome as usize]
            .get_or_init(
                || metrics::counter!("mcp_requests_total", "method" => method.as_str(), "outcome" => outcome.as_str()),
            )
            .increment(1);
    }
}

/// Polls a pinned future with `span` entered: [`tracing::Instrument`] without moving the
/// future (the call futures are large: moving one costs more than the span).
pub(crate) struct InSpan<'a, F> {
    span: &'a tracing::Span,
    future: std::pin::Pin<&'a mut F>,
}

impl<'a, F> InSpan<'a, F> {
    pub(crate) fn new(span: &'a tracing::Span, future: std::pin::Pin<&'a mut F>) -> Self {
        Self { span, future }
    }
}

impl<F: std::future::Future> std::future::Future for InSpan<'_, F> {
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<F::Output> {
        let this = self.get_mut();
        let _entered = this.span.enter();
        this.future.as_mut().poll(cx)
    }
}

/// An open connection, counted in `mcp_connections_open` until dropped.
pub(crate) struct Open(&'static str);

impl Open {
    pub(crate) fn connection(transport: &'static str) -> Self {
        metric::connections(transport, 1.0);
        Self(transport)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        metric::connections(self.0, -1.0);
    }
}

/// The metrics this crate records; each a no-op without the `metrics` feature.
pub(crate) mod metric {
    #[cfg(feature = "metrics")]
    use metrics::{counter, gauge};

    /// A `requestState` was refused.
    #[inline]
    pub(crate) fn state_refused(reason: &'static str) {
        #[cfg(feature = "metrics")]
        counter!("mcp_states_refused_total", "reason" => reason).increment(1);
        #[cfg(not(feature = "metrics"))]
        let _ = reason;
    }

    /// A bound was reached.
    #[inline]
    pub(crate) fn limit_hit(limit: &'static str) {
        #[cfg(feature = "metrics")]
        counter!("mcp_limit_hits_total", "limit" => limit).increment(1);
        #[cfg(not(feature = "metrics"))]
        let _ = limit;
    }

    /// A handshake-era session opened (`+1`) or ended (`-1`).
    #[inline]
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // sessions are HTTP's
    pub(crate) fn sessions(delta: f64) {
        #[cfg(feature = "metrics")]
        gauge!("mcp_sessions_open").increment(delta);
        #[cfg(not(feature = "metrics"))]
        let _ = delta;
    }

    /// A connection opened (`+1`) or closed (`-1`).
    #[inline]
    pub(crate) fn connections(transport: &'static str, delta: f64) {
        #[cfg(feature = "metrics")]
        gauge!("mcp_connections_open", "transport" => transport).increment(delta);
        #[cfg(not(feature = "metrics"))]
        let _ = (transport, delta);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_checked_field_by_field() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
        let t = TraceContext::parse(good, Some("bad\u{7f}")).unwrap();
        assert!(!t.sampled());
        assert_eq!(
            t.tracestate(),
            None,
            "a malformed tracestate is dropped, the parent kept"
        );
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(TraceContext::parse(bad, None).is_none(), "{bad:?}");
        }
        assert!(TraceContext::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", None).is_some());
    }

    #[test]
    fn the_methods_that_run_as_calls_are_the_four_an_item_or_completer_answers() {
        let calls: Vec<&str> = METHODS.iter().copied().filter(|m| Method::of(m).is_call()).collect();
        assert_eq!(
            calls,
            ["tools/call", "prompts/get", "resources/read", "completion/complete"]
        );
    }

    #[test]
    fn the_principal_is_a_stable_hash() {
        let a = principal_hash(&Principal::new("alice"));
        assert_eq!(a.len(), 16);
        assert_eq!(a, principal_hash(&Principal::new("alice")));
        assert_ne!(a, principal_hash(&Principal::new("bob")));
        assert!(!a.contains("alice"));
    }

    #[test]
    fn a_method_label_is_never_the_clients_text() {
        for m in METHODS {
            let label = Method::of(m).as_str();
            assert_eq!(label, m, "each method of MCP is its own label");
        }
        assert_eq!(Method::of("x/made-up").as_str(), "other");
    }
}
