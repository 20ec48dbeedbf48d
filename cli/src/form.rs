//! A form's `requestedSchema` read into fields a person can be asked, and the checks each typed
//! answer must pass before it is taken: the same rules the schema states (type, `minimum` /
//! `maximum`, `minLength` / `maxLength`, `format`, `minItems` / `maxItems`), so that a person
//! corrects a mistake at once instead of the server refusing the whole form.

use mcp_resolve::form::Format;
use serde_json::{Map, Value};

/// One choice of a single or multiple choice field.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Choice {
    /// What is sent.
    pub(crate) value: Value,
    /// What the person sees.
    pub(crate) title: String,
}

/// What a field holds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    /// A string, with its length limits (in characters) and `format`.
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        format: Option<String>,
    },
    /// An integer within bounds.
    Integer { minimum: Option<f64>, maximum: Option<f64> },
    /// A number within bounds.
    Number { minimum: Option<f64>, maximum: Option<f64> },
    /// Yes or no.
    Boolean,
    /// One of these.
    Choice(Vec<Choice>),
    /// Some of these.
    Multi {
        choices: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
    /// Anything else, typed as JSON.
    Json,
}

/// One field of a form.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Field {
    /// Its key in the content.
    pub(crate) name: String,
    /// `title`, if the schema gives one.
    pub(crate) title: Option<String>,
    /// `description`, if the schema gives one.
    pub(crate) description: Option<String>,
    /// Listed in `required`.
    pub(crate) required: bool,
    /// `default`, if any.
    pub(crate) default: Option<Value>,
    /// What it holds.
    pub(crate) kind: Kind,
}

impl Field {
    /// How the field is named to a person: its title, or else its key.
    pub(crate) fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// The rules an answer must follow, in words (e.g. `integer, 1 to 5`).
    pub(crate) fn rules(&self) -> String {
        let bounds = |min: Option<f64>, max: Option<f64>| match (min, max) {
            (Some(a), Some(b)) => format!(", {} to {}", num(a), num(b)),
            (Some(a), None) => format!(", at least {}", num(a)),
            (None, Some(b)) => format!(", at most {}", num(b)),
            (None, None) => String::new(),
        };
        match &self.kind {
            Kind::Text {
                min_length,
                max_length,
                format,
            } => {
                let mut s = String::from("text");
                match (min_length, max_length) {
                    (Some(a), Some(b)) => s.push_str(&format!(", {a} to {b} characters")),
                    (Some(a), None) => s.push_str(&format!(", at least {a} characters")),
                    (None, Some(b)) => s.push_str(&format!(", at most {b} characters")),
                    (None, None) => {}
                }
                if let Some(f) = format {
                    s.push_str(&format!(", {}", format_hint(f)));
                }
                s
            }
            Kind::Integer { minimum, maximum } => format!("whole number{}", bounds(*minimum, *maximum)),
            Kind::Number { minimum, maximum } => format!("number{}", bounds(*minimum, *maximum)),
            Kind::Boolean => "yes or no".into(),
            Kind::Choice(_) => "one choice".into(),
            Kind::Multi {
                min_items, max_items, ..
            } => match (min_items, max_items) {
                (Some(a), Some(b)) if a == b => format!("pick {a}"),
                (Some(a), Some(b)) => format!("pick {a} to {b}"),
                (Some(a), None) => format!("pick at least {a}"),
                (None, Some(b)) => format!("pick at most {b}"),
                (None, None) => "pick any".into(),
            },
            Kind::Json => "JSON".into(),
        }
    }

    /// The answer typed as `input`, checked: `Ok(None)` for an empty answer to a field that is
    /// not required, `Err` saying what is wrong.
    pub(crate) fn parse(&self, input: &str) -> Result<Option<Value>, String> {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return if self.required {
                Err("an answer is required".into())
            } else {
                Ok(None)
            };
        }
        match &self.kind {
            Kind::Text {
                min_length,
                max_length,
                format,
            } => {
                let n = input.chars().count() as u64;
                if let Some(min) = min_length
                    && n < *min
                {
                    return Err(format!("at least {min} characters, not {n}"));
                }
                if let Some(max) = max_length
                    && n > *max
                {
                    return Err(format!("at most {max} characters, not {n}"));
                }
                if let Some(f) = format {
                    check_format(f, input)?;
                }
                Ok(Some(Value::String(input.to_owned())))
            }
            Kind::Integer { minimum, maximum } => {
                let v: i64 = trimmed
                    .parse()
                    .map_err(|_| format!("`{trimmed}` is not a whole number"))?;
                within(v as f64, *minimum, *maximum)?;
                Ok(Some(Value::from(v)))
            }
            Kind::Number { minimum, maximum } => {
                let v: f64 = trimmed
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| format!("`{trimmed}` is not a number"))?;
                within(v, *minimum, *maximum)?;
                serde_json::Number::from_f64(v)
                    .map(|n| Some(Value::Number(n)))
                    .ok_or_else(|| format!("`{trimmed}` is not a number"))
            }
            Kind::Boolean => match trimmed.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Some(Value::Bool(true))),
                "n" | "no" | "false" => Ok(Some(Value::Bool(false))),
                _ => Err(format!("`{trimmed}` is neither yes nor no")),
            },
            Kind::Choice(choices) => choices
                .iter()
                .find(|c| c.title == trimmed || value_text(&c.value) == trimmed)
                .map(|c| Some(c.value.clone()))
                .ok_or_else(|| format!("`{trimmed}` is not one of the choices")),
            Kind::Multi { .. } => Err("pick from the list".into()),
            Kind::Json => serde_json::from_str(trimmed)
                .map(Some)
                .map_err(|e| format!("not JSON: {e}")),
        }
    }

    /// Checks the number of picks of a multiple choice field.
    pub(crate) fn check_picks(&self, n: usize) -> Result<(), String> {
        let n = n as u64;
        if let Kind::Multi {
            min_items, max_items, ..
        } = &self.kind
        {
            if n == 0 && !self.required && min_items.is_some() {
                // Leaving an optional field out is allowed.
                return Ok(());
            }
            if let Some(min) = min_items
                && n < *min
            {
                return Err(format!("pick at least {min}"));
            }
            if let Some(max) = max_items
                && n > *max
            {
                return Err(format!("pick at most {max}"));
            }
        }
        Ok(())
    }

    /// How an answer to this field reads to a person (a choice by its title).
    pub(crate) fn show(&self, value: &Value) -> String {
        let title = |choices: &[Choice], v: &Value| {
            choices
                .iter()
                .find(|c| &c.value == v)
                .map_or_else(|| value_text(v), |c| c.title.clone())
        };
        match (&self.kind, value) {
            (Kind::Choice(choices), v) => title(choices, v),
            (Kind::Multi { choices, .. }, Value::Array(items)) => {
                if items.is_empty() {
                    "(none)".into()
                } else {
                    items.iter().map(|v| title(choices, v)).collect::<Vec<_>>().join(", ")
                }
            }
            (Kind::Boolean, Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
            (_, v) => value_text(v),
        }
    }

    /// The text an answer is typed as, to prefill the prompt (a default, or the answer given
    /// before).
    pub(crate) fn as_input(&self, value: &Value) -> String {
        match value {
            Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
            other => value_text(other),
        }
    }
}

/// A string as itself, anything else as JSON.
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A number without a trailing `.0` when it is whole.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn within(v: f64, minimum: Option<f64>, maximum: Option<f64>) -> Result<(), String> {
    if let Some(min) = minimum
        && v < min
    {
        return Err(format!("must be at least {}", num(min)));
    }
    if let Some(max) = maximum
        && v > max
    {
        return Err(format!("must be at most {}", num(max)));
    }
    Ok(())
}

/// What a `format` asks for, in words.
fn format_hint(format: &str) -> String {
    match format {
        "date" => "a date (YYYY-MM-DD)".into(),
        "date-time" => "a date and time (YYYY-MM-DDTHH:MM:SSZ)".into(),
        "email" => "an e-mail address".into(),
        "uri" => "a URI (scheme:…)".into(),
        other => format!("format {other}"),
    }
}

/// Checks the formats the MCP spec lists for form strings, with the rules an mcp-resolve server
/// applies to answers (`Format::check`); any other format passes.
fn check_format(format: &str, s: &str) -> Result<(), String> {
    let known = match format {
        "date" => Format::Date,
        "date-time" => Format::DateTime,
        "email" => Format::Email,
        "uri" => Format::Uri,
        _ => return Ok(()),
    };
    if known.check(s) {
        Ok(())
    } else {
        Err(format!("not {}", format_hint(format)))
    }
}

/// The choices of `enum` (titled by a legacy `enumNames` when present) or of `oneOf` / `anyOf`
/// (`const` and `title`).
fn choices(schema: &Map<String, Value>) -> Option<Vec<Choice>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| Choice {
                    value: v.clone(),
                    title: names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map_or_else(|| value_text(v), str::to_owned),
                })
                .collect(),
        );
    }
    let list = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    let mut out = Vec::new();
    for item in list {
        let value = item.get("const")?.clone();
        let title = item
            .get("title")
            .and_then(Value::as_str)
            .map_or_else(|| value_text(&value), str::to_owned);
        out.push(Choice { value, title });
    }
    Some(out)
}

fn number(schema: &Map<String, Value>, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

fn count(schema: &Map<String, Value>, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

/// The fields of a form, in the order they are asked: the required ones in the order of
/// `required` (a list, so the server's order survives), then the others by name.
pub(crate) fn fields(schema: &Map<String, Value>) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Vec::new();
    };
    let mut out: Vec<Field> = properties
        .iter()
        .map(|(name, property)| {
            let empty = Map::new();
            let p = property.as_object().unwrap_or(&empty);
            let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
            let kind = if ty == "array" {
                match p.get("items").and_then(Value::as_object).and_then(choices) {
                    Some(choices) => Kind::Multi {
                        choices,
                        min_items: count(p, "minItems"),
                        max_items: count(p, "maxItems"),
                    },
                    None => Kind::Json,
                }
            } else if let Some(choices) = choices(p) {
                Kind::Choice(choices)
            } else {
                match ty {
                    "string" => Kind::Text {
                        min_length: count(p, "minLength"),
                        max_length: count(p, "maxLength"),
                        format: p.get("format").and_then(Value::as_str).map(str::to_owned),
                    },
                    "integer" => Kind::Integer {
                        minimum: number(p, "minimum"),
                        maximum: number(p, "maximum"),
                    },
                    "number" => Kind::Number {
                        minimum: number(p, "minimum"),
                        maximum: number(p, "maximum"),
                    },
                    "boolean" => Kind::Boolean,
                    _ => Kind::Json,
                }
            };
            Field {
                name: name.clone(),
                title: p.get("title").and_then(Value::as_str).map(str::to_owned),
                description: p.get("description").and_then(Value::as_str).map(str::to_owned),
                required: required.contains(&name.as_str()),
                default: p.get("default").cloned(),
                kind,
            }
        })
        .collect();
    let rank = |f: &Field| required.iter().position(|r| *r == f.name).unwrap_or(usize::MAX);
    out.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.name.cmp(&b.name)));
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn fields_come_required_first_in_the_servers_order_then_by_name() {
        let s = schema(json!({"type": "object", "properties": {
            "a": {"type": "string"}, "z": {"type": "integer"}, "m": {"type": "boolean"}, "b": {"type": "number"}},
            "required": ["z", "m"]}));
        let names: Vec<String> = fields(&s).into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["z", "m", "a", "b"]);
    }

    #[test]
    fn choices_from_enum_enum_names_one_of_and_items_any_of() {
        let s = schema(json!({"type": "object", "properties": {
            "plain": {"type": "string", "enum": ["a", "b"]},
            "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Ay", "Bee"]},
            "titled": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "multi": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["x", "y", "z"]}},
            "multi_titled": {"type": "array", "items": {"anyOf": [{"const": "1", "title": "#1 crash"}]}}
        }}));
        let f = fields(&s);
        let by = |n: &str| f.iter().find(|x| x.name == n).unwrap().clone();
        assert_eq!(
            by("legacy").kind,
            Kind::Choice(vec![
                Choice {
                    value: json!("a"),
                    title: "Ay".into()
                },
                Choice {
                    value: json!("b"),
                    title: "Bee".into()
                }
            ])
        );
        assert!(matches!(by("titled").kind, Kind::Choice(ref c) if c[1].title == "Large" && c[1].value == "l"));
        assert!(matches!(by("plain").kind, Kind::Choice(ref c) if c[0].title == "a"));
        assert!(
            matches!(by("multi").kind, Kind::Multi { ref choices, min_items: Some(1), max_items: Some(2) } if choices.len() == 3)
        );
        assert!(matches!(by("multi_titled").kind, Kind::Multi { ref choices, .. } if choices[0].title == "#1 crash"));
        assert_eq!(by("titled").show(&json!("l")), "Large");
        assert_eq!(by("multi_titled").show(&json!(["1"])), "#1 crash");
    }

    #[test]
    fn typed_answers_are_checked_against_the_fields_rules() {
        let s = schema(json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 5},
            "x": {"type": "number", "minimum": 0.5},
            "name": {"type": "string", "minLength": 2, "maxLength": 4},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "mail": {"type": "string", "format": "email"},
            "ok": {"type": "boolean"}
        }, "required": ["n", "name"]}));
        let f = fields(&s);
        let by = |n: &str| f.iter().find(|x| x.name == n).unwrap().clone();
        assert_eq!(by("n").parse("3"), Ok(Some(json!(3))));
        assert_eq!(by("n").parse("9"), Err("must be at most 5".into()));
        assert_eq!(by("n").parse("0"), Err("must be at least 1".into()));
        assert!(by("n").parse("2.5").is_err());
        assert_eq!(by("n").parse(""), Err("an answer is required".into()));
        assert_eq!(by("n").rules(), "whole number, 1 to 5");
        assert_eq!(by("x").parse("0.75"), Ok(Some(json!(0.75))));
        assert!(by("x").parse("0.25").is_err());
        assert_eq!(by("x").parse(""), Ok(None));
        assert_eq!(by("name").parse("a"), Err("at least 2 characters, not 1".into()));
        assert_eq!(by("name").parse("abcde"), Err("at most 4 characters, not 5".into()));
        assert_eq!(by("name").parse("Ann"), Ok(Some(json!("Ann"))));
        assert_eq!(by("day").parse("2024-02-29"), Ok(Some(json!("2024-02-29"))));
        assert!(by("day").parse("2023-02-29").is_err());
        assert!(by("day").parse("tomorrow").is_err());
        assert_eq!(by("day").parse(""), Ok(None));
        assert!(by("at").parse("2024-12-26T19:30:00Z").is_ok());
        assert!(by("at").parse("2024-12-26T19:30:00.5+01:00").is_ok());
        assert!(by("at").parse("2024-12-26 19:30").is_err());
        assert!(by("mail").parse("a@b.example").is_ok());
        assert!(by("mail").parse("a@b").is_err());
        assert_eq!(by("ok").parse("yes"), Ok(Some(json!(true))));
        assert!(by("ok").parse("maybe").is_err());
    }

    #[test]
    fn picks_are_counted() {
        let s = schema(json!({"type": "object", "properties": {
            "m": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"enum": ["a", "b", "c"]}}},
            "required": ["m"]}));
        let f = &fields(&s)[0];
        assert_eq!(f.check_picks(0), Err("pick at least 1".into()));
        assert_eq!(f.check_picks(3), Err("pick at most 2".into()));
        assert_eq!(f.check_picks(2), Ok(()));
        assert_eq!(f.rules(), "pick 1 to 2");
    }
}
