//! The model of a `#[tool]` function's parameters.

use super::args::ArgAttr;
use crate::util::docs;
use crate::util::errors::Errors;
use crate::util::spans::unraw;
use darling::FromMeta;
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
    let (doc_attrs, rest) = docs::take_docs(pt.attrs.clone());
    let mut arg_attr: Option<ArgAttr> = None;
    let mut arg_meta: Option<syn::Meta> = None;
    let mut source: Option<Source> = None;
    let mut kept_attrs = Vec::new();
    for attr in rest {
        if attr.path().is_ident("resolve") || attr.path().is_ident("confirm") {
            let name = if attr.path().is_ident("resolve") {
                "resolve"
            } else {
                "confirm"
            };
            let parsed = if name == "resolve" {
                attr.parse_args::<syn::Path>().map(Source::Resolve).map_err(|e| {
                    syn::Error::new(e.span(), "expected `#[resolve(path::to::resolver)]`: the resolver function, annotated with `#[resolver]`")
                })
            } else {
                attr.parse_args::<syn::LitStr>().map(Source::Confirm).map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "expected `#[confirm(\"message\")]`: the question to ask, with `{argument}` placeholders",
                    )
                })
            };
            match (parsed, &source) {
                (Err(e), _) => errors.push(e),
                (Ok(_), Some(_)) => errors.spanned(
                    attr.path(),
                    format!("a parameter takes one `#[resolve]` or `#[confirm]`: remove this `#[{name}]`"),
                ),
                (Ok(s), None) => source = Some(s),
            }
            continue;
        }
        if attr.path().is_ident("arg") {
            if arg_attr.is_some() {
                errors.spanned(
                    attr.path(),
                    "duplicate `#[arg]` attribute: put every option in one `#[arg(...)]`",
                );
                continue;
            }
            arg_meta = Some(attr.meta.clone());
            // A bare `#[arg]` changes nothing, and is accepted.
            let parsed = match &attr.meta {
                syn::Meta::Path(_) => Ok(ArgAttr::default()),
                meta => ArgAttr::from_meta(meta),
            };
            match parsed {
                Ok(a) => arg_attr = Some(a),
                Err(e) => {
                    arg_attr = Some(ArgAttr::default());
                    errors.darling(e);
                }
            }
        } else {
            kept_attrs.push(attr);
        }
    }
    let arg_attr = arg_attr.unwrap_or_default();
    if let (Some(source), Some(meta), true) = (
        &source,
        &arg_meta,
        arg_attr.rename.is_some() || arg_attr.description.is_some(),
    ) {
        let by = match source {
            Source::Confirm(_) => "`#[confirm]`",
            _ => "`#[resolve]`",
        };
        errors.spanned(
            meta,
            format!("a {by} parameter is not an argument, so `#[arg(...)]` options do not apply to it: remove them"),
        );
    }
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
    let (key, key_span) = match &arg_attr.rename {
        Some(r) => ((**r).clone(), r.span()),
        None => (unraw(&ident), ident.span()),
    };
    let description = match arg_attr.description {
        Some(d) => Some(quote!(#d)),
        None if doc_attrs.is_empty() => None,
        None => Some(docs::description(&doc_attrs)),
    };
    Some(Param {
        source: source.unwrap_or(Source::Argument),
        ident,
        mutability,
        ty: (*pt.ty).clone(),
        key,
        description,
        key_span,
        kept_attrs,
    })
}
