//! The model of a `#[resolver]` function: its options and its parameters.

use super::validate;
use crate::util::attr_fn::{Flag, Options};
use crate::util::errors::Errors;
use crate::util::param_attrs::ParamAttrs;
use darling::FromMeta;
use darling::util::SpannedValue;
use syn::{FnArg, Ident, Pat, Type};

/// `#[resolver(...)]` options.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub(crate) struct ResolverArgs {
    /// The key of the resolver's question in `inputRequests`.
    pub(crate) key: Option<SpannedValue<String>>,
    /// `once`: its answer is single-use (checked by `Flag::check`).
    pub(crate) once: Option<Flag>,
    /// Path of the facade crate.
    #[darling(rename = "crate")]
    pub(crate) krate: Option<syn::Path>,
}

impl Options for ResolverArgs {
    fn krate(&self) -> Option<&syn::Path> {
        self.krate.as_ref()
    }
}

/// One parameter of a resolver: a tool argument, or the value of another resolver.
pub(crate) struct ResolverParam {
    pub(crate) ident: Ident,
    pub(crate) mutability: Option<syn::token::Mut>,
    pub(crate) ty: Type,
    /// `#[resolve(path)]`: the resolver this parameter's value comes from.
    pub(crate) dep: Option<syn::Path>,
    /// Its lint attributes, kept on the body's parameter.
    pub(crate) lints: Vec<syn::Attribute>,
}

/// Parses every parameter, collecting errors. A receiver or an unsupported pattern is reported
/// and left out.
pub(crate) fn params<'a>(inputs: impl Iterator<Item = &'a FnArg>, errors: &mut Errors) -> Vec<ResolverParam> {
    let mut params = Vec::new();
    for input in inputs {
        match input {
            FnArg::Receiver(r) => errors.spanned(r, "`#[resolver]` cannot take `self`: make it a free `async fn`"),
            FnArg::Typed(pt) => {
                let attrs = ParamAttrs::parse(&pt.attrs, errors);
                let dep = validate::param_attrs(&attrs, errors);
                match &*pt.pat {
                    Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => params.push(ResolverParam {
                        ident: pi.ident.clone(),
                        mutability: pi.mutability,
                        ty: (*pt.ty).clone(),
                        dep,
                        lints: attrs.other.iter().filter(|a| validate::is_lint(a)).cloned().collect(),
                    }),
                    other => errors.spanned(
                        other,
                        "`#[resolver]` parameters must be plain names: a name is the tool argument it reads",
                    ),
                }
            }
        }
    }
    params
}
