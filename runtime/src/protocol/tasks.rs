//! Tasks on the wire: the 2026-07-28 extension `io.modelcontextprotocol/tasks` (SEP-2663:
//! server-directed, `tasks/get` inlines the outcome and lists the questions, `tasks/update`
//! answers them) and the 2025-11-25 core tasks (client-requested through `task`, `tasks/result`
//! and `tasks/list`).

use super::ErrorObject;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The extension's identifier, under `capabilities.extensions` on both sides.
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The 2025-11-25 `_meta` key that ties a message to its task.
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Whether a tool runs as a task (`execution.taskSupport` on 2025-11-25): never (the default),
/// when the client can follow one, or always.
///
/// ```
/// use mcp_resolve_runtime::tool::{TaskSupport, ToolDefinition, ArgsSchema};
/// let d = ToolDefinition::new("deploy", ArgsSchema::new().finish()).task_support(TaskSupport::Optional);
/// assert_eq!(d.execution.task_support, TaskSupport::Optional);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task: the call answers in its response.
    #[default]
    Forbidden,
    /// A task when the client can follow one, else answered in the response.
    Optional,
    /// Always a task: a client that cannot follow one gets -32021 naming the extension.
    Required,
}

impl TaskSupport {
    /// The name on the wire and in `#[tool(task = "…")]`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// A task's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for answers to its questions.
    InputRequired,
    /// Finished with a tool result (also one with `isError: true`).
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Stopped by `tasks/cancel`.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task is over.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// What both eras show of every task.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskHead<'a> {
    pub(crate) task_id: &'a str,
    pub(crate) status: TaskStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status_message: Option<&'a str>,
    pub(crate) created_at: String,
    pub(crate) last_updated_at: String,
}

/// A task as 2026-07-28 shows it: flat, in a `CreateTaskResult` (without the details) and in a
/// `tasks/get` result (with them).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskView<'a> {
    #[serde(flatten)]
    pub(crate) head: TaskHead<'a>,
    pub(crate) ttl_ms: u64,
    pub(crate) poll_interval_ms: u64,
    /// `tasks/get` while `input_required`: every question not answered yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) input_requests: Option<&'a Map<String, Value>>,
    /// `tasks/get` once completed: the tool's result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<&'a RawValue>,
    /// `tasks/get` once failed: the JSON-RPC error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<&'a ErrorObject>,
}

/// A task as 2025-11-25 shows it (`ttl`, `pollInterval`; the outcome comes from `tasks/result`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CoreTask<'a> {
    #[serde(flatten)]
    pub(crate) head: TaskHead<'a>,
    pub(crate) ttl: u64,
    pub(crate) poll_interval: u64,
}

/// The 2025-11-25 `CreateTaskResult`: the task under `task`.
#[derive(Debug, Serialize)]
pub(crate) struct CoreCreateTaskResult<'a> {
    pub(crate) task: CoreTask<'a>,
}

/// The 2025-11-25 `tasks/list` result.
#[derive(Debug, Serialize)]
pub(crate) struct CoreTaskList<'a> {
    pub(crate) tasks: Vec<CoreTask<'a>>,
}

/// The 2025-11-25 `task` parameter of a request: the retention the client asks for.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct TaskParam {
    #[serde(default)]
    pub(crate) ttl: Option<u64>,
}

/// An ISO 8601 / RFC 3339 time (UTC, milliseconds) for `createdAt` and `lastUpdatedAt`.
pub(crate) fn timestamp(unix_ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_ms);
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_and_statuses_snake_case() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp(1_764_028_800_123), "2025-11-25T00:00:00.123Z");
        assert_eq!(
            serde_json::to_string(&TaskStatus::InputRequired).unwrap(),
            r#""input_required""#
        );
        assert!(TaskStatus::Cancelled.is_terminal() && !TaskStatus::Working.is_terminal());
    }
}
