//! The server the official MCP conformance suite scores: every tool, resource, template, prompt
//! and completion its scenarios call, under the names they expect (`docs/CONFORMANCE.md` §4).
//!
//! ```text
//! cargo run --example conformance --all-features -- --http 127.0.0.1:8000   # Streamable HTTP on /mcp
//! scripts/conformance.sh -- target/release/examples/conformance --http '127.0.0.1:{PORT}'
//! ```
//!
//! Questions come from resolvers: forms, samples (`Sample`) and roots (`ListRoots`), asked with an
//! `InputRequiredResult` on 2026-07-28 and on the back-channel on 2025; the prompt
//! `test_input_required_result_prompt` asks too.
//!
//! Fixtures left out:
//!
//! - `test_trigger_tool_change`, `test_trigger_prompt_change`: the lists never change, so no
//!   `listChanged` is declared and those checks are skipped.
//! - Unscored: `test_reconnection` (SSE polling).
//!
//! The tasks extension's fixtures (`greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
//! `confirm_delete`, `multi_input`, `test_tool_with_task`) are here too: its scenarios are not
//! scored by the runner, but `scripts/conformance.sh` requires them.

use base64::Engine as _;
use mcp_resolve::prelude::*;
use serde_json::json;
use std::time::Duration;

/// A 1×1 PNG (one green pixel), as bytes.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00, 0x0c, 0x49,
    0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef,
    0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

fn png_base64() -> String {
    base64::engine::general_purpose::STANDARD.encode(PNG)
}

/// A short WAV file: 8 kHz, 8-bit mono, 100 samples of silence, base64.
fn wav_base64() -> String {
    const SAMPLES: u32 = 100;
    let mut wav = Vec::with_capacity(44 + SAMPLES as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + SAMPLES).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
    wav.extend_from_slice(&8000u32.to_le_bytes()); // byte rate
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&SAMPLES.to_le_bytes());
    wav.resize(44 + SAMPLES as usize, 0x80); // 8-bit silence is the midpoint
    base64::engine::general_purpose::STANDARD.encode(wav)
}

// ---------------------------------------------------------------------------------------------
// Tools: content shapes

/// Closes its own event stream mid-call, then answers: the client gets the result by resuming
/// with `Last-Event-ID` (handshake era over HTTP; `server-sse-polling`, SEP-1699).
#[tool]
async fn test_reconnection(cx: Context) -> String {
    cx.close_stream();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    "Reconnection test completed".into()
}

/// Returns one text item.
#[tool]
async fn test_simple_text() -> String {
    "This is a simple text response for testing.".into()
}

/// Returns one PNG image item.
#[tool]
async fn test_image_content() -> Content {
    Content::image(png_base64(), "image/png")
}

/// Returns one WAV audio item.
#[tool]
async fn test_audio_content() -> Content {
    Content::audio(wav_base64(), "audio/wav")
}

/// Returns one embedded text resource.
#[tool]
async fn test_embedded_resource() -> Content {
    Content::resource_text(
        "test://embedded-resource",
        Some("text/plain".into()),
        "This is an embedded resource content.",
    )
}

/// Returns a text, an image and an embedded resource together.
#[tool]
async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(png_base64(), "image/png"),
        Content::resource_text(
            "test://mixed-content-resource",
            Some("application/json".into()),
            json!({"test": "data", "value": 123}).to_string(),
        ),
    ]
}

/// Always fails, as a tool error (`isError: true`) the model can read.
#[tool]
async fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".into())
}

// ---------------------------------------------------------------------------------------------
// Tools: notifications during a call

/// Reports progress 0, 50 and 100 of 100, about 50 ms apart, when the client gave a token.
#[tool]
async fn test_tool_with_progress(cx: Context) -> String {
    cx.progress(0.0, Some(100.0), None).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.progress(50.0, Some(100.0), None).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.progress(100.0, Some(100.0), None).await;
    "Progress test completed".into()
}

/// Sends three `info` log messages, about 50 ms apart, at the level the client asked for.
#[tool]
async fn test_tool_with_logging(cx: Context) -> String {
    cx.log(LogLevel::Info, "Tool execution started").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.log(LogLevel::Info, "Tool processing data").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    cx.log(LogLevel::Info, "Tool execution completed").await;
    "Logging test completed".into()
}

/// Logs only when the client asked for log messages (2026: `_meta` logLevel), then answers.
#[tool]
async fn test_logging_tool(cx: Context) -> String {
    cx.log(LogLevel::Info, "test_logging_tool ran").await;
    "Logging tool completed".into()
}

/// Needs the client's `sampling` capability: without it the call is JSON-RPC error -32021.
#[tool]
async fn test_missing_capability(cx: Context) -> CallToolResult {
    if cx.client_capabilities().sampling() {
        return CallToolResult::success(vec![Content::text("The client declares sampling.")]);
    }
    CallToolResult::protocol_error(mcp_resolve::protocol::ErrorObject::missing_capability(
        json!({"sampling": {}}),
        "test_missing_capability needs the client's sampling capability",
    ))
}

// ---------------------------------------------------------------------------------------------
// Elicitation (2025: `elicitation/create` mid-call; 2026: InputRequiredResult and a retry)

/// Who the user is, as `test_elicitation` asks.
#[derive(Clone, Debug, FormSchema)]
struct UserInfo {
    #[form(description = "User's response")]
    username: String,
    #[form(description = "User's email address")]
    email: String,
}

/// Asks the client's user the message the caller gave.
#[resolver]
async fn user_info(message: String) -> Elicit<UserInfo> {
    Elicit::form(message)
}

/// Asks the user for a name and an email address, with the caller's message.
#[tool]
async fn test_elicitation(
    /// The message shown to the user.
    message: String,
    #[resolve(user_info)] info: ElicitationResult<UserInfo>,
) -> String {
    let _ = message;
    match info {
        ElicitationResult::Accepted(UserInfo { username, email }) => {
            format!("User response: action=accept, content={{\"username\":{username:?},\"email\":{email:?}}}")
        }
        ElicitationResult::Declined => "User response: action=decline".into(),
        ElicitationResult::Cancelled => "User response: action=cancel".into(),
    }
}

/// A user's status, one of three.
#[derive(Clone, Copy, Debug, FormSchema)]
#[form(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// A form whose every field has a default (SEP-1034).
#[derive(Clone, Debug, FormSchema)]
struct WithDefaults {
    #[form(description = "User name", default = "John Doe")]
    name: String,
    #[form(description = "User age", default = 30)]
    age: i64,
    #[form(description = "User score", default = 95.5)]
    score: f64,
    #[form(description = "User status", default = "active")]
    status: Status,
    #[form(description = "Verification status", default = true)]
    verified: bool,
}

#[resolver]
async fn with_defaults() -> Elicit<WithDefaults> {
    Elicit::form("Please review and update the form fields with defaults")
}

/// Asks a form whose fields all carry defaults.
#[tool]
async fn test_elicitation_sep1034_defaults(#[resolve(with_defaults)] form: ElicitationResult<WithDefaults>) -> String {
    match form {
        ElicitationResult::Accepted(f) => format!(
            "Elicitation completed: action=accept, content={{name: {:?}, age: {}, score: {}, status: {:?}, verified: {}}}",
            f.name, f.age, f.score, f.status, f.verified
        ),
        ElicitationResult::Declined => "Elicitation completed: action=decline".into(),
        ElicitationResult::Cancelled => "Elicitation completed: action=cancel".into(),
    }
}

/// Three choices without titles.
#[derive(Clone, Copy, Debug, FormSchema)]
enum Untitled {
    #[form(rename = "option1")]
    One,
    #[form(rename = "option2")]
    Two,
    #[form(rename = "option3")]
    Three,
}

/// Three titled choices (`oneOf`).
#[derive(Clone, Copy, Debug, FormSchema)]
enum TitledSingle {
    #[form(rename = "value1", title = "First Option")]
    One,
    #[form(rename = "value2", title = "Second Option")]
    Two,
    #[form(rename = "value3", title = "Third Option")]
    Three,
}

/// Three choices in the legacy `enum` + `enumNames` form.
#[derive(Clone, Copy, Debug, FormSchema)]
#[form(enum_names)]
enum Legacy {
    #[form(rename = "opt1", title = "Option One")]
    One,
    #[form(rename = "opt2", title = "Option Two")]
    Two,
    #[form(rename = "opt3", title = "Option Three")]
    Three,
}

/// Three titled choices for a multi-select (`items.anyOf`).
#[derive(Clone, Copy, Debug, FormSchema)]
enum TitledMulti {
    #[form(rename = "value1", title = "First Choice")]
    One,
    #[form(rename = "value2", title = "Second Choice")]
    Two,
    #[form(rename = "value3", title = "Third Choice")]
    Three,
}

/// Every enum shape of SEP-1330.
#[derive(Clone, Debug, FormSchema)]
struct Enums {
    #[form(rename = "untitledSingle", description = "Choose an option")]
    untitled_single: Untitled,
    #[form(rename = "titledSingle", description = "Choose a titled option")]
    titled_single: TitledSingle,
    #[form(rename = "legacyEnum", description = "Choose a legacy option")]
    legacy_enum: Legacy,
    #[form(rename = "untitledMulti", description = "Choose options")]
    untitled_multi: Vec<Untitled>,
    #[form(rename = "titledMulti", description = "Choose titled options")]
    titled_multi: Vec<TitledMulti>,
}

#[resolver]
async fn enums() -> Elicit<Enums> {
    Elicit::form("Please pick from the enum fields")
}

/// Asks a form with every enum shape: untitled, titled, legacy, and both multi-selects.
#[tool]
async fn test_elicitation_sep1330_enums(#[resolve(enums)] form: ElicitationResult<Enums>) -> String {
    match form {
        ElicitationResult::Accepted(f) => format!(
            "Elicitation completed: action=accept, content={{untitledSingle: {:?}, titledSingle: {:?}, legacyEnum: {:?}, untitledMulti: {:?}, titledMulti: {:?}}}",
            f.untitled_single, f.titled_single, f.legacy_enum, f.untitled_multi, f.titled_multi
        ),
        ElicitationResult::Declined => "Elicitation completed: action=decline".into(),
        ElicitationResult::Cancelled => "Elicitation completed: action=cancel".into(),
    }
}

// ---------------------------------------------------------------------------------------------
// 2026 MRTR fixtures (on 2025 the same questions go out as `elicitation/create`)

/// A required name.
#[derive(Clone, Debug, FormSchema)]
struct Name {
    name: String,
}

/// A name the user may leave out (the runner answers some of these with `{}`).
#[derive(Clone, Debug, FormSchema)]
struct MaybeName {
    name: Option<String>,
}

/// A yes/no answer.
#[derive(Clone, Debug, FormSchema)]
struct Confirmation {
    ok: bool,
}

#[resolver(key = "user_name")]
async fn ask_name() -> Elicit<Name> {
    Elicit::form("What is your name?")
}

/// Asks the user's name in an InputRequiredResult, then greets them.
#[tool]
async fn test_input_required_result_elicitation(#[resolve(ask_name)] name: Name) -> String {
    format!("Hello, {}!", name.name)
}

#[resolver(key = "confirm")]
async fn ask_confirm() -> Elicit<Confirmation> {
    Elicit::form("Please confirm")
}

/// Asks for a confirmation; the answer comes back with the sealed `requestState`.
#[tool]
async fn test_input_required_result_request_state(#[resolve(ask_confirm)] answer: Confirmation) -> String {
    format!("state-ok: confirmed={}", answer.ok)
}

/// Asks for a confirmation; a retry whose `requestState` was altered is refused (-32602).
#[tool]
async fn test_input_required_result_tampered_state(#[resolve(ask_confirm)] answer: Confirmation) -> String {
    format!("confirmed={}", answer.ok)
}

#[resolver(key = "step1")]
async fn step1() -> Elicit<MaybeName> {
    Elicit::form("Step 1: What is your name?")
}

/// Step 2's answer.
#[derive(Clone, Debug, FormSchema)]
struct Colour {
    color: String,
}

/// Asked only once step 1 is answered: a second round, with a new `requestState`.
#[resolver(key = "step2")]
async fn step2(#[resolve(step1)] first: MaybeName) -> Elicit<Colour> {
    let _ = first;
    Elicit::form("Step 2: What is your favorite color?")
}

/// Two rounds of questions: a name, then a colour.
#[tool]
async fn test_input_required_result_multi_round(
    #[resolve(step1)] first: MaybeName,
    #[resolve(step2)] second: Colour,
) -> String {
    let name = first.name.unwrap_or_else(|| "stranger".into());
    format!("Hello {name}, your favorite color is {}.", second.color)
}

#[resolver(key = "user_name")]
async fn ask_optional_name() -> Elicit<MaybeName> {
    Elicit::form("What is your name?")
}

#[resolver(key = "greeting")]
async fn sample_greeting() -> Sample {
    Sample::new("Generate a greeting").max_tokens(50)
}

#[resolver(key = "client_roots")]
async fn client_roots() -> ListRoots {
    ListRoots
}

/// Three input requests of three kinds in one round: a name, a sampled greeting, the roots.
#[tool]
async fn test_input_required_result_multiple_inputs(
    #[resolve(ask_optional_name)] name: MaybeName,
    #[resolve(sample_greeting)] greeting: Sampled,
    #[resolve(client_roots)] roots: Vec<Root>,
) -> String {
    format!(
        "Name: {}; Greeting: {}; Roots: {}",
        name.name.as_deref().unwrap_or("(none given)"),
        greeting.text().unwrap_or("(no text)"),
        roots.len()
    )
}

#[resolver(key = "capital_question")]
async fn capital_question() -> Sample {
    Sample::new("What is the capital of France?").max_tokens(100)
}

/// Asks the client's LLM (a `sampling/createMessage` input request) and echoes the answer.
#[tool]
async fn test_input_required_result_sampling(#[resolve(capital_question)] reply: Sampled) -> String {
    format!("Sampled: {}", reply.text().unwrap_or("(no text)"))
}

/// Asks the client for its roots (a `roots/list` input request) and counts them.
#[tool]
async fn test_input_required_result_list_roots(#[resolve(client_roots)] roots: Vec<Root>) -> String {
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    format!("Received {} root(s): {}", roots.len(), uris.join(", "))
}

/// A sample, only when this request's client can sample.
#[resolver(key = "sample_if_able")]
async fn sample_if_able(cx: Context) -> Resolution<Option<String>> {
    if !cx.client_capabilities().sampling() {
        return Resolution::Value(None);
    }
    Ask::from(Sample::new("Say something").max_tokens(50))
        .map(|reply| Some(reply.text().unwrap_or_default().to_owned()))
        .into()
}

/// A name, only when this request's client can show a form.
#[resolver(key = "elicit_if_able")]
async fn elicit_if_able(cx: Context) -> Resolution<Option<String>> {
    if !cx.client_capabilities().elicitation_form() {
        return Resolution::Value(None);
    }
    Ask::from(Elicit::<MaybeName>::form("What is your name?"))
        .map(|n| Some(n.name.unwrap_or_default()))
        .into()
}

/// Asks only what the capabilities of this request's `_meta` allow; with neither sampling nor
/// elicitation it completes at once, saying so.
#[tool]
async fn test_input_required_result_capabilities(
    #[resolve(sample_if_able)] sampled: Option<String>,
    #[resolve(elicit_if_able)] elicited: Option<String>,
) -> String {
    match (sampled, elicited) {
        (None, None) => "No sampling or elicitation capability declared: nothing to ask".into(),
        (s, e) => format!("Sampled: {s:?}; elicited: {e:?}"),
    }
}

/// Asks the client's LLM mid-call (2025: a `sampling/createMessage` request on the back-channel).
#[resolver]
async fn sample_prompt(prompt: String) -> Sample {
    Sample::new(prompt).max_tokens(100)
}

/// Sends the prompt to the client's LLM and returns its reply.
#[tool]
async fn test_sampling(
    /// The prompt to send to the LLM.
    prompt: String,
    #[resolve(sample_prompt)] reply: Sampled,
) -> String {
    format!("LLM response to {prompt:?}: {}", reply.text().unwrap_or("(no text)"))
}

#[resolver(key = "user_input")]
async fn streaming_question() -> Elicit<MaybeName> {
    Elicit::form("What is your name?")
}

/// Asks a question without ever sending a server-to-client request (2026: InputRequiredResult).
#[tool]
async fn test_streaming_elicitation(#[resolve(streaming_question)] name: MaybeName) -> String {
    match name.name {
        Some(n) => format!("Received: {n}"),
        None => "Received an answer without a name".into(),
    }
}

/// Echoes a region that 2026 HTTP clients also mirror into the `Mcp-Param-Region` header
/// (`x-mcp-header`); the server refuses a header that disagrees with the body.
#[tool]
async fn test_custom_header(
    /// Where to run, e.g. `eu-west-1`.
    #[arg(header = "Region")]
    region: String,
) -> String {
    format!("Region: {region}")
}

// ---------------------------------------------------------------------------------------------
// A hand-written input schema (unscored scenario json-schema-2020-12)

/// A tool whose `inputSchema` is JSON Schema 2020-12 written out by hand (`$defs`, `$ref`,
/// `allOf`, `if`/`then`/`else`): `tools/list` must show it unchanged.
struct JsonSchema202012;

impl mcp_resolve::tool::Tool for JsonSchema202012 {
    fn definition(&self) -> mcp_resolve::tool::ToolDefinition {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        });
        let schema = schema.as_object().cloned().unwrap_or_default(); // an object literal: always `Some`
        mcp_resolve::tool::ToolDefinition::new("json_schema_2020_12_tool", schema)
            .description("Takes a contact whose input schema uses JSON Schema 2020-12 keywords.")
    }

    fn call(
        &self,
        call: mcp_resolve::tool::ToolCall,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = CallToolResult> + Send + 'static>> {
        let keys: Vec<String> = call.arguments.keys().cloned().collect();
        Box::pin(async move {
            CallToolResult::success(vec![Content::text(format!("Received the fields: {}", keys.join(", ")))])
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Resources and a template

/// A static text resource.
#[resource(uri = "test://static-text", mime_type = "text/plain", name = "static_text")]
async fn static_text() -> String {
    "This is the content of the static text resource.".into()
}

/// A static binary resource: a 1×1 PNG.
#[resource(uri = "test://static-binary", mime_type = "image/png", name = "static_binary")]
async fn static_binary() -> Blob {
    Blob(PNG.to_vec())
}

/// A resource clients may subscribe to (2025).
#[resource(uri = "test://watched-resource", mime_type = "text/plain", name = "watched_resource")]
async fn watched_resource() -> String {
    "Watched resource content.".into()
}

/// JSON data for any id.
#[resource(
    template = "test://template/{id}/data",
    mime_type = "application/json",
    name = "template_data"
)]
async fn template_data(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

// ---------------------------------------------------------------------------------------------
// Prompts and completion

/// A prompt without arguments.
#[prompt]
async fn test_simple_prompt() -> String {
    "This is a simple prompt for testing.".into()
}

/// Offers the words starting with what was typed.
async fn complete_arg(value: String, _cx: Context) -> Vec<String> {
    ["test", "testValue1", "testing"]
        .iter()
        .filter(|w| w.starts_with(&value))
        .map(|w| w.to_string())
        .collect()
}

/// A prompt with two required arguments.
#[prompt]
async fn test_prompt_with_arguments(
    /// First test argument.
    #[arg(complete = complete_arg)]
    arg1: String,
    /// Second test argument.
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt embedding the resource it is given.
#[prompt]
async fn test_prompt_with_embedded_resource(
    /// The URI of the resource to embed.
    #[arg(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::resource_text(
            resource_uri,
            Some("text/plain".into()),
            "Embedded resource content for testing.",
        )),
        PromptMessage::user(Content::text("Please process the embedded resource above.")),
    ]
}

/// A prompt with an image.
#[prompt]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(png_base64(), "image/png")),
        PromptMessage::user(Content::text("Please analyze the image above.")),
    ]
}

/// The context a prompt should use.
#[derive(Clone, Debug, FormSchema)]
struct PromptContext {
    context: String,
}

#[resolver(key = "user_context")]
async fn user_context() -> Elicit<PromptContext> {
    Elicit::form("What context should the prompt use?")
}

/// A prompt that asks the user first (2026: an InputRequiredResult on `prompts/get`).
#[prompt]
async fn test_input_required_result_prompt(#[resolve(user_context)] given: PromptContext) -> String {
    format!("Use this context: {}", given.context)
}

// ---------------------------------------------------------------------------------------------
// Tools: tasks (the extension `io.modelcontextprotocol/tasks`)

/// Greets `name` at once: never a task.
#[tool]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Works for `seconds` (at most 600), then says what it computed: a task when the client follows
/// tasks, answered at once otherwise.
#[tool(task = "optional")]
async fn slow_compute(seconds: u64, label: Option<String>) -> String {
    tokio::time::sleep(Duration::from_secs(seconds.min(600))).await;
    format!("computed {} after {seconds}s", label.unwrap_or_default())
}

/// Fails after a second, as a tool fails: the task completes with `isError: true`. Only ever a
/// task.
#[tool(task = "required")]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("the job failed".into())
}

/// Breaks after a moment (a panic): the task fails with a JSON-RPC error.
#[tool(task = "optional")]
async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    panic!("protocol_error_job broke, as it is meant to")
}

/// What `confirm_delete` asks.
#[derive(Clone, Debug, FormSchema)]
struct DeleteConfirmation {
    confirm: bool,
}

/// Asks, once the task runs, whether to delete `filename`.
#[tool(task = "optional")]
async fn confirm_delete(filename: String, cx: Context) -> Result<String, String> {
    match cx.elicit::<DeleteConfirmation>(format!("Delete {filename}?")).await {
        Ok(ElicitationResult::Accepted(c)) if c.confirm => Ok(format!("Deleted {filename}")),
        Ok(_) => Ok(format!("Kept {filename}")),
        Err(e) => Err(e.to_string()),
    }
}

/// One of the two answers `multi_input` waits for.
#[derive(Clone, Debug, FormSchema)]
struct NamedConfirmation {
    name: String,
    confirm: bool,
}

/// Asks two questions at once, so two are pending together.
#[tool(task = "optional")]
async fn multi_input(cx: Context) -> Result<String, String> {
    let (a, b) = tokio::join!(
        cx.elicit::<NamedConfirmation>("First name?"),
        cx.elicit::<NamedConfirmation>("Second name?")
    );
    let name = |r: Result<ElicitationResult<NamedConfirmation>, ElicitError>| match r {
        Ok(ElicitationResult::Accepted(n)) if n.confirm => Ok(n.name),
        Ok(_) => Ok("(none)".to_owned()),
        Err(e) => Err(e.to_string()),
    };
    Ok(format!("got {} and {}", name(a)?, name(b)?))
}

/// Asks the user's name before the task exists (an `InputRequiredResult`), then greets them
/// from the task.
#[tool(task = "required")]
async fn test_tool_with_task(#[resolve(ask_name)] name: Name) -> String {
    format!("Hello, {}! (from a task)", name.name)
}

/// The server with every fixture; `test://static-text` is the first resource registered, since
/// the caching check reads the first listed one.
pub(crate) fn server() -> Server {
    Server::new("mcp-resolve-conformance")
        .version(env!("CARGO_PKG_VERSION"))
        // The runner polls every 200 ms whatever it is told; clients that follow the
        // suggestion finish the task fixtures as quickly.
        .task_poll_interval(Duration::from_millis(100))
        .tool(test_simple_text)
        .tool(test_reconnection)
        .tool(test_image_content)
        .tool(test_audio_content)
        .tool(test_embedded_resource)
        .tool(test_multiple_content_types)
        .tool(test_error_handling)
        .tool(test_tool_with_progress)
        .tool(test_tool_with_logging)
        .tool(test_logging_tool)
        .tool(test_missing_capability)
        .tool(test_elicitation)
        .tool(test_elicitation_sep1034_defaults)
        .tool(test_elicitation_sep1330_enums)
        .tool(test_input_required_result_elicitation)
        .tool(test_input_required_result_request_state)
        .tool(test_input_required_result_tampered_state)
        .tool(test_input_required_result_multi_round)
        .tool(test_input_required_result_multiple_inputs)
        .tool(test_input_required_result_sampling)
        .tool(test_input_required_result_list_roots)
        .tool(test_input_required_result_capabilities)
        .tool(test_sampling)
        .tool(test_streaming_elicitation)
        .tool(JsonSchema202012)
        .tool(test_custom_header)
        .tool(greet)
        .tool(slow_compute)
        .tool(failing_job)
        .tool(protocol_error_job)
        .tool(confirm_delete)
        .tool(multi_input)
        .tool(test_tool_with_task)
        .resource(static_text)
        .resource(static_binary)
        .resource(watched_resource)
        .resource(template_data)
        .prompt(test_simple_prompt)
        .prompt(test_prompt_with_arguments)
        .prompt(test_prompt_with_embedded_resource)
        .prompt(test_prompt_with_image)
        .prompt(test_input_required_result_prompt)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let mut server = server();
    // A load run (`mcp-load resume`): every call is one anonymous caller's and asks once, so the
    // per-caller call rate and question limit would stop it; `MCP_RESOLVE_LOAD_QUESTIONS=N` lets
    // N questions a minute through and lifts the call rate.
    if let Some(n) = std::env::var("MCP_RESOLVE_LOAD_QUESTIONS")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        server = server.unlimited_call_rate().question_limit(n, Duration::from_secs(60));
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let http = match args.as_slice() {
        [] => None,
        [flag, addr] if flag == "--http" => match addr.parse::<std::net::SocketAddr>() {
            Ok(a) => Some(a),
            Err(e) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("--http {addr}: {e}"),
                ));
            }
        },
        _ => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "usage: conformance [--http HOST:PORT]",
            ));
        }
    };
    match http {
        Some(addr) => {
            tracing::info!(%addr, "serving Streamable HTTP on /mcp");
            server.serve_http(addr, mcp_resolve::HttpOptions::default()).await
        }
        None => server.serve_stdio().await,
    }
}
