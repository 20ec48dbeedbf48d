//! What a tool returns: content items, structured output, and the conversion trait.

use schemars::{JsonSchema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt::Display;

pub use crate::protocol::content::{Content, EmbeddedResource};

/// The result of `tools/call`.
///
/// ```
/// use mcp_resolve_runtime::tool::{CallToolResult, Content};
/// let r = CallToolResult::error("no such folder: /x");
/// assert!(r.is_error);
/// assert_eq!(r.content, vec![Content::text("no such folder: /x")]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// Unstructured content.
    pub content: Vec<Content>,
    /// Structured content, conforming to the tool's `outputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: bool,
    /// A JSON-RPC error to answer instead of this result ([`CallToolResult::protocol_error`]).
    #[serde(skip)]
    pub(crate) protocol_error: Option<Box<crate::protocol::ErrorObject>>,
}

impl CallToolResult {
    /// A successful result with these content items.
    pub fn success(content: Vec<Content>) -> Self {
        Self {
            content,
            structured_content: None,
            is_error: false,
            protocol_error: None,
        }
    }
    /// A failed result with one text item.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(message)],
            structured_content: None,
            is_error: true,
            protocol_error: None,
        }
    }
    /// Ends the call with this JSON-RPC error instead of a result, where the protocol calls for
    /// one: a capability the client lacks (-32021, [`crate::protocol::ErrorObject::missing_capability`]),
    /// say. A failure of the tool itself is an `isError` result ([`CallToolResult::error`], or an
    /// `Err` from a tool returning `Result`), which the model can read; a JSON-RPC error goes to
    /// the client. Over 2026-07-28 HTTP it carries its status (400 for -32021).
    ///
    /// ```
    /// use mcp_resolve_runtime::{protocol::ErrorObject, tool::CallToolResult};
    /// let r = CallToolResult::protocol_error(ErrorObject::missing_capability(
    ///     serde_json::json!({"sampling": {}}),
    ///     "this tool needs the client's sampling capability",
    /// ));
    /// assert_eq!(r.as_protocol_error().map(|e| e.code), Some(-32021));
    /// ```
    pub fn protocol_error(error: crate::protocol::ErrorObject) -> Self {
        Self {
            protocol_error: Some(Box::new(error)),
            ..Self::default()
        }
    }
    /// The JSON-RPC error this result stands for, if it is one.
    pub fn as_protocol_error(&self) -> Option<&crate::protocol::ErrorObject> {
        self.protocol_error.as_deref()
    }
    /// Adds structured content.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }
}

/// Structured output: the tool gets an `outputSchema` from `T`'s JSON Schema and answers with
/// `structuredContent` plus the same JSON as text.
///
/// A `T` whose schema is not an object is wrapped as `{"result": …}`, since handshake-era clients
/// require object output.
///
/// ```
/// use mcp_resolve_runtime::tool::{IntoToolResult, Json};
/// let r = Json(3_i64).into_tool_result();
/// assert_eq!(r.structured_content, Some(serde_json::json!({"result": 3})));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// Converts a tool function's return value into a [`CallToolResult`], and names its `outputSchema`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]` function",
    label = "not a tool result",
    note = "return `String`, `Content`, `Vec<Content>`, `Json<T>`, `CallToolResult`, or `Result<T, E>` with `E: Display`"
)]
pub trait IntoToolResult {
    /// The `outputSchema` for this return type, if it has structured output.
    fn output_schema(_generator: &mut SchemaGenerator) -> Option<Map<String, Value>> {
        None
    }
    /// The conversion.
    fn into_tool_result(self) -> CallToolResult;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![Content::text(self)])
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![Content::text(self)])
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(Vec::new())
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![self])
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(self)
    }
}

impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Map<String, Value>> {
        T::output_schema(generator)
    }
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => CallToolResult::error(e.to_string()),
        }
    }
}

fn is_object_schema(schema: &Map<String, Value>) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Map<String, Value>> {
        let schema = generator.root_schema_for::<T>().to_value();
        let mut schema = match schema {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        schema.remove("$schema");
        if is_object_schema(&schema) {
            return Some(schema);
        }
        let defs = schema.remove("$defs");
        schema.remove("title");
        let mut wrapped = json!({
            "type": "object",
            "properties": { "result": Value::Object(schema) },
            "required": ["result"],
        });
        if let (Some(defs), Some(obj)) = (defs, wrapped.as_object_mut()) {
            obj.insert("$defs".into(), defs);
        }
        match wrapped {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    fn into_tool_result(self) -> CallToolResult {
        let value = match serde_json::to_value(&self.0) {
            Ok(v) => v,
            Err(e) => return CallToolResult::error(format!("could not serialize the tool's output: {e}")),
        };
        if output_is_object::<T>() {
            let text = value.to_string();
            CallToolResult::success(vec![Content::text(text)]).with_structured(value)
        } else {
            let text = value.to_string();
            CallToolResult::success(vec![Content::text(text)]).with_structured(json!({ "result": value }))
        }
    }
}

/// Whether `T`'s own schema is an object schema: then its value is structured content as it is,
/// otherwise it travels as `{"result": …}`. The same rule picks the `outputSchema`. Worked out
/// once per type (keyed by its schema id, unique per type by schemars' contract), not per call.
fn output_is_object<T: JsonSchema>() -> bool {
    use std::collections::HashMap;
    use std::sync::{LazyLock, RwLock};
    static KNOWN: LazyLock<RwLock<HashMap<std::borrow::Cow<'static, str>, bool>>> = LazyLock::new(Default::default);
    let id = T::schema_id();
    if let Some(&known) = KNOWN.read().ok().as_ref().and_then(|m| m.get(&id)) {
        return known;
    }
    let schema = T::json_schema(&mut SchemaGenerator::default());
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
    if let Ok(mut m) = KNOWN.write() {
        m.insert(id, is_object);
    }
    is_object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_err_is_an_error_result() {
        let r: Result<String, String> = Err("boom".into());
        let r = r.into_tool_result();
        assert!(r.is_error);
        assert_eq!(r.content, vec![Content::text("boom")]);
    }

    #[test]
    fn json_scalar_is_wrapped() {
        let mut g = schemars::SchemaGenerator::default();
        let s = <Json<i64> as IntoToolResult>::output_schema(&mut g).unwrap();
        assert_eq!(Value::Object(s)["properties"]["result"]["type"], "integer");
        let r = Json(3_i64).into_tool_result();
        assert_eq!(r.content, vec![Content::text("3")]);
        assert_eq!(r.structured_content, Some(json!({"result": 3})));
    }

    #[test]
    fn json_object_is_passed_through() {
        #[derive(Serialize, JsonSchema)]
        struct Out {
            n: u32,
        }
        let r = Json(Out { n: 1 }).into_tool_result();
        assert_eq!(r.structured_content, Some(json!({"n": 1})));
        let mut g = schemars::SchemaGenerator::default();
        let s = <Json<Out> as IntoToolResult>::output_schema(&mut g).unwrap();
        assert_eq!(s.get("type"), Some(&json!("object")));
    }
}
