//! Tasks, the server's side: a tool call that becomes a task (its body runs on after the
//! `CreateTaskResult`, asking through the task), and the task methods (`tasks/get`,
//! `tasks/update`, `tasks/cancel`; on 2025-11-25 also `tasks/result` and `tasks/list`). The
//! record each task keeps, and how its questions wait for answers, is `crate::tasks`'s; this
//! file runs bodies and answers requests.

use super::answers::Reply;
use super::builder::Server;
use super::registry::{Finished, Input, Item, panic_text};
use crate::context::Context;
use crate::peer::Outbound;
use crate::principal::Principal;
use crate::protocol::jsonrpc::{Answer, Outgoing, to_body, to_raw};
use crate::protocol::messages::EmptyResult;
use crate::protocol::tasks::{
    CoreCreateTaskResult, CoreTask, CoreTaskList, RELATED_TASK, TASKS_EXTENSION, TaskHead, TaskStatus, TaskSupport,
    TaskView, timestamp,
};
use crate::protocol::{Era, ErrorObject, ProtocolVersion};
use crate::question::Settled;
use crate::resolve::ask::Imperative;
use crate::resolve::back_channel::Line;
use crate::tasks::{TaskLine, TaskRecord, TaskSettings, Tasks, now_ms};
use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// A task method, read from its params.
#[derive(Debug)]
pub(crate) enum TaskOp {
    Get(String),
    /// 2026-07-28: answers to the task's questions.
    Update(String, Map<String, Value>),
    Cancel(String),
    /// 2025-11-25: waits for the outcome, asking the task's questions on the way.
    Result(String),
    /// 2025-11-25: the caller's tasks.
    List,
}

/// Whether a call of a tool with `support` runs as a task, for a client with this `version`
/// and capabilities: `Ok(true)` when it does, `Ok(false)` when it answers in its response, and
/// the error of a tool that must be a task for a client that cannot follow one.
pub(crate) fn task_mode(
    support: TaskSupport,
    version: ProtocolVersion,
    follows_tasks: bool,
    name: &str,
) -> Result<bool, ErrorObject> {
    match (support, follows_tasks) {
        (TaskSupport::Forbidden, _) => Ok(false),
        (_, true) => Ok(true),
        (TaskSupport::Optional, false) => Ok(false),
        (TaskSupport::Required, false) => Err(match version.era() {
            Era::Stateless => ErrorObject::missing_capability(
                json!({ "extensions": { TASKS_EXTENSION: {} } }),
                format!("Tool `{name}` runs only as a task: declare the `{TASKS_EXTENSION}` extension"),
            ),
            // 2025-11-25: "receivers MUST return -32601 if the requestor does not attempt"
            // a task of a tool that requires one.
            Era::Handshake => ErrorObject::new(
                crate::protocol::codes::METHOD_NOT_FOUND,
                format!("tool `{name}` runs only as a task: call it with `task`"),
            ),
        }),
    }
}

/// The tasks running on this replica, per caller and in all; a place is given back when the
/// task's body ends.
#[derive(Debug, Default)]
pub(crate) struct Running {
    by_caller: Mutex<HashMap<String, usize>>,
    /// The latest tasks each caller created here, newest last ([`MAX_LISTED`] per caller), for
    /// 2025-11-25's `tasks/list`; callers with none are dropped as their tasks end.
    listed: Mutex<HashMap<String, std::collections::VecDeque<String>>>,
    /// The cancellation of each task whose body runs here: a `tasks/cancel` that reaches this
    /// replica stops the body at once (one through another replica is noticed at the next
    /// lease renewal).
    bodies: Mutex<HashMap<String, CancellationToken>>,
}

/// How many of a caller's tasks `tasks/list` shows (its newest).
pub(crate) const MAX_LISTED: usize = 100;

/// One task's place in [`Running`].
struct Place {
    running: Arc<Running>,
    caller: String,
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Ok(mut m) = self.running.by_caller.lock()
            && let Some(n) = m.get_mut(&self.caller)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.caller);
            }
        }
    }
}

impl Running {
    /// The body of task `id` runs here until it ends, stopped by `cancel`.
    fn runs(&self, id: &str, cancel: CancellationToken) {
        if let Ok(mut b) = self.bodies.lock() {
            b.insert(id.to_owned(), cancel);
        }
    }

    /// The body of task `id` ended.
    fn ended(&self, id: &str) {
        if let Ok(mut b) = self.bodies.lock() {
            b.remove(id);
        }
    }

    /// Stops the body of task `id` if it runs here.
    fn stop(&self, id: &str) {
        let token = self.bodies.lock().ok().and_then(|b| b.get(id).cloned());
        if let Some(t) = token {
            t.cancel();
        }
    }

    /// Remembers `id` as `caller`'s newest task.
    fn list(&self, caller: &str, id: &str) {
        if let Ok(mut l) = self.listed.lock() {
            if l.len() >= 10 * 1024 && !l.contains_key(caller) {
                // A table of many callers drops the ones whose lists are shortest first.
                if let Some(k) = l.iter().min_by_key(|(_, v)| v.len()).map(|(k, _)| k.clone()) {
                    l.remove(&k);
                }
            }
            let ids = l.entry(caller.to_owned()).or_default();
            ids.push_back(id.to_owned());
            while ids.len() > MAX_LISTED {
                ids.pop_front();
            }
        }
    }

    /// `caller`'s tasks created here, newest first.
    fn listed(&self, caller: &str) -> Vec<String> {
        self.listed
            .lock()
            .ok()
            .and_then(|l| l.get(caller).map(|ids| ids.iter().rev().cloned().collect()))
            .unwrap_or_default()
    }

    /// A place for one more task of `caller`, unless it runs `per_caller` already or the
    /// replica runs `total`: the bound falls on the caller that reached it.
    fn take(self: &Arc<Self>, caller: &str, settings: &TaskSettings) -> Result<Place, ErrorObject> {
        let mut m = self
            .by_caller
            .lock()
            .map_err(|_| ErrorObject::internal("Internal error: task table poisoned"))?;
        let total: usize = m.values().sum();
        let mine = m.get(caller).copied().unwrap_or(0);
        if mine >= settings.per_caller {
            return Err(ErrorObject::internal(format!(
                "Too many tasks: this caller runs {mine} tasks, as many as it may at once; wait for one to end or cancel one"
            ))
            .with_data(json!({ "runningTasks": mine })));
        }
        if total >= settings.total {
            return Err(ErrorObject::internal(
                "Server busy: it runs as many tasks as it may at once; retry later",
            ));
        }
        *m.entry(caller.to_owned()).or_default() += 1;
        drop(m);
        Ok(Place {
            running: self.clone(),
            caller: caller.to_owned(),
        })
    }
}

/// What a task needs from the call that became it.
pub(crate) struct TaskStart {
    pub(crate) item: Arc<Item>,
    pub(crate) input: Input,
    pub(crate) resolved: Vec<Settled>,
    pub(crate) principal: Option<Principal>,
    /// The retention a 2025-11-25 client asked for (capped by the server's).
    pub(crate) ttl_ms: Option<u64>,
}

impl Server {
    /// The server's tasks, in its store.
    pub(crate) fn tasks(&self) -> Tasks {
        Tasks::with_wakers(self.config.store.clone(), self.config.task_wakers.clone())
    }

    /// Whether some tool may run as a task: then the tasks extension (2026-07-28) or the
    /// `tasks` capability (2025-11-25) is declared, and the task methods exist.
    pub(crate) fn has_tasks(&self) -> bool {
        self.capabilities.extensions.is_some()
    }

    /// Starts the body of a call as a task: its record is stored (readable from every replica)
    /// before the `CreateTaskResult` is written, and the body runs on in its own task, asking
    /// through the task's record.
    pub(crate) async fn start_task(&self, start: TaskStart, reply: Reply) -> Answer {
        let settings = &self.config.tasks;
        let owner = crate::url_flow::tag(start.principal.as_ref());
        let place = self.config.running_tasks.take(&owner, settings)?;
        let id = Tasks::new_id()?;
        let now = now_ms();
        let max_ttl = u64::try_from(settings.max_ttl.as_millis()).unwrap_or(u64::MAX);
        let ttl_ms = start
            .ttl_ms
            .unwrap_or_else(|| u64::try_from(settings.ttl.as_millis()).unwrap_or(u64::MAX))
            .clamp(1000, max_ttl);
        let lease = u64::try_from(settings.lease.as_millis()).unwrap_or(u64::MAX);
        let record = TaskRecord {
            owner,
            // A task runs a tool, called by its name.
            tool: start.item.id.to_string(),
            status: TaskStatus::Working,
            message: None,
            created: now,
            updated: now,
            ttl_ms,
            poll_ms: u64::try_from(settings.poll_interval.as_millis()).unwrap_or(1000).max(1),
            lease: now.saturating_add(lease),
            keys: Vec::new(),
            asks: Map::new(),
            answers: Map::new(),
            result: None,
            error: None,
        };
        let tasks = self.tasks();
        tasks.create(&id, &record).await?;
        self.config.running_tasks.list(&record.owner, &id);
        tracing::info!(task = %id, tool = %record.tool, "task created");

        let cancel = CancellationToken::new();
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let line = Line::Task(TaskLine {
            tasks: tasks.clone(),
            id: id.clone(),
            answer_poll: settings.answer_poll,
        });
        let name = start.item.id.to_string();
        let imperative = Imperative {
            peer: line,
            timeout: self.config.elicitation_timeout,
            // The caller is the context's (the call's).
            asking: self.ask_base(),
            kind: start.item.kind().as_str(),
            target: start.item.id.clone(),
            item: start.item.id.clone(),
            metrics: start.item.metrics.clone(),
        };
        let context: Context = start
            .input
            .context
            .for_task(cancel.clone(), imperative, Outbound::new(tx));
        let input = Input { context, ..start.input };
        let body = start.item.run(input, start.resolved);
        self.config.running_tasks.runs(&id, cancel.clone());
        let runner = Runner {
            tasks,
            running: self.config.running_tasks.clone(),
            id: id.clone(),
            name,
            settings: settings.clone(),
            cancel,
            _place: place,
        };
        tokio::spawn(runner.drive(body, rx));
        match reply.era() {
            Era::Stateless => reply.result(self, view(&id, &record, false), "task"),
            Era::Handshake => to_body(&CoreCreateTaskResult {
                task: core(&id, &record),
            }),
        }
    }

    /// Answers a task method of the 2026-07-28 extension for `principal`. A client that did not
    /// declare the extension gets -32021 naming it; a task that is not the caller's, or does not
    /// exist, is -32602.
    pub(crate) async fn task_op(
        &self,
        op: TaskOp,
        follows_tasks: bool,
        principal: Option<&Principal>,
        reply: Reply,
        peer: Option<crate::peer::Peer>,
    ) -> Answer {
        if !follows_tasks {
            return Err(ErrorObject::missing_capability(
                json!({ "extensions": { TASKS_EXTENSION: {} } }),
                format!(
                    "the task methods need the `{TASKS_EXTENSION}` extension: declare it in the client capabilities"
                ),
            ));
        }
        let owner = crate::url_flow::tag(principal);
        let tasks = self.tasks();
        let core_era = reply.era() == Era::Handshake;
        match op {
            TaskOp::Get(id) => match tasks.get(&id, &owner).await? {
                Some(record) if core_era => to_body(&core(&id, &record)),
                Some(record) => reply.complete(self, view(&id, &record, true)),
                None => Err(unknown_task(&id)),
            },
            TaskOp::List => {
                let mut shown = Vec::new();
                for id in self.config.running_tasks.listed(&owner) {
                    if let Some(record) = tasks.get(&id, &owner).await? {
                        shown.push((id, record));
                    }
                }
                to_body(&CoreTaskList {
                    tasks: shown.iter().map(|(id, r)| core(id, r)).collect(),
                })
            }
            TaskOp::Result(id) => self.task_result(&tasks, &id, &owner, peer).await,
            TaskOp::Update(id, responses) => {
                let mut mine = false;
                let now = now_ms();
                let changed = tasks
                    .change(&id, |r| {
                        mine = r.owner == owner;
                        mine && r.answer(responses.clone(), now) > 0
                    })
                    .await?;
                match changed {
                    Some(_) if mine => reply.complete(self, EmptyResult {}),
                    _ => Err(unknown_task(&id)),
                }
            }
            TaskOp::Cancel(id) => {
                let (mut mine, mut ended) = (false, false);
                let now = now_ms();
                let changed = tasks
                    .change(&id, |r| {
                        mine = r.owner == owner;
                        ended = mine && r.finish(TaskStatus::Cancelled, None, None, now);
                        ended
                    })
                    .await?;
                if ended {
                    self.config.running_tasks.stop(&id);
                    tracing::info!(task = %id, "task cancelled");
                }
                match changed {
                    // 2025-11-25 answers with the task; a task over already cannot be cancelled.
                    Some(r) if mine && core_era => {
                        if !ended {
                            return Err(ErrorObject::invalid_params(format!(
                                "Cannot cancel task {id}: it is {} already",
                                r.status.as_str()
                            )));
                        }
                        to_body(&core(&id, &r))
                    }
                    Some(_) if mine => reply.complete(self, EmptyResult {}),
                    _ => Err(unknown_task(&id)),
                }
            }
        }
    }
}

impl Server {
    /// 2025-11-25 `tasks/result`: waits until the task is over and answers its outcome (the
    /// tool's result, or its error). While it waits, each question the task asks is sent on
    /// this request's back-channel (tied to the task by `_meta`), and the answer goes to the
    /// task as a `tasks/update` would.
    async fn task_result(&self, tasks: &Tasks, id: &str, owner: &str, peer: Option<crate::peer::Peer>) -> Answer {
        use futures_util::StreamExt;
        let waker = tasks.waker(id);
        let mut forwarded = std::collections::HashSet::new();
        let mut asking = futures_util::stream::FuturesUnordered::new();
        let poll = self.config.tasks.answer_poll;
        let timeout = self.config.elicitation_timeout;
        loop {
            let woken = waker.notified();
            let Some(record) = tasks.get(id, owner).await? else {
                return Err(unknown_task(id));
            };
            match record.status {
                TaskStatus::Completed => {
                    let result: Value = record
                        .result
                        .as_deref()
                        .and_then(|r| serde_json::from_str(r.get()).ok())
                        .unwrap_or_else(|| json!({ "content": [] }));
                    let mut result = result;
                    if let Value::Object(map) = &mut result {
                        let meta = map.entry("_meta").or_insert_with(|| json!({}));
                        if let Value::Object(meta) = meta {
                            meta.insert(RELATED_TASK.into(), json!({ "taskId": id }));
                        }
                    }
                    return to_body(&result);
                }
                TaskStatus::Failed => {
                    return Err(record.error.unwrap_or_else(|| ErrorObject::internal("the task failed")));
                }
                TaskStatus::Cancelled => {
                    return Err(ErrorObject::invalid_params(format!("Task {id} was cancelled")));
                }
                TaskStatus::Working | TaskStatus::InputRequired => {}
            }
            if let Some(peer) = &peer {
                for (key, request) in &record.asks {
                    if !forwarded.insert(key.clone()) {
                        continue;
                    }
                    let Some(method) = request.get("method").and_then(Value::as_str).and_then(question_method) else {
                        continue;
                    };
                    let mut params = request.get("params").cloned().unwrap_or_else(|| json!({}));
                    if let Value::Object(p) = &mut params {
                        let meta = p.entry("_meta").or_insert_with(|| json!({}));
                        if let Value::Object(meta) = meta {
                            meta.insert(RELATED_TASK.into(), json!({ "taskId": id }));
                        }
                    }
                    let (peer, key) = (peer.clone(), key.clone());
                    asking.push(async move {
                        let answer = peer.request(method, &params, timeout).await;
                        (key, answer)
                    });
                }
            }
            tokio::select! {
                _ = woken => {}
                _ = tokio::time::sleep(poll) => {}
                Some((key, answer)) = asking.next(), if !asking.is_empty() => {
                    match answer {
                        Ok(value) => {
                            let mut responses = Map::new();
                            responses.insert(key, value);
                            let now = now_ms();
                            tasks.change(id, |r| r.answer(responses.clone(), now) > 0).await?;
                        }
                        Err(e) => {
                            tracing::info!(task = id, key, error = ?e, "a task's question got no answer on the back-channel");
                            forwarded.remove(&key);
                            if matches!(e, crate::peer::PeerError::Closed) {
                                return Err(ErrorObject::internal("the client went away"));
                            }
                            if matches!(e, crate::peer::PeerError::Stopping) {
                                return Err(ErrorObject::internal("the server is shutting down"));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The methods a task's question may be sent with on the back-channel.
fn question_method(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation/create"),
        "sampling/createMessage" => Some("sampling/createMessage"),
        "roots/list" => Some("roots/list"),
        _ => None,
    }
}

/// What both eras show of every task.
fn head<'a>(id: &'a str, r: &'a TaskRecord) -> TaskHead<'a> {
    TaskHead {
        task_id: id,
        status: r.status,
        status_message: r.message.as_deref(),
        created_at: timestamp(r.created),
        last_updated_at: timestamp(r.updated),
    }
}

/// The task as 2025-11-25 shows it.
fn core<'a>(id: &'a str, r: &'a TaskRecord) -> CoreTask<'a> {
    CoreTask {
        head: head(id, r),
        ttl: r.ttl_ms,
        poll_interval: r.poll_ms,
    }
}

fn unknown_task(id: &str) -> ErrorObject {
    let shown: String = id.chars().take(64).collect();
    ErrorObject::invalid_params(format!("Unknown task: {shown}")).with_data(json!({ "taskId": shown }))
}

/// The task as 2026-07-28 shows it; `detailed`: with its questions or outcome (`tasks/get`).
fn view<'a>(id: &'a str, r: &'a TaskRecord, detailed: bool) -> TaskView<'a> {
    TaskView {
        head: head(id, r),
        ttl_ms: r.ttl_ms,
        poll_interval_ms: r.poll_ms,
        input_requests: (detailed && r.status == TaskStatus::InputRequired).then_some(&r.asks),
        result: if detailed { r.result.as_deref() } else { None },
        error: if detailed { r.error.as_ref() } else { None },
    }
}

/// A task's body running on this replica: it renews the task's lease, notices a cancellation
/// made on any replica, turns progress into the status message, and stores the outcome.
struct Runner {
    tasks: Tasks,
    running: Arc<Running>,
    id: String,
    name: String,
    settings: TaskSettings,
    cancel: CancellationToken,
    _place: Place,
}

impl Runner {
    async fn drive(self, body: super::registry::Running, mut notes: tokio::sync::mpsc::Receiver<Outgoing>) {
        let waker = self.tasks.waker(&self.id);
        let mut renew = tokio::time::interval((self.settings.lease / 3).max(std::time::Duration::from_millis(10)));
        renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        renew.tick().await;
        let mut body = AssertUnwindSafe(body).catch_unwind();
        let outcome = loop {
            let woken = waker.notified();
            tokio::select! {
                out = &mut body => break Some(out),
                // A `tasks/cancel` through this replica.
                _ = self.cancel.cancelled() => break None,
                Some(note) = notes.recv() => self.note(note, &mut notes).await,
                _ = renew.tick() => {
                    if !self.renew().await {
                        break None;
                    }
                }
                _ = woken => {
                    if !self.still_running().await {
                        break None;
                    }
                }
            }
        };
        drop(body);
        if let Some(out) = outcome {
            self.finish(out).await;
        } else {
            self.cancel.cancel();
            tracing::info!(task = %self.id, tool = %self.name, "task body stopped: the task is over");
        }
        self.tasks.forget(&self.id);
        self.running.ended(&self.id);
    }

    /// Whether the task still runs (not cancelled, not gone).
    async fn still_running(&self) -> bool {
        match self.tasks.change(&self.id, |_| false).await {
            Ok(Some(r)) => !r.status.is_terminal(),
            Ok(None) => false,
            // The store may come back: the lease decides.
            Err(_) => true,
        }
    }

    /// Renews the lease; `false` when the task is over (cancelled elsewhere) or gone.
    async fn renew(&self) -> bool {
        let lease = u64::try_from(self.settings.lease.as_millis()).unwrap_or(u64::MAX);
        match self
            .tasks
            .change(&self.id, |r| {
                if r.status.is_terminal() {
                    return false;
                }
                r.lease = now_ms().saturating_add(lease);
                true
            })
            .await
        {
            Ok(Some(r)) => !r.status.is_terminal(),
            Ok(None) => false,
            Err(_) => true,
        }
    }

    /// A progress notification (the latest of those queued) becomes the status message; log
    /// messages have nowhere to go and are dropped.
    async fn note(&self, first: Outgoing, notes: &mut tokio::sync::mpsc::Receiver<Outgoing>) {
        let mut latest = progress_message(&first);
        while let Ok(next) = notes.try_recv() {
            if let Some(m) = progress_message(&next) {
                latest = Some(m);
            }
        }
        let Some(message) = latest else { return };
        let _ = self
            .tasks
            .change(&self.id, |r| {
                if r.status.is_terminal() || r.message.as_deref() == Some(message.as_str()) {
                    return false;
                }
                r.message = Some(message.clone());
                r.updated = now_ms();
                true
            })
            .await;
    }

    async fn finish(&self, out: std::thread::Result<Result<Finished, ErrorObject>>) {
        let (status, result, error) = match out {
            Ok(Ok(Finished::Tool(result))) => match result.protocol_error.clone() {
                Some(e) => (TaskStatus::Failed, None, Some(*e)),
                None => match to_raw(&result) {
                    Ok(raw) if raw.get().len() > self.settings.max_result_bytes => {
                        tracing::warn!(task = %self.id, bytes = raw.get().len(), "task result over the bound");
                        (
                            TaskStatus::Failed,
                            None,
                            Some(ErrorObject::internal(format!(
                                "the result of tool `{}` is {} bytes, more than a task keeps ({} bytes)",
                                self.name,
                                raw.get().len(),
                                self.settings.max_result_bytes
                            ))),
                        )
                    }
                    Ok(raw) => (TaskStatus::Completed, Some(raw), None),
                    Err(e) => (TaskStatus::Failed, None, Some(e)),
                },
            },
            Ok(Ok(_)) => (
                TaskStatus::Failed,
                None,
                Some(ErrorObject::internal(
                    "Internal error: a task ran something other than a tool",
                )),
            ),
            Ok(Err(e)) => (TaskStatus::Failed, None, Some(e)),
            Err(payload) => {
                panic_text("tool", &self.name, &payload);
                (
                    TaskStatus::Failed,
                    None,
                    Some(ErrorObject::internal(format!(
                        "tool `{}` failed: internal error",
                        self.name
                    ))),
                )
            }
        };
        // The outcome is tried a few times: a store failing for a moment (a Redis timing out
        // under load) must not lose it; past that, the lease reports the task failed.
        let now = now_ms();
        let mut stored = Err(ErrorObject::internal("not stored"));
        for attempt in 0..5u32 {
            stored = self
                .tasks
                .change(&self.id, |r| r.finish(status, result.clone(), error.clone(), now))
                .await;
            if stored.is_ok() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
        }
        match stored {
            Ok(Some(r)) => tracing::info!(task = %self.id, tool = %self.name, status = r.status.as_str(), "task ended"),
            Ok(None) => tracing::info!(task = %self.id, tool = %self.name, "task ended after it was gone"),
            Err(e) => tracing::error!(task = %self.id, error = %e.message, "task outcome not stored"),
        }
    }
}

/// The text a `notifications/progress` carries: its message, or "progress/total".
fn progress_message(note: &Outgoing) -> Option<String> {
    let Outgoing::Notification { method, params } = note else {
        return None;
    };
    if *method != crate::protocol::messages::PROGRESS {
        return None;
    }
    let p: Value = serde_json::from_str(params.get()).ok()?;
    if let Some(m) = p.get("message").and_then(Value::as_str) {
        return Some(m.chars().take(1024).collect());
    }
    let progress = p.get("progress")?;
    Some(match p.get("total") {
        Some(total) => format!("{progress}/{total}"),
        None => progress.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_required_task_tool_refuses_a_client_that_cannot_follow_tasks() {
        let e = task_mode(TaskSupport::Required, ProtocolVersion::V2026_07_28, false, "deploy").unwrap_err();
        assert_eq!(e.code, -32021);
        assert_eq!(
            e.data.unwrap()["requiredCapabilities"]["extensions"][TASKS_EXTENSION],
            json!({})
        );
        assert_eq!(
            task_mode(TaskSupport::Optional, ProtocolVersion::V2026_07_28, false, "d"),
            Ok(false)
        );
        assert_eq!(
            task_mode(TaskSupport::Forbidden, ProtocolVersion::V2026_07_28, true, "d"),
            Ok(false)
        );
        assert_eq!(
            task_mode(TaskSupport::Optional, ProtocolVersion::V2026_07_28, true, "d"),
            Ok(true)
        );
    }

    #[test]
    fn the_bound_on_running_tasks_falls_on_the_caller_that_reached_it() {
        let running = Arc::new(Running::default());
        let settings = TaskSettings {
            per_caller: 2,
            total: 3,
            ..TaskSettings::default()
        };
        let a1 = running.take("a", &settings).unwrap();
        let _a2 = running.take("a", &settings).unwrap();
        let e = running.take("a", &settings).err().unwrap();
        assert!(e.message.contains("Too many tasks"), "{}", e.message);
        let _b = running.take("b", &settings).unwrap();
        assert!(running.take("c", &settings).err().unwrap().message.contains("busy"));
        drop(a1);
        assert!(running.take("a", &settings).is_ok());
    }
}
