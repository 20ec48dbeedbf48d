//! Results as a person reads them: text as text, structured content as pretty JSON, images,
//! audio and resources named; lists one item a line.

use mcp_resolve::client::ReadResourceResult;
use mcp_resolve::prompt::GetPromptResult;
use mcp_resolve::protocol::Content;
use mcp_resolve::tool::CallToolResult;
use serde_json::Value;

/// About how many bytes base64 `data` holds.
fn decoded_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

/// A byte count for people.
fn size(n: usize) -> String {
    match n {
        0..1024 => format!("{n} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", n as f64 / 1024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
}

/// One content item: its text, or a line naming it.
pub(crate) fn content(c: &Content) -> String {
    match c {
        Content::Text { text, .. } => text.clone(),
        Content::Image { data, mime_type, .. } => format!("[image: {mime_type}, {}]", size(decoded_len(data))),
        Content::Audio { data, mime_type, .. } => format!("[audio: {mime_type}, {}]", size(decoded_len(data))),
        Content::Resource { resource, .. } => {
            let mime = resource
                .mime_type
                .as_deref()
                .map(|m| format!(", {m}"))
                .unwrap_or_default();
            match (&resource.text, &resource.blob) {
                (Some(text), _) => format!("[resource: {}{mime}]\n{text}", resource.uri),
                (None, Some(blob)) => format!("[resource: {}{mime}, {}]", resource.uri, size(decoded_len(blob))),
                (None, None) => format!("[resource: {}{mime}]", resource.uri),
            }
        }
        // Kinds added later (a resource link, …): named by their type, URI and name.
        other => {
            let v = serde_json::to_value(other).unwrap_or_default();
            let field = |k: &str| v.get(k).and_then(Value::as_str);
            let mut s = format!("[{}", field("type").unwrap_or("content").replace('_', " "));
            if let Some(uri) = field("uri") {
                s.push_str(&format!(": {uri}"));
            }
            if let Some(name) = field("name") {
                s.push_str(&format!(" ({name})"));
            }
            s.push(']');
            s
        }
    }
}

/// Pretty JSON.
pub(crate) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A tool's result as text: its content items, then its structured content unless a text item
/// already says the same.
pub(crate) fn tool_result(r: &CallToolResult) -> String {
    let mut parts: Vec<String> = r.content.iter().map(content).collect();
    if let Some(structured) = &r.structured_content {
        // SDKs wrap a plain value as `{"result": value}` beside its text.
        let wrapped = match structured {
            Value::Object(m) if m.len() == 1 => m.get("result"),
            _ => None,
        };
        let said = r.content.iter().any(|c| match c {
            Content::Text { text, .. } => {
                let parsed = serde_json::from_str::<Value>(text).ok();
                parsed.as_ref() == Some(structured)
                    || wrapped.is_some_and(|w| w.as_str() == Some(text) || parsed.as_ref() == Some(w))
            }
            _ => false,
        });
        if !said {
            parts.push(pretty(structured));
        }
    }
    parts.join("\n")
}

/// A prompt's messages, each under its speaker.
pub(crate) fn prompt(r: &GetPromptResult) -> String {
    let mut out = Vec::new();
    if let Some(d) = &r.description {
        out.push(format!("# {d}"));
    }
    for m in &r.messages {
        let role = serde_json::to_value(m.role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "message".into());
        out.push(format!("[{role}]\n{}", content(&m.content)));
    }
    out.join("\n")
}

/// A resource's contents: text as text, blobs named.
pub(crate) fn resource(r: &ReadResourceResult) -> String {
    r.contents
        .iter()
        .map(|c| match (&c.text, &c.blob) {
            (Some(text), _) => text.clone(),
            (None, Some(blob)) => format!(
                "[blob: {}{}, {}]",
                c.uri,
                c.mime_type.as_deref().map(|m| format!(", {m}")).unwrap_or_default(),
                size(decoded_len(blob))
            ),
            (None, None) => format!("[empty: {}]", c.uri),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The arguments of a tool's `inputSchema`, e.g. `path*: string, depth: integer`.
fn arguments(schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(Value::Object(props)) = schema.get("properties") else {
        return String::new();
    };
    props
        .iter()
        .map(|(name, p)| {
            let ty = match p.get("type") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
                _ => "any".into(),
            };
            let star = if required.contains(&name.as_str()) { "*" } else { "" };
            format!("{name}{star}: {ty}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first line of a description.
fn first_line(v: Option<&Value>) -> String {
    v.and_then(Value::as_str)
        .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("")
        .to_owned()
}

/// A list of tools, prompts, resources or templates: `name(args)  description`, one a line.
pub(crate) fn list(kind: &str, items: &[Value]) -> String {
    let rows: Vec<(String, String)> = items
        .iter()
        .map(|item| {
            let name = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("?").to_owned();
            let head = match kind {
                "tools" => format!(
                    "{}({})",
                    name("name"),
                    arguments(item.get("inputSchema").unwrap_or(&Value::Null))
                ),
                "prompts" => {
                    let args: Vec<String> = item
                        .get("arguments")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .map(|arg| {
                                    let n = arg.get("name").and_then(Value::as_str).unwrap_or("?");
                                    let star = if arg.get("required").and_then(Value::as_bool) == Some(true) {
                                        "*"
                                    } else {
                                        ""
                                    };
                                    format!("{n}{star}")
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    format!("{}({})", name("name"), args.join(", "))
                }
                "resources" => format!("{}  ({})", name("uri"), name("name")),
                _ => format!("{}  ({})", name("uriTemplate"), name("name")),
            };
            let mut about = first_line(item.get("title")).to_owned();
            let description = first_line(item.get("description"));
            if !description.is_empty() {
                if !about.is_empty() {
                    about.push_str(": ");
                }
                about.push_str(&description);
            }
            (head, about)
        })
        .collect();
    let width = rows.iter().map(|(h, _)| h.chars().count()).max().unwrap_or(0).min(48);
    rows.iter()
        .map(|(head, about)| {
            if about.is_empty() {
                head.clone()
            } else {
                format!("{head:<width$}  {about}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn structured_content_is_shown_unless_a_text_item_says_it() {
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "{\"result\":5}"}], "structuredContent": {"result": 5}}))
        .unwrap();
        assert_eq!(tool_result(&r), "{\"result\":5}");
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "deleted /x"}], "structuredContent": {"result": "deleted /x"}}))
        .unwrap();
        assert_eq!(tool_result(&r), "deleted /x");
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "5"}], "structuredContent": {"result": 5}}))
        .unwrap();
        assert_eq!(tool_result(&r), "5");
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "five"}, {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}],
            "structuredContent": {"result": 5}}))
        .unwrap();
        assert_eq!(
            tool_result(&r),
            "five\n[image: image/png, 5 bytes]\n{\n  \"result\": 5\n}"
        );
    }

    #[test]
    fn tools_are_listed_with_their_arguments() {
        let tools = vec![
            json!({"name": "add", "description": "Add two integers.", "inputSchema": {"type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}),
            json!({"name": "delete_folder", "description": "Delete a folder.\n\nMore.", "inputSchema": {"type": "object",
                "properties": {"path": {"type": "string"}}}}),
        ];
        assert_eq!(
            list("tools", &tools),
            "add(a*: integer, b*: integer)  Add two integers.\ndelete_folder(path: string)    Delete a folder."
        );
    }
}
