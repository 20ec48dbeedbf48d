//! A tool's part of its `Tool` impl: the definition (inputSchema, annotations), the resolvers
//! of its `#[confirm]` parameters, `check_arguments`, and `call`, which reads every argument and
//! reports all that are wrong at once. Quote only, no parsing.

use crate::item::{Cx, Generated, Source, option};
use crate::util::resolved::Slots;
use crate::util::return_type;
use crate::util::spans::unraw;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

/// What a tool's definition says besides its arguments.
pub(super) struct Definition<'a> {
    pub(super) wire_name: &'a str,
    pub(super) title: Option<&'a String>,
    /// `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`.
    pub(super) annotations: [Option<bool>; 4],
    /// The OAuth scopes a caller needs.
    pub(super) scopes: &'a [String],
    /// Opted out of single-use answers.
    pub(super) replayable: bool,
    /// `task = "…"`: the `TaskSupport` variant.
    pub(super) task: Option<&'static str>,
}

/// The tool's part of its `Tool` impl.
pub(super) fn generate(d: &Definition<'_>, cx: &mut Cx<'_>) -> Generated {
    let Cx {
        krate,
        ident,
        output,
        params,
        locals,
        slots,
        args_ty,
        description,
        result: (ret_span, out, ret_krate),
    } = cx;
    let krate = *krate;
    let wire_name = d.wire_name;
    let title = option(d.title);
    let scopes = d.scopes;
    let replayable = d.replayable;
    let ann = d.annotations.map(option);
    let describes = params.iter().filter(|p| p.is_argument()).map(|p| {
        let ty = &p.ty;
        let key = &p.key;
        let desc = option(p.description.as_ref());
        let header = p.header.as_ref().map(|(name, _)| {
            quote_spanned! {ty.span()=>
                #krate::__private01::mirror_in_header::<#ty>(&mut __schema, #key, #name);
            }
        });
        quote_spanned! {ty.span()=>
            <#ty as #krate::__private01::ToolParam>::describe(&mut __schema, #key, #desc);
            #header
        }
    });
    let mut confirm_defs = Vec::new();
    let takes: Vec<TokenStream> = params
        .iter()
        .zip(locals.iter())
        .map(|(p, slot)| {
            let ty = &p.ty;
            let key = &p.key;
            let name = unraw(&p.ident);
            match &p.source {
                // (A tool's `Context` is an argument its type describes: `Source::Context` is a
                // prompt's or a resource's.)
                Source::Argument { .. } | Source::Context => quote_spanned! {ty.span()=>
                    let #slot = __errors.take::<#ty>(&__call, #key);
                },
                Source::Resolve(path) => {
                    let index = slots.resolve(krate, args_ty, path, &name);
                    let def = Slots::def_of(krate, path);
                    quote_spanned! {ty.span()=>
                        let #slot = __errors.take_resolved::<#ty, _>(#def, &__call, #index, #name);
                    }
                }
                Source::Confirm(message) => {
                    let index = slots.next_index();
                    let def = format_ident!("__MCP_RESOLVE_CONFIRM_{}", index, span = Span::mixed_site());
                    let run = format_ident!("__mcp_resolve_confirm_{}", index, span = Span::mixed_site());
                    confirm_defs.push(quote! {
                        fn #run(
                            __inputs: #krate::__private01::ResolveInputs,
                        ) -> #krate::__private01::BoxFuture<'static, #krate::__private01::Step> {
                            ::std::boxed::Box::pin(async move {
                                #krate::__private01::confirm_step(#message, __inputs.arguments())
                            })
                        }
                        static #def: #krate::__private01::ResolverSpec = #krate::__private01::ResolverSpec {
                            name: #name,
                            module: ::core::concat!(::core::module_path!(), "::", #wire_name),
                            key: #name,
                            deps: &[],
                            states: &[],
                            once: false,
                            run: #run,
                        };
                    });
                    slots.generated(quote! {
                        #krate::__private01::ResolveSlot { param: #name, resolver: &#def }
                    });
                    quote_spanned! {ty.span()=>
                        let #slot = __errors.take_confirm::<#ty>(&__call, #index, #name);
                    }
                }
            }
        })
        .collect();
    let checks = params.iter().filter(|p| p.is_argument()).map(|p| {
        let ty = &p.ty;
        let key = &p.key;
        quote_spanned! {ty.span()=> __errors.check::<#ty>(&__call, #key); }
    });
    // With resolvers, the runtime checks the arguments before it asks anything.
    let methods = if slots.is_empty() {
        quote!()
    } else {
        quote! {
            fn check_arguments(
                &self,
                __arguments: &#krate::__private01::JsonMap<::std::string::String, #krate::__private01::JsonValue>,
            ) -> ::core::result::Result<(), #krate::__private01::CallToolResult> {
                let __call = #krate::__private01::ToolCall::new(
                    __arguments.clone(),
                    #krate::__private01::Context::detached(
                        #krate::__private01::ProtocolVersion::LATEST_STATELESS,
                        ::core::default::Default::default(),
                    ),
                );
                let mut __errors = #krate::__private01::ArgErrors::default();
                #(#checks)*
                __errors.finish()
            }
        }
    };
    // The conversion is spanned on the return type, so a type that is not a tool result is
    // reported there (as the `.output::<R>()` check in `definition` is), not on `#[tool]`.
    let ret_span = *ret_span;
    let into_result = quote_spanned! {ret_span=>
        #ret_krate::__private01::IntoToolResult::into_tool_result(#out)
    };
    let ret = return_type(output);
    let output_check = quote_spanned! {ret_span=>
        .output::<#ret>()
    };
    let task = d.task.map(|variant| {
        let variant = format_ident!("{}", variant);
        quote!(.task_support(#krate::__private01::TaskSupport::#variant))
    });
    let idents: Vec<&Ident> = params.iter().map(|p| &p.ident).collect();
    let call = quote_spanned! {ident.span()=>
        // Read before the parameters are bound, so a parameter named like the tool cannot
        // shadow it.
        let __mcp_resolve_f = #ident;
        ::std::boxed::Box::pin(async move {
            let mut __errors = #krate::__private01::ArgErrors::default();
            #(#takes)*
            match (#(#locals,)*) {
                (#(::core::option::Option::Some(#idents),)*) => {
                    let #out = __mcp_resolve_f(#(#idents),*).await;
                    #into_result
                }
                #[allow(unreachable_patterns)]
                _ => __errors.into_result(),
            }
        })
    };
    Generated {
        definition: quote! {
            let mut __schema = #krate::__private01::ArgsSchema::new();
            #(#describes)*
            #krate::__private01::definition(
                #wire_name,
                #title,
                #description,
                __schema,
                #krate::__private01::annotations(#(#ann),*),
                &[#(#scopes),*],
                #replayable,
            ) #output_check #task
        },
        items: quote!(#(#confirm_defs)*),
        methods,
        call,
    }
}
