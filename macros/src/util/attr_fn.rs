//! The start every function attribute macro shares: parse the item as a function, the arguments
//! with darling, and the `crate = "…"` path.

use super::errors::Errors;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;

/// Parses `#[name(args)] item`. An item that is not a function gives back the finished output
/// (the error plus the item untouched). Argument errors go into `errors`, with defaults in their
/// place.
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
            out.extend(item);
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

/// The facade path generated code goes through: `crate = "…"` or `::mcp_resolve`.
pub(crate) fn krate(path: Option<&syn::Path>) -> TokenStream {
    match path {
        Some(p) => quote::ToTokens::to_token_stream(p),
        None => quote::quote!(::mcp_resolve),
    }
}
