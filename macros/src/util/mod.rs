//! Helpers shared by the macros.

pub(crate) mod attr_fn;
pub(crate) mod docs;
pub(crate) mod errors;
pub(crate) mod fn_value;
pub(crate) mod param_attrs;
pub(crate) mod resolved;
pub(crate) mod spans;

/// The type a function returns (`()` when it declares none).
pub(crate) fn return_type(output: &syn::ReturnType) -> syn::Type {
    match output {
        syn::ReturnType::Default => syn::parse_quote!(()),
        syn::ReturnType::Type(_, ty) => (**ty).clone(),
    }
}

/// The most parameters a generated function may have: the runtime finds an item's marker from
/// functions of up to this many (`mcp_resolve::MAX_PARAMS`).
pub(crate) const MAX_PARAMS: usize = 24;

/// A function with more than [`MAX_PARAMS`] parameters is an error at its name.
pub(crate) fn check_arity(what: &str, sig: &syn::Signature, errors: &mut errors::Errors) {
    let n = sig.inputs.len();
    if n > MAX_PARAMS {
        errors.spanned(
            &sig.ident,
            format!(
                "a `#[{what}]` function takes at most {MAX_PARAMS} parameters, this one {n}: group arguments in a struct (it derives `Deserialize` and `JsonSchema`)"
            ),
        );
    }
}

/// The generated body's locals for the parameters `idents`, one each, located at the parameter
/// (errors point there) but hygienic: the body never binds a user's name, so no parameter can
/// shadow a `#[resolve(path)]` read after it, or the function itself.
pub(crate) fn param_locals<'a>(idents: impl IntoIterator<Item = &'a syn::Ident>) -> Vec<syn::Ident> {
    idents
        .into_iter()
        .enumerate()
        .map(|(i, ident)| {
            let span = proc_macro2::Span::mixed_site().located_at(ident.span());
            quote::format_ident!("__arg{}", i, span = span)
        })
        .collect()
}
