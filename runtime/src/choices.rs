//! Choices from data: a form of one single- or multi-select field whose options a resolver
//! supplies when it asks ("three issues match: which ones?"), each option a value of type `T`
//! with the text the user sees. The answer is read back into those values, checked against
//! exactly the options offered: the options are part of the question, whose digest the sealed
//! `requestState` pins on 2026-07-28 (a retry whose question changed is not answered by the old
//! answer), and which the call itself holds on the handshake era.

use crate::form::{FormError, looks_secret};
use serde_json::{Map, Value, json};
use std::fmt;

/// The most options one question may offer.
///
/// ```
/// assert_eq!(mcp_resolve_runtime::elicit::MAX_CHOICES, 100);
/// ```
pub const MAX_CHOICES: usize = 100;

/// The longest option key or title, in characters (a field name too).
///
/// ```
/// assert_eq!(mcp_resolve_runtime::elicit::MAX_CHOICE_CHARS, 200);
/// ```
pub const MAX_CHOICE_CHARS: usize = 200;

/// The options of a question made from data, for [`Elicit::pick_one`](crate::Elicit::pick_one) and
/// [`Elicit::pick_many`](crate::Elicit::pick_many): a field name, and for each option the key the client sends back, the
/// title the user reads and the value the resolver gets. At most [`MAX_CHOICES`] options, keys
/// unique, keys and titles non-empty and at most [`MAX_CHOICE_CHARS`] characters; a question
/// that breaks a bound is not asked: the call ends with an error naming the bound.
///
/// ```
/// use mcp_resolve_runtime::{Elicit, elicit::{Choices, Resolution}};
///
/// struct Issue {
///     id: u32,
///     title: &'static str,
/// }
///
/// fn which(matches: &[Issue]) -> Resolution<Vec<u32>> {
///     if let [only] = matches {
///         return Resolution::Value(vec![only.id]);
///     }
///     let choices = matches.iter().fold(Choices::new("issues").title("Issues to close"), |c, i| {
///         c.option(i.id.to_string(), format!("#{} {}", i.id, i.title), i.id)
///     });
///     Elicit::pick_many(format!("{} issues match. Which ones?", matches.len()), choices.min_items(1)).into()
/// }
///
/// let two = [Issue { id: 101, title: "crash" }, Issue { id: 102, title: "hang" }];
/// assert!(matches!(which(&two), Resolution::Ask(_)));
/// assert!(matches!(which(&two[..1]), Resolution::Value(v) if v == [101]));
/// ```
pub struct Choices<T> {
    field: String,
    title: Option<String>,
    description: Option<String>,
    min_items: Option<usize>,
    max_items: Option<usize>,
    options: Vec<(String, String, T)>,
}

impl<T> fmt::Debug for Choices<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = self.options.iter().map(|(k, _, _)| k.as_str()).collect();
        f.debug_struct("Choices")
            .field("field", &self.field)
            .field("keys", &keys)
            .finish_non_exhaustive()
    }
}

impl<T> Choices<T> {
    /// No options yet, for the form's one field `field` (its name in the answer's `content`).
    pub fn new(field: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            title: None,
            description: None,
            min_items: None,
            max_items: None,
            options: Vec::new(),
        }
    }

    /// The field's title, which the client shows above the options.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The field's description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// One more option: `key` is what the client sends back, `title` what the user reads,
    /// `value` what the resolver gets when it is picked.
    pub fn option(mut self, key: impl Into<String>, title: impl Into<String>, value: T) -> Self {
        self.options.push((key.into(), title.into(), value));
        self
    }

    /// [`Elicit::pick_many`](crate::Elicit::pick_many): the fewest options the user must pick.
    pub fn min_items(mut self, n: usize) -> Self {
        self.min_items = Some(n);
        self
    }

    /// [`Elicit::pick_many`](crate::Elicit::pick_many): the most options the user may pick.
    pub fn max_items(mut self, n: usize) -> Self {
        self.max_items = Some(n);
        self
    }

    /// How many options there are.
    pub fn len(&self) -> usize {
        self.options.len()
    }

    /// Whether there are none (such a question is not asked).
    pub fn is_empty(&self) -> bool {
        self.options.is_empty()
    }

    /// Why the question cannot be asked, if it cannot.
    pub(crate) fn invalid(&self, multi: bool) -> Option<String> {
        let chars = |s: &str| s.chars().count();
        let field = &self.field;
        if field.is_empty() || chars(field) > MAX_CHOICE_CHARS {
            return Some(format!("the field name must have 1 to {MAX_CHOICE_CHARS} characters"));
        }
        if looks_secret(field) {
            return Some(format!(
                "form mode must not ask for secrets (`{field}`): use URL mode, or name the field for what is picked"
            ));
        }
        if self.options.is_empty() {
            return Some(format!("field `{field}` offers no options"));
        }
        if self.options.len() > MAX_CHOICES {
            return Some(format!(
                "field `{field}` offers {} options, more than {MAX_CHOICES}",
                self.options.len()
            ));
        }
        for (i, (key, title, _)) in self.options.iter().enumerate() {
            if key.is_empty() || chars(key) > MAX_CHOICE_CHARS || title.is_empty() || chars(title) > MAX_CHOICE_CHARS {
                return Some(format!(
                    "field `{field}`: each option's key and title must have 1 to {MAX_CHOICE_CHARS} characters (option {i} does not)"
                ));
            }
            if self.options[..i].iter().any(|(k, _, _)| k == key) {
                return Some(format!("field `{field}` offers key `{key}` twice"));
            }
        }
        let (min, max) = (
            self.min_items.unwrap_or(0),
            self.max_items.unwrap_or(self.options.len()),
        );
        if multi && (min > max || max > self.options.len()) {
            return Some(format!(
                "field `{field}`: min_items {min} and max_items {max} do not fit its {} options",
                self.options.len()
            ));
        }
        if !multi && (self.min_items.is_some() || self.max_items.is_some()) {
            return Some(format!("field `{field}`: min_items and max_items are for pick_many"));
        }
        None
    }

    /// The form: one required field, single- or multi-select, each option `{const, title}`.
    pub(crate) fn schema(&self, multi: bool) -> Map<String, Value> {
        let options: Vec<Value> = self
            .options
            .iter()
            .map(|(key, title, _)| json!({ "const": key, "title": title }))
            .collect();
        let mut field = Map::new();
        if multi {
            field.insert("type".into(), "array".into());
            field.insert("items".into(), json!({ "anyOf": options }));
            if let Some(n) = self.min_items {
                field.insert("minItems".into(), n.into());
            }
            if let Some(n) = self.max_items {
                field.insert("maxItems".into(), n.into());
            }
        } else {
            field.insert("type".into(), "string".into());
            field.insert("oneOf".into(), Value::Array(options));
        }
        if let Some(t) = &self.title {
            field.insert("title".into(), t.clone().into());
        }
        if let Some(d) = &self.description {
            field.insert("description".into(), d.clone().into());
        }
        let mut form = Map::new();
        form.insert("type".into(), "object".into());
        form.insert("properties".into(), json!({ self.field.clone(): field }));
        form.insert("required".into(), json!([self.field]));
        form
    }
}

impl<T: Clone + Send + Sync + 'static> Choices<T> {
    /// The value of the option `key` names, or the error naming the keys offered.
    pub(crate) fn pick(&self, key: &Value) -> Result<T, FormError> {
        let found = key.as_str().and_then(|k| self.options.iter().find(|(o, _, _)| o == k));
        match found {
            Some((_, _, value)) => Ok(value.clone()),
            None => {
                let keys: Vec<String> = self.options.iter().map(|(k, _, _)| format!("`{k}`")).collect();
                Err(FormError::new(
                    &self.field,
                    format!("expected one of {}, got {key}", keys.join(", ")),
                ))
            }
        }
    }

    /// The picked values of a multi-select answer: each key offered, none twice, within the
    /// bounds.
    pub(crate) fn pick_all(&self, answer: &Value) -> Result<Vec<T>, FormError> {
        let Value::Array(keys) = answer else {
            return Err(FormError::new(&self.field, format!("expected a list, got {answer}")));
        };
        let n = keys.len();
        if let Some(min) = self.min_items.filter(|m| n < *m) {
            return Err(FormError::new(
                &self.field,
                format!("must have at least {min} choices, got {n}"),
            ));
        }
        if let Some(max) = self.max_items.filter(|m| n > *m) {
            return Err(FormError::new(
                &self.field,
                format!("must have at most {max} choices, got {n}"),
            ));
        }
        for (i, key) in keys.iter().enumerate() {
            if keys[..i].contains(key) {
                return Err(FormError::new(&self.field, format!("lists {key} twice")));
            }
        }
        keys.iter().map(|k| self.pick(k)).collect()
    }

    pub(crate) fn field_of<'a>(&self, content: &'a Value) -> Result<&'a Value, String> {
        let Value::Object(m) = content else {
            return Err("the content is not an object".into());
        };
        if let Some(other) = m.keys().find(|k| **k != self.field) {
            return Err(FormError::new(other.as_str(), "is not a field of this form").to_string());
        }
        m.get(&self.field)
            .ok_or_else(|| FormError::new(&self.field, "is required").to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three() -> Choices<u32> {
        Choices::new("issues")
            .title("Issues")
            .option("101", "#101 crash", 101)
            .option("102", "#102 hang", 102)
            .option("104", "#104 typo", 104)
    }

    #[test]
    fn the_form_offers_exactly_the_options() {
        assert_eq!(
            Value::Object(three().schema(false)),
            json!({"type": "object", "required": ["issues"], "properties": {"issues": {
                "type": "string", "title": "Issues",
                "oneOf": [{"const": "101", "title": "#101 crash"}, {"const": "102", "title": "#102 hang"},
                          {"const": "104", "title": "#104 typo"}]}}})
        );
        assert_eq!(
            Value::Object(three().min_items(1).max_items(2).schema(true))["properties"]["issues"],
            json!({"type": "array", "title": "Issues", "minItems": 1, "maxItems": 2,
                   "items": {"anyOf": [{"const": "101", "title": "#101 crash"}, {"const": "102", "title": "#102 hang"},
                                       {"const": "104", "title": "#104 typo"}]}})
        );
    }

    #[test]
    fn answers_are_read_back_into_the_offered_values_and_nothing_else() {
        let c = three();
        assert_eq!(c.pick(&json!("102")), Ok(102));
        let e = c.pick(&json!("999")).unwrap_err().to_string();
        assert!(e.contains("expected one of `101`, `102`, `104`, got \"999\""), "{e}");
        assert!(c.pick(&json!(101)).is_err(), "a number is not a key");
        let c = three().min_items(1).max_items(2);
        assert_eq!(c.pick_all(&json!(["104", "101"])), Ok(vec![104, 101]));
        assert!(c.pick_all(&json!([])).unwrap_err().to_string().contains("at least 1"));
        assert!(
            c.pick_all(&json!(["101", "102", "104"]))
                .unwrap_err()
                .to_string()
                .contains("at most 2")
        );
        assert!(
            c.pick_all(&json!(["101", "101"]))
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        assert!(c.pick_all(&json!("101")).is_err());
        assert_eq!(c.pick_all(&json!(["102"])), Ok(vec![102]), "exactly min_items picks");
        assert_eq!(
            c.pick_all(&json!(["102", "104"])),
            Ok(vec![102, 104]),
            "exactly max_items picks"
        );
        assert_eq!(c.field_of(&json!({"issues": "101"})), Ok(&json!("101")));
        assert!(c.field_of(&json!({"issues": "101", "other": 1})).is_err());
        assert!(c.field_of(&json!({})).unwrap_err().contains("is required"));
        assert!(c.field_of(&json!([])).is_err());
    }

    #[test]
    fn a_question_breaking_a_bound_says_which() {
        let many = (0..=MAX_CHOICES).fold(Choices::new("n"), |c, i| c.option(i.to_string(), "t", i));
        assert!(many.invalid(false).unwrap().contains("more than 100"));
        let exactly = (0..MAX_CHOICES).fold(Choices::new("n"), |c, i| c.option(i.to_string(), "t", i));
        assert_eq!(exactly.invalid(false), None);
        assert!(Choices::<u8>::new("n").invalid(false).unwrap().contains("no options"));
        let long = "x".repeat(MAX_CHOICE_CHARS + 1);
        assert!(Choices::new("n").option(&long, "t", 1).invalid(false).is_some());
        assert!(Choices::new("n").option("k", &long, 1).invalid(false).is_some());
        assert_eq!(
            Choices::new("n")
                .option("x".repeat(MAX_CHOICE_CHARS), "t", 1)
                .invalid(false),
            None
        );
        assert!(Choices::new("n").option("", "t", 1).invalid(false).is_some());
        assert!(Choices::new("n").option("k", "", 1).invalid(false).is_some());
        assert!(
            Choices::new("n")
                .option("k", "a", 1)
                .option("k", "b", 2)
                .invalid(false)
                .unwrap()
                .contains("twice")
        );
        assert!(Choices::new("").option("k", "a", 1).invalid(false).is_some());
        assert!(
            Choices::new("password")
                .option("k", "a", 1)
                .invalid(false)
                .unwrap()
                .contains("secrets")
        );
        assert!(three().min_items(4).invalid(true).is_some());
        assert!(three().min_items(2).max_items(1).invalid(true).is_some());
        assert!(
            three().min_items(1).invalid(false).is_some(),
            "bounds are for pick_many"
        );
        assert_eq!(three().min_items(3).max_items(3).invalid(true), None);
        assert_eq!(three().min_items(1).max_items(2).invalid(true), None);
        // Exactly the most characters is allowed, for the field name and each title too.
        let longest = "x".repeat(MAX_CHOICE_CHARS);
        assert_eq!(Choices::new(&longest).option("k", "t", 1).invalid(false), None);
        assert!(Choices::new(&long).option("k", "t", 1).invalid(false).is_some());
        assert_eq!(Choices::new("n").option("k", &longest, 1).invalid(false), None);
    }

    #[test]
    fn its_size_and_debug_name_the_options() {
        assert_eq!((three().len(), three().is_empty()), (3, false));
        assert_eq!(
            (Choices::<u8>::new("n").len(), Choices::<u8>::new("n").is_empty()),
            (0, true)
        );
        assert_eq!(
            format!("{:?}", three()),
            r#"Choices { field: "issues", keys: ["101", "102", "104"], .. }"#
        );
    }
}
