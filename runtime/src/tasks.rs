//! Tasks as the server's [`Store`](crate::store::Store) keeps them, so that every replica sees
//! the same task: one record per task (status, the questions not answered yet, the answers not
//! yet taken, the outcome), changed only by compare-and-set. The replica running a task renews
//! its lease; a task whose lease ran out is reported failed by whichever replica looks at it.
//! Answers reach the body through [`TaskLine`], the task's side of a question: it writes the
//! question into the record and waits for its answer there.

use crate::peer::PeerError;
use crate::protocol::ErrorObject;
use crate::protocol::tasks::TaskStatus;
use crate::store::{SharedStore, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Notify;

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One task, as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct TaskRecord {
    /// Whose task it is: the tag of the principal that created it ("" for anonymous callers).
    pub(crate) owner: String,
    /// The tool it runs.
    pub(crate) tool: String,
    pub(crate) status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
    pub(crate) created: u64,
    pub(crate) updated: u64,
    pub(crate) ttl_ms: u64,
    pub(crate) poll_ms: u64,
    /// Until when the replica running it vouches for it (ms since the epoch).
    pub(crate) lease: u64,
    /// Every question key used so far (keys are never reused within a task).
    #[serde(default)]
    pub(crate) keys: Vec<String>,
    /// The questions waiting for an answer: key → `{method, params}`.
    #[serde(default)]
    pub(crate) asks: Map<String, Value>,
    /// Answers given and not yet taken by the body: key → the answer.
    #[serde(default)]
    pub(crate) answers: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<ErrorObject>,
}

impl TaskRecord {
    /// Reports the task failed if its lease ran out while it was not over: the replica running it
    /// stopped. `true` when it changed.
    pub(crate) fn settle_if_abandoned(&mut self, now: u64) -> bool {
        if self.status.is_terminal() || now <= self.lease {
            return false;
        }
        self.finish(
            TaskStatus::Failed,
            None,
            Some(ErrorObject::internal(
                "the task was lost: the server running it stopped before it finished",
            )),
            now,
        );
        true
    }

    /// Ends the task (once: a task over stays as it ended).
    pub(crate) fn finish(
        &mut self,
        status: TaskStatus,
        result: Option<Box<RawValue>>,
        error: Option<ErrorObject>,
        now: u64,
    ) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status = status;
        self.result = result;
        self.error = error;
        self.asks.clear();
        self.answers.clear();
        self.updated = now;
        true
    }

    /// Takes answers to questions still waiting; any other key is ignored (unknown, answered
    /// already, or of a task that is over). The answered questions leave `asks` at once, so the
    /// next `tasks/get` shows only what is still pending. How many it took.
    pub(crate) fn answer(&mut self, responses: Map<String, Value>, now: u64) -> usize {
        if self.status.is_terminal() {
            return 0;
        }
        let mut taken = 0;
        for (key, value) in responses {
            if self.asks.remove(&key).is_some() {
                self.answers.insert(key, value);
                taken += 1;
            }
        }
        if taken > 0 {
            if self.asks.is_empty() {
                self.status = TaskStatus::Working;
            }
            self.updated = now;
        }
        taken
    }
}

/// The task settings a server holds.
#[derive(Clone, Debug)]
pub(crate) struct TaskSettings {
    /// How long a task is kept after it is created, unless the client asks for less.
    pub(crate) ttl: Duration,
    /// The longest a client may ask for (2025-11-25 `task.ttl`).
    pub(crate) max_ttl: Duration,
    /// What `pollIntervalMs` suggests.
    pub(crate) poll_interval: Duration,
    /// How long a task stays "working" without its replica renewing it before it is reported
    /// failed; renewed every third of it.
    pub(crate) lease: Duration,
    /// How often a waiting question looks at the store for its answer (an answer given to the
    /// same replica wakes it at once).
    pub(crate) answer_poll: Duration,
    /// The largest result a task keeps; a bigger one fails the task.
    pub(crate) max_result_bytes: usize,
    /// Tasks running at once on this replica, per caller and in all.
    pub(crate) per_caller: usize,
    pub(crate) total: usize,
}

impl Default for TaskSettings {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(24 * 3600),
            poll_interval: Duration::from_millis(1000),
            lease: Duration::from_secs(15),
            answer_poll: Duration::from_millis(250),
            max_result_bytes: 1024 * 1024,
            per_caller: 16,
            total: 1024,
        }
    }
}

/// What waits on each task on this replica, woken when something about it changes here (an
/// answer, a cancellation).
pub(crate) type TaskWakers = Arc<Mutex<HashMap<String, Arc<Notify>>>>;

/// The server's tasks: the store they live in, and the waiters of this replica.
#[derive(Clone, Debug)]
pub(crate) struct Tasks {
    store: SharedStore,
    wakers: TaskWakers,
}

/// Questions one task may ask in its life (each key is kept, so that none is reused).
pub(crate) const MAX_TASK_QUESTIONS: usize = 256;

/// Tries of one compare-and-set before giving up (each retry means another writer won).
const CAS_TRIES: usize = 32;

fn key(id: &str) -> String {
    format!("task:{id}")
}

fn store_error(e: StoreError) -> ErrorObject {
    tracing::error!(error = %e, "the task store failed");
    ErrorObject::internal("Internal error: the task store is unavailable")
}

impl Tasks {
    pub(crate) fn with_wakers(store: SharedStore, wakers: TaskWakers) -> Self {
        Self { store, wakers }
    }

    #[cfg(test)]
    pub(crate) fn new(store: SharedStore) -> Self {
        Self::with_wakers(store, TaskWakers::default())
    }

    /// A fresh, unguessable task id: 128 random bits. No randomness is an error, never a
    /// weaker id.
    pub(crate) fn new_id() -> Result<String, ErrorObject> {
        let mut bytes = [0u8; 16];
        crate::seal::random(&mut bytes)
            .map_err(|e| ErrorObject::internal(format!("Internal error: no task id: {e}")))?;
        Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// How long the store keeps `record` from now: until its TTL from creation ends.
    fn keep(record: &TaskRecord, now: u64) -> Duration {
        let end = record.created.saturating_add(record.ttl_ms);
        Duration::from_millis(end.saturating_sub(now).max(1000))
    }

    /// Stores a new task; it can be read from every replica once this returns.
    pub(crate) async fn create(&self, id: &str, record: &TaskRecord) -> Result<(), ErrorObject> {
        let bytes = serde_json::to_vec(record).map_err(|e| ErrorObject::internal(e.to_string()))?;
        let ttl = Self::keep(record, now_ms());
        match self.store.0.insert_new(&key(id), &bytes, ttl).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(ErrorObject::internal("Internal error: task id collision")),
            Err(e) => Err(store_error(e)),
        }
    }

    /// The task `id` as stored, with the bytes it was read from.
    async fn load(&self, id: &str) -> Result<Option<(Vec<u8>, TaskRecord)>, ErrorObject> {
        let Some(bytes) = self.store.0.get(&key(id)).await.map_err(store_error)? else {
            return Ok(None);
        };
        match serde_json::from_slice(&bytes) {
            Ok(record) => Ok(Some((bytes, record))),
            Err(e) => {
                tracing::error!(task = id, error = %e, "a stored task does not read");
                Ok(None)
            }
        }
    }

    /// The task `id` if `owner` created it (another caller's task is not found), reported
    /// failed first if its replica stopped.
    pub(crate) async fn get(&self, id: &str, owner: &str) -> Result<Option<TaskRecord>, ErrorObject> {
        match self.load(id).await? {
            Some((_, r)) if r.owner == owner => {
                if !r.status.is_terminal() && now_ms() > r.lease {
                    return self.change(id, |r| r.settle_if_abandoned(now_ms())).await;
                }
                Ok(Some(r))
            }
            _ => Ok(None),
        }
    }

    /// Changes the task `id` with `f` (which says whether it changed anything), by
    /// compare-and-set, retried while other writers win; the record after. `None`: no such task.
    pub(crate) async fn change(
        &self,
        id: &str,
        mut f: impl FnMut(&mut TaskRecord) -> bool,
    ) -> Result<Option<TaskRecord>, ErrorObject> {
        for _ in 0..CAS_TRIES {
            let Some((before, mut record)) = self.load(id).await? else {
                return Ok(None);
            };
            if !f(&mut record) {
                return Ok(Some(record));
            }
            let now = now_ms();
            let after = serde_json::to_vec(&record).map_err(|e| ErrorObject::internal(e.to_string()))?;
            let ttl = Self::keep(&record, now);
            if self
                .store
                .0
                .replace(&key(id), &before, &after, ttl)
                .await
                .map_err(store_error)?
            {
                self.wake(id);
                return Ok(Some(record));
            }
        }
        Err(ErrorObject::internal(
            "Internal error: the task changed too often to update",
        ))
    }

    /// The waker of task `id` on this replica (made on first use; [`Tasks::forget`] drops it).
    pub(crate) fn waker(&self, id: &str) -> Arc<Notify> {
        match self.wakers.lock() {
            Ok(mut w) => w.entry(id.to_owned()).or_default().clone(),
            Err(_) => Arc::default(),
        }
    }

    /// Wakes what waits on task `id` here.
    fn wake(&self, id: &str) {
        let waker = self.wakers.lock().ok().and_then(|w| w.get(id).cloned());
        if let Some(w) = waker {
            w.notify_waiters();
        }
    }

    /// The task ended here: nothing waits on it any more.
    pub(crate) fn forget(&self, id: &str) {
        if let Ok(mut w) = self.wakers.lock() {
            w.remove(id);
        }
    }
}

/// A running task's side of its questions: a question goes into the task's record (its status
/// becomes `input_required`), and the answer is taken from there when a `tasks/update` put it.
#[derive(Clone, Debug)]
pub(crate) struct TaskLine {
    pub(crate) tasks: Tasks,
    pub(crate) id: String,
    pub(crate) answer_poll: Duration,
}

/// Removes a question nobody waits for any more (the call was cancelled, or timed out).
struct Withdraw {
    line: Option<TaskLine>,
    key: String,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(line) = self.line.take() else { return };
        let key = std::mem::take(&mut self.key);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = line
                    .tasks
                    .change(&line.id, |r| {
                        let gone = r.asks.remove(&key).is_some() | r.answers.remove(&key).is_some();
                        if gone && r.asks.is_empty() && r.status == TaskStatus::InputRequired {
                            r.status = TaskStatus::Working;
                        }
                        gone
                    })
                    .await;
            });
        }
    }
}

impl TaskLine {
    /// Asks the client through the task: `{method, params}` under a key made from `base` that
    /// the task never used, then waits up to `timeout` for its answer.
    pub(crate) async fn request(
        &self,
        method: &'static str,
        params: Value,
        base: &str,
        timeout: Duration,
    ) -> Result<Value, PeerError> {
        let waker = self.tasks.waker(&self.id);
        let mut chosen = String::new();
        let mut tries = 0u32;
        let asked = loop {
            let attempt = self
                .tasks
                .change(&self.id, |r| {
                    // An earlier try that timed out may have landed: the question is asked.
                    if !chosen.is_empty() && r.asks.contains_key(&chosen) {
                        return false;
                    }
                    if r.status.is_terminal() || r.keys.len() >= MAX_TASK_QUESTIONS {
                        chosen.clear();
                        return false;
                    }
                    chosen = if r.keys.iter().any(|k| k == base) {
                        format!("{base}-{}", r.keys.len() + 1)
                    } else {
                        base.to_owned()
                    };
                    r.keys.push(chosen.clone());
                    r.asks.insert(
                        chosen.clone(),
                        serde_json::json!({ "method": method, "params": params }),
                    );
                    r.status = TaskStatus::InputRequired;
                    r.updated = now_ms();
                    true
                })
                .await;
            // A store failing for a moment is tried again before the question fails.
            match attempt {
                Ok(asked) => break asked,
                Err(e) if tries >= 3 => return Err(PeerError::Client(e)),
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100 << tries)).await;
                    tries += 1;
                }
            }
        };
        match asked {
            Some(r) if !r.status.is_terminal() && !chosen.is_empty() => {}
            Some(r) if !r.status.is_terminal() => {
                return Err(PeerError::Client(ErrorObject::internal(format!(
                    "the task asked {MAX_TASK_QUESTIONS} questions, as many as a task may"
                ))));
            }
            _ => return Err(PeerError::Closed),
        }
        let mut withdraw = Withdraw {
            line: Some(self.clone()),
            key: chosen.clone(),
        };
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let woken = waker.notified();
            // The answer is only read here: taking it out in the same write would lose it when
            // that write lands but its reply times out. Once read, `withdraw` removes it (and the
            // question) in a write of its own, best effort: a key is never used twice.
            // A store that fails for a moment (a Redis timing out under load) is looked at again
            // at the next poll: the question is out, and only its own deadline ends the wait.
            match self.tasks.load(&self.id).await {
                Ok(Some((_, r))) => {
                    if let Some(a) = r.answers.get(&chosen) {
                        return Ok(a.clone());
                    }
                    if r.status.is_terminal() {
                        withdraw.line = None;
                        return Err(PeerError::Closed);
                    }
                }
                Ok(None) => return Err(PeerError::Closed),
                Err(_) => {}
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(PeerError::Timeout);
            }
            let _ = tokio::time::timeout_at(deadline.min(tokio::time::Instant::now() + self.answer_poll), woken).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    fn record(owner: &str) -> TaskRecord {
        let now = now_ms();
        TaskRecord {
            owner: owner.into(),
            tool: "t".into(),
            status: TaskStatus::Working,
            message: None,
            created: now,
            updated: now,
            ttl_ms: 60_000,
            poll_ms: 1000,
            lease: now + 60_000,
            keys: Vec::new(),
            asks: Map::new(),
            answers: Map::new(),
            result: None,
            error: None,
        }
    }

    #[tokio::test]
    async fn another_callers_task_is_not_found() {
        let tasks = Tasks::new(SharedStore(Arc::new(MemoryStore::default())));
        let id = Tasks::new_id().unwrap();
        assert_eq!(id.len(), 32);
        tasks.create(&id, &record("alice")).await.unwrap();
        assert!(tasks.get(&id, "alice").await.unwrap().is_some());
        assert!(tasks.get(&id, "mallory").await.unwrap().is_none());
        assert!(tasks.get("nope", "alice").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_task_whose_lease_ran_out_is_failed() {
        let tasks = Tasks::new(SharedStore(Arc::new(MemoryStore::default())));
        let mut r = record("");
        r.lease = now_ms() - 1;
        tasks.create("x", &r).await.unwrap();
        let got = tasks.get("x", "").await.unwrap().unwrap();
        assert_eq!(got.status, TaskStatus::Failed);
        assert!(got.error.unwrap().message.contains("stopped"));
    }

    #[tokio::test]
    async fn a_question_is_answered_through_the_record_and_keys_are_never_reused() {
        let tasks = Tasks::new(SharedStore(Arc::new(MemoryStore::default())));
        tasks.create("q", &record("")).await.unwrap();
        let line = TaskLine {
            tasks: tasks.clone(),
            id: "q".into(),
            answer_poll: Duration::from_millis(20),
        };
        for expected in ["confirm", "confirm-2"] {
            let asking = {
                let line = line.clone();
                tokio::spawn(async move {
                    line.request(
                        "elicitation/create",
                        serde_json::json!({}),
                        "confirm",
                        Duration::from_secs(5),
                    )
                    .await
                })
            };
            let pending = loop {
                let r = tasks.get("q", "").await.unwrap().unwrap();
                if !r.asks.is_empty() {
                    break r;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            };
            assert_eq!(pending.status, TaskStatus::InputRequired);
            assert!(pending.asks.contains_key(expected), "{:?}", pending.asks);
            let mut answers = Map::new();
            answers.insert("unknown".into(), Value::Null);
            answers.insert(expected.into(), serde_json::json!({"action": "accept"}));
            let after = tasks
                .change("q", |r| r.answer(answers.clone(), now_ms()) > 0)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(after.status, TaskStatus::Working);
            assert!(after.asks.is_empty());
            let answer = asking.await.unwrap().unwrap();
            assert_eq!(answer["action"], "accept");
        }
    }

    /// A store whose writes land but, while `lost` is set, report a timeout: a Redis reply
    /// lost after the command ran.
    #[derive(Default)]
    struct RepliesLost {
        inner: MemoryStore,
        lost: std::sync::atomic::AtomicBool,
    }

    impl crate::store::Store for RepliesLost {
        fn insert_new<'a>(
            &'a self,
            key: &'a str,
            value: &'a [u8],
            ttl: Duration,
        ) -> futures_util::future::BoxFuture<'a, Result<bool, crate::store::StoreError>> {
            self.inner.insert_new(key, value, ttl)
        }
        fn get<'a>(
            &'a self,
            key: &'a str,
        ) -> futures_util::future::BoxFuture<'a, Result<Option<Vec<u8>>, crate::store::StoreError>> {
            self.inner.get(key)
        }
        fn replace<'a>(
            &'a self,
            key: &'a str,
            expected: &'a [u8],
            value: &'a [u8],
            ttl: Duration,
        ) -> futures_util::future::BoxFuture<'a, Result<bool, crate::store::StoreError>> {
            Box::pin(async move {
                let done = self.inner.replace(key, expected, value, ttl).await?;
                if self.lost.load(std::sync::atomic::Ordering::SeqCst) {
                    return Err(crate::store::StoreError::new("timed out"));
                }
                Ok(done)
            })
        }
    }

    #[tokio::test]
    async fn an_answer_is_not_lost_when_a_write_lands_but_its_reply_does_not() {
        let store = Arc::new(RepliesLost::default());
        let tasks = Tasks::new(SharedStore(store.clone()));
        tasks.create("q", &record("")).await.unwrap();
        let line = TaskLine {
            tasks: tasks.clone(),
            id: "q".into(),
            answer_poll: Duration::from_millis(20),
        };
        let asking = tokio::spawn(async move {
            line.request("elicitation/create", serde_json::json!({}), "k", Duration::from_secs(2))
                .await
        });
        while tasks.get("q", "").await.unwrap().unwrap().asks.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut answers = Map::new();
        answers.insert("k".into(), serde_json::json!({"action": "accept"}));
        tasks
            .change("q", |r| r.answer(answers.clone(), now_ms()) > 0)
            .await
            .unwrap();
        // From here on every write lands and reports a timeout.
        store.lost.store(true, std::sync::atomic::Ordering::SeqCst);
        let answer = asking.await.unwrap().expect("the answer, not a timeout");
        assert_eq!(answer["action"], "accept");
        // The question and its answer were removed by a write of their own.
        let mut left = tasks.get("q", "").await.unwrap().unwrap();
        for _ in 0..100 {
            if left.answers.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            left = tasks.get("q", "").await.unwrap().unwrap();
        }
        assert!(left.answers.is_empty() && left.asks.is_empty(), "{left:?}");
    }
}
