//! The checks only a tool makes: which helper attributes its parameters take, its name,
//! `#[confirm]` messages, `#[arg(header)]` names, and `replayable`.

use crate::item::{self, Helpers, Param, Source};
use crate::util::attr_fn::Flag;
use crate::util::errors::Errors;
use crate::util::param_attrs::ArgOptions;
use std::collections::HashSet;

/// A parameter that is not an argument takes no `#[arg]` options, and a tool argument no
/// `complete`. (`Helpers::read` has taken one `#[arg]` and one `#[resolve]` or `#[confirm]`.)
pub(crate) fn arg_options(helpers: &Helpers<'_>, errors: &mut Errors) {
    let Helpers { arg, source } = helpers;
    if let (Some((_, by)), Some((options, attr))) = (source, arg)
        && (options.rename.is_some() || options.description.is_some())
    {
        errors.spanned(
            &attr.meta,
            format!("a {by} parameter is not an argument, so `#[arg(...)]` options do not apply to it: remove them"),
        );
    }
    if let Some((
        ArgOptions {
            complete: Some(path), ..
        },
        _,
    )) = arg
    {
        errors.spanned(
            path,
            "`complete` applies to `#[prompt]` arguments and `#[resource]` template variables; tool arguments have no completions: remove it",
        );
    }
}

/// A valid MCP tool name: 1–128 characters of `A–Z a–z 0–9 _ - .`.
pub(crate) fn tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 128 {
        return Err(format!("tool name `{name}` must have 1 to 128 characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "tool name `{name}` has the character {c:?}; use only ASCII letters, digits, `_`, `-` and `.`"
        ));
    }
    Ok(())
}

/// The `{name}` placeholders of a `#[confirm("…")]` message, or an error for a lone brace.
/// `{{` and `}}` are literal braces.
pub(crate) fn placeholders(template: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut chars = template.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' if chars.peek().map(|(_, c)| *c) == Some('{') => {
                chars.next();
            }
            '}' if chars.peek().map(|(_, c)| *c) == Some('}') => {
                chars.next();
            }
            '{' => {
                let rest = &template[i + 1..];
                let Some(end) = rest.find('}') else {
                    return Err("unclosed `{` in the message: write `{{` for a literal brace".into());
                };
                let name = &rest[..end];
                if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    return Err(format!(
                        "`{{{name}}}` is not a placeholder: write `{{argument}}`, or `{{{{` for a literal brace"
                    ));
                }
                names.push(name.to_string());
                for _ in 0..=end {
                    chars.next();
                }
            }
            '}' => return Err("unmatched `}` in the message: write `}}` for a literal brace".into()),
            _ => {}
        }
    }
    Ok(names)
}

/// Every placeholder of every `#[confirm]` message names one of the tool's arguments.
pub(crate) fn confirm_messages(params: &[Param], errors: &mut Errors) {
    let arguments: Vec<&str> = params
        .iter()
        .filter(|p| p.is_argument())
        .map(|p| p.key.as_str())
        .collect();
    for p in params {
        let Source::Confirm(message) = &p.source else { continue };
        match placeholders(&message.value()) {
            Err(e) => errors.spanned(message, e),
            Ok(names) => {
                for name in names {
                    if !arguments.contains(&name.as_str()) {
                        let known = if arguments.is_empty() {
                            "this tool has no arguments".to_string()
                        } else {
                            format!(
                                "its arguments are {}",
                                arguments
                                    .iter()
                                    .map(|a| format!("`{a}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        };
                        errors.spanned(
                            message,
                            format!(
                                "`{{{name}}}` in the confirmation message is not an argument of this tool; {known}"
                            ),
                        );
                    }
                }
            }
        }
    }
}

/// Two parameters may not share a JSON key.
pub(crate) fn unique_keys(params: &[Param], errors: &mut Errors) {
    item::unique_keys(
        params,
        |key| format!("two parameters use the argument name `{key}`: rename one with `#[arg(rename = \"...\")]`"),
        errors,
    );
}

/// `#[arg(header = "Region")]`: each name an HTTP token (RFC 9110 §5.6.2), unique ignoring case
/// among the tool's arguments (the client sends `Mcp-Param-{name}`, and header names are not
/// case-sensitive).
pub(crate) fn headers(params: &[Param], errors: &mut Errors) {
    let mut seen = HashSet::new();
    for p in params.iter().filter(|p| p.is_argument()) {
        let Some((name, span)) = &p.header else { continue };
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() {
            errors.push(syn::Error::new(
                *span,
                "a header name cannot be empty: name it, e.g. `#[arg(header = \"Region\")]`",
            ));
        } else if let Some(c) = name.chars().find(|c| !token(*c)) {
            errors.push(syn::Error::new(
                *span,
                format!(
                    "header name `{name}` has the character {c:?}; an HTTP header name is letters, digits and `!#$%&'*+-.^_`|~` (the client sends `Mcp-Param-{{name}}`)"
                ),
            ));
        } else if !seen.insert(name.to_ascii_lowercase()) {
            errors.push(syn::Error::new(
                *span,
                format!("two arguments use the header name `{name}` (header names ignore case): rename one"),
            ));
        }
    }
}

/// `#[tool(destructive = true, replayable)]`: the opt-out of a destructive tool's single-use
/// answers, so it needs a destructive tool that asks something.
pub(crate) fn replayable(flag: &Flag, destructive: Option<bool>, params: &[Param], errors: &mut Errors) {
    let word = flag.check("#[tool(destructive = true, replayable)]", errors);
    if destructive != Some(true) {
        errors.push(syn::Error::new(
            word,
            "`replayable` opts a `destructive = true` tool out of single-use answers; this tool is not destructive, so its answers are replayable already: remove `replayable` (or add `destructive = true`)",
        ));
    } else if params.iter().all(Param::is_argument) {
        errors.push(syn::Error::new(
            word,
            "`replayable` has nothing to opt out of: this tool asks nothing (no `#[confirm]` or `#[resolve]` parameter); remove `replayable`",
        ));
    }
}

/// `#[tool(task = "…")]`: one of the three ways a tool may run; the variant's name.
pub(crate) fn task_support(value: &syn::Expr, errors: &mut Errors) -> Option<&'static str> {
    let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(lit),
        ..
    }) = value
    else {
        errors.spanned(
            value,
            "`task` takes a string: write `task = \"optional\"` (a task when the client can follow one) or `task = \"required\"` (always a task)",
        );
        return None;
    };
    match lit.value().as_str() {
        "optional" => Some("Optional"),
        "required" => Some("Required"),
        "forbidden" => Some("Forbidden"),
        other => {
            errors.spanned(
                lit,
                format!(
                    "`task = \"{other}\"` is not a way a tool runs: write `task = \"optional\"` (a task when the client can follow one), `task = \"required\"` (always a task) or leave `task` out (never a task)"
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_parsed() {
        assert_eq!(
            placeholders("Delete {path} ({count} files)?").unwrap(),
            vec!["path", "count"]
        );
        assert_eq!(placeholders("{{literal}} {x}").unwrap(), vec!["x"]);
        assert!(placeholders("oops {path").is_err());
        assert!(placeholders("oops }").is_err());
        assert!(placeholders("{a b}").is_err());
    }

    #[test]
    fn tool_names() {
        assert!(tool_name("delete_folder").is_ok());
        assert!(tool_name("a.b-c").is_ok());
        assert!(tool_name("").is_err());
        assert!(tool_name("has space").is_err());
        assert!(tool_name(&"x".repeat(129)).is_err());
    }
}
