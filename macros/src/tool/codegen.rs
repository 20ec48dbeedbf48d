//! Code generation for `#[tool]`: quote only, no parsing.

use super::param::{Param, Source};
use crate::util::fn_value::{BodyParam, KeptFn, result_slot};
use crate::util::resolved::{Slots, args_type, has_args, ty};
use crate::util::return_type;
use crate::util::spans::unraw;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Block, Ident, ReturnType, Visibility};

/// Everything codegen needs, already validated.
pub(crate) struct ToolModel {
    pub(crate) krate: TokenStream,
    pub(crate) vis: Visibility,
    pub(crate) ident: Ident,
    pub(crate) wire_name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: TokenStream,
    pub(crate) annotations: [Option<bool>; 4],
    /// The OAuth scopes a caller needs.
    pub(crate) scopes: Vec<String>,
    /// `#[tool(destructive = true, replayable)]`: opted out of single-use answers.
    pub(crate) replayable: bool,
    pub(crate) doc_attrs: Vec<Attribute>,
    pub(crate) fn_attrs: Vec<Attribute>,
    pub(crate) params: Vec<Param>,
    pub(crate) output: ReturnType,
    pub(crate) block: Block,
}

/// The tool's marker type, named in the function's return type; it implements `Tool`.
fn tool_type(ident: &Ident) -> Ident {
    format_ident!("__mcp_resolve_tool_{}", unraw(ident))
}

/// The full expansion: the tool's function and marker, the body function, direct calls, and the
/// `Tool` impl.
pub(crate) fn expand(m: &ToolModel) -> TokenStream {
    let ToolModel {
        krate,
        vis,
        ident,
        doc_attrs,
        fn_attrs,
        params,
        output,
        block,
        ..
    } = m;
    let ret = return_type(output);
    let idents: Vec<&Ident> = params.iter().map(|p| &p.ident).collect();
    let wire_name = &m.wire_name;
    let title = match &m.title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let description = &m.description;
    let scopes = &m.scopes;
    let replayable = m.replayable;
    let ann = m.annotations.iter().map(|a| match a {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    });
    let describes = params.iter().filter(|p| matches!(p.source, Source::Argument)).map(|p| {
        let ty = &p.ty;
        let key = &p.key;
        let desc = match &p.description {
            Some(d) => quote!(::core::option::Option::Some(#d)),
            None => quote!(::core::option::Option::None),
        };
        let header = p.header.as_ref().map(|(name, _)| {
            quote_spanned! {ty.span()=>
                #krate::__private::mirror_in_header::<#ty>(&mut __schema, #key, #name);
            }
        });
        quote_spanned! {ty.span()=>
            <#ty as #krate::__private::ToolParam>::describe(&mut __schema, #key, #desc);
            #header
        }
    });
    // Hidden locals, never the parameters' names (`param_locals`).
    let slots = crate::util::param_locals(params.iter().map(|p| &p.ident));
    // Resolved parameters, in order: their index in `resolvers()` and `ToolCall::resolved`.
    let mut slots_of = Slots::new(
        format!("the tool `{}`", m.wire_name),
        params
            .iter()
            .filter(|p| matches!(p.source, Source::Argument))
            .map(|p| p.key.clone())
            .collect(),
        "argument",
    );
    let mut confirm_defs = Vec::new();
    let args_ty = args_type(&m.wire_name, "arguments");
    let takes: Vec<TokenStream> = params
        .iter()
        .zip(&slots)
        .map(|(p, slot)| {
            let ty = &p.ty;
            let key = &p.key;
            let name = unraw(&p.ident);
            match &p.source {
                Source::Argument => quote_spanned! {ty.span()=>
                    let #slot = __errors.take::<#ty>(&__call, #key);
                },
                Source::Resolve(path) => {
                    let index = slots_of.resolve(krate, &args_ty, path, &name);
                    let def = Slots::def_of(krate, path);
                    quote_spanned! {ty.span()=>
                        let #slot = __errors.take_resolved::<#ty, _>(#def, &__call, #index, #name);
                    }
                }
                Source::Confirm(message) => {
                    let index = slots_of.next_index();
                    let def = format_ident!("__MCP_RESOLVE_CONFIRM_{}", index, span = Span::mixed_site());
                    let run = format_ident!("__mcp_resolve_confirm_{}", index, span = Span::mixed_site());
                    let tool_name = &m.wire_name;
                    confirm_defs.push(quote! {
                        fn #run(
                            __inputs: #krate::__private::ResolveInputs,
                        ) -> #krate::__private::BoxFuture<'static, #krate::__private::Step> {
                            ::std::boxed::Box::pin(async move {
                                #krate::__private::confirm_step(#message, __inputs.arguments())
                            })
                        }
                        static #def: #krate::__private::ResolverSpec = #krate::__private::ResolverSpec {
                            name: #name,
                            module: ::core::concat!(::core::module_path!(), "::", #tool_name),
                            key: #name,
                            deps: &[],
                            once: false,
                            run: #run,
                        };
                    });
                    slots_of.generated(quote! {
                        #krate::__private::ResolveSlot { param: #name, resolver: &#def }
                    });
                    quote_spanned! {ty.span()=>
                        let #slot = __errors.take_confirm::<#ty>(&__call, #index, #name);
                    }
                }
            }
        })
        .collect();
    let arg_params: Vec<&Param> = params.iter().filter(|p| matches!(p.source, Source::Argument)).collect();
    let has_args = has_args(krate, &args_ty, arg_params.iter().map(|p| (p.key.as_str(), ty(&p.ty))));
    let resolver_checks = slots_of.checks();
    let checks = arg_params.iter().map(|p| {
        let ty = &p.ty;
        let key = &p.key;
        quote_spanned! {ty.span()=> __errors.check::<#ty>(&__call, #key); }
    });
    let resolvers = slots_of.resolvers_fn(krate);
    let resolvers_fn = if slots_of.is_empty() {
        quote!()
    } else {
        quote! {
            #resolvers

            fn check_arguments(
                &self,
                __arguments: &#krate::__private::JsonMap<::std::string::String, #krate::__private::JsonValue>,
            ) -> ::core::result::Result<(), #krate::__private::CallToolResult> {
                let __call = #krate::__private::ToolCall::new(
                    __arguments.clone(),
                    #krate::__private::Context::detached(
                        #krate::__private::ProtocolVersion::LATEST_STATELESS,
                        ::core::default::Default::default(),
                    ),
                );
                let mut __errors = #krate::__private::ArgErrors::default();
                #(#checks)*
                __errors.finish()
            }
        }
    };
    // The conversion is spanned on the return type, so a type that is not a tool result is
    // reported there (as the `.output::<R>()` check in `definition` is), not on `#[tool]`.
    let (ret_span, out, ret_krate) = result_slot(krate, ident, output);
    let into_result = quote_spanned! {ret_span=>
        #ret_krate::__private::IntoToolResult::into_tool_result(#out)
    };
    let output_check = quote_spanned! {ret_span=>
        .output::<#ret>()
    };
    let call_body = quote_spanned! {ident.span()=>
        // Read before the parameters are bound, so a parameter named like the tool cannot
        // shadow it.
        let __mcp_resolve_f = #ident;
        ::std::boxed::Box::pin(async move {
            let mut __errors = #krate::__private::ArgErrors::default();
            #(#takes)*
            match (#(#slots,)*) {
                (#(::core::option::Option::Some(#idents),)*) => {
                    let #out = __mcp_resolve_f(#(#idents),*).await;
                    #into_result
                }
                #[allow(unreachable_patterns)]
                _ => __errors.into_result(),
            }
        })
    };
    let ty_ident = tool_type(ident);
    let value_items = KeptFn {
        krate,
        vis,
        ident,
        ty_ident: &ty_ident,
        doc_attrs,
        fn_attrs,
        params: params
            .iter()
            .map(|p| BodyParam {
                ident: &p.ident,
                ty: &p.ty,
                mutability: &p.mutability,
                kept_attrs: &p.kept_attrs,
            })
            .collect(),
        output,
        block,
    }
    .value();
    quote! {
        #value_items

        #[doc(hidden)]
        #[allow(non_snake_case, non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #has_args
            #(#resolver_checks)*
            #(#confirm_defs)*

            #[automatically_derived]
            impl #krate::__private::Tool for #ty_ident {
                fn definition(&self) -> #krate::__private::ToolDefinition {
                    let mut __schema = #krate::__private::ArgsSchema::new();
                    #(#describes)*
                    #krate::__private::definition(
                        #wire_name,
                        #title,
                        #description,
                        __schema,
                        #krate::__private::annotations(#(#ann),*),
                        &[#(#scopes),*],
                        #replayable,
                    ) #output_check
                }

                #resolvers_fn

                fn call(
                    &self,
                    __call: #krate::__private::ToolCall,
                ) -> #krate::__private::BoxFuture<'static, #krate::__private::CallToolResult> {
                    #call_body
                }
            }
        };
    }
}

/// What is emitted when validation failed: the errors, plus a placeholder function with a stub
/// `Tool` impl so uses elsewhere (`Server::tool(name)`) do not cascade into more errors.
pub(crate) fn fallback(krate: &TokenStream, vis: &Visibility, ident: &Ident, doc_attrs: &[Attribute]) -> TokenStream {
    let ty_ident = tool_type(ident);
    let value = crate::util::fn_value::placeholder(krate, vis, ident, &ty_ident, doc_attrs);
    quote! {
        #value

        #[doc(hidden)]
        const _: () = {
            #[automatically_derived]
            impl #krate::__private::Tool for #ty_ident {
                fn definition(&self) -> #krate::__private::ToolDefinition {
                    ::core::unreachable!()
                }
                fn call(
                    &self,
                    _: #krate::__private::ToolCall,
                ) -> #krate::__private::BoxFuture<'static, #krate::__private::CallToolResult> {
                    ::core::unreachable!()
                }
            }
        };
    }
}
