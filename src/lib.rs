//! New here? [Getting started](#getting-started) goes from `cargo new` to a tool that asks the
//! user, tried with the official MCP Python SDK client.
//!
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "macros")]
#[doc(inline)]
pub use mcp_resolve_macros::{FormSchema, prompt, resolver, resource, tool};

// The server, its tools and what they return.
#[doc(inline)]
pub use mcp_resolve_runtime::{
    ArgsSchema, ArgumentError, CacheScope, CallToolResult, Content, Context, EmbeddedResource, HeaderArgument,
    IntoToolResult, Json, LogLevel, Principal, Server, Tool, ToolAnnotations, ToolCall, ToolDefinition, ToolParam,
};
// What the attribute macros turn a function into, and what `Server::tool`, `prompt` and
// `resource` take.
#[doc(inline)]
pub use mcp_resolve_runtime::{BodyFuture, IntoPrompt, IntoResource, IntoTool, MAX_PARAMS, ResolverFn};
// Prompts.
#[doc(inline)]
pub use mcp_resolve_runtime::{
    GetPromptResult, IntoPromptResult, Prompt, PromptArgument, PromptCall, PromptDefinition, PromptMessage, Role,
};
// Completions.
#[doc(inline)]
pub use mcp_resolve_runtime::{Completer, MAX_COMPLETIONS};
// Resources.
#[doc(inline)]
pub use mcp_resolve_runtime::{
    Blob, IntoResourceContents, MAX_URI_BYTES, Resource, ResourceCall, ResourceContents, ResourceDefinition,
    ResourceUpdates, ResourceUri, UriTemplate,
};
// Resolvers and questions.
#[doc(inline)]
pub use mcp_resolve_runtime::{
    Action, Ask, Confirm, DEFAULT_MAX_TOKENS, Elicit, ElicitError, ElicitationResult, IntoResolution, ListRoots,
    Resolution, Root, Sample, Sampled, UrlOutcome,
};
// URL mode: the flows a page reads and completes.
#[doc(inline)]
pub use mcp_resolve_runtime::{FlowError, UrlFlow, UrlFlows};
// The protocol model a tool may look at.
#[doc(inline)]
pub use mcp_resolve_runtime::{
    ClientCapabilities, Era, ErrorObject, Implementation, NumberId, ProtocolVersion, RequestId, codes,
};
// What outlives a request: single-use answers, URL-mode flows.
#[doc(inline)]
pub use mcp_resolve_runtime::{DEFAULT_STORE_ENTRIES, MemoryStore, Store, StoreError};
#[cfg(feature = "redis")]
#[doc(inline)]
pub use mcp_resolve_runtime::{RedisStore, RedisStoreBuilder};
// Sealing of `requestState`.
#[doc(inline)]
pub use mcp_resolve_runtime::{KeyTooShort, RandomUnavailable, StateKeyError, StateKeys};
// Streamable HTTP and its identity layer.
#[cfg(feature = "http")]
#[doc(inline)]
pub use mcp_resolve_runtime::{AuthError, Bytes, HttpOptions, TokenVerifier, auth, http};
#[cfg(feature = "jwt")]
#[doc(inline)]
pub use mcp_resolve_runtime::{Hs256Verifier, JwksVerifier};
// Forms (the traits `#[derive(FormSchema)]` implements) and the in-memory test client.
#[doc(inline)]
pub use mcp_resolve_runtime::{form, testing};

/// Guides longer than an item's documentation; each example runs as a doctest.
pub mod guides {
    /// Forms: every `#[derive(FormSchema)]` / `#[form(...)]` attribute with the
    /// `requestedSchema` it produces, what the compiler refuses, and how answers are checked.
    #[cfg(feature = "macros")]
    #[doc = include_str!("../docs/form.md")]
    pub mod forms {}

    /// Testing tools that ask: calling the function and the resolver directly, then whole calls
    /// through `testing::TestClient` on both eras, with scripted answers per question key.
    #[cfg(feature = "macros")]
    #[doc = include_str!("../docs/testing.md")]
    pub mod testing {}

    /// URL mode: asking the user to open a page of yours, for what must never pass through the
    /// client (secrets, payments, OAuth); the page, the safety rules, advice for client authors,
    /// and when not to elicit at all.
    #[cfg(feature = "http")]
    #[doc = include_str!("../docs/url-mode.md")]
    pub mod url_mode {}
}

/// Support for generated code. Not public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "macros")]
    pub use mcp_resolve_macros::__resolver_visit as resolver_visit;
    pub use mcp_resolve_runtime::__private::*;
}

/// Doors into crate-private code for `benches/micro.rs` (feature `bench`). Not public API.
#[cfg(feature = "bench")]
#[doc(hidden)]
pub use mcp_resolve_runtime::bench;

/// The names most servers need: `use mcp_resolve::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "macros")]
    pub use mcp_resolve_macros::{FormSchema, prompt, resolve, resolver, resource, tool};
    pub use mcp_resolve_runtime::{
        Ask, Blob, CallToolResult, Confirm, Content, Context, Elicit, ElicitationResult, GetPromptResult,
        IntoToolResult, Json, ListRoots, LogLevel, PromptMessage, Resolution, ResourceContents, Role, Root, Sample,
        Sampled, Server,
    };
}
