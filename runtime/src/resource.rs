//! Resources: what `#[resource]` implements, what `resources/list` and
//! `resources/templates/list` list, and what `resources/read` returns. The URI templates they
//! match are `uri_template.rs`'s.

use crate::context::Context;
use crate::protocol::ErrorObject;
use crate::protocol::content::EmbeddedResource;
pub use crate::protocol::content::{MAX_URI_BYTES, ResourceContents};
pub use crate::updates::ResourceUpdates;
pub use crate::uri_template::UriTemplate;
use base64::Engine as _;
use futures_util::future::BoxFuture;
use serde::{Serialize, Serializer};
use std::fmt::Display;

/// Binary contents: `resources/read` sends them base64-encoded as `blob`.
///
/// ```
/// use mcp_resolve_runtime::resource::{Blob, IntoResourceContents};
/// let c = Blob(vec![1, 2, 3]).into_contents("test://b", Some("application/octet-stream")).unwrap();
/// assert_eq!(c[0].blob.as_deref(), Some("AQID"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

/// What a `#[resource]` function may return: `String` (text), [`Blob`] (bytes, sent as base64
/// `blob`), [`ResourceContents`], a `Vec` of any of them, or `Result<T, E: Display>` of one of
/// them, whose `Err` answers the request with a JSON-RPC error -32603 carrying `E`'s text. Text and
/// blobs get the URI that was read and the resource's `mime_type`.
///
/// ```
/// use mcp_resolve_runtime::resource::IntoResourceContents;
/// let c = "hi".to_string().into_contents("test://t", Some("text/plain")).unwrap();
/// assert_eq!(c[0].text.as_deref(), Some("hi"));
/// assert_eq!(c[0].mime_type.as_deref(), Some("text/plain"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a `#[resource]`",
    label = "not resource contents",
    note = "return `String`, `Blob`, `ResourceContents`, a `Vec` of them, or a `Result` of one of them whose error implements `Display`"
)]
pub trait IntoResourceContents {
    /// The contents of `uri`, or the JSON-RPC error of the request.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, ErrorObject>;
}

impl IntoResourceContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, ErrorObject> {
        Ok(vec![EmbeddedResource {
            uri: uri.to_owned(),
            mime_type: mime_type.map(str::to_owned),
            text: Some(self),
            blob: None,
        }])
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, ErrorObject> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Blob {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, ErrorObject> {
        Ok(vec![EmbeddedResource {
            uri: uri.to_owned(),
            mime_type: mime_type.map(str::to_owned),
            text: None,
            blob: Some(base64::engine::general_purpose::STANDARD.encode(self.0)),
        }])
    }
}

impl IntoResourceContents for EmbeddedResource {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, ErrorObject> {
        Ok(vec![self])
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Vec<T> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, ErrorObject> {
        let mut all = Vec::new();
        for item in self {
            all.extend(item.into_contents(uri, mime_type)?);
        }
        Ok(all)
    }
}

/// "No such resource", from a resource that reads what its template names: `Err(NotFound)`
/// answers the protocol's not-found error (-32002 on the handshake era, -32602 on 2026-07-28,
/// with `data.uri` on both), as an empty read does, where any other `Err` is an internal error
/// (-32603). Both at once: `Result<Result<T, NotFound>, E>`.
///
/// ```
/// use mcp_resolve_runtime::resource::{IntoResourceContents, NotFound};
/// fn read(name: &str) -> Result<String, NotFound> {
///     if name == "ideas" { Ok("garden.md".into()) } else { Err(NotFound) }
/// }
/// assert!(read("nowhere").into_contents("notes://folder/nowhere", None).unwrap().is_empty());
/// assert_eq!(read("ideas").into_contents("notes://folder/ideas", None).unwrap().len(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotFound;

impl<T: IntoResourceContents> IntoResourceContents for Result<T, NotFound> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, ErrorObject> {
        match self {
            Ok(v) => v.into_contents(uri, mime_type),
            // Nothing: the server answers "not found" as the request's era says.
            Err(NotFound) => Ok(Vec::new()),
        }
    }
}

impl<T: IntoResourceContents, E: Display> IntoResourceContents for Result<T, E> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<ResourceContents>, ErrorObject> {
        match self {
            Ok(v) => v.into_contents(uri, mime_type),
            Err(e) => Err(ErrorObject::internal(e.to_string())),
        }
    }
}

/// Where a resource lives: one URI, or a URI template whose `{var}`s each match one path
/// segment.
///
/// ```
/// use mcp_resolve_runtime::resource::{ResourceDefinition, ResourceUri};
/// let d = ResourceDefinition::new("test://motd", "motd");
/// assert_eq!(d.uri, ResourceUri::Static("test://motd".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceUri {
    /// A static resource, listed by `resources/list`.
    Static(String),
    /// A template, listed by `resources/templates/list`.
    Template(UriTemplate),
}

/// A resource's metadata. It is listed by `resources/list` (a static URI) or
/// `resources/templates/list` (a template); the scopes stay on the server.
///
/// ```
/// use mcp_resolve_runtime::resource::ResourceDefinition;
/// let d = ResourceDefinition::template("test://items/{id}", "item").unwrap().mime_type("application/json");
/// let v = serde_json::to_value(&d).unwrap();
/// assert_eq!(v["uriTemplate"], "test://items/{id}");
/// assert_eq!(v["mimeType"], "application/json");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ResourceDefinition {
    /// The URI or the template.
    pub uri: ResourceUri,
    /// The resource's name.
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What it holds.
    pub description: Option<String>,
    /// Its MIME type.
    pub mime_type: Option<String>,
    /// The scopes a caller's token must grant (checked like a tool's).
    pub scopes: Vec<String>,
    /// The completers of template variables, by variable name (`completion/complete`).
    pub completers: Vec<(String, crate::completion::Completer)>,
}

impl ResourceDefinition {
    /// A static resource.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: ResourceUri::Static(uri.into()),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            scopes: Vec::new(),
            completers: Vec::new(),
        }
    }
    /// Sets the completer `completion/complete` runs for template variable `variable`.
    pub fn complete(mut self, variable: impl Into<String>, c: crate::completion::Completer) -> Self {
        self.completers.push((variable.into(), c));
        self
    }
    /// A template resource, or why `template` is not one (see [`UriTemplate::parse`]).
    pub fn template(template: &str, name: impl Into<String>) -> Result<Self, String> {
        let mut d = Self::new("", name);
        d.uri = ResourceUri::Template(UriTemplate::parse(template)?);
        Ok(d)
    }
    /// Sets the title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.title = Some(t.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, m: impl Into<String>) -> Self {
        self.mime_type = Some(m.into());
        self
    }
    /// The scopes a caller's token must grant.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

impl Serialize for ResourceDefinition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            uri: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            uri_template: Option<&'a str>,
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            description: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            mime_type: Option<&'a str>,
        }
        let (uri, uri_template) = match &self.uri {
            ResourceUri::Static(u) => (Some(u.as_str()), None),
            ResourceUri::Template(t) => (None, Some(t.as_str())),
        };
        Wire {
            uri,
            uri_template,
            name: &self.name,
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            mime_type: self.mime_type.as_deref(),
        }
        .serialize(s)
    }
}

/// One `resources/read`: the URI read, the template's variables (empty for a static resource),
/// and the request's context.
///
/// ```
/// use mcp_resolve_runtime::{Context, protocol::ProtocolVersion, resource::ResourceCall};
/// let cx = Context::detached(ProtocolVersion::V2025_11_25, Default::default());
/// let call = ResourceCall::new("test://items/7", vec![("id".into(), "7".into())], cx);
/// assert_eq!(call.variable("id"), Some("7"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct ResourceCall {
    /// The URI, as the client sent it.
    pub uri: String,
    /// The template's variables, in the template's order (empty for a static resource).
    pub variables: Vec<(String, String)>,
    /// The request's context.
    pub context: Context,
    /// The values of the resource's resolved parameters, in the order of
    /// [`Resource::resolvers`]; read by generated code only.
    pub(crate) resolved: Vec<crate::question::Settled>,
}

impl ResourceCall {
    /// A read of `uri` with these variables.
    pub fn new(uri: impl Into<String>, variables: Vec<(String, String)>, context: Context) -> Self {
        Self {
            uri: uri.into(),
            variables,
            context,
            resolved: Vec::new(),
        }
    }
    /// The value of template variable `name`.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// A resource the server can list and read. `#[resource]` implements it; implement it by hand
/// for resources whose shape is only known at run time.
///
/// ```
/// use mcp_resolve_runtime::{
///     protocol::ErrorObject,
///     resource::{IntoResourceContents, Resource, ResourceCall, ResourceContents, ResourceDefinition},
/// };
/// use futures_util::future::BoxFuture;
///
/// struct Motd;
/// impl Resource for Motd {
///     fn definition(&self) -> ResourceDefinition {
///         ResourceDefinition::new("test://motd", "motd").mime_type("text/plain")
///     }
///     fn read(&self, call: ResourceCall) -> BoxFuture<'static, Result<Vec<ResourceContents>, ErrorObject>> {
///         Box::pin(async move { "Hello".into_contents(&call.uri, Some("text/plain")) })
///     }
/// }
/// # let _ = Motd.definition();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource",
    note = "annotate an `async fn` with `#[resource(uri = \"…\")]` or `#[resource(template = \"…\")]`, or implement `Resource` by hand"
)]
pub trait Resource: Send + Sync + 'static {
    /// The resource's metadata; called once, at registration.
    fn definition(&self) -> ResourceDefinition;
    /// The parameters filled by resolvers (`#[resolve(fn)]`, whose parameters may read the
    /// template's variables); none by default.
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
    /// Reads it.
    fn read(&self, call: ResourceCall) -> BoxFuture<'static, Result<Vec<ResourceContents>, ErrorObject>>;
}

crate::item::into_item!(
    /// What [`Server::resource`](crate::Server::resource) registers: a `#[resource]` function,
    /// or a value implementing [`Resource`].
    ///
    /// ```
    /// use mcp_resolve_runtime::resource::{IntoResource, Resource};
    /// fn registered<A>(resource: impl IntoResource<A>) -> String {
    ///     resource.into_resource().definition().name
    /// }
    /// ```
    IntoResource,
    Resource,
    into_resource,
    "`{Self}` is not a resource",
    "not a `#[resource]` function",
    "annotate an `async fn` with `#[resource(uri = \"…\")]` or `#[resource(template = \"…\")]`, or implement `Resource` by hand"
);
