//! Values the 2026-07-28 client mirrors from the body into headers (`Mcp-Name`, `Mcp-Param-*`):
//! their encoding, and the check that each header says what the body says.

use super::header_str;
use crate::protocol::jsonrpc::raw_str;
use base64::Engine as _;
use http::HeaderMap;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;

/// A mirrored header's value: as sent, or decoded from `=?base64?…?=` (standard base64 of the
/// UTF-8 text), which a client uses for values that cannot travel as plain ASCII or that look
/// like that form themselves. `None` when the encoded form does not decode.
pub(super) fn decoded(value: &str) -> Option<Cow<'_, str>> {
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        None => Some(Cow::Borrowed(value)),
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok().map(Cow::Owned)
        }
    }
}

/// The mirrored header `name`, decoded; `Some(None)` when present but undecodable.
pub(super) fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<Option<Cow<'h, str>>> {
    header_str(headers, name).map(decoded)
}

/// The header text a body value is mirrored as: a string as it is, an integer or a boolean as
/// written; `None` for `null` (no header is sent); `Err` for anything else.
fn as_header_text(value: &RawValue) -> Result<Option<Cow<'_, str>>, ()> {
    let text = value.get();
    match text.as_bytes().first() {
        Some(b'"') => raw_str(value).map(Some).ok_or(()),
        Some(b'n') => Ok(None),
        Some(b't' | b'f' | b'-' | b'0'..=b'9') => Ok(Some(Cow::Borrowed(text))),
        _ => Err(()),
    }
}

/// Whether a mirrored value is not an integer beyond ±(2^53 − 1) (strings and booleans are).
fn within_safe_range(text: &str) -> bool {
    let numeric = text.starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    !numeric
        || text
            .parse::<i128>()
            .is_ok_and(|v| v.unsigned_abs() <= crate::tool::MAX_MIRRORED_INTEGER as u128)
}

/// The value at `path` in the `arguments` object, if there is one.
fn at_path<'a>(arguments: &'a RawValue, path: &[String]) -> Option<&'a RawValue> {
    let mut here = arguments;
    for key in path {
        let object: HashMap<Cow<'a, str>, &'a RawValue> = serde_json::from_str(here.get()).ok()?;
        here = *object.get(key.as_str())?;
    }
    Some(here)
}

/// Checks every `Mcp-Param-{name}` the tool declares against the body's `arguments`: a value
/// needs its header, saying the same; no value (absent or `null`) means no header. `Err` names
/// the header at fault.
pub(super) fn check_params(
    headers: &HeaderMap,
    arguments: Option<&RawValue>,
    mirrored: &[(String, Vec<String>)],
) -> Result<(), String> {
    for (name, path) in mirrored {
        let header_name = format!("mcp-param-{}", name.to_ascii_lowercase());
        let value = arguments.and_then(|a| at_path(a, path));
        let expected = match value.map(as_header_text) {
            None | Some(Ok(None)) => None,
            Some(Ok(Some(text))) if !within_safe_range(&text) => {
                return Err(format!(
                    "Mcp-Param-{name}: the integer is outside ±(2^53 − 1), the range a header can carry exactly"
                ));
            }
            Some(Ok(Some(text))) => Some(text),
            Some(Err(())) => {
                return Err(format!(
                    "Mcp-Param-{name}: the argument is not a string, integer or boolean"
                ));
            }
        };
        match (expected, header(headers, &header_name)) {
            (None, None) => {}
            (Some(_), None) => return Err(format!("the Mcp-Param-{name} header is required")),
            (None, Some(_)) => return Err(format!("Mcp-Param-{name} is sent but the argument is not")),
            (Some(want), Some(got)) => {
                if got.as_deref() != Some(&*want) {
                    return Err(format!("Mcp-Param-{name} does not match the body"));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn encoded_values_are_decoded() {
        assert_eq!(decoded("plain").as_deref(), Some("plain"));
        assert_eq!(decoded("=?base64?w6l0w6k=?=").as_deref(), Some("été"));
        assert_eq!(decoded("=?base64?not base64?="), None);
        assert_eq!(decoded("=?base64?/w==?="), None, "not UTF-8");
    }

    /// x-mcp-header: "Integer values MUST be within the safe range for JavaScript".
    #[test]
    fn mirrored_integers_stay_within_the_javascript_safe_range() {
        let mirrored = vec![("Id".to_string(), vec!["id".to_string()])];
        let mut headers = HeaderMap::new();
        for (ok, value) in [
            (true, "9007199254740991"),
            (true, "-9007199254740991"),
            (false, "9007199254740992"),
            (false, "-18446744073709551615"),
        ] {
            let args = RawValue::from_string(format!(r#"{{"id":{value}}}"#)).unwrap();
            headers.insert("mcp-param-id", HeaderValue::from_str(value).unwrap());
            let checked = check_params(&headers, Some(&args), &mirrored);
            assert_eq!(checked.is_ok(), ok, "{value}: {checked:?}");
        }
        let mut s = crate::tool::ArgsSchema::new();
        s.argument::<i64>("id", None);
        s.argument::<u8>("small", None);
        s.argument::<Option<i64>>("maybe", None);
        s.header("id", "Id");
        s.header("small", "Small");
        s.header("maybe", "Maybe");
        let s = s.finish();
        assert_eq!(s["properties"]["id"]["maximum"], 9_007_199_254_740_991_i64);
        assert_eq!(s["properties"]["id"]["minimum"], -9_007_199_254_740_991_i64);
        assert_eq!(s["properties"]["small"]["maximum"], 255, "a narrower bound is kept");
        assert_eq!(s["properties"]["small"]["minimum"], 0);
        assert_eq!(
            s["properties"]["maybe"]["maximum"], 9_007_199_254_740_991_i64,
            "an optional one too"
        );
    }

    #[test]
    fn each_mirrored_argument_needs_its_header() {
        let mirrored = vec![
            ("Region".to_string(), vec!["region".to_string()]),
            ("Count".to_string(), vec!["n".to_string()]),
            ("Deep".to_string(), vec!["where".to_string(), "zone".to_string()]),
        ];
        let args = RawValue::from_string(r#"{"region":"eu-west","n":3,"where":{"zone":"b"}}"#.into()).unwrap();
        let mut headers = HeaderMap::new();
        assert_eq!(
            check_params(&headers, Some(&args), &mirrored),
            Err("the Mcp-Param-Region header is required".into())
        );
        headers.insert("mcp-param-region", HeaderValue::from_static("eu-west"));
        headers.insert("mcp-param-count", HeaderValue::from_static("3"));
        headers.insert("mcp-param-deep", HeaderValue::from_static("=?base64?Yg==?="));
        assert_eq!(check_params(&headers, Some(&args), &mirrored), Ok(()));
        headers.insert("mcp-param-count", HeaderValue::from_static("4"));
        assert_eq!(
            check_params(&headers, Some(&args), &mirrored),
            Err("Mcp-Param-Count does not match the body".into())
        );
        // No value: no header.
        let args = RawValue::from_string(r#"{"region":"eu-west","n":null}"#.into()).unwrap();
        headers.remove("mcp-param-deep");
        assert_eq!(
            check_params(&headers, Some(&args), &mirrored),
            Err("Mcp-Param-Count is sent but the argument is not".into())
        );
        headers.remove("mcp-param-count");
        assert_eq!(check_params(&headers, Some(&args), &mirrored), Ok(()));
    }
}
