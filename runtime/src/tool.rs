//! Tools: the trait the `#[tool]` macro implements, tool metadata, argument schemas and extraction.

use crate::app_state::{State, StateNeed};
pub use crate::args::ArgumentError;
use crate::args::extract_argument;
use crate::context::Context;
pub use crate::tool_result::{CallToolResult, Content, EmbeddedResource, IntoToolResult, Json};
use futures_util::future::BoxFuture;
use schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::sync::Arc;

pub use crate::protocol::tasks::TaskSupport;

/// Hints about a tool's behaviour, for clients deciding whether to confirm a call.
///
/// ```
/// use mcp_resolve_runtime::tool::ToolAnnotations;
/// let mut a = ToolAnnotations::default();
/// a.read_only_hint = Some(true);
/// assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::json!({"readOnlyHint": true}));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating the call with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// A tool as `tools/list` shows it. Built once, when the tool is registered.
///
/// ```
/// use mcp_resolve_runtime::tool::{ArgsSchema, ToolDefinition};
/// let mut args = ArgsSchema::new();
/// args.argument::<String>("path", Some("The folder"));
/// let def = ToolDefinition::new("delete_folder", args.finish()).description("Delete a folder");
/// let v = serde_json::to_value(&def).unwrap();
/// assert_eq!(v["inputSchema"]["required"], serde_json::json!(["path"]));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The tool's unique name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does (from the doc comment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema 2020-12 of the arguments; the root is `type: "object"`.
    pub input_schema: Map<String, Value>,
    /// JSON Schema of `structuredContent`, for tools with structured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "ToolAnnotations::is_empty")]
    pub annotations: ToolAnnotations,
    /// The OAuth scopes a caller's token must grant before the tool runs; not sent to clients.
    #[serde(skip)]
    pub scopes: Vec<String>,
    /// A destructive tool's answers may be replayed within their state's life, opting out of
    /// single use (see [`ToolDefinition::replayable`]); not sent to clients.
    #[serde(skip)]
    pub replayable: bool,
    /// Whether the tool runs as a task (`execution.taskSupport`, sent only when it may).
    #[serde(default, skip_serializing_if = "Execution::is_plain")]
    pub execution: Execution,
}

/// How a tool runs: `execution` in `tools/list`.
///
/// ```
/// use mcp_resolve_runtime::tool::{ArgsSchema, TaskSupport, ToolDefinition};
/// let def = ToolDefinition::new("deploy", ArgsSchema::new().finish()).task_support(TaskSupport::Required);
/// let v = serde_json::to_value(&def).unwrap();
/// assert_eq!(v["execution"], serde_json::json!({"taskSupport": "required"}));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Execution {
    /// Whether a call may (or must) run as a task.
    #[serde(default)]
    pub task_support: TaskSupport,
}

impl Execution {
    fn is_plain(&self) -> bool {
        self.task_support == TaskSupport::Forbidden
    }
}

impl ToolDefinition {
    /// A definition with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: Map<String, Value>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: ToolAnnotations::default(),
            scopes: Vec::new(),
            replayable: false,
            execution: Execution::default(),
        }
    }
    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        let d = d.into();
        self.description = (!d.is_empty()).then_some(d);
        self
    }
    /// Sets the title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.title = Some(t.into());
        self
    }
    /// Sets the output schema from a return type.
    pub fn output<R: IntoToolResult>(mut self) -> Self {
        self.output_schema = R::output_schema(&mut schema_generator());
        self
    }
    /// Sets the annotations.
    pub fn annotations(mut self, a: ToolAnnotations) -> Self {
        self.annotations = a;
        self
    }
    /// Requires these OAuth scopes: a caller whose token does not grant every one is refused
    /// before anything runs (HTTP 403 `insufficient_scope`; a JSON-RPC error where there are no
    /// tokens, as on stdio). `#[tool(scopes = [...])]` sets them.
    ///
    /// ```
    /// use mcp_resolve_runtime::tool::{ArgsSchema, ToolDefinition};
    /// let def = ToolDefinition::new("purge", ArgsSchema::new().finish()).scopes(["notes:admin"]);
    /// assert_eq!(def.scopes, ["notes:admin"]);
    /// // Scopes are the server's business: `tools/list` does not show them.
    /// assert!(serde_json::to_value(&def).unwrap().get("scopes").is_none());
    /// ```
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// Lets a destructive tool's answers be replayed within their state's life.
    ///
    /// A tool whose annotations say `destructiveHint: true` and that asks (it has resolvers)
    /// has single-use answers by default: on 2026-07-28 each `requestState` of its calls opens
    /// once, so a captured state and answer cannot be sent again (nor a decline turned into an
    /// accept). This opts out of that default; a resolver marked `#[resolver(once)]` stays
    /// single-use all the same. `#[tool(destructive = true, replayable)]` calls it.
    ///
    /// ```
    /// use mcp_resolve_runtime::tool::{ArgsSchema, ToolDefinition};
    /// let def = ToolDefinition::new("reset", ArgsSchema::new().finish()).replayable();
    /// assert!(def.replayable);
    /// // The server's business: `tools/list` does not show it.
    /// assert!(serde_json::to_value(&def).unwrap().get("replayable").is_none());
    /// ```
    pub fn replayable(mut self) -> Self {
        self.replayable = true;
        self
    }
    /// Lets the tool run as a task: `Optional`, when the client can follow one (it declared the
    /// tasks extension on 2026-07-28, or sent `task` on 2025-11-25); `Required`, always (a
    /// client that cannot gets -32021). `#[tool(task = "optional")]` calls it. See the tasks
    /// guide.
    ///
    /// ```
    /// use mcp_resolve_runtime::tool::{ArgsSchema, TaskSupport, ToolDefinition};
    /// let def = ToolDefinition::new("report", ArgsSchema::new().finish()).task_support(TaskSupport::Optional);
    /// assert_eq!(def.execution.task_support, TaskSupport::Optional);
    /// ```
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.execution.task_support = support;
        self
    }
    /// Whether the answers of a tool with this definition are single-use: a resolver reached is
    /// `#[resolver(once)]` (`any_once`), or the tool is destructive, asks, and is not
    /// [`replayable`](ToolDefinition::replayable).
    pub(crate) fn single_use(&self, any_once: bool, asks: bool) -> bool {
        any_once || (asks && self.annotations.destructive_hint == Some(true) && !self.replayable)
    }
}

/// The schema keyword naming the header an argument is mirrored into.
pub(crate) const MIRROR_KEY: &str = "x-mcp-header";

/// The arguments of an `inputSchema` mirrored into headers: (header name, path of property names
/// from the root), found through `properties` only (what is statically reachable).
pub(crate) fn mirrored_arguments(schema: &Map<String, Value>) -> Vec<(String, Vec<String>)> {
    fn walk(schema: &Map<String, Value>, path: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return;
        };
        for (key, property) in properties {
            let Value::Object(property) = property else { continue };
            path.push(key.clone());
            if let Some(Value::String(header)) = property.get(MIRROR_KEY) {
                out.push((header.clone(), path.clone()));
            }
            // Bounded by the schema the server itself built.
            if path.len() < 8 {
                walk(property, path, out);
            }
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out);
    out
}

/// An argument type that can be mirrored into an HTTP header (`#[arg(header = "…")]`): a
/// string, an integer or a boolean, optional or not.
///
/// ```
/// fn mirrorable<T: mcp_resolve_runtime::tool::HeaderArgument>() {}
/// mirrorable::<String>();
/// mirrorable::<Option<u32>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be mirrored into a header",
    label = "only string, integer and boolean arguments can have `#[arg(header = \"…\")]`",
    note = "remove `header`, or mirror a string, integer or boolean argument instead"
)]
pub trait HeaderArgument {}
impl HeaderArgument for String {}
impl HeaderArgument for bool {}
impl HeaderArgument for i8 {}
impl HeaderArgument for i16 {}
impl HeaderArgument for i32 {}
impl HeaderArgument for i64 {}
impl HeaderArgument for u8 {}
impl HeaderArgument for u16 {}
impl HeaderArgument for u32 {}
impl HeaderArgument for u64 {}
impl<T: HeaderArgument> HeaderArgument for Option<T> {}

pub(crate) fn schema_generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

/// Builds a tool's `inputSchema` from its argument types, once.
///
/// An argument is required unless its type accepts `null` (as `Option<T>` does).
///
/// ```
/// use mcp_resolve_runtime::tool::ArgsSchema;
/// let mut s = ArgsSchema::new();
/// s.argument::<i64>("a", None);
/// s.argument::<Option<String>>("note", Some("optional"));
/// let s = serde_json::Value::Object(s.finish());
/// assert_eq!(s["type"], "object");
/// assert_eq!(s["required"], serde_json::json!(["a"]));
/// assert_eq!(s["properties"]["note"]["description"], "optional");
/// ```
#[derive(Debug)]
pub struct ArgsSchema {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl Default for ArgsSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl ArgsSchema {
    /// An empty schema.
    pub fn new() -> Self {
        Self {
            generator: schema_generator(),
            properties: Map::new(),
            required: Vec::new(),
        }
    }
    /// Adds one argument.
    pub fn argument<T: JsonSchema + DeserializeOwned>(&mut self, name: &str, description: Option<&str>) {
        let schema = self.generator.subschema_for::<T>().to_value();
        let mut schema = match schema {
            Value::Object(m) => m,
            // `true` (anything goes) becomes `{}` so a description can sit beside it.
            _ => Map::new(),
        };
        if let Some(d) = description.filter(|d| !d.is_empty()) {
            schema.insert("description".into(), Value::String(d.into()));
        }
        self.properties.insert(name.into(), Value::Object(schema));
        if serde_json::from_value::<T>(Value::Null).is_err() {
            self.required.push(Value::String(name.into()));
        }
    }
    /// Marks an argument added before as mirrored into the HTTP header `Mcp-Param-{header}`
    /// (`x-mcp-header`, 2026-07-28): intermediaries can route on it, and the server refuses a
    /// request whose header does not match the body (400, -32020). Only string, integer and
    /// boolean arguments can be; never put secrets in headers. `#[arg(header = "…")]` calls it.
    ///
    /// ```
    /// use mcp_resolve_runtime::tool::ArgsSchema;
    /// let mut s = ArgsSchema::new();
    /// s.argument::<String>("region", None);
    /// s.header("region", "Region");
    /// let s = serde_json::Value::Object(s.finish());
    /// assert_eq!(s["properties"]["region"]["x-mcp-header"], "Region");
    /// ```
    pub fn header(&mut self, name: &str, header: &str) {
        if let Some(Value::Object(property)) = self.properties.get_mut(name) {
            property.insert(MIRROR_KEY.into(), Value::String(header.into()));
            // x-mcp-header: "Integer values MUST be within the safe range for JavaScript"; the
            // schema says so (a narrower bound of the type's own is kept), and the server
            // checks it ([`MAX_MIRRORED_INTEGER`]).
            let integer = match property.get("type") {
                Some(Value::String(t)) => t == "integer",
                // `Option<i64>`: `["integer", "null"]`.
                Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
                _ => false,
            };
            if integer {
                let max = MAX_MIRRORED_INTEGER;
                let narrower = |key: &str, keep: fn(i64, i64) -> bool, bound: i64| {
                    property.get(key).and_then(Value::as_i64).filter(|v| keep(*v, bound))
                };
                let minimum = narrower("minimum", |v, b| v >= b, -max).unwrap_or(-max);
                let maximum = narrower("maximum", |v, b| v <= b, max).unwrap_or(max);
                property.insert("minimum".into(), minimum.into());
                property.insert("maximum".into(), maximum.into());
            }
        }
    }
    /// The finished `inputSchema`: its arguments and no others (`additionalProperties: false`),
    /// which the server holds calls to (an argument it does not name is refused before the tool
    /// runs).
    pub fn finish(mut self) -> Map<String, Value> {
        let mut root = Map::new();
        root.insert("type".into(), "object".into());
        if self.properties.is_empty() {
            root.insert("additionalProperties".into(), false.into());
            return root;
        }
        root.insert("properties".into(), Value::Object(self.properties));
        if !self.required.is_empty() {
            root.insert("required".into(), Value::Array(self.required));
        }
        root.insert("additionalProperties".into(), false.into());
        let defs = std::mem::take(self.generator.definitions_mut());
        if !defs.is_empty() {
            root.insert("$defs".into(), Value::Object(defs));
        }
        root
    }
}

/// One call of a tool: its arguments, its resolved values and its context.
///
/// ```
/// use mcp_resolve_runtime::{Context, protocol::ProtocolVersion, tool::ToolCall};
/// let cx = Context::detached(ProtocolVersion::V2025_11_25, Default::default());
/// let call = ToolCall::new(serde_json::Map::new(), cx);
/// assert!(call.arguments.is_empty());
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolCall {
    /// The `arguments` object (empty when the client sent none).
    pub arguments: Map<String, Value>,
    /// The request's context.
    pub context: Context,
    /// The values of the tool's resolved parameters, in the order of [`Tool::resolvers`]; read
    /// by generated code only.
    pub(crate) resolved: Vec<crate::question::Settled>,
}

impl ToolCall {
    /// A call with these arguments and context, and no resolved values.
    pub fn new(arguments: Map<String, Value>, context: Context) -> Self {
        Self {
            arguments,
            context,
            resolved: Vec::new(),
        }
    }
}

/// A tool the server can list and call. `#[tool]` implements it; implement it by hand for tools
/// whose shape is only known at run time.
///
/// ```
/// use mcp_resolve_runtime::tool::{ArgsSchema, CallToolResult, Content, Tool, ToolCall, ToolDefinition};
/// use futures_util::future::BoxFuture;
///
/// struct Echo;
/// impl Tool for Echo {
///     fn definition(&self) -> ToolDefinition {
///         let mut args = ArgsSchema::new();
///         args.argument::<String>("text", None);
///         ToolDefinition::new("echo", args.finish())
///     }
///     fn call(&self, call: ToolCall) -> BoxFuture<'static, CallToolResult> {
///         let text = call.arguments.get("text").and_then(|v| v.as_str()).unwrap_or("").to_owned();
///         Box::pin(async move { CallToolResult::success(vec![Content::text(text)]) })
///     }
/// }
/// # let _ = Echo.definition();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    note = "annotate an `async fn` with `#[tool]`, or implement `Tool` by hand"
)]
pub trait Tool: Send + Sync + 'static {
    /// The tool's metadata; called once, at registration.
    fn definition(&self) -> ToolDefinition;
    /// The parameters filled by resolvers (`#[resolve(fn)]`); none by default.
    #[doc(hidden)]
    fn resolvers(&self) -> &'static [crate::resolve::def::ResolveSlot] {
        &[]
    }
    /// The application state its own parameters take (`State<T>`), `None` for each other one;
    /// its resolvers' are read from them. The server checks it holds each before it serves.
    #[doc(hidden)]
    fn states(&self) -> &'static [Option<crate::app_state::StateNeed>] {
        &[]
    }
    /// Checks the arguments before any resolver runs, so a bad argument is reported before a
    /// question is asked. `Err` is the `isError` result. The default accepts everything.
    fn check_arguments(&self, _arguments: &Map<String, Value>) -> Result<(), CallToolResult> {
        Ok(())
    }
    /// Runs one call.
    fn call(&self, call: ToolCall) -> BoxFuture<'static, CallToolResult>;
}

/// The largest integer a mirrored header may carry, either sign: 2^53 − 1, what JavaScript
/// holds exactly.
pub(crate) const MAX_MIRRORED_INTEGER: i64 = (1 << 53) - 1;

/// The argument names an `inputSchema` allows when it says `additionalProperties: false`: its
/// `properties`' names; `None` when other names are allowed.
pub(crate) fn closed_arguments(schema: &Map<String, Value>) -> Option<Arc<[String]>> {
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return None;
    }
    let names = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect::<Vec<_>>());
    Some(names.unwrap_or_default().into())
}

/// A `#[tool]` function parameter: an argument from the client's `arguments`, or something taken
/// from the request itself (the [`Context`]).
///
/// Any type implementing `serde::Deserialize` and `schemars::JsonSchema` is an argument.
///
/// ```
/// use mcp_resolve_runtime::{Context, tool::{ArgsSchema, ToolParam}};
/// let mut schema = ArgsSchema::new();
/// <u32 as ToolParam>::describe(&mut schema, "count", None);
/// <Context as ToolParam>::describe(&mut schema, "cx", None); // adds nothing
/// let s = serde_json::Value::Object(schema.finish());
/// assert_eq!(s["properties"].as_object().unwrap().len(), 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[tool]` parameter",
    label = "this type has no JSON Schema or cannot be deserialized",
    note = "tool arguments need `serde::Deserialize` and `schemars::JsonSchema` (derive both), or use `Context`"
)]
pub trait ToolParam: Sized + Send + 'static {
    /// Adds the parameter to the tool's `inputSchema` (the context adds nothing).
    fn describe(schema: &mut ArgsSchema, name: &'static str, description: Option<&'static str>);
    /// Extracts the parameter's value for one call.
    fn extract(call: &ToolCall, name: &'static str) -> Result<Self, ArgumentError>;
    /// The application state it is (`State<T>`), which the server checks it holds.
    #[doc(hidden)]
    const STATE: Option<StateNeed> = None;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema + Send + 'static> ToolParam for T {
    fn describe(schema: &mut ArgsSchema, name: &'static str, description: Option<&'static str>) {
        schema.argument::<T>(name, description);
    }
    fn extract(call: &ToolCall, name: &'static str) -> Result<Self, ArgumentError> {
        extract_argument(&call.arguments, name)
    }
}

impl ToolParam for Context {
    fn describe(_: &mut ArgsSchema, _: &'static str, _: Option<&'static str>) {}
    fn extract(call: &ToolCall, _: &'static str) -> Result<Self, ArgumentError> {
        Ok(call.context.clone())
    }
}

/// Application state: not an argument (nothing in the schema), taken from the server.
impl<T: Send + Sync + 'static> ToolParam for State<T> {
    fn describe(_: &mut ArgsSchema, _: &'static str, _: Option<&'static str>) {}
    fn extract(call: &ToolCall, name: &'static str) -> Result<Self, ArgumentError> {
        call.context
            .state::<T>()
            .ok_or_else(|| ArgumentError::missing_state(name, std::any::type_name::<T>()))
    }
    const STATE: Option<StateNeed> = Some(StateNeed::of::<T>());
}

crate::item::into_item!(
    /// What [`Server::tool`](crate::Server::tool) registers: a `#[tool]` function, or a value
    /// implementing [`Tool`].
    ///
    /// ```
    /// use mcp_resolve_runtime::tool::{IntoTool, Tool};
    /// fn registered<A>(tool: impl IntoTool<A>) -> String {
    ///     tool.into_tool().definition().name
    /// }
    /// ```
    IntoTool,
    Tool,
    into_tool,
    "`{Self}` is not a tool",
    "not a `#[tool]` function",
    "annotate an `async fn` with `#[tool]`, or implement `Tool` by hand"
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_arguments_schema_is_closed() {
        let s = Value::Object(ArgsSchema::new().finish());
        assert_eq!(s, json!({"type": "object", "additionalProperties": false}));
    }

    #[test]
    fn vec_and_defs() {
        #[derive(serde::Deserialize, JsonSchema)]
        #[allow(dead_code)]
        struct Point {
            x: i32,
        }
        let mut s = ArgsSchema::new();
        s.argument::<Vec<String>>("tags", None);
        s.argument::<Point>("at", None);
        let s = Value::Object(s.finish());
        assert_eq!(s["properties"]["tags"]["type"], "array");
        assert_eq!(s["properties"]["at"]["$ref"], "#/$defs/Point");
        assert_eq!(s["$defs"]["Point"]["type"], "object");
        assert_eq!(s["required"], json!(["tags", "at"]));
    }
}
