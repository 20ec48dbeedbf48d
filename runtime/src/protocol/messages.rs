//! The typed bodies of the MCP messages this server reads and writes.
//!
//! Inbound: a request's params are read with the message, as raw members ([`ParamsHead`]); each
//! handler turns the members it needs into typed values. Outbound: every result and request body is a struct
//! here, serialized once into an [`Outgoing`](super::jsonrpc::Outgoing) message.

use super::envelope::{ClientCapabilities, Implementation, Meta};
use super::jsonrpc::RequestId;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

// ---------------------------------------------------------------- inbound

/// Every params member any handler reads, as raw text, found in one pass over the params (read in
/// place by [`ParamsInto`]; a member given twice is an error, one nobody reads is skipped).
#[derive(Debug, Default)]
pub(crate) struct ParamsHead<'a> {
    /// `_meta`, kept as its text in the same pass; its members are read when asked for.
    pub(crate) meta: Meta<'a>,
    /// `tools/call`, `prompts/get`.
    pub(crate) name: Option<&'a RawValue>,
    /// `resources/read`.
    pub(crate) uri: Option<&'a RawValue>,
    pub(crate) arguments: Option<&'a RawValue>,
    /// `completion/complete`: what is completed (`ref`), and the argument typed so far.
    pub(crate) reference: Option<&'a RawValue>,
    pub(crate) argument: Option<&'a RawValue>,
    pub(crate) input_responses: Option<&'a RawValue>,
    /// `tasks/get`, `tasks/update`, `tasks/cancel`, `tasks/result`.
    pub(crate) task_id: Option<&'a RawValue>,
    /// 2025-11-25 `tools/call`: run it as a task (with the retention asked for).
    pub(crate) task: Option<&'a RawValue>,
    pub(crate) request_state: Option<&'a RawValue>,
    /// `initialize` (present even as `null`, which is then refused as a version).
    pub(crate) protocol_version: Option<&'a RawValue>,
    pub(crate) capabilities: Option<&'a RawValue>,
    pub(crate) client_info: Option<&'a RawValue>,
    /// `notifications/cancelled`.
    pub(crate) request_id: Option<&'a RawValue>,
    /// `logging/setLevel`.
    pub(crate) level: Option<&'a RawValue>,
    /// `subscriptions/listen`: the filter.
    pub(crate) notifications: Option<&'a RawValue>,
    /// The lists: where the page starts.
    pub(crate) cursor: Option<&'a RawValue>,
    /// `notifications/cancelled`: why.
    pub(crate) reason: Option<&'a RawValue>,
}

super::jsonrpc::member_names! {
    /// The params' members [`ParamsHead`] keeps.
    enum ParamsMember {
        Meta = "_meta",
        Name = "name",
        Uri = "uri",
        Arguments = "arguments",
        Reference = "ref",
        Argument = "argument",
        InputResponses = "inputResponses",
        TaskId = "taskId",
        Task = "task",
        RequestState = "requestState",
        ProtocolVersion = "protocolVersion",
        Capabilities = "capabilities",
        ClientInfo = "clientInfo",
        RequestId = "requestId",
        Level = "level",
        Notifications = "notifications",
        Cursor = "cursor",
        Reason = "reason",
    }
}

/// What a message's `params` was: absent or `null`, an object (its members read in place into a
/// [`ParamsHead`]), or anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum ParamsShape {
    #[default]
    Absent,
    Object,
    Other,
}

/// Visits of values that are not an object (nor `null`): [`ParamsShape::Other`].
macro_rules! other_shapes {
    ($($visit:ident: $ty:ty),*) => {$(
        fn $visit<E: serde::de::Error>(self, _: $ty) -> Result<ParamsShape, E> {
            Ok(ParamsShape::Other)
        }
    )*};
}

/// Reads a message's `params` into its [`ParamsHead`] in place, in the pass over the message.
pub(crate) struct ParamsInto<'x, 'a>(pub(crate) &'x mut ParamsHead<'a>);

impl<'a> serde::de::DeserializeSeed<'a> for ParamsInto<'_, 'a> {
    type Value = ParamsShape;
    fn deserialize<D: serde::Deserializer<'a>>(self, d: D) -> Result<ParamsShape, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'a> serde::de::Visitor<'a> for ParamsInto<'_, 'a> {
    type Value = ParamsShape;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: serde::de::MapAccess<'a>>(self, mut map: A) -> Result<ParamsShape, A::Error> {
        let head = self.0;
        super::jsonrpc::read_members(&mut map, |name, map| {
            match name {
                ParamsMember::Other => {}
                ParamsMember::Meta => head.meta = Meta::of(map.next_value()?),
                // Present even as `null`.
                ParamsMember::ProtocolVersion => head.protocol_version = Some(map.next_value()?),
                ParamsMember::Name => head.name = map.next_value()?,
                ParamsMember::Uri => head.uri = map.next_value()?,
                ParamsMember::Arguments => head.arguments = map.next_value()?,
                ParamsMember::Reference => head.reference = map.next_value()?,
                ParamsMember::Argument => head.argument = map.next_value()?,
                ParamsMember::InputResponses => head.input_responses = map.next_value()?,
                ParamsMember::TaskId => head.task_id = map.next_value()?,
                ParamsMember::Task => head.task = map.next_value()?,
                ParamsMember::RequestState => head.request_state = map.next_value()?,
                ParamsMember::Capabilities => head.capabilities = map.next_value()?,
                ParamsMember::ClientInfo => head.client_info = map.next_value()?,
                ParamsMember::RequestId => head.request_id = map.next_value()?,
                ParamsMember::Level => head.level = map.next_value()?,
                ParamsMember::Notifications => head.notifications = map.next_value()?,
                ParamsMember::Cursor => head.cursor = map.next_value()?,
                ParamsMember::Reason => head.reason = map.next_value()?,
            }
            Ok(())
        })?;
        Ok(ParamsShape::Object)
    }
    fn visit_seq<A: serde::de::SeqAccess<'a>>(self, mut seq: A) -> Result<ParamsShape, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(ParamsShape::Other)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<ParamsShape, E> {
        Ok(ParamsShape::Absent)
    }
    other_shapes!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
}

/// The answer to `elicitation/create`, from the client: `accept` (with content), `decline` or
/// `cancel`. Anything else is malformed.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct ElicitResult {
    pub(crate) action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) content: Option<Value>,
}

impl ElicitResult {
    /// Reads an answer; `None` when it is not an object with a string `action`.
    pub(crate) fn read(answer: &Value) -> Option<Self> {
        Self::deserialize(answer).ok()
    }
}

// ---------------------------------------------------------------- outbound

/// What every 2026-07-28 result adds: its kind and the server's name.
#[derive(Serialize)]
pub(crate) struct Stamped<'a, T> {
    #[serde(flatten)]
    pub(crate) body: T,
    #[serde(rename = "resultType")]
    pub(crate) result_type: &'static str,
    /// [`ResultMeta`], serialized once per server.
    #[serde(rename = "_meta")]
    pub(crate) meta: &'a RawValue,
}

/// The `_meta` of a 2026-07-28 result.
#[derive(Serialize)]
pub(crate) struct ResultMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    pub(crate) server_info: &'a Implementation,
}

/// The server's capabilities, as `initialize` and `server/discover` report them.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ServerCapabilities {
    pub(crate) tools: ListChanged,
    /// `logging/setLevel` and `notifications/message`: the handshake era only (2026-07-28 has
    /// no such capability; a request opts in through `_meta`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) logging: Option<Empty>,
    /// `{}` once a prompt is registered (no `listChanged`: the list never changes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompts: Option<Empty>,
    /// Once a resource is registered: `{subscribe: true}` on the handshake era, `{}` on
    /// 2026-07-28 (which has no `resources/subscribe`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resources: Option<ResourcesCapability>,
    /// `{}` once some prompt argument or template variable has a completer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) completions: Option<Empty>,
    /// 2026-07-28, once some tool may run as a task: `{"io.modelcontextprotocol/tasks": {}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) extensions: Option<Value>,
    /// 2025-11-25, once some tool may run as a task: the core `tasks` capability.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tasks: Option<Value>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct ResourcesCapability {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) subscribe: Option<bool>,
}

/// `{}` as a capability's value.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Empty {}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ListChanged {
    #[serde(rename = "listChanged")]
    pub(crate) list_changed: bool,
}

/// Caching hints on 2026-07-28 list results.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct CacheHints {
    #[serde(rename = "ttlMs")]
    pub(crate) ttl_ms: u64,
    #[serde(rename = "cacheScope")]
    pub(crate) cache_scope: &'static str,
}

#[derive(Serialize)]
pub(crate) struct InitializeResult<'a> {
    #[serde(rename = "protocolVersion")]
    pub(crate) protocol_version: &'static str,
    pub(crate) capabilities: &'a ServerCapabilities,
    #[serde(rename = "serverInfo")]
    pub(crate) server_info: &'a Implementation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<&'a str>,
}

#[derive(Serialize)]
pub(crate) struct DiscoverResult<'a> {
    #[serde(rename = "supportedVersions")]
    pub(crate) supported_versions: &'a [&'static str],
    pub(crate) capabilities: &'a ServerCapabilities,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<&'a str>,
    #[serde(flatten)]
    pub(crate) cache: CacheHints,
}

#[derive(Serialize)]
pub(crate) struct ListToolsResult<'a> {
    /// The definitions, serialized once, at the first listing.
    pub(crate) tools: &'a RawValue,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) cache: Option<CacheHints>,
}

#[derive(Serialize)]
pub(crate) struct ListPromptsResult<'a> {
    /// The definitions, serialized once, at the first listing.
    pub(crate) prompts: &'a RawValue,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) cache: Option<CacheHints>,
}

#[derive(Serialize)]
pub(crate) struct ListResourcesResult<'a> {
    pub(crate) resources: &'a RawValue,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) cache: Option<CacheHints>,
}

#[derive(Serialize)]
pub(crate) struct ListResourceTemplatesResult<'a> {
    #[serde(rename = "resourceTemplates")]
    pub(crate) resource_templates: &'a RawValue,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) cache: Option<CacheHints>,
}

#[derive(Serialize)]
pub(crate) struct ReadResourceResult<'a> {
    pub(crate) contents: &'a [super::content::ResourceContents],
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) cache: Option<CacheHints>,
}

/// `{}`: the result of `ping` and `logging/setLevel`.
#[derive(Debug, Serialize)]
pub(crate) struct EmptyResult {}

/// The 2026-07-28 answer of a call that needs the user first.
#[derive(Debug, Serialize)]
pub(crate) struct InputRequiredResult {
    #[serde(rename = "inputRequests")]
    pub(crate) input_requests: BTreeMap<String, InputRequest>,
    #[serde(rename = "requestState")]
    pub(crate) request_state: String,
}

/// One entry of `inputRequests`: a request the client would otherwise have received.
#[derive(Debug, Serialize)]
pub(crate) struct InputRequest {
    pub(crate) method: &'static str,
    pub(crate) params: InputParams,
}

/// The params of a request the server makes of the client (in `inputRequests` on 2026-07-28, on
/// the back-channel on the handshake era).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum InputParams {
    /// `elicitation/create`, form mode.
    Elicit(ElicitRequestParams),
    /// `elicitation/create`, URL mode.
    ElicitUrl(ElicitUrlParams),
    /// `sampling/createMessage`.
    Sampling(CreateMessageParams),
    /// `roots/list`: `{}`.
    Roots(EmptyResult),
}

/// The params of a URL-mode `elicitation/create`: 2025-11-25 names the elicitation
/// (`elicitationId`); 2026-07-28 has no id (the correlation rides in `requestState`).
#[derive(Debug, Serialize)]
pub(crate) struct ElicitUrlParams {
    pub(crate) mode: &'static str,
    pub(crate) message: String,
    pub(crate) url: String,
    #[serde(rename = "elicitationId", skip_serializing_if = "Option::is_none")]
    pub(crate) elicitation_id: Option<String>,
    /// The question's key (handshake era; see [`QuestionMeta`]).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<QuestionMeta>,
}

/// `_meta` of a handshake-era `elicitation/create`: the question's key, which 2026-07-28 carries
/// as its key in `inputRequests` and the back-channel has no place for. Clients may ignore it;
/// `mcp_resolve::client` reads it into `ElicitationRequest::key`, so tests script answers by key
/// on both eras.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct QuestionMeta {
    #[serde(rename = "mcp-resolve/key")]
    pub(crate) key: String,
}

/// The `_meta` key naming a handshake-era question ([`QuestionMeta`]).
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) const QUESTION_KEY_META: &str = "mcp-resolve/key";

/// The params of `notifications/elicitation/complete` (2025-11-25).
#[derive(Debug, Serialize)]
pub(crate) struct ElicitationCompleteParams<'a> {
    #[serde(rename = "elicitationId")]
    pub(crate) elicitation_id: &'a str,
}

pub(crate) const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";

/// The params of `sampling/createMessage`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct CreateMessageParams {
    pub(crate) messages: Vec<SamplingMessage>,
    #[serde(rename = "maxTokens")]
    pub(crate) max_tokens: u32,
    #[serde(rename = "systemPrompt", skip_serializing_if = "Option::is_none")]
    pub(crate) system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f64>,
    #[serde(rename = "stopSequences", skip_serializing_if = "Vec::is_empty")]
    pub(crate) stop_sequences: Vec<String>,
    #[serde(rename = "modelPreferences", skip_serializing_if = "Option::is_none")]
    pub(crate) model_preferences: Option<ModelPreferences>,
}

/// One message of a sampling request.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SamplingMessage {
    pub(crate) role: super::content::Role,
    pub(crate) content: super::content::Content,
}

/// `modelPreferences` of a sampling request (only the hints are set by this crate).
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct ModelPreferences {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) hints: Vec<ModelHint>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ModelHint {
    pub(crate) name: String,
}

/// The params of `elicitation/create` (form mode).
#[derive(Debug, Serialize)]
pub(crate) struct ElicitRequestParams {
    /// `"form"` from 2025-11-25 on; absent for 2025-06-18 clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mode: Option<&'static str>,
    pub(crate) message: String,
    #[serde(rename = "requestedSchema")]
    pub(crate) requested_schema: Map<String, Value>,
    /// The question's key (handshake era; see [`QuestionMeta`]).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<QuestionMeta>,
}

pub(crate) const ELICITATION_CREATE: &str = "elicitation/create";
pub(crate) const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
pub(crate) const ROOTS_LIST: &str = "roots/list";
pub(crate) const PROGRESS: &str = "notifications/progress";
pub(crate) const CANCELLED: &str = "notifications/cancelled";
pub(crate) const RESOURCES_UPDATED: &str = "notifications/resources/updated";
pub(crate) const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// The filter of `subscriptions/listen` (every member optional), and the subset of it a server
/// honours, as its acknowledgment says. Unknown members are refused, so that a misspelled one
/// is not silently dropped.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ListenFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tools_list_changed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompts_list_changed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) resources_list_changed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) resource_subscriptions: Option<Vec<String>>,
}

/// `_meta` of every message of a listen stream: the id of the request that opened it.
#[derive(Serialize)]
pub(crate) struct SubscriptionMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub(crate) subscription_id: &'a super::RequestId,
}

/// The params of `notifications/subscriptions/acknowledged`.
#[derive(Serialize)]
pub(crate) struct ListenAcknowledged<'a> {
    #[serde(rename = "_meta")]
    pub(crate) meta: &'a SubscriptionMeta<'a>,
    pub(crate) notifications: &'a ListenFilter,
}

/// The response that ends a listen stream gracefully: complete, tagged with the stream's id
/// beside the server's name.
#[derive(Serialize)]
pub(crate) struct ListenEnd<'a> {
    #[serde(rename = "resultType")]
    pub(crate) result_type: &'static str,
    #[serde(rename = "_meta")]
    pub(crate) meta: ListenEndMeta<'a>,
}

/// The `_meta` of [`ListenEnd`].
#[derive(Serialize)]
pub(crate) struct ListenEndMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub(crate) subscription_id: &'a RequestId,
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    pub(crate) server_info: &'a Implementation,
}

/// The params of a `notifications/resources/updated` sent on a listen stream.
#[derive(Serialize)]
pub(crate) struct TaggedUpdateParams<'a> {
    #[serde(rename = "_meta")]
    pub(crate) meta: TaggedMeta<'a>,
    pub(crate) uri: &'a str,
}

/// [`SubscriptionMeta`] with the id as raw JSON (kept so by the registry).
#[derive(Serialize)]
pub(crate) struct TaggedMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub(crate) subscription_id: &'a RawValue,
}

/// The params of `notifications/resources/updated` (handshake era): the URI the client
/// subscribed to.
#[derive(Serialize)]
pub(crate) struct ResourceUpdatedParams<'a> {
    pub(crate) uri: &'a str,
}

/// The params of `notifications/progress`.
#[derive(Serialize)]
pub(crate) struct ProgressParams<'a> {
    #[serde(rename = "progressToken")]
    pub(crate) progress_token: &'a RequestId,
    pub(crate) progress: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<&'a str>,
}

/// What `initialize` said about the client.
#[derive(Debug, Clone)]
pub(crate) struct InitializeParams {
    /// The version the client asked for, when it is one we know.
    pub(crate) version: Option<super::ProtocolVersion>,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<std::sync::Arc<Implementation>>,
}

impl InitializeParams {
    pub(crate) fn read(head: &ParamsHead<'_>) -> Self {
        let version = head
            .protocol_version
            .and_then(super::jsonrpc::raw_str)
            .and_then(|v| super::ProtocolVersion::parse(&v));
        Self {
            version,
            capabilities: head.capabilities.map(ClientCapabilities::from_raw).unwrap_or_default(),
            client_info: head
                .client_info
                .and_then(Implementation::from_raw)
                .map(std::sync::Arc::new),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::jsonrpc::to_raw;

    #[test]
    fn stamped_results_carry_their_kind_and_the_server() {
        let info = Implementation::new("notes", "1.0");
        let tools = to_raw(&serde_json::json!([])).unwrap();
        let body = ListToolsResult {
            tools: &tools,
            cache: Some(CacheHints {
                ttl_ms: 0,
                cache_scope: "public",
            }),
        };
        let v = serde_json::to_value(Stamped {
            body,
            result_type: "complete",
            meta: &to_raw(&ResultMeta { server_info: &info }).unwrap(),
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "tools": [], "ttlMs": 0, "cacheScope": "public", "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "notes", "version": "1.0"}}
            })
        );
    }

    #[test]
    fn params_members_are_found_in_one_pass() {
        let frame = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,2]},"other":{"deep":[{}]},"_meta":{"progressToken":"p"}}}"#;
        let crate::protocol::inbound::Inbound::Request { params: head, .. } = crate::protocol::inbound::classify(frame)
        else {
            panic!("a request")
        };
        assert_eq!(head.name.map(RawValue::get), Some("\"echo\""));
        assert_eq!(head.arguments.map(RawValue::get), Some(r#"{"a":[1,2]}"#));
        assert_eq!(head.meta.progress_token(), Some(RequestId::String("p".into())));
        assert!(!head.meta.has_envelope());
    }
}
