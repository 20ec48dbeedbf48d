//! `#[tool]`, `#[prompt]` and `#[resource]`: one item, three kinds. [`expand`] runs what they
//! share (parse, check the signature, read the parameters, collect every error, then emit the
//! function and its trait impl, or on error a stand-in next to the errors) and asks the kind
//! ([`ItemKind`]) only what differs: what its attribute accepts, which parameters it takes, and
//! the bodies of its trait's methods.

mod codegen;
mod kind;
mod param;
mod validate;

pub(crate) use codegen::{Cx, Generated, completer, direct_call, option};
pub(crate) use kind::Kind;
pub(crate) use param::{Helpers, Param, Source};
pub(crate) use validate::{scopes, unique_keys, wire_name};

use crate::util::attr_fn::{self, Options};
use crate::util::docs;
use crate::util::errors::Errors;
use crate::util::fn_value::result_slot;
use crate::util::param_attrs::ParamAttrs;
use crate::util::resolved::{Slots, args_type, ty};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, Ident, Pat, PatType, Signature};

/// What one kind of item decides, beyond what its [`Kind`] says. [`expand`] calls these in
/// order: `new`, then `helpers` and `source` for each parameter, `check`, and `generate` if
/// nothing failed.
pub(crate) trait ItemKind: Sized {
    const KIND: Kind;
    /// The attribute's options.
    type Args: Options;

    /// Reads the options, checking those the parameters are read against (a resource's URI or
    /// template) before the parameters are.
    fn new(args: Self::Args, errors: &mut Errors) -> Self;

    /// Checks a parameter's helper attributes beyond what its kind takes (`Helpers::read`).
    fn helpers(&self, _helpers: &Helpers<'_>, _pt: &PatType, _errors: &mut Errors) {}

    /// Where the value of the parameter `ident` comes from, given its helpers and its type;
    /// `None` leaves it out.
    fn source(&mut self, pt: &PatType, ident: &Ident, helpers: &Helpers<'_>, errors: &mut Errors) -> Option<Source>;

    /// Checks the parameters together, and the options left, of the function `ident`.
    fn check(&mut self, ident: &Ident, params: &[Param], errors: &mut Errors);

    /// The item's name on the wire.
    fn wire_name(&self) -> &str;

    /// `description = "…"`, which stands in for the doc comment.
    fn description(&self) -> Option<&String>;

    /// What resolvers may read: the names the client sends and their types.
    fn arguments(&self, params: &[Param]) -> Vec<(String, TokenStream)> {
        params
            .iter()
            .filter(|p| p.is_argument())
            .map(|p| (p.key.clone(), ty(&p.ty)))
            .collect()
    }

    /// The type resolvers are checked against, named after the item (see `args_type`).
    fn args_type(&self, _ident: &Ident) -> Ident {
        args_type(self.wire_name(), "arguments")
    }

    /// The kind's part of the trait impl.
    fn generate(&self, cx: &mut Cx<'_>) -> Generated;
}

/// Expands `#[kind(args)] item`.
pub(crate) fn expand<K: ItemKind>(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let mut f = match attr_fn::parse::<K::Args>(K::KIND.name(), args, item, &mut errors) {
        Ok(parsed) => parsed,
        Err(out) => return out,
    };
    validate::signature(K::KIND, &f.sig, &mut errors);
    let mut kind = K::new(std::mem::take(&mut f.args), &mut errors);
    let params = params(&mut kind, &f.sig, &mut errors);
    kind.check(&f.sig.ident, &params, &mut errors);
    if !errors.is_empty() {
        return f.failed(errors, |f| codegen::stand_in(K::KIND, f));
    }

    let description = match kind.description() {
        Some(d) => quote!(#d),
        None => docs::description(&f.doc_attrs),
    };
    let arguments = kind.arguments(&params);
    let (ident, output) = (&f.sig.ident, &f.sig.output);
    let mut cx = Cx {
        krate: &f.krate,
        ident,
        output,
        params: &params,
        // Hidden locals, never the parameters' names (`param_locals`).
        locals: crate::util::param_locals(params.iter().map(|p| &p.ident)),
        slots: Slots::new(),
        args_ty: kind.args_type(ident),
        description,
        result: result_slot(&f.krate, ident, output),
    };
    let generated = kind.generate(&mut cx);
    codegen::implement(K::KIND, &f, &cx, &arguments, generated)
}

/// Reads every parameter, collecting errors: a receiver or a pattern is reported and left out,
/// and so is a parameter whose attributes or type the kind refuses.
fn params<K: ItemKind>(kind: &mut K, sig: &Signature, errors: &mut Errors) -> Vec<Param> {
    let what = K::KIND.name();
    let mut params = Vec::new();
    for input in &sig.inputs {
        let pt = match input {
            FnArg::Receiver(r) => {
                errors.spanned(
                    r,
                    format!("`#[{what}]` cannot take `self`: make it a free `async fn`, and reach shared state through a `static` (e.g. a `LazyLock`)"),
                );
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let attrs = ParamAttrs::parse(&pt.attrs, errors);
        // A parameter whose attribute was refused is left out: its type says nothing more.
        let Some(helpers) = Helpers::read(K::KIND, &attrs, errors) else {
            continue;
        };
        kind.helpers(&helpers, pt, errors);
        let (ident, mutability) = match &*pt.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => (pi.ident.clone(), pi.mutability),
            other => {
                errors.spanned(
                    other,
                    format!(
                        "`#[{what}]` parameters must be plain names, since the name is {}: bind a name and destructure it in the body",
                        K::KIND.param_name()
                    ),
                );
                continue;
            }
        };
        let Some(source) = kind.source(pt, &ident, &helpers, errors) else {
            continue;
        };
        params.push(Param::new(
            source,
            (ident, mutability, &pt.ty),
            helpers.options(),
            &attrs,
        ));
    }
    params
}

/// Whether `ty` is written `State<…>` (application state), with or without a path: a parameter
/// the server fills, never an argument.
pub(crate) fn is_state(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(tp) if tp.qself.is_none()
        && tp.path.segments.last().is_some_and(|s| s.ident == "State"
            && matches!(&s.arguments, syn::PathArguments::AngleBracketed(a) if a.args.len() == 1)))
}
