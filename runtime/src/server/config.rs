//! The server's settings and their defaults, as the builder methods of [`Server`] set them.
use crate::budget::Budget;
use crate::seal::Sealer;
use crate::store::SharedStore;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// Who may cache list results (`cacheScope` on 2026-07-28), with [`Server::list_cache`](crate::Server::list_cache).
///
/// ```
/// use mcp_resolve_runtime::{Server, server::CacheScope};
/// let server = Server::new("notes").list_cache(60_000, CacheScope::Private);
/// # let _ = server;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// Any cache may keep the result.
    Public,
    /// Only the requesting user's cache may keep it.
    Private,
}

impl CacheScope {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Private => "private",
        }
    }
}

/// Limits and knobs. Every field has a safe default.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) max_frame_bytes: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) list_ttl_ms: u64,
    pub(crate) list_cache_scope: CacheScope,
    pub(crate) max_rounds: u64,
    pub(crate) elicitation_timeout: Duration,
    /// `None` until keys are given, or made at the first seal.
    pub(crate) sealer: Sealer,
    pub(crate) audience: Option<String>,
    /// Memory of the JSON trees made from clients' `arguments` and `inputResponses`.
    pub(crate) json_memory: Budget,
    /// How many calls of one connection or session may wait for the client's answer at once.
    pub(crate) max_waiting: usize,
    /// What outlives a request and is shared by replicas: used single-use answers, URL flows.
    pub(crate) store: SharedStore,
    /// How long a URL-mode flow waits for its page.
    pub(crate) url_flow_ttl: Duration,
    /// How long a 2026-07-28 retry whose user accepted a URL-mode question waits for the page
    /// before asking again.
    pub(crate) url_wait: Duration,
    /// How many questions one tool, prompt or resource may ask one caller per window.
    pub(crate) question_limit: Arc<crate::resolve::limit::QuestionLimit>,
    /// The URL-mode flows each caller has waiting, and how many it may (shared with every
    /// [`UrlFlows`](crate::url_flow::UrlFlows) taken from the server, so the bound set later holds too).
    pub(crate) waiting_flows: Arc<crate::url_flow::Waiting>,
    /// The `subscriptions/listen` streams open, their bounds and lifetime.
    pub(crate) listens: Arc<super::listen::ListenLimits>,
    /// Scope implications the server declares: a broader scope → the narrower ones it grants.
    pub(crate) scope_implications: HashMap<String, Vec<String>>,
    /// URL-mode questions may be asked of unauthenticated callers ([`Server::anonymous_url_flows`]).
    pub(crate) anonymous_url_flows: bool,
    /// How often a handshake-era stdio client is pinged ([`Server::ping_interval`]).
    pub(crate) ping_interval: Option<Duration>,
    /// Calls per caller ([`Server::call_rate_limit`]); `None`: unlimited.
    pub(crate) call_rate: Option<Arc<super::rate::CallRate>>,
    /// Tasks: retention, polling, lease, result size, how many run at once.
    pub(crate) tasks: crate::tasks::TaskSettings,
    /// What waits on a task on this replica.
    pub(crate) task_wakers: crate::tasks::TaskWakers,
    /// The tasks running on this replica, per caller.
    pub(crate) running_tasks: Arc<super::task::Running>,
    /// What makes a request's trace context the parent of its span ([`Server::on_trace_context`]).
    pub(crate) trace_hook: Option<crate::telemetry::TraceHook>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_frame_bytes: 4 * 1024 * 1024,
            max_in_flight: 64,
            list_ttl_ms: 0,
            list_cache_scope: CacheScope::Public,
            max_rounds: 10,
            elicitation_timeout: Duration::from_secs(600),
            sealer: Sealer::new(None, Duration::from_secs(600)),
            audience: None,
            json_memory: Budget::new(256 * 1024 * 1024),
            max_waiting: 64,
            store: SharedStore(Arc::new(crate::store::MemoryStore::default())),
            url_flow_ttl: Duration::from_secs(600),
            url_wait: Duration::from_secs(30),
            question_limit: Arc::new(crate::resolve::limit::QuestionLimit::new(100, Duration::from_secs(60))),
            waiting_flows: Arc::default(),
            listens: Arc::new(super::listen::ListenLimits::new(
                1024,
                16,
                Duration::from_secs(24 * 3600),
            )),
            scope_implications: HashMap::new(),
            anonymous_url_flows: false,
            ping_interval: Some(Duration::from_secs(60)),
            call_rate: Some(Arc::new(super::rate::CallRate::new(
                std::num::NonZeroU32::MIN.saturating_add(DEFAULT_CALLS_PER_SECOND - 1),
                std::num::NonZeroU32::MIN.saturating_add(DEFAULT_CALL_BURST - 1),
            ))),
            tasks: crate::tasks::TaskSettings::default(),
            task_wakers: crate::tasks::TaskWakers::default(),
            running_tasks: Arc::default(),
            trace_hook: None,
        }
    }
}

/// Calls per second one caller may make by default ([`Server::call_rate_limit`]).
const DEFAULT_CALLS_PER_SECOND: u32 = 100;
/// Calls one caller may make at once by default.
const DEFAULT_CALL_BURST: u32 = 200;
