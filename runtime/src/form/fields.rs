//! The field types a form may hold, each rendered into `requestedSchema` and checked when an
//! answer comes back: strings, numbers, booleans, choice enums and multi-selects, and `Option` of
//! these.

use super::{Choice, ChoiceStyle, FieldKind, FieldSpec, FormChoice, FormField};
use serde_json::{Map, Number, Value, json};

fn base(ty: &str, spec: &FieldSpec) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), ty.into());
    if let Some(t) = spec.title {
        m.insert("title".into(), t.into());
    }
    if let Some(d) = spec.description {
        m.insert("description".into(), d.into());
    }
    if let Some(d) = spec.default {
        m.insert("default".into(), d.to_json());
    }
    m
}

fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

fn describe(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 40 {
        s
    } else {
        format!("{}...", s.chars().take(37).collect::<String>())
    }
}

impl FormField for String {
    const KIND: FieldKind = FieldKind::Text;
    fn schema(spec: &FieldSpec) -> Map<String, Value> {
        let mut m = base("string", spec);
        if let Some(n) = spec.min_length {
            m.insert("minLength".into(), n.into());
        }
        if let Some(n) = spec.max_length {
            m.insert("maxLength".into(), n.into());
        }
        if let Some(f) = spec.format {
            m.insert("format".into(), f.as_str().into());
        }
        m
    }
    fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
        let Value::String(s) = value else {
            return Err(format!("expected a string, got {}", describe(value)));
        };
        let len = s.chars().count() as u64;
        if let Some(n) = spec.min_length.filter(|n| len < *n) {
            return Err(format!("must have at least {n} characters, got {len}"));
        }
        if let Some(n) = spec.max_length.filter(|n| len > *n) {
            return Err(format!("must have at most {n} characters, got {len}"));
        }
        if let Some(f) = spec.format.filter(|f| !f.check(s)) {
            return Err(format!("must be a valid {}, got {}", f.as_str(), describe(value)));
        }
        Ok(s.clone())
    }
}

impl FormField for bool {
    const KIND: FieldKind = FieldKind::Boolean;
    fn schema(spec: &FieldSpec) -> Map<String, Value> {
        base("boolean", spec)
    }
    fn parse(value: &Value, _: &FieldSpec) -> Result<Self, String> {
        value
            .as_bool()
            .ok_or_else(|| format!("expected a boolean, got {}", describe(value)))
    }
}

fn check_range(v: f64, spec: &FieldSpec) -> Result<(), String> {
    if let Some(min) = spec.minimum.filter(|m| v < *m) {
        return Err(format!("must be at least {}, got {}", number(min), number(v)));
    }
    if let Some(max) = spec.maximum.filter(|m| v > *m) {
        return Err(format!("must be at most {}, got {}", number(max), number(v)));
    }
    Ok(())
}

fn numeric_schema(ty: &str, spec: &FieldSpec) -> Map<String, Value> {
    let mut m = base(ty, spec);
    if let Some(v) = spec.minimum {
        m.insert("minimum".into(), number(v));
    }
    if let Some(v) = spec.maximum {
        m.insert("maximum".into(), number(v));
    }
    m
}

macro_rules! integer_field {
    ($($t:ty),*) => {$(
        impl FormField for $t {
            const KIND: FieldKind = FieldKind::Integer;
            fn schema(spec: &FieldSpec) -> Map<String, Value> {
                numeric_schema("integer", spec)
            }
            fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
                let n = match value {
                    Value::Number(n) => n,
                    _ => return Err(format!("expected an integer, got {}", describe(value))),
                };
                let as_int = integer_of(n).ok_or_else(|| format!("expected an integer, got {}", describe(value)))?;
                check_range(as_int as f64, spec)?;
                <$t>::try_from(as_int).map_err(|_| format!("{} is out of range for this field", as_int))
            }
        }
    )*};
}

/// An integer from a JSON number, accepting `3.0` (some clients send integers as floats).
fn integer_of(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = n.as_u64() {
        return Some(u.into());
    }
    n.as_f64()
        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
        .map(|f| f as i128)
}

integer_field!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_field {
    ($($t:ty),*) => {$(
        impl FormField for $t {
            const KIND: FieldKind = FieldKind::Number;
            fn schema(spec: &FieldSpec) -> Map<String, Value> {
                numeric_schema("number", spec)
            }
            fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
                let v = value.as_f64().ok_or_else(|| format!("expected a number, got {}", describe(value)))?;
                check_range(v, spec)?;
                Ok(v as $t)
            }
        }
    )*};
}

float_field!(f32, f64);

impl<T: FormField> FormField for Option<T> {
    const KIND: FieldKind = T::KIND;
    const OPTIONAL: bool = true;
    const CHOICES: &'static [Choice] = T::CHOICES;
    fn schema(spec: &FieldSpec) -> Map<String, Value> {
        T::schema(spec)
    }
    fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
        if value.is_null() {
            Ok(None)
        } else {
            T::parse(value, spec).map(Some)
        }
    }
    fn missing(spec: &FieldSpec) -> Result<Self, String> {
        match spec.default {
            Some(d) => T::parse(&d.to_json(), spec).map(Some),
            None => Ok(None),
        }
    }
}

/// The property schema of a single-select field of choice enum `E`.
pub fn choice_schema<E: FormChoice>(spec: &FieldSpec) -> Map<String, Value> {
    let mut m = base("string", spec);
    let titled = E::CHOICES.iter().any(|c| c.title.is_some());
    match E::STYLE {
        ChoiceStyle::Standard if titled => {
            let one_of: Vec<Value> = E::CHOICES
                .iter()
                .map(|c| json!({ "const": c.value, "title": c.title.unwrap_or(c.value) }))
                .collect();
            m.insert("oneOf".into(), Value::Array(one_of));
        }
        ChoiceStyle::Standard => {
            m.insert("enum".into(), E::CHOICES.iter().map(|c| c.value).collect());
        }
        ChoiceStyle::EnumNames => {
            m.insert("enum".into(), E::CHOICES.iter().map(|c| c.value).collect());
            m.insert(
                "enumNames".into(),
                E::CHOICES.iter().map(|c| c.title.unwrap_or(c.value)).collect(),
            );
        }
    }
    m
}

/// Parses a single-select value of choice enum `E`.
pub fn parse_choice<E: FormChoice>(value: &Value) -> Result<E, String> {
    let expected = || {
        let values: Vec<String> = E::CHOICES.iter().map(|c| format!("`{}`", c.value)).collect();
        format!("expected one of {}, got {}", values.join(", "), describe(value))
    };
    let s = value.as_str().ok_or_else(expected)?;
    E::CHOICES
        .iter()
        .position(|c| c.value == s)
        .and_then(E::from_index)
        .ok_or_else(expected)
}

impl<E: FormChoice> FormField for Vec<E> {
    const KIND: FieldKind = FieldKind::MultiChoice;
    const CHOICES: &'static [Choice] = E::CHOICES;
    fn schema(spec: &FieldSpec) -> Map<String, Value> {
        let mut m = base("array", spec);
        if let Some(n) = spec.min_items {
            m.insert("minItems".into(), n.into());
        }
        if let Some(n) = spec.max_items {
            m.insert("maxItems".into(), n.into());
        }
        let titled = E::CHOICES.iter().any(|c| c.title.is_some());
        let items = if titled {
            let any_of: Vec<Value> = E::CHOICES
                .iter()
                .map(|c| json!({ "const": c.value, "title": c.title.unwrap_or(c.value) }))
                .collect();
            json!({ "anyOf": any_of })
        } else {
            json!({ "type": "string", "enum": E::CHOICES.iter().map(|c| c.value).collect::<Vec<_>>() })
        };
        m.insert("items".into(), items);
        m
    }
    fn parse(value: &Value, spec: &FieldSpec) -> Result<Self, String> {
        let Value::Array(items) = value else {
            return Err(format!("expected a list, got {}", describe(value)));
        };
        let n = items.len() as u64;
        if let Some(min) = spec.min_items.filter(|m| n < *m) {
            return Err(format!("must have at least {min} choices, got {n}"));
        }
        if let Some(max) = spec.max_items.filter(|m| n > *m) {
            return Err(format!("must have at most {max} choices, got {n}"));
        }
        let mut out: Vec<E> = Vec::with_capacity(items.len());
        for item in items {
            let choice = parse_choice::<E>(item)?;
            if out.iter().any(|c| c.index() == choice.index()) {
                return Err(format!("lists `{}` twice", choice.as_value()));
            }
            out.push(choice);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::__private01::form_check as check;
    use crate::form::{DefaultValue, Format};

    #[test]
    fn strings_are_checked() {
        let spec = FieldSpec {
            min_length: Some(2),
            max_length: Some(3),
            ..FieldSpec::new("n")
        };
        assert_eq!(String::parse(&json!("ab"), &spec), Ok("ab".into()));
        assert_eq!(
            String::parse(&json!("a"), &spec),
            Err("must have at least 2 characters, got 1".into())
        );
        assert_eq!(
            String::parse(&json!("abcd"), &spec),
            Err("must have at most 3 characters, got 4".into())
        );
        assert_eq!(String::parse(&json!(5), &spec), Err("expected a string, got 5".into()));
        let email = FieldSpec {
            format: Some(Format::Email),
            ..FieldSpec::new("e")
        };
        assert!(String::parse(&json!("nope"), &email).is_err());
        assert_eq!(
            Value::Object(String::schema(&email)),
            json!({"type": "string", "format": "email"})
        );
    }

    #[test]
    fn numbers_are_checked() {
        let spec = FieldSpec {
            minimum: Some(1.0),
            maximum: Some(10.0),
            ..FieldSpec::new("n")
        };
        assert_eq!(u8::parse(&json!(3), &spec), Ok(3));
        assert_eq!(u8::parse(&json!(3.0), &spec), Ok(3));
        assert!(u8::parse(&json!(3.5), &spec).is_err());
        assert_eq!(u8::parse(&json!(11), &spec), Err("must be at most 10, got 11".into()));
        // The bounds themselves are inside.
        assert_eq!(u8::parse(&json!(1), &spec), Ok(1));
        assert_eq!(u8::parse(&json!(10), &spec), Ok(10));
        assert_eq!(u8::parse(&json!(0), &spec), Err("must be at least 1, got 0".into()));
        assert_eq!(
            f64::parse(&json!(0.5), &spec),
            Err("must be at least 1, got 0.5".into())
        );
        assert_eq!(
            i64::parse(&json!("3"), &spec),
            Err("expected an integer, got \"3\"".into())
        );
        assert_eq!(f64::parse(&json!(0.5), &FieldSpec::new("r")), Ok(0.5));
        assert_eq!(
            Value::Object(u8::schema(&spec)),
            json!({"type": "integer", "minimum": 1, "maximum": 10})
        );
    }

    #[test]
    fn booleans_are_strict() {
        let spec = FieldSpec::new("ok");
        assert_eq!(bool::parse(&json!(true), &spec), Ok(true));
        assert_eq!(
            bool::parse(&json!("not-a-bool"), &spec),
            Err("expected a boolean, got \"not-a-bool\"".into())
        );
        assert_eq!(bool::missing(&spec), Err("is required".into()));
        let with_default = FieldSpec {
            default: Some(DefaultValue::Bool(true)),
            ..spec
        };
        assert_eq!(bool::missing(&with_default), Ok(true));
        // Required beside its default: the schema keeps the default, a missing answer is refused.
        let required = FieldSpec {
            required: true,
            ..with_default
        };
        assert_eq!(bool::missing(&required), Err("is required".into()));
        assert_eq!(
            Value::Object(bool::schema(&required)),
            json!({"type": "boolean", "default": true})
        );
        assert_eq!(<Option<bool>>::missing(&FieldSpec::new("x")), Ok(None));
        let titled = FieldSpec {
            title: Some("Sure?"),
            ..FieldSpec::new("ok")
        };
        assert_eq!(
            Value::Object(bool::schema(&titled)),
            json!({"type": "boolean", "title": "Sure?"})
        );
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Env {
        Stg,
        Prd,
    }

    impl FormChoice for Env {
        const CHOICES: &'static [Choice] = &[
            Choice {
                value: "stg",
                title: Some("Staging"),
            },
            Choice {
                value: "prd",
                title: Some("Production"),
            },
        ];
        const STYLE: ChoiceStyle = ChoiceStyle::Standard;
        fn from_index(i: usize) -> Option<Self> {
            [Self::Stg, Self::Prd].get(i).copied()
        }
        fn index(self) -> usize {
            self as usize
        }
    }

    #[test]
    fn whole_numbers_are_written_as_integers_up_to_where_floats_stay_exact() {
        assert_eq!(number(2.0), json!(2));
        assert_eq!(number(-3.0), json!(-3));
        assert_eq!(number(1.5), json!(1.5));
        assert_eq!(number(-0.25), json!(-0.25));
        assert_eq!(number(8.0e15), json!(8_000_000_000_000_000_i64));
        assert_eq!(number(9.0e15), json!(9.0e15));
        assert_eq!(number(-9.0e15), json!(-9.0e15));
    }

    #[test]
    fn a_string_as_long_as_its_bounds_is_taken() {
        let spec = FieldSpec {
            min_length: Some(2),
            max_length: Some(4),
            ..FieldSpec::new("code")
        };
        assert_eq!(String::parse(&json!("ab"), &spec), Ok("ab".into()));
        assert_eq!(String::parse(&json!("abcd"), &spec), Ok("abcd".into()));
        // Characters, not bytes.
        assert_eq!(String::parse(&json!("éééé"), &spec), Ok("éééé".into()));
        assert!(
            String::parse(&json!("a"), &spec)
                .unwrap_err()
                .contains("at least 2 characters, got 1")
        );
        assert!(
            String::parse(&json!("abcde"), &spec)
                .unwrap_err()
                .contains("at most 4 characters, got 5")
        );
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Color {
        Red,
        Blue,
    }

    impl FormChoice for Color {
        const CHOICES: &'static [Choice] = &[
            Choice {
                value: "red",
                title: None,
            },
            Choice {
                value: "blue",
                title: None,
            },
        ];
        const STYLE: ChoiceStyle = ChoiceStyle::Standard;
        fn from_index(i: usize) -> Option<Self> {
            [Self::Red, Self::Blue].get(i).copied()
        }
        fn index(self) -> usize {
            self as usize
        }
    }

    #[test]
    fn untitled_choices_are_an_enum_and_lists_are_bounded_and_described() {
        let spec = FieldSpec::new("color");
        assert_eq!(
            Value::Object(choice_schema::<Color>(&spec)),
            json!({"type": "string", "enum": ["red", "blue"]})
        );
        let multi = FieldSpec {
            min_items: Some(2),
            max_items: Some(2),
            ..FieldSpec::new("envs")
        };
        assert_eq!(
            Value::Object(<Vec<Env>>::schema(&multi)),
            json!({"type": "array", "minItems": 2, "maxItems": 2, "items": {"anyOf": [
                {"const": "stg", "title": "Staging"}, {"const": "prd", "title": "Production"}]}})
        );
        assert_eq!(
            Value::Object(<Vec<Color>>::schema(&FieldSpec::new("colors"))),
            json!({"type": "array", "items": {"type": "string", "enum": ["red", "blue"]}})
        );
        assert_eq!(
            <Vec<Env>>::parse(&json!(["prd", "stg"]), &multi),
            Ok(vec![Env::Prd, Env::Stg])
        );
        assert_eq!(
            <Vec<Env>>::parse(&json!(["prd"]), &multi),
            Err("must have at least 2 choices, got 1".into())
        );
    }

    #[test]
    fn an_optional_field_is_its_fields_schema_null_is_none_and_a_default_fills_it() {
        let spec = FieldSpec {
            minimum: Some(1.0),
            ..FieldSpec::new("n")
        };
        assert_eq!(<Option<u8>>::schema(&spec), u8::schema(&spec));
        assert_eq!(<Option<u8>>::parse(&json!(null), &spec), Ok(None));
        assert_eq!(<Option<u8>>::parse(&json!(3), &spec), Ok(Some(3)));
        assert!(<Option<u8>>::parse(&json!(0), &spec).is_err());
        let with_default = FieldSpec {
            default: Some(DefaultValue::Bool(true)),
            ..FieldSpec::new("ok")
        };
        assert_eq!(<Option<bool>>::missing(&with_default), Ok(Some(true)));
    }

    #[test]
    fn an_integer_sent_as_a_float_is_taken_while_floats_are_exact() {
        let spec = FieldSpec::new("n");
        assert_eq!(u64::parse(&json!(8.0e15), &spec), Ok(8_000_000_000_000_000));
        assert!(u64::parse(&json!(9.0e15), &spec).is_err());
        assert_eq!(i64::parse(&json!(-3.0), &spec), Ok(-3));
    }

    #[test]
    fn choices() {
        let spec = FieldSpec {
            title: Some("Environment"),
            default: Some(DefaultValue::Str("stg")),
            ..FieldSpec::new("environment")
        };
        assert_eq!(
            Value::Object(choice_schema::<Env>(&spec)),
            json!({"type": "string", "title": "Environment", "default": "stg",
                   "oneOf": [{"const": "stg", "title": "Staging"}, {"const": "prd", "title": "Production"}]})
        );
        assert_eq!(parse_choice::<Env>(&json!("prd")), Ok(Env::Prd));
        assert_eq!(
            parse_choice::<Env>(&json!("dev")),
            Err("expected one of `stg`, `prd`, got \"dev\"".into())
        );
        let multi = FieldSpec {
            max_items: Some(1),
            ..FieldSpec::new("envs")
        };
        assert_eq!(<Vec<Env>>::parse(&json!(["stg"]), &multi), Ok(vec![Env::Stg]));
        assert!(<Vec<Env>>::parse(&json!(["stg", "prd"]), &multi).is_err());
        assert!(<Vec<Env>>::parse(&json!(["stg", "stg"]), &FieldSpec::new("e")).is_err());
        assert!(check::has_all(Env::CHOICES, &["prd", "stg"]));
        assert!(!check::has_all(Env::CHOICES, &["prd", "dev"]));
        assert!(check::has_choice(Env::CHOICES, "prd"));
        assert!(!check::has_choice(Env::CHOICES, "dev"));
    }

    #[test]
    fn a_choice_is_sent_as_its_value_and_the_old_public_helpers_still_work() {
        assert_eq!(Env::Stg.as_value(), "stg");
        assert_eq!(Env::Prd.as_value(), "prd");
        let spec = FieldSpec::new("environment");
        #[allow(deprecated)]
        let (schema, parsed) = (
            crate::form::choice_schema::<Env>(&spec),
            crate::form::parse_choice::<Env>(&json!("prd")),
        );
        assert_eq!(schema, choice_schema::<Env>(&spec));
        assert!(schema.contains_key("oneOf"));
        assert_eq!(parsed, Ok(Env::Prd));
    }
}
