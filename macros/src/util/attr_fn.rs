//! The start every function attribute macro shares: parse the item as a function, the arguments
//! with darling, and the `crate = "…"` path; and the end of one that failed.

use super::docs;
use super::errors::Errors;
use super::param_attrs;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Attribute, Block, Signature, Visibility};

/// A macro's options: darling reads them, and each names the facade path (`crate = "…"`).
pub(crate) trait Options: FromMeta + Default {
    /// `crate = "…"`, if given.
    fn krate(&self) -> Option<&syn::Path>;
}

/// `#[name(args)] async fn …`, read: the options, the facade path, and the function in parts.
pub(crate) struct AttrFn<A> {
    pub(crate) args: A,
    /// The facade path generated code goes through: `crate = "…"` or `::mcp_resolve`.
    pub(crate) krate: TokenStream,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    pub(crate) block: Box<Block>,
    /// The function's doc comments, which become the item's description.
    pub(crate) doc_attrs: Vec<Attribute>,
    /// Its other attributes.
    pub(crate) fn_attrs: Vec<Attribute>,
}

/// Parses `#[name(args)] item`. An item that is not a function gives back the finished output
/// (the error plus the item, see [`given_back`]). Argument errors go into `errors`, with defaults
/// in their place.
pub(crate) fn parse<A: Options>(
    name: &str,
    args: TokenStream,
    item: TokenStream,
    errors: &mut Errors,
) -> Result<AttrFn<A>, TokenStream> {
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
    let krate = match args.krate() {
        Some(p) => p.to_token_stream(),
        None => quote!(::mcp_resolve),
    };
    let syn::ItemFn {
        attrs, vis, sig, block, ..
    } = func;
    let (doc_attrs, fn_attrs) = docs::take_docs(attrs);
    Ok(AttrFn {
        args,
        krate,
        vis,
        sig,
        block,
        doc_attrs,
        fn_attrs,
    })
}

impl<A> AttrFn<A> {
    /// The output of a function that failed validation: the errors, and then either
    /// `placeholder`'s items, which stand in for the function so that its uses elsewhere do not
    /// cascade into more errors, or, for a method (its `impl` or trait cannot hold the macro's
    /// items), the method given back in place, minus the parameter attributes the macros own,
    /// which rustc would reject.
    pub(crate) fn failed(self, errors: Errors, placeholder: impl FnOnce(&Self) -> TokenStream) -> TokenStream {
        let mut out = errors.into_tokens();
        if self.sig.receiver().is_none() {
            out.extend(placeholder(&self));
            return out;
        }
        let AttrFn {
            vis,
            mut sig,
            block,
            doc_attrs,
            fn_attrs,
            ..
        } = self;
        param_attrs::strip(&mut sig);
        out.extend(quote! {
            #(#doc_attrs)*
            #(#fn_attrs)*
            #vis #sig #block
        });
        out
    }
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

/// An option's value exactly as written (darling would read a string literal's contents as an
/// expression), so that validation can say what is wrong with it.
#[derive(Debug)]
pub(crate) struct AsWritten(pub(crate) syn::Expr);

impl FromMeta for AsWritten {
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        Ok(Self(expr.clone()))
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
