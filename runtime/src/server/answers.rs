//! What the protocol layer reads of a built server: the items a request names, the lists (each
//! caller sees what its scopes allow, serialized once when that is everything), and results
//! stamped for their era and encoded.
use super::builder::Server;
use super::config::CacheScope;
use super::registry::{Item, Kind, Variables};
use crate::principal::Principal;
use crate::protocol::jsonrpc::{Answer, to_body, to_raw};
use crate::protocol::messages::{
    CacheHints, DiscoverResult, Empty, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, ReadResourceResult, ServerCapabilities, Stamped,
};
use crate::protocol::{Era, ErrorObject, ProtocolVersion};
use crate::resource::{MAX_URI_BYTES, ResourceContents, ResourceUri};
use crate::tool_result::CallToolResult;
use serde::Serialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

/// What a list shows `principal`: every item (serialized once, into `all`) when the caller holds
/// the scopes of each; otherwise only the items it may use, serialized for this answer, and
/// `true`: the list is this caller's. An item the caller lacks the scopes for is hidden, as a
/// call of it would be refused.
fn visible<'a, D: Serialize + 'a>(
    all: &'a OnceLock<Result<Box<RawValue>, ErrorObject>>,
    items: impl Iterator<Item = (&'a D, &'a Arc<[String]>)> + Clone,
    principal: Option<&Principal>,
) -> Result<(Cow<'a, RawValue>, bool), ErrorObject> {
    let allowed = |(_, scopes): &(&'a D, &'a Arc<[String]>)| crate::access::allows(scopes, principal);
    if items.clone().all(|item| allowed(&item)) {
        let every = all.get_or_init(|| to_raw(&items.map(|(d, _)| d).collect::<Vec<_>>()));
        return Ok((Cow::Borrowed(every.as_ref().map_err(Clone::clone)?), false));
    }
    let shown: Vec<&D> = items.filter(allowed).map(|(d, _)| d).collect();
    Ok((Cow::Owned(to_raw(&shown)?), true))
}

/// What the protocol layer reads of a built server.
impl Server {
    /// The tool named `name`.
    pub(crate) fn tool_item(&self, name: &str) -> Option<&Arc<Item>> {
        self.registry.tool(name)
    }

    /// Whether any prompt is registered: without one, the prompt methods are unknown (-32601),
    /// as the capability is not declared.
    pub(crate) fn has_prompts(&self) -> bool {
        self.registry.of(Kind::Prompt).next().is_some()
    }

    /// Whether any resource is registered (else the resource methods are unknown, -32601).
    pub(crate) fn has_resources(&self) -> bool {
        self.registry.of(Kind::Resource).next().is_some()
    }

    /// The resource `uri` names, and the template's variables: an exact static URI first, then
    /// the templates in registration order. A URI longer than [`MAX_URI_BYTES`] is -32602; no
    /// resource is [`resource_not_found`] as `era` answers it.
    pub(crate) fn find_resource(&self, uri: &str, era: Era) -> Result<(&Arc<Item>, Variables), ErrorObject> {
        if uri.len() > MAX_URI_BYTES {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: `uri` is longer than {MAX_URI_BYTES} bytes"
            )));
        }
        self.registry.resource(uri).ok_or_else(|| resource_not_found(uri, era))
    }

    /// Whether some argument or template variable has a completer (else `completion/complete`
    /// is unknown, -32601, as the capability is not declared).
    pub(crate) fn has_completions(&self) -> bool {
        self.capabilities.completions.is_some()
    }

    /// What `completion/complete` runs: the completer of the prompt's argument or the template's
    /// variable (`None`: no completer, no values), and the target's scopes. An unknown prompt or
    /// resource is -32602.
    pub(crate) fn completer(
        &self,
        req: &crate::completion::CompleteRequest,
    ) -> Result<(Option<crate::completion::Completer>, Arc<[String]>), ErrorObject> {
        if req.prompt {
            let Some((item, definition)) = self
                .prompt_item(&req.target)
                .and_then(|p| Some((p, p.prompt_definition()?)))
            else {
                return Err(ErrorObject::invalid_params(format!("Unknown prompt: {}", req.target))
                    .with_data(serde_json::json!({ "name": req.target })));
            };
            let c = definition.arguments.iter().find(|a| a.name == req.argument);
            return Ok((c.and_then(|a| a.completer), item.scopes.clone()));
        }
        let found = self.registry.resource_named(&req.target);
        let Some((item, definition)) = found.and_then(|r| Some((r, r.resource_definition()?))) else {
            // An unknown completion target is a parameter error on both eras.
            return Err(resource_not_found(&req.target, Era::Stateless));
        };
        let c = definition.completers.iter().find(|(v, _)| *v == req.argument);
        Ok((c.map(|(_, c)| *c), item.scopes.clone()))
    }

    /// The prompt named `name`.
    pub(crate) fn prompt_item(&self, name: &str) -> Option<&Arc<Item>> {
        self.registry.prompt(name)
    }

    /// What URL-mode questions of a call by `principal` need.
    pub(crate) fn ask_context(
        &self,
        principal: Option<crate::principal::Principal>,
    ) -> crate::resolve::ask::AskContext {
        crate::resolve::ask::AskContext {
            flows: self.url_flows(),
            principal,
            wait: self.config.url_wait,
            limit: self.config.question_limit.clone(),
            anonymous_url_flows: self.config.anonymous_url_flows,
        }
    }

    /// The parts of the server every call's context shares (made once).
    pub(crate) fn call_parts(&self) -> Arc<crate::context::ServerParts> {
        self.call_parts
            .get_or_init(|| {
                Arc::new(crate::context::ServerParts {
                    updates: self.resource_updates(),
                    flows: self.url_flows(),
                    states: self.states.clone(),
                })
            })
            .clone()
    }

    /// What a tool body's questions start from, without a caller (made once): the caller is the
    /// call's context's, taken when the body asks.
    pub(crate) fn ask_base(&self) -> Arc<crate::resolve::ask::AskContext> {
        self.ask_base.get_or_init(|| Arc::new(self.ask_context(None))).clone()
    }

    /// The audience bound into sealed state.
    pub(crate) fn audience(&self) -> &str {
        self.config.audience.as_deref().unwrap_or(&self.info.name)
    }

    /// The caching hints this server gives (`Server::list_cache`).
    fn cache_hints(&self) -> CacheHints {
        CacheHints {
            ttl_ms: self.config.list_ttl_ms,
            cache_scope: self.config.list_cache_scope.as_str(),
        }
    }

    pub(crate) fn list_tools(&self, version: ProtocolVersion, principal: Option<&Principal>) -> Answer {
        let items = self
            .definitions
            .iter()
            .zip(self.registry.of(Kind::Tool).map(|t| &t.scopes));
        let (tools, for_caller) = visible(&self.tools_json, items, principal)?;
        let reply = Reply::of(version);
        let cache = reply.list_hints(self, for_caller);
        reply.complete(self, ListToolsResult { tools: &tools, cache })
    }

    pub(crate) fn list_prompts(&self, version: ProtocolVersion, principal: Option<&Principal>) -> Answer {
        let items = (self.registry.of(Kind::Prompt)).filter_map(|p| Some((p.prompt_definition()?, &p.scopes)));
        let (prompts, for_caller) = visible(&self.prompts_json, items, principal)?;
        let reply = Reply::of(version);
        let cache = reply.list_hints(self, for_caller);
        reply.complete(
            self,
            ListPromptsResult {
                prompts: &prompts,
                cache,
            },
        )
    }

    pub(crate) fn list_resources(&self, version: ProtocolVersion, principal: Option<&Principal>) -> Answer {
        let items = (self.registry.of(Kind::Resource))
            .filter_map(|r| Some((r.resource_definition()?, &r.scopes)))
            .filter(|(d, _)| matches!(d.uri, ResourceUri::Static(_)));
        let (resources, for_caller) = visible(&self.resources_json, items, principal)?;
        let reply = Reply::of(version);
        let cache = reply.list_hints(self, for_caller);
        reply.complete(
            self,
            ListResourcesResult {
                resources: &resources,
                cache,
            },
        )
    }

    pub(crate) fn list_resource_templates(&self, version: ProtocolVersion, principal: Option<&Principal>) -> Answer {
        let items = (self.registry.templates()).filter_map(|r| Some((r.resource_definition()?, &r.scopes)));
        let (resource_templates, for_caller) = visible(&self.templates_json, items, principal)?;
        let reply = Reply::of(version);
        let cache = reply.list_hints(self, for_caller);
        reply.complete(
            self,
            ListResourceTemplatesResult {
                resource_templates: &resource_templates,
                cache,
            },
        )
    }

    pub(crate) fn discover(&self, version: ProtocolVersion) -> Answer {
        Reply::of(version).complete(
            self,
            DiscoverResult {
                supported_versions: crate::protocol::version::SUPPORTED,
                // 2026-07-28 subscribes through `subscriptions/listen`'s `resourceSubscriptions`;
                // any tool may log through its `Context` (`notifications/message` to a request
                // carrying a `logLevel`): "servers that emit log notifications MUST declare".
                capabilities: &ServerCapabilities {
                    tasks: None,
                    ..self.logging_capabilities()
                },
                instructions: self.instructions.as_deref(),
                cache: self.cache_hints(),
            },
        )
    }

    /// The server's capabilities with `logging`: any tool may log through its `Context`, on
    /// either era.
    fn logging_capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            logging: Some(Empty {}),
            ..self.capabilities.clone()
        }
    }

    pub(crate) fn initialize_result(&self, version: ProtocolVersion) -> Answer {
        let capabilities = ServerCapabilities {
            extensions: None,
            // Core tasks are 2025-11-25's.
            tasks: self
                .capabilities
                .tasks
                .clone()
                .filter(|_| version >= ProtocolVersion::V2025_11_25),
            ..self.logging_capabilities()
        };
        to_body(&InitializeResult {
            protocol_version: version.as_str(),
            capabilities: &capabilities,
            server_info: &self.info,
            instructions: self.instructions.as_deref(),
        })
    }
}

/// No resource at `uri`: -32002 on the handshake era (2025-11-25 resources: "Resource not
/// found: -32002"), -32602 on 2026-07-28 (which does not use -32002), `data.uri` on both.
pub(crate) fn resource_not_found(uri: &str, era: Era) -> ErrorObject {
    let code = match era {
        Era::Handshake => crate::protocol::codes::RESOURCE_NOT_FOUND,
        Era::Stateless => crate::protocol::codes::INVALID_PARAMS,
    };
    ErrorObject::new(code, format!("Resource not found: {uri}")).with_data(serde_json::json!({ "uri": uri }))
}

/// How one answer is written for its era, decided once per request (for a call, with its
/// questions' channel: `Channel::reply`): the one place that knows what each era adds to a result.
/// 2026-07-28 stamps `resultType` and the server's `_meta` on every result, gives caching hints
/// (none to a retry: a request carrying `inputResponses` or `requestState`, whose result must
/// not be cached) and never sends -32042; the handshake era writes results as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// 2026-07-28; `retry`: the request carries `inputResponses` or `requestState`.
    Stateless { retry: bool },
    /// 2025-06-18 / 2025-11-25.
    Handshake,
}

impl Reply {
    /// The answer to a request of `version` that is no retry.
    pub(crate) fn of(version: ProtocolVersion) -> Self {
        Self::of_call(version, false)
    }

    /// The answer to a call of `version`; `retry` as for [`Reply::Stateless`].
    pub(crate) fn of_call(version: ProtocolVersion, retry: bool) -> Self {
        match version.era() {
            Era::Stateless => Self::Stateless { retry },
            Era::Handshake => Self::Handshake,
        }
    }

    /// The era this answer is written for.
    pub(crate) fn era(self) -> Era {
        match self {
            Self::Stateless { .. } => Era::Stateless,
            Self::Handshake => Era::Handshake,
        }
    }

    /// `body` as this era sends it: on 2026-07-28 with `resultType` (`kind`) and the server's
    /// name in `_meta`.
    pub(crate) fn result<T: Serialize>(self, server: &Server, body: T, kind: &'static str) -> Answer {
        match self {
            Self::Stateless { .. } => to_body(&Stamped {
                body,
                result_type: kind,
                meta: &server.result_meta,
            }),
            Self::Handshake => to_body(&body),
        }
    }

    /// [`Reply::result`] of a complete result.
    pub(crate) fn complete<T: Serialize>(self, server: &Server, body: T) -> Answer {
        self.result(server, body, "complete")
    }

    /// The caching hints of a list, when this era sends them: `private` when the list was made
    /// for this caller (scoped items hidden), whatever the configured scope.
    fn list_hints(self, server: &Server, for_caller: bool) -> Option<CacheHints> {
        let mut hints = self.hints(server)?;
        if for_caller {
            hints.cache_scope = CacheScope::Private.as_str();
        }
        Some(hints)
    }

    /// The server's caching hints, when this answer carries them (2026-07-28, not a retry).
    fn hints(self, server: &Server) -> Option<CacheHints> {
        matches!(self, Self::Stateless { retry: false }).then(|| server.cache_hints())
    }

    /// A tool's result, or the protocol error it asked for (-32042 only on the handshake era,
    /// where it exists: 2026-07-28 reserves the code, and a tool answering it there is refused).
    pub(crate) fn tool(self, server: &Server, result: CallToolResult) -> Answer {
        match result.protocol_error {
            Some(error)
                if error.code == crate::protocol::codes::URL_ELICITATION_REQUIRED && self.era() == Era::Stateless =>
            {
                tracing::error!("a tool answered -32042 on 2026-07-28, where the code is reserved; refused");
                Err(ErrorObject::internal(
                    "Internal error: the tool needs a URL-mode elicitation, which 2026-07-28 asks from a resolver (Elicit::url), not with -32042",
                ))
            }
            Some(error) => Err(*error),
            None => self.complete(server, &result),
        }
    }

    /// A `resources/read` result of `uri`: never empty (an empty one is "not found"), with the
    /// caching hints when this answer carries them.
    pub(crate) fn read(self, server: &Server, uri: &str, contents: &[ResourceContents]) -> Answer {
        if contents.is_empty() {
            return Err(resource_not_found(uri, self.era()));
        }
        let cache = self.hints(server);
        self.complete(server, ReadResourceResult { contents, cache })
    }
}
