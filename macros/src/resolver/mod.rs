//! `#[resolver]`: parse → validate → generate.
//!
//! A resolver becomes a `static` value (its identity, registered through the tools that use it),
//! a hidden `ResolverDef` describing its dependencies, a run function that reads its parameters,
//! and a `macro_rules!` checker with the resolver's own name (in the macro namespace). A tool that
//! uses the resolver invokes the checker with its argument type: the checker re-emits the
//! resolver's parameter tokens as trait bounds, so an unknown argument or a wrong type is reported
//! at the resolver's parameter, and it calls the checkers of the resolver's dependencies in turn.

use crate::util::errors::Errors;
use crate::util::fn_value::FnValue;
use crate::util::spans::unraw;
use crate::util::{attr_fn, docs};
use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Pat, ReturnType, Type};

pub(crate) mod visit;

/// `#[resolver(...)]` options.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
struct ResolverArgs {
    /// The key of the resolver's question in `inputRequests`.
    key: Option<SpannedValue<String>>,
    /// Path of the facade crate.
    #[darling(rename = "crate")]
    krate: Option<syn::Path>,
}

struct ResolverParam {
    ident: Ident,
    mutability: Option<syn::token::Mut>,
    ty: Type,
    dep: Option<syn::Path>,
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let (func, args) = match attr_fn::parse::<ResolverArgs>("resolver", args, item.clone(), &mut errors) {
        Ok(parsed) => parsed,
        Err(out) => return out,
    };
    let krate = attr_fn::krate(args.krate.as_ref());
    let syn::ItemFn {
        attrs, vis, sig, block, ..
    } = func;
    let (doc_attrs, fn_attrs) = docs::take_docs(attrs);
    if sig.asyncness.is_none() {
        errors.spanned(
            sig.fn_token,
            "`#[resolver]` functions must be `async`: write `async fn`",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(
            &sig.generics,
            "`#[resolver]` functions cannot be generic: use concrete types",
        );
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        errors.spanned(u, "`#[resolver]` functions cannot be `unsafe`");
    }
    if let Some(c) = &sig.constness {
        errors.spanned(c, "`#[resolver]` functions cannot be `const`");
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => errors.spanned(r, "`#[resolver]` cannot take `self`: make it a free `async fn`"),
            FnArg::Typed(pt) => {
                let (ident, mutability) = match &*pt.pat {
                    Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => (pi.ident.clone(), pi.mutability),
                    other => {
                        errors.spanned(
                            other,
                            "`#[resolver]` parameters must be plain names: a name is the tool argument it reads",
                        );
                        continue;
                    }
                };
                let mut dep = None;
                for attr in &pt.attrs {
                    if attr.path().is_ident("resolve") {
                        if dep.is_some() {
                            errors.spanned(
                                attr.path(),
                                "duplicate `#[resolve]` attribute: a parameter has one resolver",
                            );
                            continue;
                        }
                        match attr.parse_args::<syn::Path>() {
                            Ok(p) => dep = Some(p),
                            Err(e) => errors.push(syn::Error::new(
                                e.span(),
                                "expected `#[resolve(path::to::resolver)]`: the resolver whose value this parameter takes",
                            )),
                        }
                    } else if !attr.path().is_ident("doc") {
                        errors.spanned(attr, "only `#[resolve(...)]` may annotate a resolver parameter");
                    }
                }
                params.push(ResolverParam {
                    ident,
                    mutability,
                    ty: (*pt.ty).clone(),
                    dep,
                });
            }
        }
    }
    let name = unraw(&sig.ident);
    let key = match &args.key {
        Some(k) => {
            if k.is_empty() {
                errors.push(syn::Error::new(
                    k.span(),
                    "a resolver key cannot be empty: give a name, or remove `key` to use the function's name",
                ));
            }
            (**k).clone()
        }
        None => name.clone(),
    };
    let ident = &sig.ident;
    let ty_ident = format_ident!("__mcp_resolve_resolver_{}", name);
    let checker = format_ident!("__mcp_resolve_check_{}", name);
    let checker_vis = match &vis {
        syn::Visibility::Public(_) => quote!(pub(crate)),
        other => other.to_token_stream(),
    };
    if !errors.is_empty() {
        let mut out = errors.into_tokens();
        if sig.receiver().is_some() {
            // A method sits in an `impl` or a trait, where the resolver's items cannot go: give
            // the method back as written, so its callers do not cascade into more errors.
            out.extend(method_fallback(&doc_attrs, &fn_attrs, &vis, sig, &block));
            return out;
        }
        // Still define the value, an empty checker and (when the return type allows) a stub
        // `ResolverFn` impl, so tools using the resolver do not cascade into "not a resolver".
        let stub_impl = fallback_impl(&krate, &sig, &ty_ident, &name, &key);
        let value = crate::util::fn_value::placeholder(&vis, ident, &ty_ident, &doc_attrs);
        out.extend(quote! {
            #value
            #[doc(hidden)]
            macro_rules! #checker { ($($t:tt)*) => {}; }
            #[doc(hidden)]
            #[allow(unused_imports)]
            #checker_vis use #checker as #ident;
            #stub_impl
        });
        return out;
    }

    let ret: Type = match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    let ret_span = ret.span();
    let body = format_ident!(
        "__mcp_resolve_body_{}",
        name,
        span = Span::mixed_site().located_at(sig.ident.span())
    );
    let idents: Vec<&Ident> = params.iter().map(|p| &p.ident).collect();
    let tys: Vec<&Type> = params.iter().map(|p| &p.ty).collect();
    let muts = params.iter().map(|p| &p.mutability);
    let output = &sig.output;

    let deps: Vec<&syn::Path> = params.iter().filter_map(|p| p.dep.as_ref()).collect();
    let dep_defs = deps
        .iter()
        .map(|d| quote_spanned! {d.span()=> #krate::__private::dep_fn(&#d) });
    let reads = params.iter().map(|p| {
        let ident = &p.ident;
        let ty = &p.ty;
        let pname = unraw(ident);
        match &p.dep {
            Some(dep) => {
                // The resolver's type and value are spanned on the path: a function that is not a
                // `#[resolver]` is reported there.
                let dep_ty = quote_spanned! {dep.span()=> _ };
                let dep_ref = quote_spanned! {dep.span()=> &#dep };
                quote_spanned! {ty.span()=>
                    let #ident: #ty = match __inputs.dependency::<#ty, #dep_ty>(#dep_ref, #pname) {
                        ::core::result::Result::Ok(v) => v,
                        ::core::result::Result::Err(m) => return #krate::__private::Step::Invalid(m),
                    };
                }
            }
            None => quote_spanned! {ty.span()=>
                let #ident: #ty = match <#ty as #krate::__private::ResolverInput>::take(&__inputs, #pname) {
                    ::core::result::Result::Ok(v) => v,
                    ::core::result::Result::Err(m) => return #krate::__private::Step::Invalid(m),
                };
            },
        }
    });
    let param_checks = params.iter().filter(|p| p.dep.is_none()).map(|p| {
        let ty = &p.ty;
        let pname = unraw(&p.ident);
        quote_spanned! {p.ident.span()=>
            #krate::__private::check_resolver_param::<#ty, $args, { #krate::__private::name_hash(#pname) }>();
        }
    });
    // Unique among resolvers that share a name: the name and a hash of the whole item.
    let id = format!("{name}#{:016x}", fnv(item.to_string().as_bytes()));
    let into_step = quote_spanned! {ret_span=>
        #krate::__private::into_step(__mcp_resolve_f(#(#idents),*).await)
    };
    let output_ty = quote_spanned! {ret_span=>
        <#ret as #krate::__private::IntoResolution>::Output
    };
    let boxed = quote_spanned! {sig.ident.span()=>
        #krate::__private::boxed(#body(#(#idents),*))
    };
    let fn_ptr = quote! { fn(#(#tys),*) -> #krate::__private::BoxFuture<'static, #ret> };
    let (value_items, value_impls) = FnValue {
        vis: &vis,
        ident,
        ty_ident: &ty_ident,
        doc_attrs: &doc_attrs,
        body_fn: quote! {
            #(#fn_attrs)*
            async fn #body(#(#muts #idents: #tys),*) #output #block
        },
        fn_ptr: &fn_ptr,
        closure: quote! { |#(#idents),*| #boxed },
        debug_name: &name,
    }
    .expand();
    quote! {
        #value_items

        #[doc(hidden)]
        macro_rules! #checker {
            ($args:ty, [$($visited:literal),*], [$($names:literal),*], $via:path) => {
                #krate::__private::resolver_visit! {
                    id = #id,
                    name = #name,
                    visited = [$($visited),*],
                    names = [$($names),*],
                    via = $via,
                    args = $args,
                    checks = {
                        const _: () = {
                            #[allow(dead_code, clippy::all)]
                            fn __mcp_resolve_check() {
                                #(#param_checks)*
                            }
                        };
                    },
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
            #value_impls

            fn __mcp_resolve_run(
                __inputs: #krate::__private::ResolveInputs,
            ) -> #krate::__private::BoxFuture<'static, #krate::__private::Step> {
                // Read before the parameters are bound, so a parameter named like the resolver
                // cannot shadow it.
                let __mcp_resolve_f = #ident.__mcp_resolve_f;
                ::std::boxed::Box::pin(async move {
                    #(#reads)*
                    #into_step
                })
            }

            static __MCP_RESOLVE_DEF: #krate::__private::ResolverDef = #krate::__private::ResolverDef {
                name: #name,
                module: ::core::module_path!(),
                key: #key,
                deps: &[#(#dep_defs),*],
                run: __mcp_resolve_run,
            };

            #[automatically_derived]
            impl #krate::__private::ResolverFn for #ty_ident<#fn_ptr> {
                type Output = #output_ty;
                const DEF: &'static #krate::__private::ResolverDef = &__MCP_RESOLVE_DEF;
            }

        };
    }
}

/// The `ResolverFn` impl of a resolver that failed validation: its output is what the declared
/// return type resolves to, and it never runs. `None` when the return type names the function's
/// generic parameters (which do not exist outside it).
fn fallback_impl(
    krate: &TokenStream,
    sig: &syn::Signature,
    ty_ident: &Ident,
    name: &str,
    key: &str,
) -> Option<TokenStream> {
    let ret: Type = match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
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
        <#ret as #krate::__private::IntoResolution>::Output
    };
    Some(quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, non_upper_case_globals, clippy::all)]
        const _: () = {
            fn __mcp_resolve_run(
                _: #krate::__private::ResolveInputs,
            ) -> #krate::__private::BoxFuture<'static, #krate::__private::Step> {
                ::core::unreachable!()
            }
            static __MCP_RESOLVE_DEF: #krate::__private::ResolverDef = #krate::__private::ResolverDef {
                name: #name,
                module: ::core::module_path!(),
                key: #key,
                deps: &[],
                run: __mcp_resolve_run,
            };
            #[automatically_derived]
            impl #krate::__private::ResolverFn for #ty_ident {
                type Output = #output_ty;
                const DEF: &'static #krate::__private::ResolverDef = &__MCP_RESOLVE_DEF;
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

/// The user's method, with the parameter attributes `#[resolver]` owns (`#[resolve]`, doc
/// comments) removed, since rustc rejects them there.
fn method_fallback(
    doc_attrs: &[syn::Attribute],
    fn_attrs: &[syn::Attribute],
    vis: &syn::Visibility,
    mut sig: syn::Signature,
    block: &syn::Block,
) -> TokenStream {
    for input in &mut sig.inputs {
        if let FnArg::Typed(pt) = input {
            pt.attrs
                .retain(|a| !a.path().is_ident("resolve") && !a.path().is_ident("doc"));
        }
    }
    quote! {
        #(#doc_attrs)*
        #(#fn_attrs)*
        #vis #sig #block
    }
}
