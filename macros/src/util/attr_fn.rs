//! The start every function attribute macro shares: parse the item as a function, the arguments
//! with darling, and the `crate = "…"` path; and the end of one that failed on a method.

use super::errors::Errors;
use super::param_attrs;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

/// Parses `#[name(args)] item`. An item that is not a function gives back the finished output
/// (the error plus the item, see [`given_back`]). Argument errors go into `errors`, with defaults
/// in their place.
pub(crate) fn parse<A: FromMeta + Default>(
    name: &str,
    args: TokenStream,
    item: TokenStream,
    errors: &mut Errors,
) -> Result<(syn::ItemFn, A), TokenStream> {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let mut out = syn::Error::new(e.span(), format!("`#[{name}]` goes on an `async fn`")).into_compile_error();
            out.extend(given_back(item));
            return Err(out);
        }
    };
    let args = match NestedMeta::parse_meta_list(args) {
        Ok(list) => A::from_list(&once_each(name, list, errors)).unwrap_or_else(|e| {
            errors.darling(e);
            A::default()
        }),
        Err(e) => {
            errors.push(e);
            A::default()
        }
    };
    Ok((func, args))
}

/// The options of `#[name(...)]`, each given once: a repeated one is an error at its second
/// mention (and left out, so darling does not report it again).
fn once_each(name: &str, list: Vec<NestedMeta>, errors: &mut Errors) -> Vec<NestedMeta> {
    let mut seen: Vec<String> = Vec::new();
    let mut kept = Vec::with_capacity(list.len());
    for item in list {
        if let NestedMeta::Meta(meta) = &item {
            let option = meta.path().to_token_stream().to_string().replace(' ', "");
            if seen.contains(&option) {
                errors.spanned(
                    meta.path(),
                    format!("`{option}` is given twice in `#[{name}(...)]`: remove this one"),
                );
                continue;
            }
            seen.push(option);
        }
        kept.push(item);
    }
    kept
}

/// A word option (`#[resolver(once)]`, `#[tool(replayable)]`), kept as written so that
/// [`Flag::check`] can say what is wrong with a value given to it.
#[derive(Debug)]
pub(crate) struct Flag(syn::Meta);

impl FromMeta for Flag {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        Ok(Self(item.clone()))
    }
}

impl Flag {
    /// The word, for errors about the option as a whole; a value given to it (`once = true`,
    /// `once("x")`) is an error at the value, saying to write `example` instead.
    pub(crate) fn check(&self, example: &str, errors: &mut Errors) -> proc_macro2::Span {
        let word = self.0.path();
        let name = word.to_token_stream().to_string();
        let hint = format!("`{name}` takes no value: write `{example}`, or remove `{name}`");
        match &self.0 {
            syn::Meta::Path(_) => {}
            syn::Meta::NameValue(nv) => errors.spanned(&nv.value, hint),
            syn::Meta::List(list) => errors.spanned(list, hint),
        }
        syn::spanned::Spanned::span(word)
    }
}

/// An item that is not a function, as written; but a function declaration without a body (in a
/// trait) loses the parameter attributes the macros own, which rustc would reject.
fn given_back(item: TokenStream) -> TokenStream {
    match syn::parse2::<syn::TraitItemFn>(item.clone()) {
        Ok(mut f) => {
            param_attrs::strip(&mut f.sig);
            f.into_token_stream()
        }
        Err(_) => item,
    }
}

/// A method that failed validation, given back in place (its `impl` or trait cannot hold the
/// macro's items), minus the parameter attributes the macros own, which rustc would reject.
pub(crate) fn method_fallback(
    doc_attrs: &[syn::Attribute],
    fn_attrs: &[syn::Attribute],
    vis: &syn::Visibility,
    mut sig: syn::Signature,
    block: &syn::Block,
) -> TokenStream {
    param_attrs::strip(&mut sig);
    quote! {
        #(#doc_attrs)*
        #(#fn_attrs)*
        #vis #sig #block
    }
}

/// The facade path generated code goes through: `crate = "…"` or `::mcp_resolve`.
pub(crate) fn krate(path: Option<&syn::Path>) -> TokenStream {
    match path {
        Some(p) => p.to_token_stream(),
        None => quote!(::mcp_resolve),
    }
}
