//! Code written against the crate root before its names moved into modules still compiles:
//! every old root path, used as a type, a trait bound, a constant or a constructor. (The
//! deprecation warnings it gets are checked in `tests/ui/moved/`.)
#![allow(deprecated, dead_code, clippy::type_complexity)]

struct Types(
    mcp_resolve::ArgsSchema,
    mcp_resolve::ToolAnnotations,
    mcp_resolve::ToolCall,
    mcp_resolve::ToolDefinition,
    mcp_resolve::CallToolResult,
    mcp_resolve::Content,
    mcp_resolve::EmbeddedResource,
    mcp_resolve::Json<u8>,
    mcp_resolve::ArgumentError,
    mcp_resolve::GetPromptResult,
    mcp_resolve::PromptArgument,
    mcp_resolve::PromptCall,
    mcp_resolve::PromptDefinition,
    mcp_resolve::PromptMessage,
    mcp_resolve::Role,
    mcp_resolve::Blob,
    mcp_resolve::ResourceCall,
    mcp_resolve::ResourceContents,
    mcp_resolve::ResourceDefinition,
    mcp_resolve::ResourceUri,
    mcp_resolve::UriTemplate,
    mcp_resolve::ResourceUpdates,
    mcp_resolve::Action,
    mcp_resolve::Ask<u8>,
    mcp_resolve::Confirm,
    mcp_resolve::ElicitationResult<u8>,
    mcp_resolve::Resolution<u8>,
    mcp_resolve::ElicitError,
    mcp_resolve::ClientCapabilities,
    mcp_resolve::Era,
    mcp_resolve::ErrorObject,
    mcp_resolve::Implementation,
    mcp_resolve::LogLevel,
    mcp_resolve::NumberId,
    mcp_resolve::ProtocolVersion,
    mcp_resolve::RequestId,
    mcp_resolve::Completer,
    mcp_resolve::ListRoots,
    mcp_resolve::Root,
    mcp_resolve::Sample,
    mcp_resolve::Sampled,
    mcp_resolve::KeyTooShort,
    mcp_resolve::RandomUnavailable,
    mcp_resolve::StateKeyError,
    mcp_resolve::StateKeys,
    mcp_resolve::CacheScope,
    mcp_resolve::MemoryStore,
    mcp_resolve::StoreError,
    mcp_resolve::FlowError,
    mcp_resolve::UrlFlow,
    mcp_resolve::UrlFlows,
    mcp_resolve::AuthError,
    mcp_resolve::Hs256Verifier,
    mcp_resolve::JwksVerifier,
    mcp_resolve::RedisStore,
    mcp_resolve::RedisStoreBuilder,
);

fn bound_HeaderArgument<T: mcp_resolve::HeaderArgument + ?Sized>() {}
fn bound_Tool<T: mcp_resolve::Tool + ?Sized>() {}
fn bound_ToolParam<T: mcp_resolve::ToolParam + ?Sized>() {}
fn bound_IntoToolResult<T: mcp_resolve::IntoToolResult + ?Sized>() {}
fn bound_IntoTool<T: mcp_resolve::IntoTool<()> + ?Sized>() {}
fn bound_IntoPromptResult<T: mcp_resolve::IntoPromptResult + ?Sized>() {}
fn bound_Prompt<T: mcp_resolve::Prompt + ?Sized>() {}
fn bound_IntoPrompt<T: mcp_resolve::IntoPrompt<()> + ?Sized>() {}
fn bound_IntoResourceContents<T: mcp_resolve::IntoResourceContents + ?Sized>() {}
fn bound_Resource<T: mcp_resolve::Resource + ?Sized>() {}
fn bound_IntoResource<T: mcp_resolve::IntoResource<()> + ?Sized>() {}
fn bound_IntoResolution<T: mcp_resolve::IntoResolution + ?Sized>() {}
fn bound_UrlOutcome<T: mcp_resolve::UrlOutcome + ?Sized>() {}
fn bound_Store<T: mcp_resolve::Store + ?Sized>() {}
fn bound_TokenVerifier<T: mcp_resolve::TokenVerifier + ?Sized>() {}

fn main() {
    let _ = mcp_resolve::MAX_URI_BYTES;
    let _ = mcp_resolve::MAX_COMPLETIONS;
    let _ = mcp_resolve::DEFAULT_MAX_TOKENS;
    let _ = mcp_resolve::DEFAULT_STORE_ENTRIES;
    let _ = mcp_resolve::codes::METHOD_NOT_FOUND;
    let _ = mcp_resolve::Json(1u8);
    let _ = mcp_resolve::Blob(vec![1]);
    let _ = mcp_resolve::KeyTooShort(3);
    let _ = mcp_resolve::ListRoots;
    let _ = mcp_resolve::Action::Accept;
    let _ = mcp_resolve::Confirm { ok: true };
    let _ = mcp_resolve::CallToolResult::error("failed");
}
