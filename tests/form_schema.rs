//! `#[derive(FormSchema)]` as users write it: rendering of every field shape, and validation of
//! accepted content with the exact error a client would be told.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::form::{FormError, FormSchema as _, RenderOptions};
use mcp_resolve::prelude::*;
use mcp_resolve::protocol::ProtocolVersion;
use mcp_resolve::testing::TestClient;
use serde_json::{Map, Value, json};

fn schema<F: mcp_resolve::form::FormSchema>() -> Value {
    Value::Object(F::requested_schema(RenderOptions::default()))
}

fn content(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn refusal<F: mcp_resolve::form::FormSchema + std::fmt::Debug>(v: Value) -> String {
    F::from_content(&content(v)).unwrap_err().to_string()
}

// ---------------------------------------------------------------- seed 001: Confirm

#[derive(Debug, FormSchema)]
struct Confirm {
    ok: bool,
}

#[test]
fn confirm_renders_exactly() {
    // Exactly these keys and values (serde_json's map orders keys itself, so compare values).
    let expected: Value =
        serde_json::from_str(r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#).unwrap();
    assert_eq!(schema::<Confirm>(), expected);
}

#[test]
fn confirm_validates() {
    assert!(Confirm::from_content(&content(json!({"ok": true}))).unwrap().ok);
    assert_eq!(
        refusal::<Confirm>(json!({"ok": "not-a-bool"})),
        "field `ok`: expected a boolean, got \"not-a-bool\""
    );
    assert_eq!(refusal::<Confirm>(json!({})), "field `ok`: is required");
    assert_eq!(
        Confirm::from_content(&content(json!({}))).unwrap_err(),
        FormError::new("ok", "is required")
    );
}

// ---------------------------------------------------------------- seed 000: deployment

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Environment {
    #[form(title = "Staging")]
    Stg,
    #[form(title = "Production")]
    Prd,
}

/// Confirm the deployment.
#[derive(Clone, Debug, FormSchema)]
#[form(title = "Deployment")]
struct Deployment {
    #[form(title = "Environment", default = "stg", required)]
    environment: Environment,
    #[form(title = "Notify the on-call channel", default = true)]
    notify: bool,
    #[form(format = "date-time", title = "Deploy at")]
    window: Option<String>,
}

#[test]
fn deployment_renders_the_seed_properties() {
    let s = schema::<Deployment>();
    assert_eq!(
        s["properties"],
        json!({
            "environment": {
                "type": "string",
                "title": "Environment",
                "oneOf": [
                    { "const": "stg", "title": "Staging" },
                    { "const": "prd", "title": "Production" }
                ],
                "default": "stg"
            },
            "notify": { "type": "boolean", "title": "Notify the on-call channel", "default": true },
            "window": { "type": "string", "format": "date-time", "title": "Deploy at" }
        })
    );
    // `environment` has a default and is required, as in the seed; `notify` has a default only.
    assert_eq!(s["required"], json!(["environment"]));
    assert!(s.get("title").is_none() && s.get("description").is_none());
}

#[test]
fn deployment_is_the_seed_schema_exactly() {
    // Seed 000's `requestedSchema`, as the article prints it.
    let seed: Value = serde_json::from_str(
        r#"{
          "type": "object",
          "properties": {
            "environment": {
              "type": "string",
              "title": "Environment",
              "oneOf": [
                { "const": "stg", "title": "Staging" },
                { "const": "prd", "title": "Production" }
              ],
              "default": "stg"
            },
            "notify": { "type": "boolean", "title": "Notify the on-call channel", "default": true },
            "window": { "type": "string", "format": "date-time", "title": "Deploy at" }
          },
          "required": ["environment"]
        }"#,
    )
    .unwrap();
    assert_eq!(schema::<Deployment>(), seed);
}

#[test]
fn top_level_title_and_description_only_when_asked() {
    let s = Value::Object(Deployment::requested_schema(
        RenderOptions::default().top_level_title(true),
    ));
    assert_eq!(s["title"], "Deployment");
    assert_eq!(s["description"], "Confirm the deployment.");
}

#[test]
fn deployment_defaults_fill_missing_fields() {
    let d = Deployment::from_content(&content(json!({"environment": "stg", "unknown": 1}))).unwrap();
    assert_eq!(d.environment, Environment::Stg);
    assert!(d.notify);
    assert_eq!(d.window, None);
    let d = Deployment::from_content(&content(json!({
        "environment": "prd", "notify": false, "window": "2026-09-01T10:00:00Z"
    })))
    .unwrap();
    assert_eq!(d.environment, Environment::Prd);
    assert!(!d.notify);
    assert_eq!(d.window.as_deref(), Some("2026-09-01T10:00:00Z"));
    assert_eq!(
        refusal::<Deployment>(json!({"environment": "dev"})),
        "field `environment`: expected one of `stg`, `prd`, got \"dev\""
    );
    assert_eq!(
        refusal::<Deployment>(json!({"environment": "stg", "window": "2026-09-01 10:00"})),
        "field `window`: must be a valid date-time, got \"2026-09-01 10:00\""
    );
}

#[resolver]
async fn ask_deployment() -> Elicit<Deployment> {
    Elicit::form("Confirm the deployment")
}

/// Deploys, after the user confirms where.
#[tool]
async fn deploy(#[resolve(ask_deployment)] d: Deployment) -> String {
    format!("deploying to {:?}, notify {}", d.environment, d.notify)
}

fn deploy_server() -> Server {
    Server::new("deploy")
        .tool(deploy)
        .state_keys(mcp_resolve::seal::StateKeys::new(&[7u8; 32]).unwrap())
}

fn text(frame: &Value) -> &str {
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {frame}"))
}

/// Calls `deploy` on 2026-07-28, answers its question with `content`, and returns the final
/// response and the question asked.
async fn deploy_stateless(content: Value) -> (Value, Value) {
    let mut c = TestClient::stateless(deploy_server(), json!({"elicitation": {"form": {}}}));
    let first = c.call_tool("deploy", json!({})).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let question = first["result"]["inputRequests"]["ask_deployment"].clone();
    let state = first["result"]["requestState"].clone();
    let answer = json!({"ask_deployment": {"action": "accept", "content": content}});
    let r = c
        .request(
            "tools/call",
            json!({"name": "deploy", "arguments": {}, "inputResponses": answer, "requestState": state}),
        )
        .await;
    (r, question)
}

/// The same on the handshake era: the question on the back-channel.
async fn deploy_handshake(content: Value) -> (Value, Value) {
    let mut c = TestClient::handshake(
        deploy_server(),
        ProtocolVersion::V2025_11_25,
        json!({"elicitation": {}}),
    )
    .await;
    let id = c.start("tools/call", json!({"name": "deploy", "arguments": {}})).await;
    let question = c.recv().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    c.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": content}}))
        .await;
    (c.response_to(&json!(id)).await, question)
}

#[tokio::test]
async fn the_server_asks_with_the_default_and_refuses_an_answer_without_the_field() {
    let refused =
        "resolver `ask_deployment` received an answer that does not match its form: field `environment`: is required";
    // 2026-07-28: the question carries both keywords; an accept without the field ends the call.
    let (r, q) = deploy_stateless(json!({"notify": false})).await;
    let schema = &q["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["environment"]["default"], "stg", "{q}");
    assert_eq!(schema["required"], json!(["environment"]), "{q}");
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(text(&r), refused);
    // The pre-filled default, sent back, is an answer like any other.
    let (r, _) = deploy_stateless(json!({"environment": "stg"})).await;
    assert_eq!(text(&r), "deploying to Stg, notify true", "{r}");

    // The handshake era: the same question on the back-channel, the same refusal.
    let (r, q) = deploy_handshake(json!({})).await;
    let schema = &q["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["environment"]["default"], "stg", "{q}");
    assert_eq!(schema["required"], json!(["environment"]), "{q}");
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(text(&r), refused);
    let (r, _) = deploy_handshake(json!({"environment": "prd"})).await;
    assert_eq!(text(&r), "deploying to Prd, notify true", "{r}");
}

#[test]
fn a_required_field_with_a_default_must_be_answered() {
    // The default is what the client pre-fills; the answer must still carry the field, exactly
    // as a required field without a default must.
    assert_eq!(refusal::<Deployment>(json!({})), "field `environment`: is required");
    assert_eq!(
        Deployment::from_content(&content(json!({"notify": false}))).unwrap_err(),
        FormError::new("environment", "is required")
    );
    assert_eq!(refusal::<Confirm>(json!({})), "field `ok`: is required");
    // `null` is not an answer for it either: only an `Option` takes `null`.
    assert_eq!(
        refusal::<Deployment>(json!({"environment": null})),
        "field `environment`: expected one of `stg`, `prd`, got null"
    );
    // The first field in declaration order is reported, as for any other rule.
    assert_eq!(
        refusal::<Deployment>(json!({"window": "2026-09-01 10:00"})),
        "field `environment`: is required"
    );
}

// ---------------------------------------------------------------- every shape of protocol §8

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Color {
    Red,
    Green,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Size {
    #[form(rename = "s", title = "Small")]
    Small,
    #[form(rename = "l", title = "Large")]
    Large,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
#[form(enum_names)]
enum Legacy {
    #[form(title = "Option A")]
    A,
    #[form(title = "Option B")]
    B,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Tag {
    X,
    Y,
    Z,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Flag {
    #[form(title = "First")]
    V1,
    #[form(title = "Second")]
    V2,
}

#[derive(Debug, FormSchema)]
struct AllShapes {
    #[form(
        title = "Name",
        description = "Full name",
        min_length = 1,
        max_length = 40,
        default = "Ada"
    )]
    name: String,
    #[form(format = "email")]
    email: String,
    #[form(format = "uri")]
    homepage: String,
    #[form(format = "date")]
    day: String,
    #[form(format = "date-time")]
    when: String,
    #[form(minimum = 0, maximum = 150, default = 30)]
    age: u8,
    #[form(minimum = 0, maximum = 100, default = 95.5)]
    score: f64,
    #[form(default = true)]
    ok: bool,
    #[form(default = "red")]
    color: Color,
    #[form(default = "s")]
    size: Size,
    legacy: Legacy,
    #[form(min_items = 1, max_items = 2, default = ["x"])]
    tags: Vec<Tag>,
    flags: Vec<Flag>,
}

fn good() -> Value {
    json!({
        "name": "Grace", "email": "g@example.com", "homepage": "https://example.com",
        "day": "2026-09-01", "when": "2026-09-01T10:00:00Z", "age": 40, "score": 99.5,
        "ok": false, "color": "green", "size": "l", "legacy": "b", "tags": ["y", "z"],
        "flags": ["v2"], "extra": {"ignored": true}
    })
}

fn with(key: &str, v: Value) -> Value {
    let mut g = good();
    g[key] = v;
    g
}

fn without(key: &str) -> Value {
    let mut g = good();
    g.as_object_mut().unwrap().remove(key);
    g
}

#[test]
fn every_shape_renders_as_the_protocol_shows_it() {
    let s = schema::<AllShapes>();
    assert_eq!(
        s["properties"],
        json!({
            "name":     { "type": "string", "title": "Name", "description": "Full name", "minLength": 1, "maxLength": 40, "default": "Ada" },
            "email":    { "type": "string", "format": "email" },
            "homepage": { "type": "string", "format": "uri" },
            "day":      { "type": "string", "format": "date" },
            "when":     { "type": "string", "format": "date-time" },
            "age":      { "type": "integer", "minimum": 0, "maximum": 150, "default": 30 },
            "score":    { "type": "number", "minimum": 0, "maximum": 100, "default": 95.5 },
            "ok":       { "type": "boolean", "default": true },
            "color":    { "type": "string", "enum": ["red", "green"], "default": "red" },
            "size":     { "type": "string", "oneOf": [ { "const": "s", "title": "Small" }, { "const": "l", "title": "Large" } ], "default": "s" },
            "legacy":   { "type": "string", "enum": ["a", "b"], "enumNames": ["Option A", "Option B"] },
            "tags":     { "type": "array", "minItems": 1, "maxItems": 2, "items": { "type": "string", "enum": ["x", "y", "z"] }, "default": ["x"] },
            "flags":    { "type": "array", "items": { "anyOf": [ { "const": "v1", "title": "First" }, { "const": "v2", "title": "Second" } ] } }
        })
    );
    // Declaration order; fields with a default are optional.
    assert_eq!(
        s["required"],
        json!(["email", "homepage", "day", "when", "legacy", "flags"])
    );
}

#[test]
fn good_content_is_accepted() {
    let a = AllShapes::from_content(&content(good())).unwrap();
    assert_eq!(a.name, "Grace");
    assert_eq!(
        [&a.email, &a.homepage, &a.day, &a.when],
        [
            "g@example.com",
            "https://example.com",
            "2026-09-01",
            "2026-09-01T10:00:00Z"
        ]
    );
    assert_eq!((a.age, a.score, a.ok), (40, 99.5, false));
    assert_eq!((a.color, a.size, a.legacy), (Color::Green, Size::Large, Legacy::B));
    assert_eq!(a.tags, [Tag::Y, Tag::Z]);
    assert_eq!(a.flags, [Flag::V2]);
}

#[test]
fn missing_fields_with_a_default_get_it() {
    let mut g = good();
    for k in ["name", "age", "score", "ok", "color", "size", "tags"] {
        g.as_object_mut().unwrap().remove(k);
    }
    let a = AllShapes::from_content(&content(g)).unwrap();
    assert_eq!(a.name, "Ada");
    assert_eq!((a.age, a.score, a.ok), (30, 95.5, true));
    assert_eq!((a.color, a.size), (Color::Red, Size::Small));
    assert_eq!(a.tags, [Tag::X]);
}

#[test]
fn bad_content_is_refused_with_the_rule() {
    let cases = [
        (with("age", json!("40")), "field `age`: expected an integer, got \"40\""),
        (with("age", json!(151)), "field `age`: must be at most 150, got 151"),
        (with("score", json!(-1)), "field `score`: must be at least 0, got -1"),
        (
            with("name", json!("")),
            "field `name`: must have at least 1 characters, got 0",
        ),
        (
            with("name", json!("x".repeat(41))),
            "field `name`: must have at most 40 characters, got 41",
        ),
        (
            with("email", json!("not-an-email")),
            "field `email`: must be a valid email, got \"not-an-email\"",
        ),
        (
            with("homepage", json!("example.com")),
            "field `homepage`: must be a valid uri, got \"example.com\"",
        ),
        (
            with("day", json!("2026-02-30")),
            "field `day`: must be a valid date, got \"2026-02-30\"",
        ),
        (
            with("when", json!("2026-09-01")),
            "field `when`: must be a valid date-time, got \"2026-09-01\"",
        ),
        (
            with("color", json!("blue")),
            "field `color`: expected one of `red`, `green`, got \"blue\"",
        ),
        (
            with("tags", json!(["x", "y", "z"])),
            "field `tags`: must have at most 2 choices, got 3",
        ),
        (
            with("tags", json!([])),
            "field `tags`: must have at least 1 choices, got 0",
        ),
        (
            with("flags", json!(["v3"])),
            "field `flags`: expected one of `v1`, `v2`, got \"v3\"",
        ),
        (without("legacy"), "field `legacy`: is required"),
        (with("email", json!(null)), "field `email`: expected a string, got null"),
    ];
    for (input, expected) in cases {
        assert_eq!(refusal::<AllShapes>(input), expected);
    }
}

#[test]
fn the_first_bad_field_in_declaration_order_is_reported() {
    let mut g = with("flags", json!("v1"));
    g["email"] = json!(5);
    assert_eq!(refusal::<AllShapes>(g), "field `email`: expected a string, got 5");
}

// ---------------------------------------------------------------- names, negatives, options

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
#[form(rename_all = "SCREAMING_SNAKE_CASE")]
enum Status {
    InProgress,
    #[form(rename = "done")]
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Phase {
    InProgress,
    Stg,
}

#[derive(Debug, FormSchema)]
struct Misc {
    /// Degrees Celsius.
    #[form(minimum = -40, maximum = 2.5, default = -1.5)]
    temperature: f64,
    #[form(rename = "the-status")]
    status: Status,
    phase: Option<Phase>,
    #[form(default = -3)]
    offset: i32,
    r#type: String,
    #[form(rename = "token_count", not_secret)]
    tokens: u32,
}

#[test]
fn names_negative_numbers_and_optional_choices() {
    let s = schema::<Misc>();
    assert_eq!(
        s["properties"],
        json!({
            "temperature": { "type": "number", "description": "Degrees Celsius.", "minimum": -40, "maximum": 2.5, "default": -1.5 },
            "the-status": { "type": "string", "enum": ["IN_PROGRESS", "done"] },
            "phase": { "type": "string", "enum": ["in_progress", "stg"] },
            "offset": { "type": "integer", "default": -3 },
            "type": { "type": "string" },
            "token_count": { "type": "integer" }
        })
    );
    assert_eq!(s["required"], json!(["the-status", "type", "token_count"]));
    let m = Misc::from_content(&content(
        json!({"the-status": "IN_PROGRESS", "type": "t", "token_count": 3, "phase": null}),
    ))
    .unwrap();
    assert_eq!(
        (m.temperature, m.offset, m.status, m.phase),
        (-1.5, -3, Status::InProgress, None)
    );
    assert_eq!((m.r#type.as_str(), m.tokens), ("t", 3));
    assert_eq!(
        refusal::<Misc>(json!({"the-status": "in_progress", "type": "t", "token_count": 3})),
        "field `the-status`: expected one of `IN_PROGRESS`, `done`, got \"in_progress\""
    );
}
