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
    pub(crate) doc_attrs: Vec<Attribute>,
    pub(crate) fn_attrs: Vec<Attribute>,
    pub(crate) params: Vec<ResolverParam>,
    pub(crate) output: ReturnType,
    pub(crate) block: Block,
}

/// The resolver's marker type, named in its function's return type; it implements `Resolver`
/// and `Fits`. It is the function's own name in the type namespace (a braced struct takes no
/// name among values), so wherever the function is in scope, by definition or by an ordinary
/// `use`, a dependent resolver can name it as a type.
pub(crate) fn value_type(ident: &Ident) -> Ident {
    ident.clone()
}

/// The full expansion: the resolver's function and marker, its run function and `ResolverSpec`,
/// the `Resolver` and `Fits` impls, and one cycle check per dependency.
pub(crate) fn expand(m: &ResolverModel) -> TokenStream {
    let ResolverModel {
        krate,
        vis,
        ident,
        name,
        key,
        once,
        doc_attrs,
        fn_attrs,
        params,
        output,
        block,
    } = m;
    let ty_ident = value_type(ident);
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

    let dep_paths: Vec<&syn::Path> = params.iter().filter_map(|p| p.dep.as_ref()).collect();
    // Each dependency is named as a type (the marker the function shares its name with) through
    // an alias imported over a glob of stand-ins (`__private01::unresolved`): a path that is a
    // resolver shadows its stand-in; a plain function imports only a value, so the type falls
    // back to a stand-in and the one error is the value's ("annotate the function with
    // `#[resolver]`"), not rustc's "expected type, found function" before it.
    let aliases: Vec<syn::Path> = dep_paths
        .iter()
        .enumerate()
        .map(|(i, d)| syn::Path::from(format_ident!("__mcp_resolve_dep{}", i, span = d.span())))
        .collect();
    let imports = dep_paths.iter().zip(&aliases).map(|(d, a)| {
        quote_spanned! {d.span()=>
            #[allow(unused_imports)]
            use #d as #a;
        }
    });
    let stand_ins = (!dep_paths.is_empty()).then(|| {
        quote! {
            #[allow(unused_imports)]
            use #krate::__private01::unresolved::*;
        }
    });
    let deps: Vec<&syn::Path> = aliases.iter().collect();
    let dep_defs = deps.iter().map(|d| {
        quote_spanned! {d.span()=> <#d>::__mcp_resolve_spec() }
    });
    // One cycle check per dependency, spanned on its path: the constant evaluation stops with
    // the cycle's path at the edge that leaves the cycle's first member.
    let cycle_checks = deps.iter().map(|d| {
        let krate = crate::util::spans::respanned(krate, d.span());
        quote_spanned! {d.span()=>
            const _: () = #krate::__private01::no_cycle(&__MCP_RESOLVE_DEF, <#d>::__mcp_resolve_spec());
        }
    });
    // The dependencies fit the same item one level down.
    let dep_fits = deps.iter().map(|d| {
        let krate = crate::util::spans::respanned(krate, d.span());
        quote_spanned! {d.span()=>
            #d: #krate::__private01::Fits<__A, <__D as #krate::__private01::Deeper>::Next>
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
    // Each plain parameter is an argument of the item (by its name and type), the context or
    // state: a trait of its own, whose message names the parameter, bounds the `Fits` impl.
    let mut param_traits = Vec::new();
    let mut param_bounds = Vec::new();
    for p in params.iter().filter(|p| p.dep.is_none()) {
        let (t, b) = param_check(krate, name, &p.ident, &p.ty);
        param_traits.push(t);
        param_bounds.push(b);
    }
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
        #[allow(non_snake_case, non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #stand_ins
            #(#imports)*

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
            impl #ty_ident {
                /// Its description: what other resolvers' statics name as a dependency (a
                /// function, so statics that name each other are not one cyclic evaluation).
                #[doc(hidden)]
                pub const fn __mcp_resolve_spec() -> &'static #krate::__private01::ResolverSpec {
                    &__MCP_RESOLVE_DEF
                }
            }

            #(#param_traits)*
            #[automatically_derived]
            #[allow(private_bounds)]
            impl<__A, __D: #krate::__private01::Deeper> #krate::__private01::Fits<__A, __D> for #ty_ident
            where
                #(#param_bounds,)*
                #(#dep_fits,)*
            {
            }

            #(#cycle_checks)*
        };
    }
}

/// What is emitted when validation failed (for a free function): a placeholder function, its
/// marker with a stub `Resolver` impl and a `Fits` impl for every item, so tools using the
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
    let ty_ident = value_type(ident);
    let stub_impl = fallback_impl(krate, sig, &ty_ident, name, key);
    let value = crate::util::fn_value::placeholder(krate, vis, ident, &ty_ident, doc_attrs);
    quote! {
        #value
        #stub_impl
    }
}

/// What stands for a resolver that failed validation: its spec (no dependencies, never run), the
/// spec's accessor and a `Fits` impl for every item, so neither its dependents nor its users
/// report more; and its `Resolver` impl, whose output is what the declared return type resolves
/// to, unless the return type names the function's generic parameters (which do not exist
/// outside it).
fn fallback_impl(krate: &TokenStream, sig: &syn::Signature, ty_ident: &Ident, name: &str, key: &str) -> TokenStream {
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
    let resolver_impl = (!mentions(ret.to_token_stream(), &generic_names)).then(|| {
        let output_ty = quote_spanned! {ret.span()=>
            <#ret as #krate::__private01::IntoResolution>::Output
        };
        quote! {
            #[automatically_derived]
            impl #krate::__private01::Resolver for #ty_ident {
                type Output = #output_ty;
                const DEF: &'static #krate::__private01::ResolverSpec = &__MCP_RESOLVE_DEF;
            }
        }
    });
    quote! {
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
            #resolver_impl
            impl #ty_ident {
                /// Its description: what other resolvers' statics name as a dependency (a
                /// function, so statics that name each other are not one cyclic evaluation).
                #[doc(hidden)]
                pub const fn __mcp_resolve_spec() -> &'static #krate::__private01::ResolverSpec {
                    &__MCP_RESOLVE_DEF
                }
            }
            // Fits every item, so the items that use it report nothing more.
            #[automatically_derived]
            impl<__A, __D> #krate::__private01::Fits<__A, __D> for #ty_ident {}
        };
    }
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

/// The check of one plain parameter: a trait named after it, whose message names the resolver
/// and the parameter, implemented for the parameter's type when it is an argument of the item
/// `__A` of that name and type (or the context, or state); and the bound on the `Fits` impl,
/// spanned on the parameter so the compiler's note points there.
fn param_check(krate: &TokenStream, resolver: &str, ident: &Ident, ty: &Type) -> (TokenStream, TokenStream) {
    let pname = unraw(ident);
    let span = ident.span();
    let tr = format_ident!(
        "__mcp_resolve_param_{}",
        pname,
        span = Span::mixed_site().located_at(span)
    );
    // `on_unimplemented` format strings: a brace in a name is doubled.
    let escape = |s: String| s.replace('{', "{{").replace('}', "}}");
    let message = escape(format!(
        "the resolver `{resolver}` reads `{pname}`, an argument this item does not have (by that name and type)"
    ));
    let label = escape(format!("`{resolver}` reads `{pname}`, which this item does not have"));
    let note = "a resolver parameter is an argument of the tool or prompt (by its wire name, after `#[arg(rename)]`, and of the argument's own type: a prompt's arguments are `String` or `Option<String>`) or a template variable of the resource (`String`), a `#[resolve(other)]` value, the `Context`, or application state (`State<T>`)";
    let krate = crate::util::spans::respanned(krate, span);
    let t = quote_spanned! {span=>
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        #[allow(non_camel_case_types)]
        trait #tr<__A> {}
        #[diagnostic::do_not_recommend]
        impl<__A, __T> #tr<__A> for __T
        where
            __T: #krate::__private01::IsToolArgument<__A, { #krate::__private01::name_hash(#pname) }>,
        {
        }
    };
    let b = quote_spanned! {ty.span()=> #ty: #tr<__A> };
    (t, b)
}
