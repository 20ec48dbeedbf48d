//! Code generation for `#[resolver]`: quote only, no parsing.

use super::parse::ResolverParam;
use crate::util::fn_value::FnValue;
use crate::util::return_type;
use crate::util::spans::unraw;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Block, Ident, ReturnType, Type, Visibility};

/// Everything codegen needs, already validated.
pub(crate) struct ResolverModel {
    pub(crate) krate: TokenStream,
    pub(crate) vis: Visibility,
    pub(crate) ident: Ident,
    /// The function's name, unraw: what `Debug` prints and errors name.
    pub(crate) name: String,
    pub(crate) key: String,
    /// `#[resolver(once)]`: its answer is single-use.
    pub(crate) once: bool,
    /// Unique among resolvers that share a name.
    pub(crate) id: String,
    pub(crate) doc_attrs: Vec<Attribute>,
    pub(crate) fn_attrs: Vec<Attribute>,
    pub(crate) params: Vec<ResolverParam>,
    pub(crate) output: ReturnType,
    pub(crate) block: Block,
}

/// The resolver's marker type, named in its function's return type; it implements `Resolver`.
pub(crate) fn value_type(name: &str) -> Ident {
    format_ident!("__mcp_resolve_resolver_{}", name)
}

/// The checker macro's name; it is re-exported under the resolver's own name.
fn checker(name: &str) -> Ident {
    format_ident!("__mcp_resolve_check_{}", name)
}

/// The checker's re-export cannot be `pub` (a `macro_rules!` is not exported that way): a public
/// resolver's checker is `pub(crate)`.
fn checker_vis(vis: &Visibility) -> TokenStream {
    match vis {
        Visibility::Public(_) => quote!(pub(crate)),
        other => other.to_token_stream(),
    }
}

/// The full expansion: the resolver's function and marker, its checker, its run function and
/// `ResolverSpec`, and the `Resolver` impl.
pub(crate) fn expand(m: &ResolverModel) -> TokenStream {
    let ResolverModel {
        krate,
        vis,
        ident,
        name,
        key,
        once,
        id,
        doc_attrs,
        fn_attrs,
        params,
        output,
        block,
    } = m;
    let ty_ident = value_type(name);
    let checker = checker(name);
    let checker_vis = checker_vis(vis);
    let ret = return_type(output);
    let ret_span = ret.span();
    let body = format_ident!(
        "__mcp_resolve_body_{}",
        name,
        span = Span::mixed_site().located_at(ident.span())
    );
    let idents: Vec<&Ident> = params.iter().map(|p| &p.ident).collect();
    let tys: Vec<&Type> = params.iter().map(|p| &p.ty).collect();
    let muts = params.iter().map(|p| &p.mutability);
    let lints = params.iter().map(|p| &p.lints);

    let deps: Vec<&syn::Path> = params.iter().filter_map(|p| p.dep.as_ref()).collect();
    let dep_defs = deps.iter().map(|d| {
        // A function, so `ResolverFn::def` is called in a function body, spanned on the path,
        // as `dependency` is: a path that is not a resolver is one error.
        let def = crate::util::resolved::Slots::def_of(krate, d);
        let krate = crate::util::spans::respanned(krate, d.span());
        quote_spanned! {d.span()=>
            {
                fn __mcp_resolve_dep() -> &'static #krate::__private01::ResolverSpec {
                    #def.spec
                }
                __mcp_resolve_dep
            }
        }
    });
    // Hidden locals, never the parameters' names (`param_locals`).
    let locals = crate::util::param_locals(params.iter().map(|p| &p.ident));
    let reads = params.iter().zip(&locals).map(|(p, local)| {
        let ident = &p.ident;
        let ty = &p.ty;
        let pname = unraw(ident);
        match &p.dep {
            Some(dep) => {
                // The resolver's type and value are spanned on the path: a function that is not a
                // `#[resolver]` is reported there.
                let def = crate::util::resolved::Slots::def_of(krate, dep);
                quote_spanned! {ty.span()=>
                    let #local: #ty = match __inputs.dependency::<#ty, _>(#def, #pname) {
                        ::core::result::Result::Ok(v) => v,
                        ::core::result::Result::Err(m) => return #krate::__private01::Step::Invalid(m),
                    };
                }
            }
            None => quote_spanned! {ty.span()=>
                let #local: #ty = match <#ty as #krate::__private01::FromResolveInputs>::take(&__inputs, #pname) {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(m) => return #krate::__private01::Step::Invalid(m),
                };
            },
        }
    });
    // The application state its plain parameters take (`State<T>`), checked when serving.
    let states: Vec<TokenStream> = params
        .iter()
        .filter(|p| p.dep.is_none())
        .map(|p| {
            let ty = &p.ty;
            quote_spanned! {ty.span()=> <#ty as #krate::__private01::FromResolveInputs>::STATE }
        })
        .collect();
    // The parameters the checker compares with each item's arguments (not the dependencies').
    let plain = params.iter().filter(|p| p.dep.is_none()).map(|p| {
        let ident = &p.ident;
        let ty = &p.ty;
        quote! { { #ident : #ty } }
    });
    let into_step = quote_spanned! {ret_span=>
        #krate::__private01::into_step(__mcp_resolve_f(#(#locals),*).await)
    };
    let output_ty = quote_spanned! {ret_span=>
        <#ret as #krate::__private01::IntoResolution>::Output
    };
    let value_items = FnValue {
        krate,
        vis,
        ident,
        marker: &ty_ident,
        doc_attrs,
        params: idents.iter().copied().zip(tys.iter().copied()).collect(),
        ret: quote!(#ret),
        body_fn: quote! {
            #(#fn_attrs)*
            async fn #body(#(#(#lints)* #muts #idents: #tys),*) #output #block
        },
        body: &body,
    }
    .expand();
    quote! {
        #value_items

        #[doc(hidden)]
        macro_rules! #checker {
            ($args:ty, [$($visited:literal),*], [$($names:literal),*], $via:path, $item:literal, $noun:literal, [$($arg:literal),*]) => {
                #krate::__private01::resolver_visit! {
                    id = #id,
                    name = #name,
                    visited = [$($visited),*],
                    names = [$($names),*],
                    via = $via,
                    args = $args,
                    item = $item,
                    noun = $noun,
                    arguments = [$($arg),*],
                    krate = { #krate },
                    params = [#(#plain),*],
                    deps = [#(#deps),*],
                }
            };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        #checker_vis use #checker as #ident;

        #[doc(hidden)]
        #[allow(non_snake_case, non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            fn __mcp_resolve_run(
                __inputs: #krate::__private01::ResolveInputs,
            ) -> #krate::__private01::BoxFuture<'static, #krate::__private01::Step> {
                // Read before the parameters are bound, so a parameter named like the resolver
                // cannot shadow it.
                let __mcp_resolve_f = #ident;
                ::std::boxed::Box::pin(async move {
                    #(#reads)*
                    #into_step
                })
            }

            static __MCP_RESOLVE_DEF: #krate::__private01::ResolverSpec = #krate::__private01::ResolverSpec {
                name: #name,
                module: ::core::module_path!(),
                key: #key,
                deps: &[#(#dep_defs),*],
                states: &[#(#states),*],
                once: #once,
                run: __mcp_resolve_run,
            };

            #[automatically_derived]
            impl #krate::__private01::Resolver for #ty_ident {
                type Output = #output_ty;
                const DEF: &'static #krate::__private01::ResolverSpec = &__MCP_RESOLVE_DEF;
            }

        };
    }
}

/// What is emitted when validation failed (for a free function): a placeholder function, an
/// empty checker and (when the return type allows) a stub `Resolver` impl, so tools using the
/// resolver do not cascade into "not a resolver".
pub(crate) fn fallback(
    krate: &TokenStream,
    vis: &Visibility,
    sig: &syn::Signature,
    name: &str,
    key: &str,
    doc_attrs: &[Attribute],
) -> TokenStream {
    let ident = &sig.ident;
    let ty_ident = value_type(name);
    let checker = checker(name);
    let checker_vis = checker_vis(vis);
    let stub_impl = fallback_impl(krate, sig, &ty_ident, name, key);
    let value = crate::util::fn_value::placeholder(krate, vis, ident, &ty_ident, doc_attrs);
    quote! {
        #value
        #[doc(hidden)]
        macro_rules! #checker { ($($t:tt)*) => {}; }
        #[doc(hidden)]
        #[allow(unused_imports)]
        #checker_vis use #checker as #ident;
        #stub_impl
    }
}

/// The `Resolver` impl of a resolver that failed validation: its output is what the declared
/// return type resolves to, and it never runs. `None` when the return type names the function's
/// generic parameters (which do not exist outside it).
fn fallback_impl(
    krate: &TokenStream,
    sig: &syn::Signature,
    ty_ident: &Ident,
    name: &str,
    key: &str,
) -> Option<TokenStream> {
    let ret = return_type(&sig.output);
    let generic_names: Vec<String> = sig
        .generics
        .params
        .iter()
        .map(|p| match p {
            syn::GenericParam::Type(t) => t.ident.to_string(),
            syn::GenericParam::Const(c) => c.ident.to_string(),
            syn::GenericParam::Lifetime(l) => l.lifetime.ident.to_string(),
        })
        .collect();
    if mentions(ret.to_token_stream(), &generic_names) {
        return None;
    }
    let output_ty = quote_spanned! {ret.span()=>
        <#ret as #krate::__private01::IntoResolution>::Output
    };
    Some(quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, non_upper_case_globals, clippy::all)]
        const _: () = {
            fn __mcp_resolve_run(
                _: #krate::__private01::ResolveInputs,
            ) -> #krate::__private01::BoxFuture<'static, #krate::__private01::Step> {
                ::core::unreachable!()
            }
            static __MCP_RESOLVE_DEF: #krate::__private01::ResolverSpec = #krate::__private01::ResolverSpec {
                name: #name,
                module: ::core::module_path!(),
                key: #key,
                deps: &[],
                states: &[],
                once: false,
                run: __mcp_resolve_run,
            };
            #[automatically_derived]
            impl #krate::__private01::Resolver for #ty_ident {
                type Output = #output_ty;
                const DEF: &'static #krate::__private01::ResolverSpec = &__MCP_RESOLVE_DEF;
            }
        };
    })
}

/// Whether `tokens` contain one of these identifiers (or lifetimes, by their name).
fn mentions(tokens: TokenStream, names: &[String]) -> bool {
    !names.is_empty()
        && tokens.into_iter().any(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) => names.iter().any(|n| i == n),
            proc_macro2::TokenTree::Group(g) => mentions(g.stream(), names),
            _ => false,
        })
}
