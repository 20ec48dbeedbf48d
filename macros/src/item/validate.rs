//! Checks every item kind makes the same way: the function's signature, the item's name, its
//! `scopes`, and its arguments' names.

use super::kind::Kind;
use super::param::Param;
use crate::util::errors::Errors;
use crate::util::spans::unraw;
use darling::util::SpannedValue;
use std::collections::HashSet;
use syn::{Ident, Signature};

/// Signature checks: async, no generics, no const/unsafe/extern/variadic, and not too many
/// parameters. (A receiver is reported with the parameters.)
pub(crate) fn signature(kind: Kind, sig: &Signature, errors: &mut Errors) {
    let what = kind.name();
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
    let why = kind.why_concrete();
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

/// The item's name on the wire: `name = "…"`, which `check` may refuse (its message is reported at
/// the value), or the function's name.
pub(crate) fn wire_name(
    name: Option<&SpannedValue<String>>,
    ident: &Ident,
    check: impl FnOnce(&str) -> Result<(), String>,
    errors: &mut Errors,
) -> String {
    match name {
        Some(n) => {
            if let Err(msg) = check(n) {
                errors.push(syn::Error::new(n.span(), msg));
            }
            (**n).clone()
        }
        None => unraw(ident),
    }
}

/// Two arguments may not share a name: the second is an error at its name, saying `message(name)`.
pub(crate) fn unique_keys(params: &[Param], message: impl Fn(&str) -> String, errors: &mut Errors) {
    let mut seen = HashSet::new();
    for p in params.iter().filter(|p| p.is_argument()) {
        if !seen.insert(p.key.as_str()) {
            errors.push(syn::Error::new(p.key_span, message(&p.key)));
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn signature_errors_are_all_collected() {
        let sig: Signature = syn::parse_quote!(const unsafe fn f<T>(x: T) where T: Copy);
        let mut e = Errors::default();
        signature(Kind::Tool, &sig, &mut e);
        let n = e.into_tokens().to_string().matches("compile_error").count();
        assert_eq!(n, 5);
    }
}
