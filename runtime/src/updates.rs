//! Resource subscriptions (handshake-era `resources/subscribe`, 2026-07-28 `subscriptions/listen`)
//! and `notifications/resources/updated`: which session or stream subscribed to which URI, and
//! the handle server code uses to say that a resource changed.
//!
//! A session's [`Subscriptions`] live in its protocol state (`Session`) and are registered here
//! under each URI with the session's [`Mailbox`]; they leave the registry when the session ends
//! or its connection closes. [`ResourceUpdates::updated`] posts one notification to the mailbox
//! of every session subscribed to the URI, without waiting for any of them.

use crate::peer::{Mailbox, Posted};
use crate::protocol::jsonrpc::{Outgoing, to_raw};
use crate::protocol::messages::{RESOURCES_UPDATED, ResourceUpdatedParams, TaggedMeta, TaggedUpdateParams};
use crate::throttle::Throttle;
use serde_json::value::RawValue;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How many resources one handshake-era connection or session may subscribe to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1024;

/// How many messages wait for one HTTP GET stream; past it, notifications for that client are
/// dropped until it reads. (On stdio the connection's outgoing queue bounds them.)
pub(crate) const MAX_QUEUED: usize = 256;

/// Tells subscribed clients that a resource changed: a cloneable handle on a server's
/// subscriptions, usable from any task or thread, before and while the server is served.
///
/// A handshake-era client (2025-06-18, 2025-11-25) that sent `resources/subscribe` for a URI
/// receives `notifications/resources/updated` with `{"uri": …}` each time
/// [`ResourceUpdates::updated`] names exactly that URI, until it sends `resources/unsubscribe`
/// or its session ends. The client then reads the resource again if it wants its contents.
/// A 2026-07-28 client that opened a `subscriptions/listen` stream with the URI in its
/// `resourceSubscriptions` receives the same notification on that stream, tagged with the
/// stream's id in `_meta["io.modelcontextprotocol/subscriptionId"]`.
///
/// On stdio the notification goes on the connection; on Streamable HTTP it goes on the
/// session's GET stream, and a session with no GET stream open is not told. Nothing waits for
/// a slow client: when its queue is full, the notification is dropped for it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use mcp_resolve_runtime::testing::TestClient;
/// use mcp_resolve_runtime::{Server, protocol::ProtocolVersion};
/// # use mcp_resolve_runtime::{
/// #     protocol::ErrorObject,
/// #     resource::{IntoResourceContents, Resource, ResourceCall, ResourceContents, ResourceDefinition},
/// # };
/// # struct Watched;
/// # impl Resource for Watched {
/// #     fn definition(&self) -> ResourceDefinition { ResourceDefinition::new("test://watched", "watched") }
/// #     fn read(&self, call: ResourceCall) -> futures_util::future::BoxFuture<'static, Result<Vec<ResourceContents>, ErrorObject>> {
/// #         Box::pin(async move { "v1".into_contents(&call.uri, None) })
/// #     }
/// # }
/// let server = Server::new("notes").resource(Watched);
/// let updates = server.resource_updates();
/// let mut client = TestClient::handshake(server, ProtocolVersion::V2025_11_25, serde_json::json!({})).await;
/// client.request("resources/subscribe", serde_json::json!({"uri": "test://watched"})).await;
/// assert_eq!(updates.subscribers("test://watched"), 1);
///
/// // Later, from any task: the resource changed.
/// assert_eq!(updates.updated("test://watched"), 1);
/// let note = client.recv().await;
/// assert_eq!(note["method"], "notifications/resources/updated");
/// assert_eq!(note["params"], serde_json::json!({"uri": "test://watched"}));
/// # }
/// ```
#[derive(Clone, Default)]
pub struct ResourceUpdates {
    registry: Arc<Registry>,
}

#[derive(Default)]
struct Registry {
    /// The number of the next [`Subscriptions`].
    next: AtomicU64,
    /// URI → the sessions (or listen streams) subscribed to it, by number, and where their
    /// notifications go.
    by_uri: Mutex<HashMap<String, HashMap<u64, Target>>>,
}

/// Where one subscriber's notifications go, and the subscription id they carry (a 2026-07-28
/// listen stream's request id, as raw JSON; none for a handshake-era session).
#[derive(Clone)]
struct Target {
    mailbox: Mailbox,
    tag: Option<Arc<RawValue>>,
}

impl std::fmt::Debug for ResourceUpdates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let uris = self.registry.by_uri.lock().map_or(0, |m| m.len());
        f.debug_struct("ResourceUpdates").field("uris", &uris).finish()
    }
}

impl ResourceUpdates {
    /// Says that the resource at `uri` changed: every session subscribed to exactly this URI is
    /// sent `notifications/resources/updated`. Returns how many were sent one; never waits.
    ///
    /// A subscribed session is not told when it has nowhere to be told (an HTTP session with no
    /// GET stream open; logged at debug level) or when its client reads too slowly and its queue
    /// is full (a warning, at most one a second).
    ///
    /// ```
    /// let server = mcp_resolve_runtime::Server::new("notes");
    /// let updates = server.resource_updates();
    /// // Nobody subscribed: nobody is told.
    /// assert_eq!(updates.updated("file:///notes/today.md"), 0);
    /// ```
    pub fn updated(&self, uri: &str) -> usize {
        let Ok(by_uri) = self.registry.by_uri.lock() else {
            return 0;
        };
        let Some(subscribers) = by_uri.get(uri) else {
            return 0;
        };
        let Ok(params) = to_raw(&ResourceUpdatedParams { uri }) else {
            return 0;
        };
        let (mut sent, mut unheard) = (0, 0);
        for target in subscribers.values() {
            let params = match &target.tag {
                None => params.clone(),
                Some(tag) => {
                    let tagged = TaggedUpdateParams {
                        meta: TaggedMeta { subscription_id: tag },
                        uri,
                    };
                    let Ok(p) = to_raw(&tagged) else { continue };
                    p
                }
            };
            let message = Outgoing::Notification {
                method: RESOURCES_UPDATED,
                params,
            };
            match target.mailbox.post(message) {
                Posted::Sent => sent += 1,
                Posted::Unheard => unheard += 1,
                Posted::Full => {
                    static FULL: Throttle = Throttle::new();
                    if let Some(left_out) = FULL.admit() {
                        tracing::warn!(
                            uri,
                            left_out,
                            "a client reads too slowly; notifications/resources/updated dropped for it"
                        );
                    }
                }
            }
        }
        if unheard > 0 {
            tracing::debug!(
                uri,
                unheard,
                "subscribed sessions with no stream open were not told of an update"
            );
        }
        sent
    }

    /// How many sessions are subscribed to exactly `uri` now (whether or not they could be told):
    /// a server may watch a resource only while somebody is.
    ///
    /// ```
    /// let updates = mcp_resolve_runtime::Server::new("notes").resource_updates();
    /// assert_eq!(updates.subscribers("file:///notes/today.md"), 0);
    /// ```
    pub fn subscribers(&self, uri: &str) -> usize {
        self.registry
            .by_uri
            .lock()
            .map_or(0, |m| m.get(uri).map_or(0, HashMap::len))
    }

    /// The subscriptions of one session, whose notifications go to `mailbox`.
    pub(crate) fn session(&self, mailbox: Mailbox) -> Subscriptions {
        self.subscriptions(Target { mailbox, tag: None })
    }

    /// The subscriptions of one 2026-07-28 listen stream: its notifications go to `mailbox`,
    /// tagged with `subscription_id` (the listen request's id, as JSON).
    pub(crate) fn listen(&self, mailbox: Mailbox, subscription_id: Arc<RawValue>) -> Subscriptions {
        self.subscriptions(Target {
            mailbox,
            tag: Some(subscription_id),
        })
    }

    fn subscriptions(&self, target: Target) -> Subscriptions {
        Subscriptions {
            id: self.registry.next.fetch_add(1, Ordering::Relaxed),
            registry: self.registry.clone(),
            target,
            uris: HashSet::new(),
        }
    }
}

/// The URIs one handshake-era session subscribed to (at most [`MAX_SUBSCRIPTIONS`]), registered
/// with its mailbox; dropping them unregisters them all.
pub(crate) struct Subscriptions {
    id: u64,
    registry: Arc<Registry>,
    target: Target,
    uris: HashSet<String>,
}

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriptions").field("uris", &self.uris.len()).finish()
    }
}

impl Subscriptions {
    /// Subscribes to `uri` (again: no change); `false` when [`MAX_SUBSCRIPTIONS`] are held already.
    pub(crate) fn subscribe(&mut self, uri: &str) -> bool {
        if self.uris.contains(uri) {
            return true;
        }
        if self.uris.len() >= MAX_SUBSCRIPTIONS {
            return false;
        }
        if let Ok(mut by_uri) = self.registry.by_uri.lock() {
            by_uri
                .entry(uri.to_owned())
                .or_default()
                .insert(self.id, self.target.clone());
            self.uris.insert(uri.to_owned());
        }
        true
    }

    /// Unsubscribes from `uri` (not subscribed: no change).
    pub(crate) fn unsubscribe(&mut self, uri: &str) {
        if self.uris.remove(uri) {
            self.unregister([uri]);
        }
    }

    /// Unsubscribes from everything (the session ended).
    pub(crate) fn clear(&mut self) {
        let uris = std::mem::take(&mut self.uris);
        self.unregister(uris.iter().map(String::as_str));
    }

    fn unregister<'a>(&self, uris: impl IntoIterator<Item = &'a str>) {
        let Ok(mut by_uri) = self.registry.by_uri.lock() else {
            return;
        };
        for uri in uris {
            if let Some(subscribers) = by_uri.get_mut(uri) {
                subscribers.remove(&self.id);
                if subscribers.is_empty() {
                    by_uri.remove(uri);
                }
            }
        }
    }
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peer::Outbound;
    use tokio::sync::mpsc;

    fn registry_len(u: &ResourceUpdates) -> usize {
        u.registry.by_uri.lock().unwrap().len()
    }

    #[test]
    fn only_subscribers_of_the_exact_uri_are_told_and_dropping_unregisters() {
        let updates = ResourceUpdates::default();
        let (tx, mut rx) = mpsc::channel(8);
        let mut a = updates.session(Mailbox::attached(&Outbound::new(tx)));
        let mut b = updates.session(Mailbox::default());
        assert!(a.subscribe("test://x") && a.subscribe("test://x") && a.subscribe("test://y"));
        assert!(b.subscribe("test://x"));
        assert_eq!(updates.subscribers("test://x"), 2);
        // `b` has no stream: it is not told, and not counted.
        assert_eq!(updates.updated("test://x"), 1);
        assert_eq!(updates.updated("test://x/"), 0, "exactly the URI");
        let Some(Outgoing::Notification { method, params }) = rx.try_recv().ok() else {
            panic!("a notification")
        };
        assert_eq!((method, params.get()), (RESOURCES_UPDATED, r#"{"uri":"test://x"}"#));
        assert!(rx.try_recv().is_err(), "one notification, not one per subscription");
        a.unsubscribe("test://x");
        assert_eq!(updates.updated("test://x"), 0);
        assert_eq!(updates.subscribers("test://x"), 1);
        drop(b);
        drop(a);
        assert_eq!(registry_len(&updates), 0, "nothing is left behind");
    }

    #[test]
    fn a_full_queue_drops_without_waiting_and_others_are_still_told() {
        let updates = ResourceUpdates::default();
        let (slow_tx, _slow_rx) = mpsc::channel(MAX_QUEUED);
        let (fast_tx, mut fast_rx) = mpsc::channel(MAX_QUEUED);
        let mut slow = updates.session(Mailbox::attached(&Outbound::new(slow_tx)));
        let mut fast = updates.session(Mailbox::attached(&Outbound::new(fast_tx)));
        slow.subscribe("test://x");
        fast.subscribe("test://x");
        for _ in 0..MAX_QUEUED {
            assert_eq!(updates.updated("test://x"), 2);
            assert!(fast_rx.try_recv().is_ok());
        }
        // The slow client's queue holds MAX_QUEUED: the next is dropped for it alone.
        assert_eq!(updates.updated("test://x"), 1);
        assert!(fast_rx.try_recv().is_ok());
    }

    #[test]
    fn a_session_holds_at_most_max_subscriptions() {
        let updates = ResourceUpdates::default();
        let mut s = updates.session(Mailbox::default());
        for i in 0..MAX_SUBSCRIPTIONS {
            assert!(s.subscribe(&format!("test://{i}")));
        }
        assert!(!s.subscribe("test://one-more"));
        assert!(s.subscribe("test://7"), "one already held is no new one");
        s.clear();
        assert_eq!(registry_len(&updates), 0);
        assert!(s.subscribe("test://one-more"));
    }
}
