//! The model of a `#[tool]`, `#[prompt]` or `#[resource]` function's parameters: where each
//! value comes from, and what its `#[arg]` options and doc comment say about it.

use super::kind::{ArgRule, Kind};
use crate::util::docs;
use crate::util::errors::Errors;
use crate::util::fn_value::BodyParam;
use crate::util::param_attrs::{ArgOptions, Helper, ParamAttrs};
use crate::util::spans::unraw;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Attribute, Ident, Type};

/// Where a parameter's value comes from.
#[derive(Clone)]
pub(crate) enum Source {
    /// A value the client sends, named by the parameter's key: a tool's argument (of any type
    /// `ToolParam` describes, the `Context` included), a prompt's argument (`String`, or
    /// `Option<String>` when `optional`), or a resource template's variable (`String`).
    Argument { optional: bool },
    /// The request's `Context`, which a prompt or a resource takes apart from its arguments.
    Context,
    /// `#[resolve(path)]`: a resolver.
    Resolve(syn::Path),
    /// `#[confirm("message with {placeholders}")]`: a yes/no question (tools only).
    Confirm(syn::LitStr),
}

impl Source {
    /// A required argument: the source of a parameter its helper attributes say nothing about.
    pub(crate) const ARGUMENT: Source = Source::Argument { optional: false };
}

/// What a parameter's helper attributes say, once its kind has accepted them.
pub(crate) struct Helpers<'a> {
    /// `#[arg(...)]`'s options, and the attribute.
    pub(crate) arg: Option<(&'a ArgOptions, &'a Attribute)>,
    /// `#[resolve]` or `#[confirm]`: where the value comes from instead of the client, and how
    /// the user wrote it (`` `#[resolve]` ``).
    pub(crate) source: Option<(Source, &'static str)>,
}

impl<'a> Helpers<'a> {
    /// Sorts the helper attributes of a `kind` parameter, in the order written: the `#[arg]`s
    /// its rule takes, and one `#[resolve]` (on a tool's parameter, one `#[resolve]` or
    /// `#[confirm]`); every other is an error. `None` when a `#[confirm]` was refused: the
    /// parameter is left out, since its type says nothing more.
    pub(crate) fn read(kind: Kind, attrs: &'a ParamAttrs, errors: &mut Errors) -> Option<Self> {
        let rule = kind.arg_rule();
        let mut arg = None;
        let mut source: Option<(Source, &'static str)> = None;
        let mut refused = false;
        for h in &attrs.helpers {
            let taken = match &h.helper {
                Helper::Arg(options) => {
                    match rule {
                        ArgRule::Once if arg.is_some() => errors.spanned(
                            h.attr.path(),
                            "duplicate `#[arg]` attribute: put every option in one `#[arg(...)]`",
                        ),
                        ArgRule::Unnamed(hint) if options.rename.is_some() || options.description.is_some() => {
                            errors.spanned(h.attr.path(), hint);
                        }
                        ArgRule::Once | ArgRule::Unnamed(_) => arg = Some((options, &h.attr)),
                    }
                    continue;
                }
                Helper::Resolve(path) => Source::Resolve(path.clone()),
                Helper::Confirm(message) if kind.takes_confirm() => Source::Confirm(message.clone()),
                Helper::Confirm(_) => {
                    refused = true;
                    errors.spanned(
                        h.attr.path(),
                        format!(
                            "`#[confirm]` is not supported on `#[{}]` parameters: write a `#[resolver]` that returns `Elicit::<Confirm>::form(\"…\")` and take it with `#[resolve(that_resolver)]`",
                            kind.name()
                        ),
                    );
                    continue;
                }
            };
            if source.is_some() {
                let one = if kind.takes_confirm() {
                    "`#[resolve]` or `#[confirm]`"
                } else {
                    "`#[resolve]`"
                };
                errors.spanned(
                    h.attr.path(),
                    format!("a parameter takes one {one}: remove this {}", h.name()),
                );
            } else {
                source = Some((taken, h.name()));
            }
        }
        (!refused).then_some(Helpers { arg, source })
    }

    /// The `#[arg]` options.
    pub(crate) fn options(&self) -> Option<&'a ArgOptions> {
        self.arg.map(|(options, _)| options)
    }
}

/// One parameter of the function.
pub(crate) struct Param {
    pub(crate) source: Source,
    pub(crate) ident: Ident,
    pub(crate) mutability: Option<syn::token::Mut>,
    pub(crate) ty: Type,
    /// The argument's name on the wire: `#[arg(rename)]`, or the parameter's name.
    pub(crate) key: String,
    /// The token a "duplicate name" error points at.
    pub(crate) key_span: Span,
    /// A `&'static str` description expression (`#[arg(description)]`, or the doc comment), or
    /// `None`.
    pub(crate) description: Option<TokenStream>,
    /// `#[arg(header = "…")]`: the `Mcp-Param-*` name a tool's argument is mirrored into, and
    /// where it was written.
    pub(crate) header: Option<(String, Span)>,
    /// `#[arg(complete = path)]`: a prompt argument's or a template variable's completer.
    pub(crate) complete: Option<syn::Path>,
    /// Attributes kept on the parameter of the body function (e.g. `#[allow]`).
    pub(crate) kept_attrs: Vec<Attribute>,
}

impl Param {
    /// The parameter `ident: ty`, its value from `source`, its `#[arg]` options `arg`.
    pub(crate) fn new(
        source: Source,
        (ident, mutability, ty): (Ident, Option<syn::token::Mut>, &Type),
        arg: Option<&ArgOptions>,
        attrs: &ParamAttrs,
    ) -> Self {
        let (key, key_span) = match arg.and_then(|a| a.rename.as_ref()) {
            Some(r) => ((**r).clone(), r.span()),
            None => (unraw(&ident), ident.span()),
        };
        let description = match arg.and_then(|a| a.description.as_ref()) {
            Some(d) => Some(quote!(#d)),
            None if attrs.docs.is_empty() => None,
            None => Some(docs::description(&attrs.docs)),
        };
        Param {
            source,
            ident,
            mutability,
            ty: ty.clone(),
            key,
            key_span,
            description,
            header: arg.and_then(|a| a.header.as_ref()).map(|h| ((**h).clone(), h.span())),
            complete: arg.and_then(|a| a.complete.clone()),
            kept_attrs: attrs.other.clone(),
        }
    }

    /// Whether the client sends it.
    pub(crate) fn is_argument(&self) -> bool {
        matches!(self.source, Source::Argument { .. })
    }

    /// The parameter as the body function declares it.
    pub(crate) fn body_param(&self) -> BodyParam<'_> {
        BodyParam {
            ident: &self.ident,
            ty: &self.ty,
            mutability: &self.mutability,
            kept_attrs: &self.kept_attrs,
        }
    }
}
