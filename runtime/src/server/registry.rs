//! What the server keeps of each registered tool, prompt and resource: one [`Item`], built once
//! at registration, whatever its kind. Reading a call, running it (resolvers, then the body under
//! one panic guard) and answering it go through `Item`; only [`Body`] and [`Finished`] know the
//! three kinds apart.

use crate::app_state::StateNeed;
use crate::completion::Completer;
use crate::prompt::{GetPromptResult, Prompt, PromptCall, PromptDefinition};
use crate::protocol::ErrorObject;
use crate::protocol::content::ResourceContents;
use crate::question::Settled;
use crate::resolve::def::{ResolveSlot, ResolverSpec};
use crate::resolve::engine::Keys;
use crate::resource::{Resource, ResourceCall, ResourceDefinition, ResourceUri};
use crate::tool::{Tool, ToolCall, ToolDefinition};
use crate::tool_result::CallToolResult;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A template's variables and their values, in the template's order.
pub(crate) type Variables = Vec<(String, String)>;

/// What an item is: the one place its name in messages and its method live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    /// Its name in messages (`tool`, `prompt`, `resource`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Prompt => "prompt",
            Self::Resource => "resource",
        }
    }

    /// The method that runs it, which sealed state is bound to.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Self::Tool => "tools/call",
            Self::Prompt => "prompts/get",
            Self::Resource => "resources/read",
        }
    }
}

/// The server author's code behind an item, with the definition the server reads at call time.
pub(crate) enum Body {
    Tool(Arc<dyn Tool>),
    /// Its definition: the arguments `prompts/get` checks, the completers.
    Prompt(Arc<dyn Prompt>, PromptDefinition),
    /// Its definition: the URI or template `resources/read` matches, the completers.
    Resource(Arc<dyn Resource>, ResourceDefinition),
}

/// A registered tool, prompt or resource.
pub(crate) struct Item {
    pub(crate) body: Body,
    /// The keys of its resolvers' questions.
    pub(crate) keys: Arc<Keys>,
    /// The scopes a caller needs (from the definition).
    pub(crate) scopes: Arc<[String]>,
    /// Its answers are single-use: a resolver it reaches is `#[resolver(once)]`, or (tools) it
    /// is destructive and asks ([`ToolDefinition::single_use`]).
    pub(crate) single_use: bool,
    /// What the question limit counts: a tool's or prompt's name, a resource's template (its
    /// URI when static), so one caller reading many URIs of a template spends one budget.
    pub(crate) id: Arc<str>,
    /// Tools: arguments mirrored into `Mcp-Param-*` headers (header name, path of property
    /// names); empty for the other kinds.
    pub(crate) mirrored: Arc<[(String, Vec<String>)]>,
    /// Tools: the argument names its `inputSchema` allows, when it allows no others
    /// (`additionalProperties: false`).
    pub(crate) closed_arguments: Option<Arc<[String]>>,
    /// Tools: whether a call may, or must, run as a task (`Forbidden` for the other kinds).
    pub(crate) task: crate::tool::TaskSupport,
    /// Its metric handles, registered at first use (`telemetry`).
    pub(crate) metrics: Arc<crate::telemetry::ItemMetrics>,
}

impl Item {
    /// A tool, and its definition (which the server lists).
    pub(crate) fn tool(tool: impl Tool) -> (Self, ToolDefinition) {
        let def = tool.definition();
        let keys = Keys::of(tool.resolvers());
        let single_use = def.single_use(keys.any_once(), !tool.resolvers().is_empty());
        let item = Self {
            id: def.name.as_str().into(),
            scopes: def.scopes.clone().into(),
            mirrored: crate::tool::mirrored_arguments(&def.input_schema).into(),
            closed_arguments: crate::tool::closed_arguments(&def.input_schema),
            task: def.execution.task_support,
            metrics: Arc::new(crate::telemetry::ItemMetrics::new(&def.name)),
            single_use,
            keys: Arc::new(keys),
            body: Body::Tool(Arc::new(tool)),
        };
        (item, def)
    }

    /// A prompt.
    pub(crate) fn prompt(prompt: impl Prompt) -> Self {
        let definition = prompt.definition();
        let keys = Keys::of(prompt.resolvers());
        Self::new(
            definition.name.clone(),
            definition.scopes.clone().into(),
            keys,
            Body::Prompt(Arc::new(prompt), definition),
        )
    }

    /// A resource, static or template.
    pub(crate) fn resource(resource: impl Resource) -> Self {
        let definition = resource.definition();
        let keys = Keys::of(resource.resolvers());
        let id = match &definition.uri {
            ResourceUri::Static(u) => u.clone(),
            ResourceUri::Template(t) => t.as_str().to_owned(),
        };
        Self::new(
            id,
            definition.scopes.clone().into(),
            keys,
            Body::Resource(Arc::new(resource), definition),
        )
    }

    /// A prompt or resource: single-use when a resolver it reaches is `#[resolver(once)]`.
    fn new(id: String, scopes: Arc<[String]>, keys: Keys, body: Body) -> Self {
        let metrics = Arc::new(crate::telemetry::ItemMetrics::new(&id));
        Self {
            single_use: keys.any_once(),
            keys: Arc::new(keys),
            body,
            scopes,
            id: id.into(),
            mirrored: Arc::from(Vec::new()),
            closed_arguments: None,
            task: crate::tool::TaskSupport::Forbidden,
            metrics,
        }
    }

    pub(crate) fn kind(&self) -> Kind {
        match self.body {
            Body::Tool(_) => Kind::Tool,
            Body::Prompt(..) => Kind::Prompt,
            Body::Resource(..) => Kind::Resource,
        }
    }

    /// Its `#[resolve]` parameters.
    pub(crate) fn resolvers(&self) -> &'static [ResolveSlot] {
        match &self.body {
            Body::Tool(t) => t.resolvers(),
            Body::Prompt(p, _) => p.resolvers(),
            Body::Resource(r, _) => r.resolvers(),
        }
    }

    /// Every application state it takes, with who takes it: its own parameters (`None`), its
    /// completers (`Some("completer")`), and each resolver it reaches, once (its name).
    pub(crate) fn state_needs(&self) -> Vec<(StateNeed, Option<&'static str>)> {
        let own = match &self.body {
            Body::Tool(t) => t.states(),
            Body::Prompt(p, _) => p.states(),
            Body::Resource(r, _) => r.states(),
        };
        let mut needs: Vec<(StateNeed, Option<&'static str>)> = own.iter().flatten().map(|n| (*n, None)).collect();
        let completers: Vec<Completer> = match &self.body {
            Body::Tool(_) => Vec::new(),
            Body::Prompt(_, d) => d.arguments.iter().filter_map(|a| a.completer).collect(),
            Body::Resource(_, d) => d.completers.iter().map(|(_, c)| *c).collect(),
        };
        needs.extend(
            completers
                .iter()
                .filter_map(|c| c.need())
                .map(|n| (n, Some("completer"))),
        );
        let mut seen: Vec<&'static ResolverSpec> = Vec::new();
        let mut stack: Vec<&'static ResolverSpec> = self.resolvers().iter().map(|s| s.resolver).collect();
        while let Some(spec) = stack.pop() {
            if seen.iter().any(|s| s.same(spec)) {
                continue;
            }
            seen.push(spec);
            needs.extend(spec.states.iter().flatten().map(|n| (*n, Some(spec.name))));
            stack.extend(spec.deps.iter().copied());
        }
        needs
    }

    /// The prompt's definition (`None` for another kind).
    pub(crate) fn prompt_definition(&self) -> Option<&PromptDefinition> {
        match &self.body {
            Body::Prompt(_, d) => Some(d),
            _ => None,
        }
    }

    /// The resource's definition (`None` for another kind).
    pub(crate) fn resource_definition(&self) -> Option<&ResourceDefinition> {
        match &self.body {
            Body::Resource(_, d) => Some(d),
            _ => None,
        }
    }

    /// Runs the body with its arguments (a resource: the URI `name` and its template's
    /// variables) and its resolved values.
    pub(crate) fn run(&self, input: Input, resolved: Vec<Settled>) -> Running {
        let Input {
            name,
            arguments,
            variables,
            context,
        } = input;
        match &self.body {
            Body::Tool(tool) => {
                let mut call = ToolCall::new(arguments, context);
                call.resolved = resolved;
                Running::Tool(tool.call(call))
            }
            Body::Prompt(prompt, _) => {
                let mut call = PromptCall::new(arguments, context);
                call.resolved = resolved;
                Running::Prompt(prompt.get(call))
            }
            Body::Resource(resource, _) => {
                let mut call = ResourceCall::new(name, variables, context);
                call.resolved = resolved;
                Running::Resource(resource.read(call))
            }
        }
    }
}

/// What a body is called with.
pub(crate) struct Input {
    /// A resource's URI (empty for a tool or prompt, which their item names).
    pub(crate) name: String,
    pub(crate) arguments: Map<String, Value>,
    /// A resource's template variables (empty for the other kinds).
    pub(crate) variables: Variables,
    pub(crate) context: crate::context::Context,
}

/// A body running: the future its trait method returned, whose output becomes a [`Finished`]
/// (one allocation per call, the body's own, where an `async` wrapper would be a second).
pub(crate) enum Running {
    Tool(BoxFuture<'static, CallToolResult>),
    Prompt(BoxFuture<'static, Result<GetPromptResult, ErrorObject>>),
    Resource(BoxFuture<'static, Result<Vec<ResourceContents>, ErrorObject>>),
}

impl std::future::Future for Running {
    type Output = Result<Finished, ErrorObject>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        match self.get_mut() {
            Self::Tool(body) => body.as_mut().poll(cx).map(|r| Ok(Finished::Tool(r))),
            Self::Prompt(body) => body.as_mut().poll(cx).map(|r| r.map(Finished::Prompt)),
            Self::Resource(body) => body.as_mut().poll(cx).map(|r| r.map(Finished::Resource)),
        }
    }
}

/// What a body returned.
pub(crate) enum Finished {
    Tool(CallToolResult),
    Prompt(GetPromptResult),
    Resource(Vec<ResourceContents>),
}

/// Positions in `items` by name or URI.
type Names = hashbrown::HashMap<String, usize>;

/// Every registered item, found by what a request names: a tool's or prompt's name, a static
/// resource's URI, or the first template (in registration order) that matches a URI.
#[derive(Default)]
pub(crate) struct Registry {
    items: Vec<Arc<Item>>,
    /// Per kind, in registration order: positions in `items`.
    tools: Vec<usize>,
    prompts: Vec<usize>,
    resources: Vec<usize>,
    /// By name, hashed with foldhash (seeded per process, and faster than SipHash for short
    /// names): the keys are the server's own; a client's name is only looked up, never inserted.
    tool_names: Names,
    prompt_names: Names,
    /// Static resources by URI.
    static_uris: Names,
    /// Template resources, matched in registration order.
    templates: Vec<usize>,
}

impl Registry {
    /// Adds `item`; one with the same name, URI or template already registered is refused with
    /// the message the server panics with (a programming error).
    pub(crate) fn add(&mut self, item: Item) -> Result<(), String> {
        let i = self.items.len();
        match &item.body {
            Body::Tool(_) => {
                if self.tool_names.insert(item.id.to_string(), i).is_some() {
                    return Err(format!("a tool named `{}` is already registered", item.id));
                }
                self.tools.push(i);
            }
            Body::Prompt(..) => {
                if self.prompt_names.insert(item.id.to_string(), i).is_some() {
                    return Err(format!("a prompt named `{}` is already registered", item.id));
                }
                self.prompts.push(i);
            }
            Body::Resource(_, definition) => {
                match &definition.uri {
                    ResourceUri::Static(uri) => {
                        if self.static_uris.insert(uri.clone(), i).is_some() {
                            return Err(format!("a resource with the URI `{uri}` is already registered"));
                        }
                    }
                    ResourceUri::Template(t) => {
                        if self.templates.iter().any(|&j| self.items[j].id == item.id) {
                            return Err(format!(
                                "a resource with the URI template `{}` is already registered",
                                t.as_str()
                            ));
                        }
                        self.templates.push(i);
                    }
                }
                self.resources.push(i);
            }
        }
        self.items.push(Arc::new(item));
        Ok(())
    }

    /// The items of `kind`, in registration order.
    pub(crate) fn of(&self, kind: Kind) -> impl Iterator<Item = &Arc<Item>> + Clone {
        let order = match kind {
            Kind::Tool => &self.tools,
            Kind::Prompt => &self.prompts,
            Kind::Resource => &self.resources,
        };
        order.iter().map(|&i| &self.items[i])
    }

    /// The template resources, in registration order.
    pub(crate) fn templates(&self) -> impl Iterator<Item = &Arc<Item>> + Clone {
        self.templates.iter().map(|&i| &self.items[i])
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<Item>> {
        self.tool_names.get(name).map(|&i| &self.items[i])
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<&Arc<Item>> {
        self.prompt_names.get(name).map(|&i| &self.items[i])
    }

    /// The resource `uri` names, and its template's variables: an exact static URI first, then
    /// the templates in registration order.
    pub(crate) fn resource(&self, uri: &str) -> Option<(&Arc<Item>, Variables)> {
        if let Some(&i) = self.static_uris.get(uri) {
            return Some((&self.items[i], Vec::new()));
        }
        self.templates()
            .find_map(|item| match item.resource_definition().map(|d| &d.uri) {
                Some(ResourceUri::Template(t)) => t.matches(uri).map(|vars| (item, vars)),
                _ => None,
            })
    }

    /// The resource whose URI or template is `target` (what `completion/complete` names).
    pub(crate) fn resource_named(&self, target: &str) -> Option<&Arc<Item>> {
        self.of(Kind::Resource).find(|item| *item.id == *target)
    }

    /// The tools' names, for a debug print.
    pub(crate) fn tool_names(&self) -> Vec<&str> {
        self.of(Kind::Tool).map(|t| &*t.id).collect()
    }
}

/// Logs a panic of the server author's code (rate-limited); the client sees only that it failed.
pub(crate) fn panic_text(kind: &'static str, name: &str, payload: &Box<dyn std::any::Any + Send>) {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".into());
    static PANICKED: crate::throttle::Throttle = crate::throttle::Throttle::new();
    if let Some(left_out) = PANICKED.admit() {
        tracing::error!(kind, name, panic = %what, left_out, "server code panicked");
    }
}
