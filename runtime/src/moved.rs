//! The names the crate root had before its modules: each still compiles at its old path, and
//! warns with its new one where Rust can say so. A type or a constant is a deprecated alias (a
//! unit or tuple struct also keeps its value, a constant or a function of the same name); a
//! trait, and the `codes` module, are re-exported as they were, without a warning, because Rust
//! ignores `#[deprecated]` on a re-export (rust-lang/rust#30827).
#![allow(missing_docs, non_upper_case_globals, non_snake_case)]

// `tool`
#[deprecated(note = "moved to `mcp_resolve::tool::ArgsSchema`")]
pub type ArgsSchema = crate::tool::ArgsSchema;
pub use crate::tool::HeaderArgument;
pub use crate::tool::Tool;
#[deprecated(note = "moved to `mcp_resolve::tool::ToolAnnotations`")]
pub type ToolAnnotations = crate::tool::ToolAnnotations;
#[deprecated(note = "moved to `mcp_resolve::tool::ToolCall`")]
pub type ToolCall = crate::tool::ToolCall;
#[deprecated(note = "moved to `mcp_resolve::tool::ToolDefinition`")]
pub type ToolDefinition = crate::tool::ToolDefinition;
pub use crate::tool::ToolParam;
#[deprecated(note = "moved to `mcp_resolve::tool::CallToolResult`")]
pub type CallToolResult = crate::tool::CallToolResult;
#[deprecated(note = "moved to `mcp_resolve::tool::Content`")]
pub type Content = crate::tool::Content;
#[deprecated(note = "moved to `mcp_resolve::tool::EmbeddedResource`")]
pub type EmbeddedResource = crate::tool::EmbeddedResource;
pub use crate::tool::IntoToolResult;
#[deprecated(note = "moved to `mcp_resolve::tool::Json`")]
pub type Json<T> = crate::tool::Json<T>;
#[deprecated(note = "moved to `mcp_resolve::tool::Json`")]
pub fn Json<T>(value: T) -> crate::tool::Json<T> {
    crate::tool::Json(value)
}
#[deprecated(note = "moved to `mcp_resolve::tool::ArgumentError`")]
pub type ArgumentError = crate::tool::ArgumentError;
pub use crate::tool::IntoTool;

// `prompt`
#[deprecated(note = "moved to `mcp_resolve::prompt::GetPromptResult`")]
pub type GetPromptResult = crate::prompt::GetPromptResult;
pub use crate::prompt::IntoPromptResult;
pub use crate::prompt::Prompt;
#[deprecated(note = "moved to `mcp_resolve::prompt::PromptArgument`")]
pub type PromptArgument = crate::prompt::PromptArgument;
#[deprecated(note = "moved to `mcp_resolve::prompt::PromptCall`")]
pub type PromptCall = crate::prompt::PromptCall;
#[deprecated(note = "moved to `mcp_resolve::prompt::PromptDefinition`")]
pub type PromptDefinition = crate::prompt::PromptDefinition;
#[deprecated(note = "moved to `mcp_resolve::prompt::PromptMessage`")]
pub type PromptMessage = crate::prompt::PromptMessage;
#[deprecated(note = "moved to `mcp_resolve::prompt::Role`")]
pub type Role = crate::prompt::Role;
pub use crate::prompt::IntoPrompt;

// `resource`
#[deprecated(note = "moved to `mcp_resolve::resource::Blob`")]
pub type Blob = crate::resource::Blob;
#[deprecated(note = "moved to `mcp_resolve::resource::Blob`")]
pub fn Blob(value: Vec<u8>) -> crate::resource::Blob {
    crate::resource::Blob(value)
}
pub use crate::resource::IntoResourceContents;
#[deprecated(note = "moved to `mcp_resolve::resource::MAX_URI_BYTES`")]
pub const MAX_URI_BYTES: usize = crate::resource::MAX_URI_BYTES;
pub use crate::resource::Resource;
#[deprecated(note = "moved to `mcp_resolve::resource::ResourceCall`")]
pub type ResourceCall = crate::resource::ResourceCall;
#[deprecated(note = "moved to `mcp_resolve::resource::ResourceContents`")]
pub type ResourceContents = crate::resource::ResourceContents;
#[deprecated(note = "moved to `mcp_resolve::resource::ResourceDefinition`")]
pub type ResourceDefinition = crate::resource::ResourceDefinition;
#[deprecated(note = "moved to `mcp_resolve::resource::ResourceUri`")]
pub type ResourceUri = crate::resource::ResourceUri;
#[deprecated(note = "moved to `mcp_resolve::resource::UriTemplate`")]
pub type UriTemplate = crate::resource::UriTemplate;
#[deprecated(note = "moved to `mcp_resolve::resource::ResourceUpdates`")]
pub type ResourceUpdates = crate::resource::ResourceUpdates;
pub use crate::resource::IntoResource;

// `elicit`
#[deprecated(note = "moved to `mcp_resolve::elicit::Action`")]
pub type Action = crate::elicit::Action;
#[deprecated(note = "moved to `mcp_resolve::elicit::Ask`")]
pub type Ask<T> = crate::elicit::Ask<T>;
#[deprecated(note = "moved to `mcp_resolve::elicit::Confirm`")]
pub type Confirm = crate::elicit::Confirm;
#[deprecated(note = "moved to `mcp_resolve::elicit::ElicitationResult`")]
pub type ElicitationResult<T> = crate::elicit::ElicitationResult<T>;
pub use crate::elicit::IntoResolution;
#[deprecated(note = "moved to `mcp_resolve::elicit::Resolution`")]
pub type Resolution<T> = crate::elicit::Resolution<T>;
pub use crate::elicit::UrlOutcome;

// `context`
#[deprecated(note = "moved to `mcp_resolve::context::ElicitError`")]
pub type ElicitError = crate::context::ElicitError;

// `protocol`
#[deprecated(note = "moved to `mcp_resolve::protocol::ClientCapabilities`")]
pub type ClientCapabilities = crate::protocol::ClientCapabilities;
#[deprecated(note = "moved to `mcp_resolve::protocol::Era`")]
pub type Era = crate::protocol::Era;
#[deprecated(note = "moved to `mcp_resolve::protocol::ErrorObject`")]
pub type ErrorObject = crate::protocol::ErrorObject;
#[deprecated(note = "moved to `mcp_resolve::protocol::Implementation`")]
pub type Implementation = crate::protocol::Implementation;
#[deprecated(note = "moved to `mcp_resolve::protocol::LogLevel`")]
pub type LogLevel = crate::protocol::LogLevel;
#[deprecated(note = "moved to `mcp_resolve::protocol::NumberId`")]
pub type NumberId = crate::protocol::NumberId;
#[deprecated(note = "moved to `mcp_resolve::protocol::ProtocolVersion`")]
pub type ProtocolVersion = crate::protocol::ProtocolVersion;
#[deprecated(note = "moved to `mcp_resolve::protocol::RequestId`")]
pub type RequestId = crate::protocol::RequestId;
pub use crate::protocol::codes;

// `completion`
#[deprecated(note = "moved to `mcp_resolve::completion::Completer`")]
pub type Completer = crate::completion::Completer;
#[deprecated(note = "moved to `mcp_resolve::completion::MAX_COMPLETIONS`")]
pub const MAX_COMPLETIONS: usize = crate::completion::MAX_COMPLETIONS;

// `sampling`
#[deprecated(note = "moved to `mcp_resolve::sampling::DEFAULT_MAX_TOKENS`")]
pub const DEFAULT_MAX_TOKENS: u32 = crate::sampling::DEFAULT_MAX_TOKENS;
#[deprecated(note = "moved to `mcp_resolve::sampling::ListRoots`")]
pub type ListRoots = crate::sampling::ListRoots;
#[deprecated(note = "moved to `mcp_resolve::sampling::ListRoots`")]
pub const ListRoots: crate::sampling::ListRoots = crate::sampling::ListRoots;
#[deprecated(note = "moved to `mcp_resolve::sampling::Root`")]
pub type Root = crate::sampling::Root;
#[deprecated(note = "moved to `mcp_resolve::sampling::Sample`")]
pub type Sample = crate::sampling::Sample;
#[deprecated(note = "moved to `mcp_resolve::sampling::Sampled`")]
pub type Sampled = crate::sampling::Sampled;

// `seal`
#[deprecated(note = "moved to `mcp_resolve::seal::KeyTooShort`")]
pub type KeyTooShort = crate::seal::KeyTooShort;
#[deprecated(note = "moved to `mcp_resolve::seal::KeyTooShort`")]
pub fn KeyTooShort(value: usize) -> crate::seal::KeyTooShort {
    crate::seal::KeyTooShort(value)
}
#[deprecated(note = "moved to `mcp_resolve::seal::RandomUnavailable`")]
pub type RandomUnavailable = crate::seal::RandomUnavailable;
#[deprecated(note = "moved to `mcp_resolve::seal::StateKeyError`")]
pub type StateKeyError = crate::seal::StateKeyError;
#[deprecated(note = "moved to `mcp_resolve::seal::StateKeys`")]
pub type StateKeys = crate::seal::StateKeys;

// `server`
#[deprecated(note = "moved to `mcp_resolve::server::CacheScope`")]
pub type CacheScope = crate::server::CacheScope;

// `store`
#[deprecated(note = "moved to `mcp_resolve::store::DEFAULT_STORE_ENTRIES`")]
pub const DEFAULT_STORE_ENTRIES: usize = crate::store::DEFAULT_STORE_ENTRIES;
#[deprecated(note = "moved to `mcp_resolve::store::MemoryStore`")]
pub type MemoryStore = crate::store::MemoryStore;
pub use crate::store::Store;
#[deprecated(note = "moved to `mcp_resolve::store::StoreError`")]
pub type StoreError = crate::store::StoreError;

// `url_flow`
#[deprecated(note = "moved to `mcp_resolve::url_flow::FlowError`")]
pub type FlowError = crate::url_flow::FlowError;
#[deprecated(note = "moved to `mcp_resolve::url_flow::UrlFlow`")]
pub type UrlFlow = crate::url_flow::UrlFlow;
#[deprecated(note = "moved to `mcp_resolve::url_flow::UrlFlows`")]
pub type UrlFlows = crate::url_flow::UrlFlows;

// `auth`
#[cfg(feature = "http")]
#[deprecated(note = "moved to `mcp_resolve::auth::AuthError`")]
pub type AuthError = crate::auth::AuthError;
#[cfg(feature = "http")]
pub use crate::auth::TokenVerifier;
#[cfg(feature = "http")]
#[cfg(feature = "jwt")]
#[deprecated(note = "moved to `mcp_resolve::auth::Hs256Verifier`")]
pub type Hs256Verifier = crate::auth::Hs256Verifier;
#[cfg(feature = "http")]
#[cfg(feature = "jwt")]
#[deprecated(note = "moved to `mcp_resolve::auth::JwksVerifier`")]
pub type JwksVerifier = crate::auth::JwksVerifier;

// `redis_store`
#[cfg(feature = "redis")]
#[deprecated(note = "moved to `mcp_resolve::redis_store::RedisStore`")]
pub type RedisStore = crate::redis_store::RedisStore;
#[cfg(feature = "redis")]
#[deprecated(note = "moved to `mcp_resolve::redis_store::RedisStoreBuilder`")]
pub type RedisStoreBuilder = crate::redis_store::RedisStoreBuilder;
