//! `subscriptions/listen` (2026-07-28): a request whose response is a stream of the
//! notifications the client asked for. The server acknowledges first, with the subset of the
//! filter it honours (`notifications/subscriptions/acknowledged`), then sends every
//! `notifications/resources/updated` of the URIs it honoured, each tagged with the listen
//! request's id under `_meta["io.modelcontextprotocol/subscriptionId"]`, until the client
//! cancels (closes the HTTP stream, or sends `notifications/cancelled` on stdio: no response) or
//! the stream reaches its lifetime (a graceful end: the `subscriptions/listen` response, tagged
//! the same way). The same [`ResourceUpdates`](super::ResourceUpdates) feed it as handshake-era
//! `resources/subscribe`.
//!
//! Bounds: the URIs of one filter ([`MAX_SUBSCRIPTIONS`]), the streams one caller holds open and
//! all callers together ([`Server::max_listens`]), and a stream's lifetime
//! ([`Server::listen_lifetime`]).

use super::Server;
use crate::peer::{Mailbox, Outbound};
use crate::principal::Principal;
use crate::protocol::jsonrpc::{Answer, Outgoing, to_body, to_raw};
use crate::protocol::messages::{
    ListenAcknowledged, ListenEnd, ListenEndMeta, ListenFilter, SUBSCRIPTIONS_ACKNOWLEDGED, SubscriptionMeta,
};
use crate::protocol::{ErrorObject, RequestId};
use crate::updates::{MAX_QUEUED, MAX_SUBSCRIPTIONS};
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Who holds listen streams open, and how many: one count per authenticated principal, and
/// the total of every caller (unauthenticated callers count toward the total only).
#[derive(Debug)]
pub(crate) struct ListenLimits {
    pub(crate) total: usize,
    pub(crate) per_caller: usize,
    pub(crate) lifetime: Duration,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_caller: HashMap<(Option<String>, String), usize>,
}

impl ListenLimits {
    pub(crate) fn new(total: usize, per_caller: usize, lifetime: Duration) -> Self {
        Self {
            total: total.max(1),
            per_caller: per_caller.max(1),
            lifetime,
            open: Mutex::default(),
        }
    }

    /// A place for one more stream of `principal`'s, or the error the request is answered with.
    fn take(self: &Arc<Self>, principal: Option<&Principal>) -> Result<Slot, ErrorObject> {
        let caller = principal.map(|p| (p.issuer.clone(), p.subject.clone()));
        let mut open = self
            .open
            .lock()
            .map_err(|_| ErrorObject::internal("Internal error: the subscription registry is unavailable"))?;
        if let Some(caller) = &caller
            && open.by_caller.get(caller).copied().unwrap_or(0) >= self.per_caller
        {
            return Err(ErrorObject::invalid_request(format!(
                "Invalid Request: this caller holds {} subscriptions/listen streams open, its limit; close one first",
                self.per_caller
            )));
        }
        if open.total >= self.total {
            return Err(ErrorObject::internal(format!(
                "Server busy: {} subscriptions/listen streams are open, this server's limit; retry later",
                self.total
            )));
        }
        open.total += 1;
        if let Some(caller) = &caller {
            *open.by_caller.entry(caller.clone()).or_default() += 1;
        }
        Ok(Slot {
            limits: self.clone(),
            caller,
        })
    }

    #[cfg(test)]
    fn open(&self) -> usize {
        self.open.lock().map_or(0, |o| o.total)
    }
}

/// One open stream's place in [`ListenLimits`], given back when the stream ends.
#[derive(Debug)]
struct Slot {
    limits: Arc<ListenLimits>,
    caller: Option<(Option<String>, String)>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.limits.open.lock() {
            open.total = open.total.saturating_sub(1);
            if let Some(caller) = &self.caller
                && let Some(n) = open.by_caller.get_mut(caller)
            {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    open.by_caller.remove(caller);
                }
            }
        }
    }
}

/// A `subscriptions/listen` read and admitted: what it honours, and its place in the limits.
#[derive(Debug)]
pub(crate) struct Listen {
    /// The URIs whose updates it carries: those of the filter that name a resource of this
    /// server the caller may read, once each, in the client's order.
    uris: Vec<String>,
    _slot: Slot,
}

impl Listen {
    /// Reads the filter of a `subscriptions/listen` from `principal`. A filter that is not an
    /// object of the specification's members, or holds more than [`MAX_SUBSCRIPTIONS`] URIs, is
    /// -32602; a caller over its share of streams is refused.
    pub(crate) fn read(
        server: &Server,
        notifications: Option<&RawValue>,
        principal: Option<&Principal>,
    ) -> Result<Self, ErrorObject> {
        let filter: ListenFilter = match notifications {
            None => ListenFilter::default(),
            Some(raw) => serde_json::from_str(raw.get()).map_err(|e| {
                ErrorObject::invalid_params(format!(
                    "Invalid params: `notifications` must be an object of booleans and `resourceSubscriptions` (strings): {e}"
                ))
            })?,
        };
        let requested = filter.resource_subscriptions.unwrap_or_default();
        if requested.len() > MAX_SUBSCRIPTIONS {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: `resourceSubscriptions` holds {} URIs; at most {MAX_SUBSCRIPTIONS} per stream",
                requested.len()
            )));
        }
        let mut uris: Vec<String> = Vec::new();
        for uri in requested {
            let readable = server
                .find_resource(&uri, crate::protocol::Era::Stateless)
                .is_ok_and(|(entry, _)| crate::access::allows(&entry.scopes, principal));
            if readable && !uris.contains(&uri) {
                uris.push(uri);
            }
        }
        let slot = server.config.listens.take(principal)?;
        Ok(Self { uris, _slot: slot })
    }

    /// Serves the stream: the acknowledgment first, then the updates, until the lifetime ends
    /// it with the response (or the caller drops this future: cancellation, no response).
    pub(crate) async fn serve(self, server: &Server, id: &RequestId, outbound: Outbound) -> Answer {
        let tag: Arc<RawValue> = Arc::from(to_raw(id)?);
        // Updates queue here until the acknowledgment is out, so none goes before it.
        let (tx, mut rx) = mpsc::channel::<Outgoing>(MAX_QUEUED);
        let mut subscriptions = server.updates.listen(Mailbox::attached(&Outbound::new(tx)), tag);
        for uri in &self.uris {
            subscriptions.subscribe(uri);
        }
        let meta = SubscriptionMeta { subscription_id: id };
        let honored = ListenFilter {
            resource_subscriptions: (!self.uris.is_empty()).then(|| self.uris.clone()),
            ..ListenFilter::default()
        };
        let ack = to_raw(&ListenAcknowledged {
            meta: &meta,
            notifications: &honored,
        })?;
        let acknowledged = Outgoing::Notification {
            method: SUBSCRIPTIONS_ACKNOWLEDGED,
            params: ack,
        };
        if !outbound.send(acknowledged).await {
            return Err(ErrorObject::internal(
                "Internal error: the stream closed before it was acknowledged",
            ));
        }
        let end = tokio::time::sleep(server.config.listens.lifetime);
        tokio::pin!(end);
        loop {
            tokio::select! {
                message = rx.recv() => {
                    // `false`: the client went away.
                    let Some(message) = message else { break };
                    if !outbound.send(message).await {
                        break;
                    }
                }
                () = &mut end => break,
            }
        }
        drop(subscriptions);
        to_body(&ListenEnd {
            result_type: "complete",
            meta: ListenEndMeta {
                subscription_id: id,
                server_info: server.info(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_bounded_per_caller_and_in_all() {
        let limits = Arc::new(ListenLimits::new(3, 2, Duration::from_secs(60)));
        let alice = Principal::new("alice");
        let bob = Principal::new("bob");
        let a1 = limits.take(Some(&alice)).unwrap();
        let _a2 = limits.take(Some(&alice)).unwrap();
        let refused = limits.take(Some(&alice)).unwrap_err();
        assert_eq!(refused.code, -32600);
        assert!(refused.message.contains("this caller holds 2"), "{}", refused.message);
        let _b1 = limits.take(Some(&bob)).unwrap();
        let full = limits.take(None).unwrap_err();
        assert_eq!(full.code, -32603, "the total falls on whoever comes next");
        drop(a1);
        assert_eq!(limits.open(), 2);
        assert!(
            limits.take(Some(&alice)).is_ok(),
            "a closed stream gives its place back"
        );
    }
}
