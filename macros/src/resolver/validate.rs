//! Checks of a `#[resolver]` function: signature shape, key, parameter attributes.

use crate::util::errors::Errors;
use crate::util::param_attrs::{Helper, ParamAttrs};
use darling::util::SpannedValue;
use syn::Signature;

/// Signature checks: async, no generics, not const or unsafe. (A receiver is reported with the
/// parameters.)
pub(crate) fn signature(sig: &Signature, errors: &mut Errors) {
    crate::util::check_arity("resolver", sig, errors);
    if sig.asyncness.is_none() {
        errors.spanned(
            sig.fn_token,
            "`#[resolver]` functions must be `async`: write `async fn`",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(
            &sig.generics,
            "`#[resolver]` functions cannot be generic: use concrete types",
        );
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        errors.spanned(u, "`#[resolver]` functions cannot be `unsafe`");
    }
    if let Some(c) = &sig.constness {
        errors.spanned(c, "`#[resolver]` functions cannot be `const`");
    }
}

/// The key of the resolver's question: `key = "…"`, which cannot be empty, or the function's
/// name.
pub(crate) fn key(key: Option<&SpannedValue<String>>, name: &str, errors: &mut Errors) -> String {
    match key {
        Some(k) => {
            if k.is_empty() {
                errors.push(syn::Error::new(
                    k.span(),
                    "a resolver key cannot be empty: give a name, or remove `key` to use the function's name",
                ));
            }
            (**k).clone()
        }
        None => name.to_string(),
    }
}

/// The lint attributes a resolver parameter may carry; they are kept on the body's parameter.
const LINTS: [&str; 5] = ["allow", "expect", "warn", "deny", "forbid"];

/// Whether `attr` is a lint attribute (`#[allow(…)]`, …).
pub(crate) fn is_lint(attr: &syn::Attribute) -> bool {
    LINTS.iter().any(|l| attr.path().is_ident(l))
}

/// A resolver parameter takes at most one `#[resolve]`, lint attributes, and no other attribute
/// (doc comments aside). Returns the resolver it names.
pub(crate) fn param_attrs(attrs: &ParamAttrs, errors: &mut Errors) -> Option<syn::Path> {
    let mut dep = None;
    for h in &attrs.helpers {
        match &h.helper {
            Helper::Resolve(path) if dep.is_none() => dep = Some(path.clone()),
            Helper::Resolve(_) => errors.spanned(
                h.attr.path(),
                "duplicate `#[resolve]` attribute: a parameter has one resolver; remove this one",
            ),
            Helper::Arg(_) | Helper::Confirm(_) => {
                errors.spanned(
                    &h.attr,
                    "only `#[resolve(...)]` and lint attributes (`#[allow(...)]`, `#[expect(...)]`, …) may annotate a resolver parameter",
                );
            }
        }
    }
    for attr in attrs.other.iter().filter(|a| !is_lint(a)) {
        errors.spanned(
            attr,
            "only `#[resolve(...)]` and lint attributes (`#[allow(...)]`, `#[expect(...)]`, …) may annotate a resolver parameter",
        );
    }
    dep
}
