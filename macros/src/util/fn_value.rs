//! The function `#[tool]`, `#[prompt]`, `#[resource]` and `#[resolver]` turn an `async fn`
//! into: a plain `fn` of the same name and parameters returning a `BodyFuture` that names a
//! hidden marker type, which carries the item's definition.
//!
//! `Server::tool(name)` (or `#[resolve(name)]`) finds the marker from the function's type, and
//! `name(args…).await` calls the body. Being a `fn` item, the name can be shadowed by a binding
//! (a parameter named like its resolver, a local named like a tool), which a `static` could not.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Ident, Visibility};

/// What the function is made of.
pub(crate) struct FnValue<'a> {
    pub(crate) krate: &'a TokenStream,
    pub(crate) vis: &'a Visibility,
    /// The function's name.
    pub(crate) ident: &'a Ident,
    /// The marker type.
    pub(crate) marker: &'a Ident,
    /// The user's docs, kept on the function.
    pub(crate) doc_attrs: &'a [Attribute],
    /// The parameters' names and types.
    pub(crate) params: Vec<(&'a Ident, &'a syn::Type)>,
    /// The body's output type.
    pub(crate) ret: TokenStream,
    /// The body, as an `async fn` item named `body`, defined inside the function.
    pub(crate) body_fn: TokenStream,
    pub(crate) body: &'a Ident,
}

/// The marker type: a braced struct, so it takes no name in the value namespace.
fn marker_item(vis: &Visibility, marker: &Ident) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::default::Default, ::core::fmt::Debug)]
        #vis struct #marker {}
    }
}

/// When validation failed: a function without parameters in place of the user's, so uses
/// elsewhere still name something and do not cascade into more errors.
pub(crate) fn placeholder(
    krate: &TokenStream,
    vis: &Visibility,
    ident: &Ident,
    marker: &Ident,
    doc_attrs: &[Attribute],
) -> TokenStream {
    let marker_item = marker_item(vis, marker);
    quote! {
        #(#doc_attrs)*
        #[allow(dead_code, private_interfaces)]
        #vis fn #ident() -> #krate::__private01::BodyFuture<#marker, ()> {
            ::core::unreachable!()
        }

        #marker_item
    }
}

impl FnValue<'_> {
    /// The function and its marker type.
    pub(crate) fn expand(&self) -> TokenStream {
        let FnValue {
            krate,
            vis,
            ident,
            marker,
            doc_attrs,
            params,
            ret,
            body_fn,
            body,
        } = self;
        let idents = params.iter().map(|(i, _)| *i);
        let tys = params.iter().map(|(_, t)| *t);
        let args = params.iter().map(|(i, _)| *i);
        // Spanned on the fn name: a body whose future is not `Send` is reported there.
        let boxed = quote::quote_spanned! {ident.span()=>
            #krate::__private01::BodyFuture::new(#body(#(#args),*))
        };
        let marker_item = marker_item(vis, marker);
        quote! {
            #(#doc_attrs)*
            // The body function declares the same names with the user's attributes, so a
            // name's lint (e.g. `folderPath`) is reported, or allowed, there once.
            #[allow(private_interfaces, clippy::too_many_arguments, non_snake_case)]
            #vis fn #ident(#(#idents: #tys),*) -> #krate::__private01::BodyFuture<#marker, #ret> {
                #body_fn
                #boxed
            }

            #marker_item
        }
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
/// `async fn` inside the generated function, whose future that function boxes.
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
    /// The function and its marker type.
    pub(crate) fn value(&self) -> TokenStream {
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
        } = self;
        let body = body_ident(ident);
        let ret = super::return_type(output);
        let idents = params.iter().map(|p| p.ident);
        let sig_tys = params.iter().map(|p| p.ty);
        let muts = params.iter().map(|p| p.mutability);
        let kept = params.iter().map(|p| p.kept_attrs);
        FnValue {
            krate,
            vis,
            ident,
            marker: ty_ident,
            doc_attrs,
            params: params.iter().map(|p| (p.ident, p.ty)).collect(),
            ret: quote!(#ret),
            body_fn: quote! {
                #(#fn_attrs)*
                async fn #body(#(#(#kept)* #muts #idents: #sig_tys),*) #output #block
            },
            body: &body,
        }
        .expand()
    }
}
