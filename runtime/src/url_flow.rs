//! URL-mode flows: the out-of-band step a URL-mode question sends the user to, as the server
//! keeps it in its [`Store`](crate::Store). A flow is created when the question is asked, under
//! a one-time random id bound to the caller and an expiry; the page the user opens reads it
//! ([`UrlFlows::open`]) and records the outcome once ([`UrlFlows::complete`],
//! [`UrlFlows::decline`]); the question's resolver takes that outcome once, on the call's next
//! round (2026-07-28) or while it waits (handshake era).

use crate::context::Principal;
use crate::store::{SharedStore, StoreError};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use std::fmt;
use std::time::Duration;

const PREFIX: &str = "mcp-resolve/url/";
/// A flow id: 16 random bytes, base64url (22 characters).
const ID_CHARS: usize = 22;

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
    s: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    v: Option<Box<RawValue>>,
}

/// Why a page may not read or complete a flow.
///
/// ```
/// use mcp_resolve_runtime::FlowError;
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
/// # fn show(flow: mcp_resolve_runtime::UrlFlow) {
/// println!("The assistant asks: {}", flow.message);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UrlFlow {
    /// The question's message, as the user saw it in the client.
    pub message: String,
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
/// bind: the unguessable id is then the only proof, and anyone holding the URL may complete it.
///
/// ```
/// use mcp_resolve_runtime::{FlowError, Principal, Server, UrlFlows};
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
}

/// The caller's tag a flow is bound to: SHA-256 over the length-prefixed issuer and subject.
fn tag(principal: Option<&Principal>) -> String {
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
            s: to,
            v: value.or(record.v),
        };
        let Ok(next_bytes) = serde_json::to_vec(&next) else {
            return Err(FlowError::Store(StoreError::new("the flow could not be written")));
        };
        if self.store.0.replace(&key, &bytes, &next_bytes, self.ttl).await? {
            Ok(Some(next))
        } else {
            // Someone else moved it meanwhile.
            Err(FlowError::Finished)
        }
    }

    /// A new flow for `principal`, pending, with the question's message; its id.
    pub(crate) async fn start(&self, principal: Option<&Principal>, message: &str) -> Result<String, StoreError> {
        let mut raw = [0u8; 16];
        crate::seal::random(&mut raw).map_err(|_| StoreError::new("no randomness for a flow id"))?;
        let id = URL_SAFE_NO_PAD.encode(raw);
        let record = Record {
            p: tag(principal),
            m: message.to_owned(),
            s: Status::Pending,
            v: None,
        };
        let bytes = serde_json::to_vec(&record).map_err(|e| StoreError::new(e.to_string()))?;
        let key = key(&id).ok_or_else(|| StoreError::new("a flow id of the wrong shape"))?;
        if self.store.0.insert_new(&key, &bytes, self.ttl).await? {
            Ok(id)
        } else {
            Err(StoreError::new("a flow id was made twice"))
        }
    }

    /// Where `principal`'s flow is; an outcome it finds is taken (moved to used), so the call
    /// gets it exactly once.
    pub(crate) async fn progress(&self, flow: &str, principal: Option<&Principal>) -> Result<Progress, StoreError> {
        let Some((_, _, record)) = self.read(flow).await? else {
            return Ok(Progress::Gone);
        };
        if record.p != tag(principal) {
            return Ok(Progress::Gone);
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
        Ok(UrlFlow { message: record.m })
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
    if url.len() > crate::resource::MAX_URI_BYTES {
        return Err(format!("it is longer than {} bytes", crate::resource::MAX_URI_BYTES));
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
            store: SharedStore(std::sync::Arc::new(crate::MemoryStore::default())),
            ttl: Duration::from_secs(60),
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
}
