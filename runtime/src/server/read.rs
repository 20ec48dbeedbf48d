//! Reading a call's params: the item it names (a tool, prompt or resource, a completion target,
//! a listen filter), its arguments and, on a 2026-07-28 retry, its answers and sealed state, each
//! tree's memory taken from the server's budget first. What comes out is a [`PendingCall`] the
//! dispatcher admits, or the error that is the request's answer.

use super::builder::Server;
use super::call::{PendingCall, Route, Work};
use super::registry::Item;
use crate::budget::{Budget, EXPANSION, Hold, Short, max_tree_cost, tree_cost};
use crate::principal::Principal;
use crate::protocol::ErrorObject;
use crate::protocol::envelope::Envelope;
use crate::protocol::jsonrpc::raw_str;
use crate::protocol::messages::ParamsHead;
use crate::resolve::state::invalid_state;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The members every call kind reads the same way: `arguments`, and on a 2026-07-28 retry
/// `inputResponses` and `requestState`; the trees' memory is taken from the server's budget.
pub(super) struct Common {
    /// 2025-11-25 `tools/call`: `task`, asking for a task (with the retention wanted).
    pub(super) task: Option<Box<crate::protocol::tasks::TaskParam>>,
    pub(super) arguments: Map<String, Value>,
    pub(super) input_responses: Map<String, Value>,
    pub(super) request_state: Option<String>,
    pub(super) memory: Hold,
}

impl Common {
    pub(super) fn read(server: &Server, head: &ParamsHead<'_>) -> Result<Self, ErrorObject> {
        let budget = &server.config.json_memory;
        let mut memory = Hold::default();
        let arguments = object(head.arguments, "arguments", budget, &mut memory)?;
        let input_responses = object(head.input_responses, "inputResponses", budget, &mut memory)?;
        let request_state = match head.request_state {
            None => None,
            Some(r) if r.get() == "null" => None,
            Some(r) => Some(raw_str(r).ok_or_else(invalid_state)?.into_owned()),
        };
        // Only an object asks for a task; anything else is ignored, as an unknown member is.
        let task = head
            .task
            .filter(|t| crate::protocol::jsonrpc::is_object(t))
            .map(|t| Box::new(serde_json::from_str(t.get()).unwrap_or_default()));
        Ok(Self {
            task,
            arguments,
            input_responses,
            request_state,
            memory,
        })
    }
}

/// A required string member of the params (`name`, `uri`), or -32602 naming it.
pub(crate) fn required_str<'a>(
    raw: Option<&'a RawValue>,
    what: &str,
) -> Result<std::borrow::Cow<'a, str>, ErrorObject> {
    match raw {
        None => Err(ErrorObject::invalid_params(format!(
            "Invalid params: `{what}` is required"
        ))),
        Some(raw) => raw_str(raw)
            .ok_or_else(|| ErrorObject::invalid_params(format!("Invalid params: `{what}` must be a string"))),
    }
}

/// An object member: absent or `null` is empty; anything else but an object is `what`'s error.
/// The tree's estimated memory is taken from the server's JSON budget first, and held in `hold`.
fn object(
    raw: Option<&RawValue>,
    what: &str,
    budget: &Budget,
    hold: &mut Hold,
) -> Result<Map<String, Value>, ErrorObject> {
    match raw {
        None => Ok(Map::new()),
        Some(r) if r.get() == "null" => Ok(Map::new()),
        Some(r) if crate::protocol::jsonrpc::is_object(r) => {
            let cost = tree_cost(r.get());
            if cost > max_tree_cost(r.get().len()) {
                return Err(ErrorObject::invalid_params(format!(
                    "Invalid params: `{what}` would take about {} KiB of memory once parsed, more than {EXPANSION} times its {} bytes; send fewer, larger values (e.g. one string instead of many small objects)",
                    cost.div_ceil(1024),
                    r.get().len()
                )));
            }
            budget.grow(hold, cost).map_err(|short| match short {
                Short::TooLarge => ErrorObject::invalid_params(format!(
                    "Invalid params: `{what}` would take about {} KiB of memory once parsed, more than this server's limit of {} KiB",
                    cost.div_ceil(1024),
                    budget.limit() / 1024
                )),
                Short::Busy => ErrorObject::internal(
                    "Server busy: other calls hold the memory for their arguments; retry later",
                ),
            })?;
            serde_json::from_str(r.get())
                .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: `{what}`: {e}")))
        }
        Some(_) => Err(ErrorObject::invalid_params(match what {
            "inputResponses" => "Invalid params: `inputResponses` must be an object keyed like `inputRequests`".into(),
            _ => format!("Invalid params: `{what}` must be an object"),
        })),
    }
}

impl PendingCall {
    /// Reads a `tools/call`'s params: the tool (known, or -32602), its arguments, and on a retry
    /// the answers and the state.
    pub(crate) fn prepare(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Route {
        Self::route(Self::read_tool(server, head, envelope))
    }

    /// A prepared call, or the error that is the request's answer.
    pub(crate) fn route(call: Result<Self, ErrorObject>) -> Route {
        match call {
            Ok(call) => Route::Call(call),
            Err(e) => Route::Reply(Err(e)),
        }
    }

    fn read_tool(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Result<Self, ErrorObject> {
        let name = required_str(head.name, "name")?;
        let Some(item) = server.tool_item(&name) else {
            return Err(ErrorObject::invalid_params(format!("Unknown tool: {name}")).with_data(json!({ "name": name })));
        };
        // Called by the name the tool was found by: its item's own, shared rather than copied.
        Self::of_item(item, Vec::new(), item.id.clone(), envelope, Common::read(server, head)?)
    }

    /// Reads a `prompts/get`'s params: the prompt (known, or -32602), its arguments (strings,
    /// the required ones present, or -32602 naming them).
    pub(crate) fn prepare_prompt(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Route {
        Self::route(Self::read_prompt(server, head, envelope))
    }

    fn read_prompt(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Result<Self, ErrorObject> {
        let name = required_str(head.name, "name")?;
        let Some((item, definition)) = server
            .prompt_item(&name)
            .and_then(|p| Some((p, p.prompt_definition()?)))
        else {
            return Err(
                ErrorObject::invalid_params(format!("Unknown prompt: {name}")).with_data(json!({ "name": name }))
            );
        };
        let common = Common::read(server, head)?;
        crate::prompt::check_arguments(definition, &common.arguments)?;
        Self::of_item(item, Vec::new(), item.id.clone(), envelope, common)
    }

    /// Reads a `resources/read`'s params: the URI (a static resource's, or one a template
    /// matches; else -32602 with the URI in `data`).
    pub(crate) fn prepare_resource(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Route {
        Self::route(Self::read_resource(server, head, envelope))
    }

    fn read_resource(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Result<Self, ErrorObject> {
        let uri = required_str(head.uri, "uri")?;
        let (item, variables) = server.find_resource(&uri, envelope.version.era())?;
        Self::of_item(item, variables, uri.into(), envelope, Common::read(server, head)?)
    }

    /// A call of a tool, prompt or resource named `name` (a resource: by its URI).
    fn of_item(
        item: &Arc<Item>,
        variables: Vec<(String, String)>,
        name: Arc<str>,
        envelope: Envelope,
        common: Common,
    ) -> Result<Self, ErrorObject> {
        let work = Work::Item {
            item: item.clone(),
            variables,
        };
        Ok(Self::new(
            work,
            (item.scopes.clone(), item.single_use),
            name,
            envelope,
            common,
        ))
    }

    /// Reads a task method's params (`taskId`, and for `tasks/update` its `inputResponses`). A
    /// 2026-07-28 client that did not declare the tasks extension is refused first (-32021).
    pub(crate) fn prepare_task(server: &Server, method: &str, head: &ParamsHead<'_>, envelope: Envelope) -> Route {
        if envelope.version.era() == crate::protocol::Era::Stateless && !envelope.capabilities.tasks() {
            use crate::protocol::tasks::TASKS_EXTENSION;
            return Route::Reply(Err(ErrorObject::missing_capability(
                json!({ "extensions": { TASKS_EXTENSION: {} } }),
                format!("`{method}` needs the `{TASKS_EXTENSION}` extension: declare it in the client capabilities"),
            )));
        }
        Self::route((|| {
            let id = match method {
                "tasks/list" => String::new(),
                _ => required_str(head.task_id, "taskId")?.into_owned(),
            };
            let budget = &server.config.json_memory;
            let mut memory = Hold::default();
            let op = match method {
                "tasks/get" => super::task::TaskOp::Get(id.clone()),
                "tasks/cancel" => super::task::TaskOp::Cancel(id.clone()),
                "tasks/result" => super::task::TaskOp::Result(id.clone()),
                "tasks/list" => super::task::TaskOp::List,
                _ => super::task::TaskOp::Update(
                    id.clone(),
                    object(head.input_responses, "inputResponses", budget, &mut memory)?,
                ),
            };
            let common = Common {
                task: None,
                arguments: Map::new(),
                input_responses: Map::new(),
                request_state: None,
                memory,
            };
            Ok(Self::new(
                Work::Task(Box::new(op)),
                (Arc::from([]), false),
                id.into(),
                envelope,
                common,
            ))
        })())
    }

    /// Reads a `completion/complete`'s params: `ref` (a known prompt or resource, or -32602) and
    /// `argument`.
    pub(crate) fn prepare_complete(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Route {
        Self::route(Self::read_complete(server, head, envelope))
    }

    fn read_complete(server: &Server, head: &ParamsHead<'_>, envelope: Envelope) -> Result<Self, ErrorObject> {
        let req = crate::completion::CompleteRequest::read(head.reference, head.argument)?;
        if req.target.len() > crate::resource::MAX_URI_BYTES || req.value.len() > crate::resource::MAX_URI_BYTES {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: `ref` and `argument.value` may hold at most {} bytes",
                crate::resource::MAX_URI_BYTES
            )));
        }
        let (completer, scopes) = server.completer(&req)?;
        let work = Work::Complete {
            completer,
            value: req.value,
        };
        Ok(Self::new(
            work,
            (scopes, false),
            req.target.into(),
            envelope,
            Common::read(server, head)?,
        ))
    }
    /// Reads a `subscriptions/listen` from `principal` (2026-07-28): its filter, within the
    /// bounds, before anything is sent.
    pub(crate) fn prepare_listen(
        server: &Server,
        head: &ParamsHead<'_>,
        envelope: Envelope,
        principal: Option<&Principal>,
    ) -> Route {
        let listen = super::listen::Listen::read(server, head.notifications, principal);
        Self::route(listen.and_then(|listen| {
            Ok(Self::new(
                Work::Listen(Box::new(listen)),
                (Arc::from(Vec::new()), false),
                "subscriptions/listen".into(),
                envelope,
                Common::read(server, head)?,
            ))
        }))
    }

    /// A call of `work`, with the scopes it needs and whether its answers are single-use.
    pub(super) fn new(
        work: Work,
        (scopes, single_use): (Arc<[String]>, bool),
        name: Arc<str>,
        envelope: Envelope,
        common: Common,
    ) -> Self {
        let Common {
            task,
            arguments,
            input_responses,
            request_state,
            memory,
        } = common;
        Self {
            task,
            work,
            scopes,
            single_use,
            name,
            arguments,
            envelope,
            input_responses,
            request_state,
            memory,
        }
    }
}
