//! The model of a `#[tool]` function's parameters.

use super::validate;
use crate::util::docs;
use crate::util::errors::Errors;
use crate::util::param_attrs::ParamAttrs;
use crate::util::spans::unraw;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, FnArg, Ident, Pat, PatType, Type};

/// Where a parameter's value comes from.
pub(crate) enum Source {
    /// The client's `arguments` (or the context): described in the schema by its type.
    Argument,
    /// `#[resolve(path)]`: a resolver.
    Resolve(syn::Path),
    /// `#[confirm("message with {placeholders}")]`: a yes/no question.
    Confirm(syn::LitStr),
}

/// One parameter of a tool function.
pub(crate) struct Param {
    pub(crate) source: Source,
    pub(crate) ident: Ident,
    pub(crate) mutability: Option<syn::token::Mut>,
    pub(crate) ty: Type,
    /// The argument's JSON key.
    pub(crate) key: String,
    /// A `&'static str` description expression, or `None`.
    pub(crate) description: Option<TokenStream>,
    /// The token a "duplicate key" error points at.
    pub(crate) key_span: proc_macro2::Span,
    /// `#[arg(header = "…")]`: the `Mcp-Param-*` name the argument is mirrored into, and where
    /// it was written.
    pub(crate) header: Option<(String, proc_macro2::Span)>,
    /// Attributes kept on the parameter of the body function (e.g. `#[allow]`).
    pub(crate) kept_attrs: Vec<Attribute>,
}

/// Parses every parameter, collecting errors. A receiver or an unsupported pattern is reported
/// and left out.
pub(crate) fn parse_params<'a>(inputs: impl Iterator<Item = &'a FnArg>, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    for arg in inputs {
        match arg {
            FnArg::Receiver(r) => errors.spanned(
                r,
                "`#[tool]` cannot take `self`: make it a free `async fn`, and reach shared state through a `static` (e.g. a `LazyLock`)",
            ),
            FnArg::Typed(pt) => {
                if let Some(p) = parse_param(pt, errors) {
                    params.push(p);
                }
            }
        }
    }
    params
}

fn parse_param(pt: &PatType, errors: &mut Errors) -> Option<Param> {
    let attrs = ParamAttrs::parse(&pt.attrs, errors);
    let (arg, source) = validate::param_attrs(&attrs, errors);
    let (ident, mutability) = match &*pt.pat {
        Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => (pi.ident.clone(), pi.mutability),
        other => {
            errors.spanned(
                other,
                "`#[tool]` parameters must be plain names, since the name is the argument's JSON key: bind a name and destructure it in the body",
            );
            return None;
        }
    };
    if let Type::ImplTrait(it) = &*pt.ty {
        errors.spanned(
            it,
            "`#[tool]` parameters need concrete types to build the inputSchema: replace `impl Trait` with a type",
        );
        return None;
    }
    let (key, key_span) = match arg.and_then(|a| a.rename.as_ref()) {
        Some(r) => ((**r).clone(), r.span()),
        None => (unraw(&ident), ident.span()),
    };
    let description = match arg.and_then(|a| a.description.as_ref()) {
        Some(d) => Some(quote!(#d)),
        None if attrs.docs.is_empty() => None,
        None => Some(docs::description(&attrs.docs)),
    };
    let header = arg.and_then(|a| a.header.as_ref()).map(|h| ((**h).clone(), h.span()));
    Some(Param {
        source,
        ident,
        mutability,
        ty: (*pt.ty).clone(),
        key,
        description,
        key_span,
        header,
        kept_attrs: attrs.other,
    })
}
