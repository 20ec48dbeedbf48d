//! The value `#[tool]` and `#[resolver]` turn a function into: a `static` named like the
//! function, holding its body as a function pointer.
//!
//! `Server::tool(name)` (or `#[resolve(name)]`) takes the value, and `name(args…).await` still
//! calls the body through `Deref`. The value's type is generic over the function pointer, so the
//! parameter types appear only in the static's type, where private ones are as fine as in a `fn`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Ident, Visibility};

/// What the value is made of.
pub(crate) struct FnValue<'a> {
    pub(crate) vis: &'a Visibility,
    /// The function's (and the static's) name.
    pub(crate) ident: &'a Ident,
    /// The value's type (generic over the function pointer).
    pub(crate) ty_ident: &'a Ident,
    /// The user's docs, kept on the static.
    pub(crate) doc_attrs: &'a [Attribute],
    /// The body, as an `async fn` item, defined inside the static's initializer.
    pub(crate) body_fn: TokenStream,
    /// `fn(A, B) -> BoxFuture<'static, R>`.
    pub(crate) fn_ptr: &'a TokenStream,
    /// The closure from the parameters to the boxed body future.
    pub(crate) closure: TokenStream,
    /// What `Debug` prints.
    pub(crate) debug_name: &'a str,
}

/// When validation failed: a value of a unit type in place of the function, so uses elsewhere
/// still name something and do not cascade into more errors.
pub(crate) fn placeholder(vis: &Visibility, ident: &Ident, ty_ident: &Ident, doc_attrs: &[Attribute]) -> TokenStream {
    quote! {
        #(#doc_attrs)*
        #[allow(non_upper_case_globals)]
        #vis static #ident: #ty_ident = #ty_ident;

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
        #vis struct #ty_ident;
    }
}

impl FnValue<'_> {
    /// The static and its type, plus the `Deref` and `Debug` impls (to put inside a `const _`).
    pub(crate) fn expand(&self) -> (TokenStream, TokenStream) {
        let FnValue {
            vis,
            ident,
            ty_ident,
            doc_attrs,
            body_fn,
            fn_ptr,
            closure,
            debug_name,
        } = self;
        let items = quote! {
            #(#doc_attrs)*
            #[allow(non_upper_case_globals, private_interfaces)]
            #vis static #ident: #ty_ident<#fn_ptr> = {
                #body_fn
                #ty_ident { __mcp_resolve_f: #closure }
            };

            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #[derive(::core::clone::Clone, ::core::marker::Copy)]
            #vis struct #ty_ident<F> {
                __mcp_resolve_f: F,
            }
        };
        let impls = quote! {
            impl<F> ::core::ops::Deref for #ty_ident<F> {
                type Target = F;
                fn deref(&self) -> &F {
                    &self.__mcp_resolve_f
                }
            }

            impl<F> ::core::fmt::Debug for #ty_ident<F> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(#debug_name)
                }
            }
        };
        (items, impls)
    }
}
