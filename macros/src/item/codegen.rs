//! The code every item kind generates the same way: the function and its marker type, the
//! marker's trait impl around the kind's method bodies, and the stand-in emitted when
//! validation failed. Quote only, no parsing.

use super::kind::Kind;
use super::param::{Param, Source};
use crate::util::attr_fn::AttrFn;
use crate::util::fn_value::{KeptFn, placeholder};
use crate::util::resolved::{Slots, has_args};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ReturnType};

/// What a kind's `ItemKind::generate` reads and fills in.
pub(crate) struct Cx<'a> {
    pub(crate) krate: &'a TokenStream,
    /// The function's name.
    pub(crate) ident: &'a Ident,
    pub(crate) output: &'a ReturnType,
    pub(crate) params: &'a [Param],
    /// The parameters' locals in the generated body, one each (`util::param_locals`).
    pub(crate) locals: Vec<Ident>,
    /// The resolved parameters' slots, filled in parameter order.
    pub(crate) slots: Slots,
    /// The type resolvers are checked against (`util::resolved::has_args`).
    pub(crate) args_ty: Ident,
    /// The item's description: `description = "…"`, or the doc comment.
    pub(crate) description: TokenStream,
    /// Where the body's result is held (`fn_value::result_slot`): the return type's span, the
    /// result's name, and the facade path located there.
    pub(crate) result: (Span, Ident, TokenStream),
}

/// A kind's part of the trait impl.
pub(crate) struct Generated {
    /// `definition`'s body.
    pub(crate) definition: TokenStream,
    /// Items beside the impl (a tool's `#[confirm]` resolvers).
    pub(crate) items: TokenStream,
    /// Methods after `resolvers` (a tool's `check_arguments`).
    pub(crate) methods: TokenStream,
    /// The body of the method that runs the item (`call`, `get`, `read`).
    pub(crate) call: TokenStream,
}

/// `Some(value)` or `None`, as an expression.
pub(crate) fn option(value: Option<impl ToTokens>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// A `Completer` running `path(value, cx)`; a completer of the wrong shape is reported at the
/// path.
pub(crate) fn completer(krate: &TokenStream, path: &syn::Path) -> TokenStream {
    // Both uses spanned wholly on the path: a function of the wrong shape is one error there.
    let at = crate::util::spans::respanned(krate, path.span());
    quote_spanned! {path.span()=>
        #at::__private01::Completer::new(|__value, __cx| {
            #at::__private01::boxed(#at::__private01::complete_with(#path, __value, __cx))
        })
        .needing(#at::__private01::completer_need(#path))
    }
}

/// The function `f` becomes, its marker type, and the marker's trait impl: `arguments` (names and
/// types) are what resolvers are checked against, `g` the kind's method bodies.
pub(crate) fn implement<A>(
    kind: Kind,
    f: &AttrFn<A>,
    cx: &Cx<'_>,
    arguments: &[(String, TokenStream)],
    g: Generated,
) -> TokenStream {
    let krate = cx.krate;
    let marker = kind.marker(cx.ident);
    let value_items = KeptFn {
        krate,
        vis: &f.vis,
        ident: cx.ident,
        ty_ident: &marker,
        doc_attrs: &f.doc_attrs,
        fn_attrs: &f.fn_attrs,
        params: cx.params.iter().map(Param::body_param).collect(),
        output: cx.output,
        block: &f.block,
    }
    .value();
    let has_args = has_args(
        krate,
        &cx.args_ty,
        arguments.iter().map(|(key, ty)| (key.as_str(), ty.clone())),
    );
    let resolver_checks = cx.slots.checks();
    let resolvers_fn = cx.slots.resolvers_fn(krate);
    // The application state its own parameters take, checked when serving: a tool's through
    // `ToolParam` (every parameter that is not resolved), a prompt's or resource's through
    // `FromContext` (its `Context` and `State<T>` parameters).
    let states: Vec<TokenStream> = cx
        .params
        .iter()
        .filter_map(|p| {
            let ty = &p.ty;
            match (&p.source, kind) {
                (Source::Argument { .. } | Source::Context, Kind::Tool) => {
                    Some(quote_spanned! {ty.span()=> <#ty as #krate::__private01::ToolParam>::STATE })
                }
                (Source::Context, _) => {
                    Some(quote_spanned! {ty.span()=> <#ty as #krate::__private01::FromContext>::STATE })
                }
                _ => None,
            }
        })
        .collect();
    let states_fn = (!states.is_empty()).then(|| {
        quote! {
            fn states(&self) -> &'static [::core::option::Option<#krate::__private01::StateNeed>] {
                &[#(#states),*]
            }
        }
    });
    let t = kind.trait_(krate);
    let (name, definition_ty, method, call_ty, output) = (&t.name, &t.definition, &t.method, &t.call, &t.output);
    let Generated {
        definition,
        items,
        methods,
        call,
    } = g;
    quote! {
        #value_items

        #[doc(hidden)]
        #[allow(non_snake_case, non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #has_args
            #(#resolver_checks)*
            #items

            #[automatically_derived]
            impl #krate::__private01::#name for #marker {
                fn definition(&self) -> #krate::__private01::#definition_ty {
                    #definition
                }

                #resolvers_fn
                #states_fn
                #methods

                fn #method(
                    &self,
                    __call: #krate::__private01::#call_ty,
                ) -> #krate::__private01::BoxFuture<'static, #output> {
                    #call
                }
            }
        };
    }
}

/// When validation failed: a function without parameters in place of `f`, and a trait impl that
/// never runs, so uses elsewhere (`Server::tool(name)`) do not cascade into more errors.
pub(crate) fn stand_in<A>(kind: Kind, f: &AttrFn<A>) -> TokenStream {
    let krate = &f.krate;
    let marker = kind.marker(&f.sig.ident);
    let value = placeholder(krate, &f.vis, &f.sig.ident, &marker, &f.doc_attrs);
    let t = kind.trait_(krate);
    let (name, definition_ty, method, call_ty, output) = (&t.name, &t.definition, &t.method, &t.call, &t.output);
    quote! {
        #value

        #[doc(hidden)]
        const _: () = {
            #[automatically_derived]
            impl #krate::__private01::#name for #marker {
                fn definition(&self) -> #krate::__private01::#definition_ty {
                    ::core::unreachable!()
                }
                fn #method(
                    &self,
                    _: #krate::__private01::#call_ty,
                ) -> #krate::__private01::BoxFuture<'static, #output> {
                    ::core::unreachable!()
                }
            }
        };
    }
}

/// The body of a prompt's `get` or a resource's `read`: each parameter read into its local in
/// turn, the first error ending the request (`argument` reads one the client sends; `getter`
/// names the `__private` function that reads a resolved one), then the function called, and
/// `convert` turning its result (named by `cx.result`) into the answer.
pub(crate) fn direct_call(
    cx: &mut Cx<'_>,
    getter: &str,
    argument: impl Fn(&Param) -> TokenStream,
    convert: TokenStream,
) -> TokenStream {
    let Cx {
        krate,
        ident,
        params,
        locals,
        slots,
        args_ty,
        result: (_, out, _),
        ..
    } = cx;
    let takes: Vec<TokenStream> = params
        .iter()
        .zip(locals.iter())
        .map(|(p, local)| match &p.source {
            Source::Context => {
                let ty = &p.ty;
                quote_spanned! {ty.span()=>
                    let #local = match <#ty as #krate::__private01::FromContext>::from_context(&__call.context) {
                        ::core::result::Result::Ok(v) => v,
                        ::core::result::Result::Err(m) => {
                            return ::core::result::Result::Err(#krate::__private01::ErrorObject::internal(m));
                        }
                    };
                }
            }
            Source::Resolve(path) => slots.bind(krate, args_ty, (path, &p.ident, &p.ty), local, getter),
            // (`#[confirm]` is refused on prompts and resources: only arguments come here.)
            Source::Argument { .. } | Source::Confirm(_) => {
                let value = argument(p);
                quote! { let #local = #value; }
            }
        })
        .collect();
    quote! {
        let __mcp_resolve_f = #ident;
        ::std::boxed::Box::pin(async move {
            #(#takes)*
            let #out = __mcp_resolve_f(#(#locals),*).await;
            #convert
        })
    }
}
