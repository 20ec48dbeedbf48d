//! URL-mode flows: the out-of-band step a URL-mode question sends the user to, as the server
//! keeps it in its [`Store`](crate::store::Store). A flow is created when the question is asked, under
//! a one-time random id bound to the caller and an expiry; the page the user opens reads it
//! ([`UrlFlows::open`]) and records the outcome once ([`UrlFlows::complete`],
//! [`UrlFlows::decline`]); the question's resolver takes that outcome once, on the call's next
//! round (2026-07-28) or while it waits (handshake era).
//!
//! (Over 500 lines with its tests, on purpose: a flow's record, its one-time outcome, the flows a
//! caller has waiting and the check of the page URL are one security promise, reviewed together.)

use crate::expiring::ExpiringMap;
use crate::principal::Principal;
use crate::store::{SharedStore, StoreError};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::store::URL_FLOW_PREFIX as PREFIX;
/// A flow id: 16 random bytes, base64url (22 characters).
const ID_CHARS: usize = 22;
/// How many URL-mode flows one caller may have waiting for their pages at once, unless
/// [`Server::url_flows_per_caller`](crate::Server::url_flows_per_caller) says otherwise.
pub(crate) const DEFAULT_FLOWS_PER_CALLER: usize = 16;
/// How many callers' waiting flows one server counts at once.
const MAX_WAITING_CALLERS: usize = 100_000;
/// How many of its flows are looked up in the store for a caller at its bound, per flow it asks
/// for: the oldest first; those still pending then go to the back, so the next attempt looks at
/// others. A refusal so costs at most this many reads, whatever the bound.
const LOOKUPS_AT_BOUND: usize = 16;

/// Where a flow is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    /// Asked; the page has not recorded anything.
    Pending,
    /// The page recorded an outcome.
    Done,
    /// The page recorded a refusal.
    Declined,
    /// The outcome was taken by the call.
    Used,
}

/// A flow as stored.
#[derive(Serialize, Deserialize)]
struct Record {
    /// The caller's tag (empty: no authenticated caller).
    p: String,
    /// The question's message, for the page to show.
    m: String,
    /// The page's URL as the question gave it (before the `flow` parameter): what the page is
    /// for, kept where the client cannot edit it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    u: String,
    s: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    v: Option<Box<RawValue>>,
}

/// Why a page may not read or complete a flow.
///
/// ```
/// use mcp_resolve_runtime::url_flow::FlowError;
/// assert_eq!(FlowError::NotYours.to_string(), "this page was opened for another user");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FlowError {
    /// No such flow, or it expired (or the id is not one the framework makes).
    NotFound,
    /// The flow was made for another caller than the one opening the page.
    NotYours,
    /// The flow's outcome was recorded already: each flow completes once.
    Finished,
    /// The store could not answer.
    Store(StoreError),
}

impl fmt::Display for FlowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound => f.write_str("no such flow, or it expired"),
            Self::NotYours => f.write_str("this page was opened for another user"),
            Self::Finished => f.write_str("this step was completed already"),
            Self::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FlowError {}

impl From<StoreError> for FlowError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// What a page learns of the flow it was opened for.
///
/// ```
/// # fn show(flow: mcp_resolve_runtime::url_flow::UrlFlow) {
/// println!("The assistant asks: {}", flow.message);
/// // What the page is for, as the resolver wrote it (`https://shop.example/pay?amount=1250`):
/// // not the query of the request, which the client could have edited.
/// let amount = flow.url.split_once("amount=").map(|(_, a)| a);
/// # let _ = amount;
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UrlFlow {
    /// The question's message, as the user saw it in the client.
    pub message: String,
    /// The page's URL as the question gave it, before the framework added the `flow` parameter.
    /// Read what the page is for (an amount, a service) from here, not from the request's own
    /// query: the client shows that URL to the user and could have edited it before opening it.
    pub url: String,
}

/// What a resolver's flow has come to, as the engine reads it.
#[derive(Debug)]
pub(crate) enum Progress {
    /// The page has not recorded anything yet.
    Pending,
    /// The page recorded this outcome; it is taken now (no one else gets it).
    Done(Box<RawValue>),
    /// The page recorded a refusal.
    Declined,
    /// Gone: expired, never made, taken already, or another caller's.
    Gone,
}

/// The URL-mode flows of a server, as the pages it serves see them: [`Server::url_flows`]
/// (before it is served) or [`Context::url_flows`](crate::Context::url_flows). Clone it freely.
///
/// A page reads the `flow` query parameter of its URL, authenticates the user opening it (its own
/// sign-in, a session cookie), and passes that user as `viewer`: a flow made for one caller
/// cannot be read or completed by another. A server without authentication has no caller to
/// bind, so it asks no URL-mode question unless it opts in with
/// [`Server::anonymous_url_flows`](crate::Server::anonymous_url_flows): the unguessable id is then
/// the only proof, and anyone holding the URL may complete it.
///
/// ```
/// use mcp_resolve_runtime::{Principal, Server, url_flow::{FlowError, UrlFlows}};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let flows: UrlFlows = Server::new("notes").url_flows();
/// // A page opened with a made-up id learns nothing.
/// let viewer = Principal::new("alice");
/// assert_eq!(flows.open("AAAAAAAAAAAAAAAAAAAAAA", Some(&viewer)).await, Err(FlowError::NotFound));
/// # });
/// ```
///
/// [`Server::url_flows`]: crate::Server::url_flows
#[derive(Clone, Debug)]
pub struct UrlFlows {
    pub(crate) store: SharedStore,
    pub(crate) ttl: Duration,
    /// The flows each caller has waiting, as this server started them.
    pub(crate) waiting: Arc<Waiting>,
}

/// The URL-mode flows each caller has waiting for their pages, as one server (one replica)
/// started them: the bound on them is counted here, in this process, so it needs nothing of the
/// [`Store`](crate::store::Store) beyond its three operations and costs no round trip while a caller is
/// under it. A flow stops counting when it expires, when this server sees it leave pending (its
/// page, or the call taking its outcome), or, for a caller at the bound, when the store says it
/// left pending through another replica. With replicas, a caller may so have the bound waiting
/// at each.
#[derive(Debug)]
pub(crate) struct Waiting {
    max: AtomicUsize,
    /// (flow id, expiry) by caller tag; a caller's entry lives as long as its last flow.
    callers: Mutex<ExpiringMap<String, Vec<(String, Instant)>>>,
}

/// Why no flow was made for a caller.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StartError {
    /// The caller has `max` flows waiting for their pages, which expire after `ttl`.
    Busy { max: usize, ttl: Duration },
    /// The server counts the waiting flows of `max` callers already, not this one's.
    Callers { max: usize },
    /// The store could not answer.
    Store(StoreError),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Busy { max, ttl } => write!(
                f,
                "this caller has {max} URL-mode steps waiting for their pages, the most one caller may have at once; complete one, or call again once they expire ({} s after they were asked)",
                ttl.as_secs()
            ),
            Self::Callers { max } => write!(
                f,
                "the server counts the URL-mode steps of {max} callers at once, its limit; try again later"
            ),
            Self::Store(e) => e.fmt(f),
        }
    }
}

impl From<StoreError> for StartError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// What [`Waiting::reserve`] found.
#[derive(Debug, PartialEq, Eq)]
enum Reserved {
    Yes,
    /// The caller is at the bound; these of its flows (the oldest, at most
    /// [`LOOKUPS_AT_BOUND`]) are worth looking up.
    AtBound(Vec<String>),
    TooManyCallers,
    /// The counts are unusable (a panic while they were held): fail closed.
    Unavailable,
}

impl Default for Waiting {
    fn default() -> Self {
        Self::new(DEFAULT_FLOWS_PER_CALLER, MAX_WAITING_CALLERS)
    }
}

impl Waiting {
    fn new(max: usize, max_callers: usize) -> Self {
        Self {
            max: AtomicUsize::new(max.max(1)),
            callers: Mutex::new(ExpiringMap::new(max_callers)),
        }
    }

    /// Sets how many flows one caller may have waiting (at least 1).
    pub(crate) fn set_max(&self, max: usize) {
        self.max.store(max.max(1), Ordering::Relaxed);
    }

    pub(crate) fn max(&self) -> usize {
        self.max.load(Ordering::Relaxed)
    }

    /// Counts flow `id` of caller `tag`, waiting until `expires`, unless the caller has its
    /// bound waiting already.
    fn reserve(&self, tag: &str, id: &str, expires: Instant, now: Instant) -> Reserved {
        let max = self.max();
        let Ok(mut callers) = self.callers.lock() else {
            return Reserved::Unavailable;
        };
        if callers.get(tag, now).is_none() && callers.insert(tag.to_owned(), Vec::new(), expires, now).is_err() {
            return Reserved::TooManyCallers;
        }
        let Some(flows) = callers.get_mut(tag, now) else {
            return Reserved::TooManyCallers;
        };
        flows.retain(|(_, until)| *until > now);
        if flows.len() >= max {
            let oldest = flows.iter().take(LOOKUPS_AT_BOUND).map(|(f, _)| f.clone());
            return Reserved::AtBound(oldest.collect());
        }
        flows.push((id.to_owned(), expires));
        let last = flows.iter().map(|(_, until)| *until).max().unwrap_or(expires);
        callers.set_expiry(&tag.to_owned(), last);
        Reserved::Yes
    }

    /// After looking flows of caller `tag` up: those still `pending` go to the back of its
    /// list (the next attempt looks at others), the rest stop counting.
    fn looked_up(&self, tag: &str, looked: &[String], pending: &[String]) {
        let Ok(mut callers) = self.callers.lock() else {
            return;
        };
        if let Some(flows) = callers.get_mut(tag, Instant::now()) {
            let (mut checked, rest): (Vec<_>, Vec<_>) = flows.drain(..).partition(|(f, _)| looked.contains(f));
            checked.retain(|(f, _)| pending.contains(f));
            flows.extend(rest);
            flows.extend(checked);
        }
    }

    /// Stops counting flow `id` of caller `tag`.
    fn release(&self, tag: &str, id: &str) {
        let Ok(mut callers) = self.callers.lock() else {
            return;
        };
        let now = Instant::now();
        if let Some(flows) = callers.get_mut(tag, now) {
            flows.retain(|(f, _)| f != id);
            if flows.is_empty() {
                callers.remove(&tag.to_owned());
            }
        }
    }
}

/// The caller's tag a flow is bound to: SHA-256 over the length-prefixed issuer and subject.
pub(crate) fn tag(principal: Option<&Principal>) -> String {
    let Some(p) = principal else {
        return String::new();
    };
    let mut h = Sha256::new();
    for part in [p.issuer.as_deref(), Some(p.subject.as_str())] {
        match part {
            None => h.update([0u8]),
            Some(s) => {
                h.update([1u8]);
                h.update((s.len() as u64).to_be_bytes());
                h.update(s.as_bytes());
            }
        }
    }
    URL_SAFE_NO_PAD.encode(h.finalize())
}

fn key(flow: &str) -> Option<String> {
    let well_formed = flow.len() == ID_CHARS
        && flow
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    well_formed.then(|| format!("{PREFIX}{flow}"))
}

impl UrlFlows {
    /// Reads a flow's record, with its bytes (for the compare-and-set).
    async fn read(&self, flow: &str) -> Result<Option<(String, Vec<u8>, Record)>, StoreError> {
        let Some(key) = key(flow) else { return Ok(None) };
        let Some(bytes) = self.store.0.get(&key).await? else {
            return Ok(None);
        };
        // A record that does not read is as good as none: nothing completes it.
        Ok(serde_json::from_slice::<Record>(&bytes).ok().map(|r| (key, bytes, r)))
    }

    /// Moves a flow from `from` to `to` (with `value`), once.
    async fn advance(
        &self,
        flow: &str,
        viewer: Option<&Principal>,
        from: Status,
        to: Status,
        value: Option<Box<RawValue>>,
    ) -> Result<Option<Record>, FlowError> {
        let Some((key, bytes, record)) = self.read(flow).await? else {
            return Err(FlowError::NotFound);
        };
        if record.p != tag(viewer) {
            return Err(FlowError::NotYours);
        }
        if record.s != from {
            return Err(FlowError::Finished);
        }
        let next = Record {
            p: record.p,
            m: record.m,
            u: record.u,
            s: to,
            v: value.or(record.v),
        };
        let Ok(next_bytes) = serde_json::to_vec(&next) else {
            return Err(FlowError::Store(StoreError::new("the flow could not be written")));
        };
        if self.store.0.replace(&key, &bytes, &next_bytes, self.ttl).await? {
            self.waiting.release(&next.p, flow);
            Ok(Some(next))
        } else {
            // Someone else moved it meanwhile.
            Err(FlowError::Finished)
        }
    }

    /// [`UrlFlows::start_page`] of a page whose URL the tests do not read.
    #[cfg(test)]
    pub(crate) async fn start(&self, principal: Option<&Principal>, message: &str) -> Result<String, StartError> {
        self.start_page(principal, message, "").await
    }

    /// A new flow for `principal`, pending, with the question's message and the page's URL as
    /// the question gave it (before the `flow` parameter); its id. Refused while the caller has
    /// its bound of flows waiting ([`Waiting`]).
    pub(crate) async fn start_page(
        &self,
        principal: Option<&Principal>,
        message: &str,
        url: &str,
    ) -> Result<String, StartError> {
        let mut raw = [0u8; 16];
        crate::seal::random(&mut raw).map_err(|_| StoreError::new("no randomness for a flow id"))?;
        let id = URL_SAFE_NO_PAD.encode(raw);
        let tag = tag(principal);
        let record = Record {
            p: tag.clone(),
            m: message.to_owned(),
            u: url.to_owned(),
            s: Status::Pending,
            v: None,
        };
        let bytes = serde_json::to_vec(&record).map_err(|e| StoreError::new(e.to_string()))?;
        let key = key(&id).ok_or_else(|| StoreError::new("a flow id of the wrong shape"))?;
        self.reserve(&tag, &id).await?;
        match self.store.0.insert_new(&key, &bytes, self.ttl).await {
            Ok(true) => Ok(id),
            Ok(false) => {
                self.waiting.release(&tag, &id);
                Err(StoreError::new("a flow id was made twice").into())
            }
            Err(e) => {
                self.waiting.release(&tag, &id);
                Err(e.into())
            }
        }
    }

    /// Counts flow `id` for caller `tag`. At the bound, the caller's flows are looked up first:
    /// those no longer pending (finished through another replica, or gone) stop counting.
    async fn reserve(&self, tag: &str, id: &str) -> Result<(), StartError> {
        let expires = |now: Instant| now.checked_add(self.ttl).unwrap_or(now);
        let now = Instant::now();
        let looked = match self.waiting.reserve(tag, id, expires(now), now) {
            Reserved::AtBound(flows) => flows,
            other => return self.reserved(other),
        };
        let mut pending = Vec::new();
        for flow in &looked {
            if self
                .read(flow)
                .await?
                .is_some_and(|(_, _, r)| r.p == tag && r.s == Status::Pending)
            {
                pending.push(flow.clone());
            }
        }
        self.waiting.looked_up(tag, &looked, &pending);
        let now = Instant::now();
        self.reserved(self.waiting.reserve(tag, id, expires(now), now))
    }

    /// What [`Waiting::reserve`] found, as the start of a flow sees it.
    fn reserved(&self, reserved: Reserved) -> Result<(), StartError> {
        match reserved {
            Reserved::Yes => Ok(()),
            Reserved::TooManyCallers => Err(StartError::Callers {
                max: MAX_WAITING_CALLERS,
            }),
            Reserved::Unavailable => Err(StartError::Store(StoreError::new(
                "the counts of waiting flows are unavailable",
            ))),
            Reserved::AtBound(_) => Err(StartError::Busy {
                max: self.waiting.max(),
                ttl: self.ttl,
            }),
        }
    }

    /// Where `principal`'s flow is; an outcome it finds is taken (moved to used), so the call
    /// gets it exactly once.
    pub(crate) async fn progress(&self, flow: &str, principal: Option<&Principal>) -> Result<Progress, StoreError> {
        let caller = tag(principal);
        let Some((_, _, record)) = self.read(flow).await? else {
            self.waiting.release(&caller, flow);
            return Ok(Progress::Gone);
        };
        if record.p != caller {
            return Ok(Progress::Gone);
        }
        if record.s != Status::Pending {
            self.waiting.release(&caller, flow);
        }
        match record.s {
            Status::Pending => Ok(Progress::Pending),
            Status::Declined => Ok(Progress::Declined),
            Status::Used => Ok(Progress::Gone),
            Status::Done => match self.advance(flow, principal, Status::Done, Status::Used, None).await {
                Ok(Some(Record { v: Some(v), .. })) => Ok(Progress::Done(v)),
                Ok(_) | Err(FlowError::NotFound | FlowError::NotYours | FlowError::Finished) => Ok(Progress::Gone),
                Err(FlowError::Store(e)) => Err(e),
            },
        }
    }

    /// The flow `flow` as the page opening it may see it: `viewer` must be the caller it was made
    /// for, and it must still wait for its outcome.
    pub async fn open(&self, flow: &str, viewer: Option<&Principal>) -> Result<UrlFlow, FlowError> {
        let Some((_, _, record)) = self.read(flow).await? else {
            return Err(FlowError::NotFound);
        };
        if record.p != tag(viewer) {
            return Err(FlowError::NotYours);
        }
        if record.s != Status::Pending {
            return Err(FlowError::Finished);
        }
        Ok(UrlFlow {
            message: record.m,
            url: record.u,
        })
    }

    /// Records that the step is done, with its `outcome` (the question's value): checked like
    /// [`UrlFlows::open`], and only once.
    pub async fn complete<T: Serialize>(
        &self,
        flow: &str,
        viewer: Option<&Principal>,
        outcome: &T,
    ) -> Result<(), FlowError> {
        let value = serde_json::value::to_raw_value(outcome)
            .map_err(|e| FlowError::Store(StoreError::new(format!("the outcome could not be written: {e}"))))?;
        self.advance(flow, viewer, Status::Pending, Status::Done, Some(value))
            .await
            .map(|_| ())
    }

    /// Records that the user refused on the page: the question's answer is then a decline.
    pub async fn decline(&self, flow: &str, viewer: Option<&Principal>) -> Result<(), FlowError> {
        self.advance(flow, viewer, Status::Pending, Status::Declined, None)
            .await
            .map(|_| ())
    }
}

/// Checks a URL-mode page's URL: `https` (plain `http` only to a loopback host), no
/// credentials, no query parameter named like a secret, no e-mail address, no `flow` parameter
/// of its own (the framework adds it), no spaces or control characters.
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    if url.len() > crate::protocol::content::MAX_URI_BYTES {
        return Err(format!(
            "it is longer than {} bytes",
            crate::protocol::content::MAX_URI_BYTES
        ));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("it has spaces or control characters".into());
    }
    let Some((scheme, authority, uri)) = crate::authority::parse_url(url) else {
        return Err("it must be an absolute https:// URL (or http:// to a loopback host)".into());
    };
    let https = scheme == http::uri::Scheme::HTTPS;
    if !https && scheme != http::uri::Scheme::HTTP {
        return Err("it must start with https:// (or http:// to a loopback host)".into());
    }
    if authority.as_str().contains('@') {
        return Err("it carries credentials (`user:password@`): the page must sign the user in itself".into());
    }
    let host = authority.host();
    if !https && !crate::authority::is_loopback_host(host) {
        return Err(format!(
            "it uses plain http to {host}: use https (plain http is allowed to a loopback host only)"
        ));
    }
    let query = uri.query().unwrap_or("");
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if name == "flow" {
            return Err("it has a `flow` parameter: the framework adds that one itself".into());
        }
        if crate::form::looks_secret(name) {
            return Err(format!(
                "its query parameter `{name}` looks like a secret: never put one in a URL"
            ));
        }
        let value = value.replace("%40", "@");
        if value.split_once('@').is_some_and(|(_, domain)| domain.contains('.')) {
            return Err(format!(
                "its query parameter `{name}` looks like an e-mail address: keep personal data out of URLs"
            ));
        }
    }
    Ok(())
}

/// `url` with the flow's id added as the `flow` query parameter (before any fragment).
pub(crate) fn with_flow(url: &str, flow: &str) -> String {
    let (base, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url, None),
    };
    let sep = if base.contains('?') { '&' } else { '?' };
    let mut out = format!("{base}{sep}flow={flow}");
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows() -> UrlFlows {
        UrlFlows {
            store: SharedStore(Arc::new(crate::store::MemoryStore::default())),
            ttl: Duration::from_secs(60),
            waiting: Arc::default(),
        }
    }

    #[tokio::test]
    async fn a_flow_completes_once_for_its_caller_and_its_outcome_is_taken_once() {
        let flows = flows();
        let alice = Principal::new("alice");
        let bob = Principal::new("bob");
        let id = flows.start(Some(&alice), "Connect GitHub").await.unwrap();
        assert_eq!(id.len(), ID_CHARS);
        assert_eq!(flows.open(&id, Some(&bob)).await, Err(FlowError::NotYours));
        assert_eq!(flows.open(&id, None).await, Err(FlowError::NotYours));
        assert_eq!(flows.open(&id, Some(&alice)).await.unwrap().message, "Connect GitHub");
        assert!(matches!(
            flows.progress(&id, Some(&alice)).await.unwrap(),
            Progress::Pending
        ));
        assert_eq!(flows.complete(&id, Some(&bob), &true).await, Err(FlowError::NotYours));
        flows
            .complete(&id, Some(&alice), &serde_json::json!({"account": "a1"}))
            .await
            .unwrap();
        assert_eq!(flows.complete(&id, Some(&alice), &true).await, Err(FlowError::Finished));
        assert_eq!(flows.decline(&id, Some(&alice)).await, Err(FlowError::Finished));
        assert!(matches!(flows.progress(&id, Some(&bob)).await.unwrap(), Progress::Gone));
        match flows.progress(&id, Some(&alice)).await.unwrap() {
            Progress::Done(v) => assert_eq!(v.get(), r#"{"account":"a1"}"#),
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(flows.progress(&id, Some(&alice)).await.unwrap(), Progress::Gone),
            "taken once"
        );
    }

    /// The page reads the URL as the question gave it, from the store (not from its request),
    /// and a completed flow keeps it.
    #[tokio::test]
    async fn a_page_reads_the_url_the_question_gave() {
        let flows = flows();
        let alice = Principal::new("alice");
        let url = "https://shop.example/pay?amount=1250";
        let id = flows.start_page(Some(&alice), "Pay 12.50 EUR", url).await.unwrap();
        let open = flows.open(&id, Some(&alice)).await.unwrap();
        assert_eq!((open.message.as_str(), open.url.as_str()), ("Pay 12.50 EUR", url));
        flows.complete(&id, Some(&alice), &true).await.unwrap();
        let (_, _, record) = flows.read(&id).await.unwrap().unwrap();
        assert_eq!(record.u, url, "kept once completed");
        // A record written before the URL was kept reads with none.
        let old: Record = serde_json::from_str(r#"{"p":"","m":"Pay","s":"pending"}"#).unwrap();
        assert_eq!(old.u, "");
    }

    /// A call polls its flow with its caller: another caller's call (another principal, or an
    /// unauthenticated one) sees nothing of it, pending, declined or done, takes nothing, and the
    /// owner still gets the outcome afterwards.
    #[tokio::test]
    async fn another_callers_poll_of_a_flow_sees_nothing_and_the_owner_still_gets_the_outcome() {
        let flows = flows();
        let alice = Principal::new("alice");
        let mallory = Principal::new("mallory");
        let others = [Some(&mallory), None];
        let gone = |p: Progress| matches!(p, Progress::Gone);

        let id = flows.start(Some(&alice), "Connect GitHub").await.unwrap();
        for other in others {
            assert!(gone(flows.progress(&id, other).await.unwrap()), "pending, to {other:?}");
        }
        assert!(matches!(
            flows.progress(&id, Some(&alice)).await.unwrap(),
            Progress::Pending
        ));
        flows
            .complete(&id, Some(&alice), &serde_json::json!({"account": "a1"}))
            .await
            .unwrap();
        for other in others {
            assert!(gone(flows.progress(&id, other).await.unwrap()), "done, to {other:?}");
        }
        match flows.progress(&id, Some(&alice)).await.unwrap() {
            Progress::Done(v) => assert_eq!(v.get(), r#"{"account":"a1"}"#),
            other => panic!("the owner lost its outcome: {other:?}"),
        }

        let declined = flows.start(Some(&alice), "Pay").await.unwrap();
        flows.decline(&declined, Some(&alice)).await.unwrap();
        for other in others {
            assert!(
                gone(flows.progress(&declined, other).await.unwrap()),
                "declined, to {other:?}"
            );
        }
        assert!(matches!(
            flows.progress(&declined, Some(&alice)).await.unwrap(),
            Progress::Declined
        ));
    }

    #[tokio::test]
    async fn a_declined_flow_and_made_up_ids() {
        let flows = flows();
        let id = flows.start(None, "Pay").await.unwrap();
        flows.decline(&id, None).await.unwrap();
        assert!(matches!(flows.progress(&id, None).await.unwrap(), Progress::Declined));
        for bad in ["", "short", "AAAAAAAAAAAAAAAAAAAAA!", &"A".repeat(5000)] {
            assert_eq!(flows.open(bad, None).await, Err(FlowError::NotFound), "{bad}");
        }
    }

    #[tokio::test]
    async fn a_caller_at_its_bound_of_waiting_flows_is_refused_alone() {
        let flows = flows();
        flows.waiting.set_max(2);
        let alice = Principal::new("alice");
        let first = flows.start(Some(&alice), "Connect GitHub").await.unwrap();
        flows.start(Some(&alice), "Connect GitLab").await.unwrap();
        let refused = flows.start(Some(&alice), "Pay").await.unwrap_err();
        assert_eq!(
            refused,
            StartError::Busy {
                max: 2,
                ttl: Duration::from_secs(60)
            }
        );
        assert_eq!(
            refused.to_string(),
            "this caller has 2 URL-mode steps waiting for their pages, the most one caller may have at once; complete one, or call again once they expire (60 s after they were asked)"
        );
        // Other callers are not affected, the unauthenticated one included.
        flows.start(Some(&Principal::new("bob")), "Pay").await.unwrap();
        flows.start(None, "Pay").await.unwrap();
        // A page completing a flow frees its room.
        flows.complete(&first, Some(&alice), &true).await.unwrap();
        flows.start(Some(&alice), "Pay").await.unwrap();
        assert!(flows.start(Some(&alice), "Pay").await.is_err());
    }

    /// A call polling its flow while the page has not finished it keeps the caller's room for
    /// it taken: polls never let a caller start more flows than its bound.
    #[tokio::test]
    async fn polling_a_pending_flow_keeps_its_callers_room_taken() {
        let flows = flows();
        flows.waiting.set_max(1);
        let alice = Principal::new("alice");
        let first = flows.start(Some(&alice), "Connect").await.unwrap();
        for _ in 0..2 {
            assert!(matches!(
                flows.progress(&first, Some(&alice)).await.unwrap(),
                Progress::Pending
            ));
            assert!(
                matches!(
                    flows.start(Some(&alice), "Pay").await,
                    Err(StartError::Busy { max: 1, .. })
                ),
                "still waiting after a poll"
            );
        }
        flows.decline(&first, Some(&alice)).await.unwrap();
        assert!(matches!(
            flows.progress(&first, Some(&alice)).await.unwrap(),
            Progress::Declined
        ));
        flows.start(Some(&alice), "Pay").await.unwrap();
    }

    #[tokio::test]
    async fn flows_finished_through_another_replica_stop_counting_once_the_caller_is_at_its_bound() {
        let here = flows();
        here.waiting.set_max(2);
        // Another replica: the same store, its own counts.
        let there = UrlFlows {
            waiting: Arc::default(),
            ..here.clone()
        };
        let alice = Principal::new("alice");
        let first = here.start(Some(&alice), "Connect").await.unwrap();
        let second = here.start(Some(&alice), "Connect").await.unwrap();
        there.decline(&first, Some(&alice)).await.unwrap();
        here.start(Some(&alice), "Connect").await.unwrap();
        assert!(
            matches!(here.start(Some(&alice), "Connect").await, Err(StartError::Busy { .. })),
            "the other two still wait"
        );
        // Its outcome taken through the other replica, the flow stops counting too.
        there.complete(&second, Some(&alice), &true).await.unwrap();
        assert!(matches!(
            there.progress(&second, Some(&alice)).await.unwrap(),
            Progress::Done(_)
        ));
        here.start(Some(&alice), "Connect").await.unwrap();
    }

    /// However high the bound, a caller at it costs at most `LOOKUPS_AT_BOUND` store reads per
    /// attempt, and successive attempts look at different flows.
    #[tokio::test]
    async fn a_caller_at_a_high_bound_costs_a_few_lookups_and_each_attempt_looks_at_others() {
        let here = flows();
        here.waiting.set_max(40);
        let there = UrlFlows {
            waiting: Arc::default(),
            ..here.clone()
        };
        let alice = Principal::new("alice");
        let mut ids = Vec::new();
        for _ in 0..40 {
            ids.push(here.start(Some(&alice), "Connect").await.unwrap());
        }
        // The newest finished through the other replica: the first attempt looks at the oldest
        // 16 only, the second at the next 16, the third finds it.
        there.decline(&ids[39], Some(&alice)).await.unwrap();
        for _ in 0..2 {
            assert!(matches!(
                here.start(Some(&alice), "Connect").await,
                Err(StartError::Busy { .. })
            ));
        }
        here.start(Some(&alice), "Connect").await.unwrap();
    }

    #[test]
    fn waiting_flows_expire_and_the_callers_counted_are_bounded() {
        let waiting = Waiting::new(1, 2);
        let t0 = Instant::now();
        let ttl = Duration::from_secs(600);
        assert_eq!(waiting.reserve("alice", "a1", t0 + ttl, t0), Reserved::Yes);
        assert_eq!(
            waiting.reserve("alice", "a2", t0 + ttl, t0),
            Reserved::AtBound(vec!["a1".into()])
        );
        assert_eq!(waiting.reserve("bob", "b1", t0 + ttl, t0), Reserved::Yes);
        assert_eq!(waiting.reserve("carol", "c1", t0 + ttl, t0), Reserved::TooManyCallers);
        // Expired, a flow stops counting, and its caller's room goes to another.
        let later = t0 + ttl;
        assert_eq!(waiting.reserve("alice", "a2", later + ttl, later), Reserved::Yes);
        assert_eq!(waiting.reserve("carol", "c1", later + ttl, later), Reserved::Yes);
        waiting.release("carol", "c1");
        assert_eq!(waiting.reserve("dave", "d1", later + ttl, later), Reserved::Yes);
    }

    #[test]
    fn page_urls_are_checked() {
        for ok in [
            "https://notes.example/connect?service=github",
            "http://127.0.0.1:8080/connect",
            "http://localhost/pay#top",
            "http://[::1]:9/x",
            "http://127.1.2.3/x",
        ] {
            assert_eq!(check_url(ok), Ok(()), "{ok}");
        }
        for bad in [
            "ftp://x.example/",
            "http://notes.example/connect",
            "https://user:pw@notes.example/",
            "https://notes.example/x?api_key=1",
            "https://notes.example/x?who=ann%40mail.example",
            "https://notes.example/x?flow=1",
            "https://notes.example/a b",
            "https://",
            // Held-out probes of issue 22: a host that only starts like a loopback one.
            "http://127.attacker.example/",
            "http://localhost.attacker.example/",
            "http://[::1]evil.com/",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        assert_eq!(with_flow("https://a.example/c", "F"), "https://a.example/c?flow=F");
        assert_eq!(
            with_flow("https://a.example/c?s=g#t", "F"),
            "https://a.example/c?s=g&flow=F#t"
        );
    }

    /// A flow stops counting against its caller's bound at the instant it expires, as every
    /// entry of an `ExpiringMap` does (alive while `expires > now`).
    #[test]
    fn a_waiting_flow_stops_counting_at_the_instant_it_expires() {
        let waiting = Waiting::new(2, 8);
        let t0 = Instant::now();
        let ttl = Duration::from_secs(600);
        assert_eq!(waiting.reserve("alice", "a1", t0 + ttl, t0), Reserved::Yes);
        assert_eq!(waiting.reserve("alice", "a2", t0 + 2 * ttl, t0), Reserved::Yes);
        let expiry = t0 + ttl;
        assert_eq!(
            waiting.reserve("alice", "a3", expiry + ttl, expiry),
            Reserved::Yes,
            "a1 expired at {expiry:?}: alice has one flow waiting, not two"
        );
    }

    /// A page URL is refused for the reason it breaks, and the length bound is
    /// `MAX_URI_BYTES` exactly.
    #[test]
    fn a_page_url_is_refused_naming_why_and_its_length_is_bounded_exactly() {
        let base = "https://notes.example/";
        let at_bound = format!(
            "{base}{}",
            "a".repeat(crate::protocol::content::MAX_URI_BYTES - base.len())
        );
        assert_eq!(check_url(&at_bound), Ok(()), "{} bytes", at_bound.len());
        let past = format!("{at_bound}a");
        let why = check_url(&past).unwrap_err();
        assert!(why.contains("longer than"), "{why}");
        for spaced in [
            "https://notes.example/a b",
            "https://notes.example/a\tb",
            "https://notes.example/a\u{7f}",
        ] {
            let why = check_url(spaced).unwrap_err();
            assert_eq!(why, "it has spaces or control characters", "{spaced:?}");
        }
    }

    /// Each refusal of a page says what happened (the connect example shows it to the user).
    #[test]
    fn a_flow_error_says_what_happened() {
        assert_eq!(FlowError::NotFound.to_string(), "no such flow, or it expired");
        assert_eq!(FlowError::NotYours.to_string(), "this page was opened for another user");
        assert_eq!(FlowError::Finished.to_string(), "this step was completed already");
        assert_eq!(
            FlowError::Store(StoreError::new("down")).to_string(),
            StoreError::new("down").to_string()
        );
    }

    /// A store that records the keys it is asked for.
    #[derive(Default)]
    struct ReadsRecorded {
        entries: crate::store::MemoryStore,
        reads: std::sync::Mutex<Vec<String>>,
    }

    impl crate::store::Store for ReadsRecorded {
        fn insert_new<'a>(
            &'a self,
            key: &'a str,
            value: &'a [u8],
            ttl: Duration,
        ) -> futures_util::future::BoxFuture<'a, Result<bool, StoreError>> {
            self.entries.insert_new(key, value, ttl)
        }
        fn get<'a>(&'a self, key: &'a str) -> futures_util::future::BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
            self.reads.lock().unwrap().push(key.to_owned());
            self.entries.get(key)
        }
        fn replace<'a>(
            &'a self,
            key: &'a str,
            expected: &'a [u8],
            value: &'a [u8],
            ttl: Duration,
        ) -> futures_util::future::BoxFuture<'a, Result<bool, StoreError>> {
            self.entries.replace(key, expected, value, ttl)
        }
    }

    /// An id that is not one the server makes (22 URL-safe characters) is not found without
    /// the store being asked: a page's made-up id costs no lookup, however long.
    #[tokio::test]
    async fn a_malformed_flow_id_never_reaches_the_store() {
        let store = Arc::new(ReadsRecorded::default());
        let flows = UrlFlows {
            store: SharedStore(store.clone()),
            ttl: Duration::from_secs(60),
            waiting: Arc::default(),
        };
        let id = flows.start(None, "Pay").await.unwrap();
        assert!(matches!(flows.progress(&id, None).await.unwrap(), Progress::Pending));
        assert_eq!(store.reads.lock().unwrap().len(), 1, "a well-formed id is looked up");
        let long = "A".repeat(5000);
        for bad in ["", "short", "AAAAAAAAAAAAAAAAAAAAA!", "AAAAAAAAAAAAAAAAAAAA/A", &long] {
            assert_eq!(flows.open(bad, None).await, Err(FlowError::NotFound), "{bad}");
            assert_eq!(flows.complete(bad, None, &1).await, Err(FlowError::NotFound), "{bad}");
            assert!(
                matches!(flows.progress(bad, None).await.unwrap(), Progress::Gone),
                "{bad}"
            );
        }
        assert_eq!(store.reads.lock().unwrap().len(), 1, "no malformed id was looked up");
    }
}
