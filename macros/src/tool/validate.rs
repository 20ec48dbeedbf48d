//! Checks that span the whole function: signature shape, names.

use super::param::{Param, Source};
use crate::util::errors::Errors;
use crate::util::param_attrs::{ArgOptions, Helper, ParamAttrs};
use std::collections::HashSet;
use syn::Signature;

/// Signature checks: async, no generics, no const/unsafe/extern/variadic.
pub(crate) fn signature(sig: &Signature, errors: &mut Errors) {
    signature_of("tool", sig, errors);
}

/// [`signature`] for the attribute `#[what]`: `#[prompt]` and `#[resource]` take the same shape.
pub(crate) fn signature_of(what: &str, sig: &Signature, errors: &mut Errors) {
    crate::util::check_arity(what, sig, errors);
    if sig.asyncness.is_none() {
        errors.spanned(
            sig.fn_token,
            format!("`#[{what}]` functions must be `async`: write `async fn`"),
        );
    }
    if let Some(c) = &sig.constness {
        errors.spanned(c, format!("`#[{what}]` functions cannot be `const`: remove `const`"));
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        errors.spanned(
            u,
            format!("`#[{what}]` functions cannot be `unsafe`: wrap the unsafe code in a safe function"),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(
            abi,
            format!("`#[{what}]` functions cannot have an `extern` ABI: remove it"),
        );
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, format!("`#[{what}]` functions cannot be variadic"));
    }
    let why = if what == "tool" {
        "which the inputSchema is built from"
    } else {
        "which the arguments are read into"
    };
    if !sig.generics.params.is_empty() {
        errors.spanned(
            &sig.generics.params,
            format!("`#[{what}]` functions cannot be generic: replace the type parameters with concrete types, {why}"),
        );
    }
    if let Some(w) = &sig.generics.where_clause {
        errors.spanned(
            w,
            format!("`#[{what}]` functions cannot have a `where` clause: remove it, and use concrete types"),
        );
    }
}

/// A tool parameter takes at most one `#[arg]` and one `#[resolve]` or `#[confirm]`, and a
/// parameter that is not an argument takes no `#[arg]` options. Returns the `#[arg]` options and
/// where the parameter's value comes from.
pub(crate) fn param_attrs<'a>(attrs: &'a ParamAttrs, errors: &mut Errors) -> (Option<&'a ArgOptions>, Source) {
    let mut arg: Option<(&ArgOptions, &syn::Attribute)> = None;
    let mut source: Option<(Source, &'static str)> = None;
    for h in &attrs.helpers {
        let taken = match &h.helper {
            Helper::Arg(options) => {
                if arg.is_some() {
                    errors.spanned(
                        h.attr.path(),
                        "duplicate `#[arg]` attribute: put every option in one `#[arg(...)]`",
                    );
                } else {
                    arg = Some((options, &h.attr));
                }
                continue;
            }
            Helper::Resolve(path) => Source::Resolve(path.clone()),
            Helper::Confirm(message) => Source::Confirm(message.clone()),
        };
        if source.is_some() {
            errors.spanned(
                h.attr.path(),
                format!(
                    "a parameter takes one `#[resolve]` or `#[confirm]`: remove this {}",
                    h.name()
                ),
            );
        } else {
            source = Some((taken, h.name()));
        }
    }
    if let (Some((_, by)), Some((options, attr))) = (&source, arg)
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
    (
        arg.map(|(options, _)| options),
        source.map_or(Source::Argument, |(s, _)| s),
    )
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

/// `scopes = ["a", "b"]`: a non-empty list of distinct OAuth scope tokens (RFC 6749 §3.3:
/// printable ASCII but space, `"` and `\\`). Every problem is reported at its token.
pub(crate) fn scopes(expr: &syn::Expr, errors: &mut Errors) -> Vec<String> {
    const HINT: &str = "write `scopes = [\"notes:read\", \"notes:write\"]`";
    let syn::Expr::Array(list) = expr else {
        errors.spanned(expr, format!("`scopes` takes a list of scope names: {HINT}"));
        return Vec::new();
    };
    if list.elems.is_empty() {
        errors.spanned(
            list,
            "`scopes = []` requires nothing: remove `scopes`, or name the scopes a caller needs",
        );
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for elem in &list.elems {
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s), ..
        }) = elem
        else {
            errors.spanned(elem, format!("a scope is a string literal: {HINT}"));
            continue;
        };
        let scope = s.value();
        if let Err(msg) = scope_token(&scope) {
            errors.spanned(s, msg);
        } else if !seen.insert(scope.clone()) {
            errors.spanned(s, format!("scope `{scope}` is listed twice: remove one"));
        } else {
            out.push(scope);
        }
    }
    out
}

/// One OAuth scope token (RFC 6749 §3.3).
fn scope_token(scope: &str) -> Result<(), String> {
    if scope.is_empty() {
        return Err("a scope cannot be empty: name it, e.g. `\"notes:write\"`".into());
    }
    if let Some(c) = scope.chars().find(|c| !c.is_ascii_graphic() || matches!(c, '"' | '\\')) {
        return Err(format!(
            "scope `{scope}` has the character {c:?}, which a scope cannot hold (RFC 6749 §3.3); list two scopes as two strings"
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
        .filter(|p| matches!(p.source, Source::Argument))
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
    let mut seen = HashSet::new();
    for p in params.iter().filter(|p| matches!(p.source, Source::Argument)) {
        if !seen.insert(p.key.as_str()) {
            errors.push(syn::Error::new(
                p.key_span,
                format!(
                    "two parameters use the argument name `{}`: rename one with `#[arg(rename = \"...\")]`",
                    p.key
                ),
            ));
        }
    }
}

/// `#[arg(header = "Region")]`: each name an HTTP token (RFC 9110 §5.6.2), unique ignoring case
/// among the tool's arguments (the client sends `Mcp-Param-{name}`, and header names are not
/// case-sensitive).
pub(crate) fn headers(params: &[Param], errors: &mut Errors) {
    let mut seen = HashSet::new();
    for p in params.iter().filter(|p| matches!(p.source, Source::Argument)) {
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
pub(crate) fn replayable(
    flag: &crate::util::attr_fn::Flag,
    destructive: Option<bool>,
    params: &[Param],
    errors: &mut Errors,
) {
    let word = flag.check("#[tool(destructive = true, replayable)]", errors);
    if destructive != Some(true) {
        errors.push(syn::Error::new(
            word,
            "`replayable` opts a `destructive = true` tool out of single-use answers; this tool is not destructive, so its answers are replayable already: remove `replayable` (or add `destructive = true`)",
        ));
    } else if params.iter().all(|p| matches!(p.source, Source::Argument)) {
        errors.push(syn::Error::new(
            word,
            "`replayable` has nothing to opt out of: this tool asks nothing (no `#[confirm]` or `#[resolve]` parameter); remove `replayable`",
        ));
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
    fn scope_lists() {
        let mut e = Errors::default();
        assert_eq!(
            scopes(&syn::parse_quote!(["a:b", "c"]), &mut e),
            vec!["a:b".to_string(), "c".to_string()]
        );
        assert!(e.is_empty());
        for bad in [
            syn::parse_quote!("a"),
            syn::parse_quote!([]),
            syn::parse_quote!(["a b"]),
            syn::parse_quote!([""]),
            syn::parse_quote!(["a", "a"]),
            syn::parse_quote!([1]),
        ] {
            let mut e = Errors::default();
            scopes(&bad, &mut e);
            assert!(!e.is_empty(), "{}", quote::quote!(#bad));
        }
    }

    #[test]
    fn tool_names() {
        assert!(tool_name("delete_folder").is_ok());
        assert!(tool_name("a.b-c").is_ok());
        assert!(tool_name("").is_err());
        assert!(tool_name("has space").is_err());
        assert!(tool_name(&"x".repeat(129)).is_err());
    }

    #[test]
    fn signature_errors_are_all_collected() {
        let sig: Signature = syn::parse_quote!(const unsafe fn f<T>(x: T) where T: Copy);
        let mut e = Errors::default();
        signature(&sig, &mut e);
        let n = e.into_tokens().to_string().matches("compile_error").count();
        assert_eq!(n, 5);
    }
}
