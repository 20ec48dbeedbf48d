//! The attributes a `#[tool]`, `#[prompt]`, `#[resource]` or `#[resolver]` parameter may carry:
//! `#[arg(...)]`, `#[resolve(path)]`, `#[confirm("…")]`, and doc comments. One parser serves every
//! macro, so they read the same syntax, and a fallback strips the same set; `item::Helpers::read`
//! (and `#[resolver]`'s `validate`) then says which of them a parameter takes, and how many.

use super::errors::Errors;
use darling::util::SpannedValue;
use darling::{FromAttributes, FromMeta};
use syn::{Attribute, FnArg, Meta, Signature};

/// The names of the parameter attributes the macros own. rustc knows none of them, so every
/// function the macros give back has them (and doc comments, which rustc rejects on parameters)
/// stripped: see [`strip`].
const HELPERS: [&str; 3] = ["arg", "resolve", "confirm"];

/// The options of `#[arg(...)]`. A bare `#[arg]` changes nothing, and is accepted.
#[derive(Debug, Default, FromMeta)]
#[darling(default, from_word = || Ok(Self::default()))]
pub(crate) struct ArgOptions {
    /// The argument's JSON key; defaults to the parameter's name.
    pub(crate) rename: Option<SpannedValue<String>>,
    /// A description; defaults to the parameter's doc comment.
    pub(crate) description: Option<String>,
    /// On 2026-07-28 HTTP the client mirrors the argument into `Mcp-Param-{header}`
    /// (`x-mcp-header`); checked by `tool::validate::headers`.
    pub(crate) header: Option<SpannedValue<String>>,
    /// `#[prompt]` arguments and `#[resource]` template variables: the completer,
    /// `async fn f(value: String, cx: Context) -> Vec<String>`.
    pub(crate) complete: Option<syn::Path>,
}

/// `#[resolve(path::to::resolver)]`: the path is bare, not a `key = value` option.
struct ResolverPath(syn::Path);

impl FromMeta for ResolverPath {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        sole_argument(
            item,
            "expected `#[resolve(path::to::resolver)]`: the resolver function, annotated with `#[resolver]`",
        )
        .map(Self)
    }
}

/// `#[confirm("message")]`: the message is a bare string literal.
struct ConfirmMessage(syn::LitStr);

impl FromMeta for ConfirmMessage {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        sole_argument(
            item,
            "expected `#[confirm(\"message\")]`: the question to ask, with `{argument}` placeholders",
        )
        .map(Self)
    }
}

/// The one argument in `#[name(…)]`, or `hint` at the token that is not it.
fn sole_argument<T: syn::parse::Parse>(item: &Meta, hint: &str) -> darling::Result<T> {
    let parsed = match item {
        Meta::List(list) => list.parse_args::<T>(),
        other => Err(syn::Error::new_spanned(other, hint)),
    };
    parsed.map_err(|e| syn::Error::new(e.span(), hint).into())
}

/// One parameter attribute the macros own, read.
pub(crate) enum Helper {
    /// `#[arg(...)]`.
    Arg(ArgOptions),
    /// `#[resolve(path)]`.
    Resolve(syn::Path),
    /// `#[confirm("message")]`.
    Confirm(syn::LitStr),
}

/// A [`Helper`] and the attribute it was read from, for error spans.
pub(crate) struct HelperAttr {
    pub(crate) helper: Helper,
    pub(crate) attr: Attribute,
}

impl HelperAttr {
    /// How the user wrote it, for messages: `` `#[resolve]` ``.
    pub(crate) fn name(&self) -> &'static str {
        match self.helper {
            Helper::Arg(_) => "`#[arg]`",
            Helper::Resolve(_) => "`#[resolve]`",
            Helper::Confirm(_) => "`#[confirm]`",
        }
    }
}

/// A parameter's attributes, sorted out.
#[derive(Default)]
pub(crate) struct ParamAttrs {
    /// `#[arg]`, `#[resolve]` and `#[confirm]`, in the order written, repeats included: the
    /// macro's `validate` decides what it accepts.
    pub(crate) helpers: Vec<HelperAttr>,
    /// Doc comments.
    pub(crate) docs: Vec<Attribute>,
    /// Every other attribute.
    pub(crate) other: Vec<Attribute>,
}

impl ParamAttrs {
    /// Reads `attrs`, reporting each helper whose contents are malformed to `errors` and leaving
    /// it out, so the rest of the parameter (and the function) is still checked.
    pub(crate) fn parse(attrs: &[Attribute], errors: &mut Errors) -> Self {
        let mut acc = darling::Error::accumulator();
        let parsed = Self::read(attrs, &mut acc);
        if let Err(e) = acc.finish() {
            errors.darling(e);
        }
        parsed
    }

    fn read(attrs: &[Attribute], acc: &mut darling::error::Accumulator) -> Self {
        let mut out = Self::default();
        for attr in attrs {
            let path = attr.path();
            let helper = if path.is_ident("arg") {
                acc.handle(ArgOptions::from_meta(&attr.meta).map(Helper::Arg))
            } else if path.is_ident("resolve") {
                acc.handle(ResolverPath::from_meta(&attr.meta).map(|p| Helper::Resolve(p.0)))
            } else if path.is_ident("confirm") {
                acc.handle(ConfirmMessage::from_meta(&attr.meta).map(|m| Helper::Confirm(m.0)))
            } else if path.is_ident("cfg") || path.is_ident("cfg_attr") {
                // The argument would stay in the schema and the function's signature while the
                // body lost it: refused, at the attribute.
                acc.push(
                    darling::Error::custom(
                        "a parameter cannot be conditional: its argument is part of the item's schema; put the `#[cfg]` on the whole function, or make the parameter an `Option`",
                    )
                    .with_span(attr.path()),
                );
                continue;
            } else {
                if path.is_ident("doc") {
                    out.docs.push(attr.clone());
                } else {
                    out.other.push(attr.clone());
                }
                continue;
            };
            if let Some(helper) = helper {
                out.helpers.push(HelperAttr {
                    helper,
                    attr: attr.clone(),
                });
            }
        }
        out
    }
}

/// Every malformed helper is an error; the macros use [`ParamAttrs::parse`], which also keeps
/// what could be read.
impl FromAttributes for ParamAttrs {
    fn from_attributes(attrs: &[Attribute]) -> darling::Result<Self> {
        let mut acc = darling::Error::accumulator();
        let parsed = Self::read(attrs, &mut acc);
        acc.finish_with(parsed)
    }
}

/// Whether `attr` is one the macros own on a parameter (a doc comment included).
fn is_owned(attr: &Attribute) -> bool {
    let path = attr.path();
    path.is_ident("doc") || HELPERS.iter().any(|h| path.is_ident(h))
}

/// Removes, from every parameter of `sig`, the attributes the macros own: the function is given
/// back to rustc, which would reject them.
pub(crate) fn strip(sig: &mut Signature) {
    for input in &mut sig.inputs {
        if let FnArg::Typed(pt) = input {
            pt.attrs.retain(|a| !is_owned(a));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    /// The attributes of `sig`'s first parameter.
    fn attrs(sig: Signature) -> Vec<Attribute> {
        match sig.inputs.into_iter().next() {
            Some(FnArg::Typed(pt)) => pt.attrs,
            _ => unreachable!(),
        }
    }

    #[test]
    fn every_helper_is_read_in_order() {
        let a = ParamAttrs::from_attributes(&attrs(parse_quote!(fn f(
            /// Docs.
            #[confirm("Sure?")]
            #[allow(unused)]
            #[arg(rename = "x")]
            #[resolve(crate::ask)]
            #[arg]
            p: u8,
        ))))
        .unwrap();
        let names: Vec<_> = a.helpers.iter().map(HelperAttr::name).collect();
        assert_eq!(names, ["`#[confirm]`", "`#[arg]`", "`#[resolve]`", "`#[arg]`"]);
        assert_eq!(a.docs.len(), 1);
        assert_eq!(a.other.len(), 1);
    }

    #[test]
    fn every_malformed_helper_is_an_error() {
        let e = ParamAttrs::from_attributes(&attrs(parse_quote!(fn f(
            #[confirm(path)]
            #[resolve("ask")]
            #[arg(renam = "x")]
            #[resolve]
            p: u8,
        ))))
        .err()
        .unwrap();
        assert_eq!(e.len(), 4);
    }

    #[test]
    fn strip_leaves_only_foreign_attributes() {
        let mut sig: Signature = parse_quote!(fn f(
            /// Docs.
            #[arg(rename = "x")]
            #[resolve(ask)]
            #[confirm("Sure?")]
            #[allow(unused)]
            a: u8,
        ));
        strip(&mut sig);
        let expected: Signature = parse_quote!(fn f(#[allow(unused)] a: u8,));
        assert_eq!(sig, expected);
    }
}
