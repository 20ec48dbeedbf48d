//! What every transport of the client shares: the handlers, and what is done with a message
//! the server sends that is not the answer to a request (its own requests on the handshake era's
//! back-channel, its notifications).

use super::elicitation::{self, ElicitationHandler};
use super::{Notification, Progress, SamplingHandler};
use crate::protocol::{Implementation, codes};
use crate::sampling::Root;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::Notify;

/// A progress callback of one request.
pub(crate) type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;
/// The caller's notification callback.
pub(crate) type NotificationFn = Arc<dyn Fn(Notification) + Send + Sync>;

/// The handlers and what the server said of itself.
pub(crate) struct Shared {
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    /// The roots the client offers (`roots/list`), if it offers any.
    pub(crate) roots: Option<Vec<Root>>,
    pub(crate) on_notification: Option<NotificationFn>,
    /// Progress callbacks by token.
    pub(crate) progress: Mutex<HashMap<String, ProgressFn>>,
    /// Who the server is (its name once known, else the name the caller gave the connection).
    pub(crate) server: RwLock<Implementation>,
    /// The URL elicitations the server said are complete (2025-11-25), and a wake-up for whoever
    /// waits on one.
    pub(crate) completed: Mutex<HashSet<String>>,
    pub(crate) completion: Notify,
}

/// Locks a mutex whose data stays consistent even if a holder panicked.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn server(&self) -> Implementation {
        self.server
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Handles a message that is not the answer to one of our requests. A request of the
    /// server's is answered through `respond` (from a task of its own: answering may wait for a
    /// person, and the connection goes on meanwhile).
    pub(crate) fn incoming(self: &Arc<Self>, message: Value, respond: impl FnOnce(Value) + Send + 'static) {
        let Some(method) = message.get("method").and_then(Value::as_str).map(str::to_owned) else {
            tracing::debug!(%message, "mcp client: a message that is neither a request, a notification nor an answer we wait for");
            return;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match message.get("id").cloned() {
            None => self.notification(method, params),
            Some(id) => {
                let shared = Arc::clone(self);
                tokio::spawn(async move {
                    let answer = match shared.server_request(&method, &params).await {
                        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                        Err((code, text)) => {
                            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}})
                        }
                    };
                    respond(answer);
                });
            }
        }
    }

    fn notification(&self, method: String, params: Value) {
        if method == "notifications/progress" {
            let token = params.get("progressToken").map(token_key);
            let callback = token.and_then(|t| lock(&self.progress).get(&t).cloned());
            if let Some(f) = callback {
                f(Progress {
                    progress: params.get("progress").and_then(Value::as_f64).unwrap_or(0.0),
                    total: params.get("total").and_then(Value::as_f64),
                    message: params.get("message").and_then(Value::as_str).map(str::to_owned),
                });
            }
        }
        if method == "notifications/elicitation/complete"
            && let Some(id) = params.get("elicitationId").and_then(Value::as_str)
        {
            lock(&self.completed).insert(id.to_owned());
            self.completion.notify_waiters();
        }
        if let Some(f) = &self.on_notification {
            f(Notification { method, params });
        }
    }

    /// The answer to a request of the server's (handshake era): a result, or an error's code and
    /// message.
    async fn server_request(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        match method {
            "ping" => Ok(json!({})),
            "elicitation/create" => {
                let Some(handler) = &self.elicitation else {
                    return Err((
                        codes::METHOD_NOT_FOUND,
                        "this client does not answer elicitations".into(),
                    ));
                };
                let Some(request) = elicitation::read_request(&self.server(), None, params) else {
                    return Err((codes::INVALID_PARAMS, "not an elicitation request".into()));
                };
                let declared = match request.url() {
                    Some(_) => handler.url(),
                    None => handler.form(),
                };
                if !declared {
                    return Err((
                        codes::INVALID_PARAMS,
                        "the client did not declare this elicitation mode".into(),
                    ));
                }
                Ok(elicitation::ask(handler.as_ref(), request).await.to_wire())
            }
            "sampling/createMessage" | "roots/list" => self.input(method, params).await,
            _ => Err((codes::METHOD_NOT_FOUND, format!("Method not found: {method}"))),
        }
    }

    /// The answer to a sampling or roots request, on either era (a back-channel request, or an
    /// entry of `inputRequests`): its result, or an error's code and message. A sampling
    /// handler's refusal is code -1, as the specification's example of a user's rejection.
    pub(crate) async fn input(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        match method {
            "sampling/createMessage" => match &self.sampling {
                Some(h) => h.create_message(params.clone()).await.map_err(|why| (-1, why)),
                None => Err((codes::METHOD_NOT_FOUND, "this client does not sample".into())),
            },
            "roots/list" => match &self.roots {
                Some(roots) => Ok(json!({ "roots": roots })),
                None => Err((codes::METHOD_NOT_FOUND, "this client offers no roots".into())),
            },
            _ => Err((codes::METHOD_NOT_FOUND, format!("Method not found: {method}"))),
        }
    }
}

/// A progress token as a map key (a string or a number, by its JSON text).
pub(crate) fn token_key(token: &Value) -> String {
    token.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Answer, Scripted};

    fn shared(handler: Option<Arc<dyn ElicitationHandler>>) -> Shared {
        Shared {
            elicitation: handler,
            sampling: None,
            roots: None,
            on_notification: None,
            progress: Mutex::new(HashMap::new()),
            server: RwLock::new(Implementation::new("s", "1")),
            completed: Mutex::new(HashSet::new()),
            completion: Notify::new(),
        }
    }

    #[tokio::test]
    async fn an_undeclared_mode_is_32602_and_no_handler_is_32601() {
        let url = json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"});
        let form = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}});
        let form_only = shared(Some(Arc::new(Scripted::new().form_only().otherwise(Answer::Decline))));
        let e = form_only.server_request("elicitation/create", &url).await.unwrap_err();
        assert_eq!(e.0, codes::INVALID_PARAMS, "{e:?}");
        let ok = form_only.server_request("elicitation/create", &form).await.unwrap();
        assert_eq!(ok, json!({"action": "decline"}));
        let none = shared(None);
        let e = none.server_request("elicitation/create", &form).await.unwrap_err();
        assert_eq!(e.0, codes::METHOD_NOT_FOUND);
        assert_eq!(none.server_request("ping", &json!({})).await.unwrap(), json!({}));
        let e = none
            .server_request("sampling/createMessage", &json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.0, codes::METHOD_NOT_FOUND);
    }
}
