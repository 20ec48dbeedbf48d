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
        Ok(list) => A::from_list(&list).unwrap_or_else(|e| {
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
