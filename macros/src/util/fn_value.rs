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

/// One parameter of an `async fn`, as its body function declares it.
pub(crate) struct BodyParam<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a syn::Type,
    pub(crate) mutability: &'a Option<syn::token::Mut>,
    /// Attributes kept on the body's parameter (e.g. `#[allow]`).
    pub(crate) kept_attrs: &'a [Attribute],
}

/// An `async fn` that `#[tool]`, `#[prompt]` and `#[resource]` keep whole: its body becomes an
/// `async fn` inside the static's initializer, called through a closure that boxes its future.
pub(crate) struct KeptFn<'a> {
    pub(crate) krate: &'a TokenStream,
    pub(crate) vis: &'a Visibility,
    pub(crate) ident: &'a Ident,
    pub(crate) ty_ident: &'a Ident,
    pub(crate) doc_attrs: &'a [Attribute],
    pub(crate) fn_attrs: &'a [Attribute],
    pub(crate) params: Vec<BodyParam<'a>>,
    pub(crate) output: &'a syn::ReturnType,
    pub(crate) block: &'a syn::Block,
    pub(crate) debug_name: &'a str,
}

/// What [`KeptFn::value`] makes.
pub(crate) struct KeptFnValue {
    /// The static and its type (outside the `const _`).
    pub(crate) items: TokenStream,
    /// `Deref` and `Debug` (inside it).
    pub(crate) impls: TokenStream,
    /// `fn(A, B) -> BoxFuture<'static, R>`: the value type's parameter, for the trait impl.
    pub(crate) fn_ptr: TokenStream,
}

/// The body function's name: hygienic, but located at the user's fn name, so errors about the
/// body's future (e.g. "future cannot be sent between threads safely") point there.
pub(crate) fn body_ident(ident: &Ident) -> Ident {
    quote::format_ident!(
        "__mcp_resolve_body_{}",
        ident,
        span = proc_macro2::Span::mixed_site().located_at(ident.span())
    )
}

/// Where generated code holds the body's result: `__out`, located at the return type (or the fn
/// name when there is none), with the facade's path located there too, so a return type that
/// does not convert is reported on it. Returns the span, the name and the path.
pub(crate) fn result_slot(
    krate: &TokenStream,
    ident: &Ident,
    output: &syn::ReturnType,
) -> (proc_macro2::Span, Ident, TokenStream) {
    use syn::spanned::Spanned;
    let ret_span = match output {
        syn::ReturnType::Default => ident.span(),
        syn::ReturnType::Type(_, ty) => ty.span(),
    };
    let out = Ident::new("__out", proc_macro2::Span::mixed_site().located_at(ret_span));
    (ret_span, out, super::spans::located_at(krate, ret_span))
}

impl KeptFn<'_> {
    /// The value: the static holding the body, and the function-pointer type.
    pub(crate) fn value(&self) -> KeptFnValue {
        let KeptFn {
            krate,
            vis,
            ident,
            ty_ident,
            doc_attrs,
            fn_attrs,
            params,
            output,
            block,
            debug_name,
        } = self;
        let body = body_ident(ident);
        let ret = super::return_type(output);
        let idents: Vec<&Ident> = params.iter().map(|p| p.ident).collect();
        let tys = params.iter().map(|p| p.ty);
        let sig_tys = params.iter().map(|p| p.ty);
        let muts = params.iter().map(|p| p.mutability);
        let kept = params.iter().map(|p| p.kept_attrs);
        // Spanned on the fn name: a body whose future is not `Send` is reported there. The
        // body's future goes through the same `boxed` call as the direct-call `Deref`, so rustc
        // reports that error once.
        let boxed = quote::quote_spanned! {ident.span()=>
            #krate::__private::boxed(#body(#(#idents),*))
        };
        let fn_ptr = quote! { fn(#(#tys),*) -> #krate::__private::BoxFuture<'static, #ret> };
        let (items, impls) = FnValue {
            vis,
            ident,
            ty_ident,
            doc_attrs,
            body_fn: quote! {
                #(#fn_attrs)*
                async fn #body(#(#(#kept)* #muts #idents: #sig_tys),*) #output #block
            },
            fn_ptr: &fn_ptr,
            closure: quote! { |#(#idents),*| #boxed },
            debug_name,
        }
        .expand();
        KeptFnValue { items, impls, fn_ptr }
    }
}
