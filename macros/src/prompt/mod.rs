//! `#[prompt]`: parse → validate → generate. A prompt's arguments are strings, so its parameters
//! are `String` (required), `Option<String>` (optional), the `Context`, or `#[resolve(fn)]`
//! values (hidden from the argument list, asked like a tool's); the signature rules, `scopes` and
//! the function it becomes are the tool's (`tool::validate`, `FnValue`).

use crate::tool::validate;
use crate::util::attr_fn::{self, AsWritten, Options};
use crate::util::docs;
use crate::util::errors::Errors;
use crate::util::fn_value::{BodyParam, KeptFn, result_slot};
use crate::util::param_attrs::{Helper, ParamAttrs};
use crate::util::resolved::{Slots, args_type, has_args, ty};
use crate::util::spans::unraw;
use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::collections::HashSet;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, Pat, Type};

/// The options of `#[prompt(...)]`.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub(crate) struct PromptArgs {
    /// The prompt's wire name; defaults to the function's name.
    name: Option<SpannedValue<String>>,
    /// A human-readable title.
    title: Option<String>,
    /// A description; defaults to the doc comment.
    description: Option<String>,
    /// Path of the facade crate in generated code.
    #[darling(rename = "crate")]
    krate: Option<syn::Path>,
    /// OAuth scopes a caller's token must grant.
    scopes: Option<AsWritten>,
}

impl Options for PromptArgs {
    fn krate(&self) -> Option<&syn::Path> {
        self.krate.as_ref()
    }
}

/// What a parameter is.
enum Kind {
    /// `String`: a required argument.
    Required,
    /// `Option<String>`: an optional one.
    Optional,
    /// `Context`: not an argument.
    Context,
    /// `#[resolve(path)]`: a resolver's value, not an argument.
    Resolved(syn::Path),
}

struct Param {
    kind: Kind,
    ident: Ident,
    mutability: Option<syn::token::Mut>,
    ty: Type,
    key: String,
    key_span: Span,
    description: Option<TokenStream>,
    complete: Option<syn::Path>,
    kept_attrs: Vec<Attribute>,
}

const TYPE_HINT: &str = "MCP prompt arguments are strings: use `String` for a required argument, `Option<String>` for an optional one, `Context` for the request's context, or `#[resolve(a_resolver)]` for a value a resolver provides";

/// The parameter's kind, read from how its type is written (`String`, `Option<String>`,
/// `Context`, with or without a path).
fn kind_of(ty: &Type) -> Option<Kind> {
    let Type::Path(tp) = ty else { return None };
    if tp.qself.is_some() {
        return None;
    }
    let last = tp.path.segments.last()?;
    match (last.ident.to_string().as_str(), &last.arguments) {
        ("String", syn::PathArguments::None) => Some(Kind::Required),
        ("Context", syn::PathArguments::None) => Some(Kind::Context),
        ("Option", syn::PathArguments::AngleBracketed(a)) if a.args.len() == 1 => match a.args.first() {
            Some(syn::GenericArgument::Type(inner)) => match kind_of(inner) {
                Some(Kind::Required) => Some(Kind::Optional),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

fn parse_params(sig: &syn::Signature, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    for arg in &sig.inputs {
        let pt = match arg {
            FnArg::Receiver(r) => {
                errors.spanned(
                    r,
                    "`#[prompt]` cannot take `self`: make it a free `async fn`, and reach shared state through a `static` (e.g. a `LazyLock`)",
                );
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let attrs = ParamAttrs::parse(&pt.attrs, errors);
        let mut arg = None;
        let mut resolve: Option<&syn::Path> = None;
        // A parameter whose attribute was refused is left out: its type says nothing more.
        let mut refused = false;
        for h in &attrs.helpers {
            match &h.helper {
                Helper::Arg(options) if arg.is_none() => arg = Some(options),
                Helper::Arg(_) => errors.spanned(
                    h.attr.path(),
                    "duplicate `#[arg]` attribute: put every option in one `#[arg(...)]`",
                ),
                Helper::Resolve(path) if resolve.is_none() => resolve = Some(path),
                Helper::Resolve(_) => errors.spanned(
                    h.attr.path(),
                    "a parameter takes one `#[resolve]`: remove this `#[resolve]`",
                ),
                Helper::Confirm(_) => {
                    refused = true;
                    errors.spanned(
                        h.attr.path(),
                        "`#[confirm]` is not supported on `#[prompt]` parameters: write a `#[resolver]` that returns `Elicit::<Confirm>::form(\"…\")` and take it with `#[resolve(that_resolver)]`",
                    );
                }
            }
        }
        if refused {
            continue;
        }
        if let (Some(_), Some(options)) = (resolve, arg)
            && (options.rename.is_some() || options.description.is_some() || options.complete.is_some())
        {
            errors.spanned(
                &pt.ty,
                "a `#[resolve]` parameter is not an argument, so `#[arg(...)]` options do not apply to it: remove them",
            );
        }
        let (ident, mutability) = match &*pt.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => (pi.ident.clone(), pi.mutability),
            other => {
                errors.spanned(
                    other,
                    "`#[prompt]` parameters must be plain names, since the name is the argument's name: bind a name and destructure it in the body",
                );
                continue;
            }
        };
        let kind = match resolve {
            Some(path) => Kind::Resolved(path.clone()),
            None => match kind_of(&pt.ty) {
                Some(kind) => kind,
                None => {
                    errors.spanned(&pt.ty, TYPE_HINT);
                    continue;
                }
            },
        };
        if let (Kind::Context, Some(options)) = (&kind, arg)
            && (options.rename.is_some() || options.description.is_some() || options.complete.is_some())
        {
            errors.spanned(
                &pt.ty,
                "the `Context` is not an argument, so `#[arg(...)]` options do not apply to it: remove them",
            );
        }
        let (key, key_span) = match arg.and_then(|a| a.rename.as_ref()) {
            Some(r) => ((**r).clone(), r.span()),
            None => (unraw(&ident), ident.span()),
        };
        let description = match arg.and_then(|a| a.description.as_ref()) {
            Some(d) => Some(quote!(#d)),
            None if attrs.docs.is_empty() => None,
            None => Some(docs::description(&attrs.docs)),
        };
        params.push(Param {
            kind,
            ident,
            mutability,
            ty: (*pt.ty).clone(),
            key,
            key_span,
            description,
            complete: arg.and_then(|a| a.complete.clone()),
            kept_attrs: attrs.other,
        });
    }
    let mut seen = HashSet::new();
    for p in params
        .iter()
        .filter(|p| matches!(p.kind, Kind::Required | Kind::Optional))
    {
        if !seen.insert(p.key.as_str()) {
            errors.push(syn::Error::new(
                p.key_span,
                format!(
                    "two arguments are named `{}`: rename one with `#[arg(rename = \"…\")]`",
                    p.key
                ),
            ));
        }
    }
    params
}

/// `Option<Completer>` from `#[arg(complete = path)]`; a completer of the wrong shape is reported
/// at the path.
pub(crate) fn completer(krate: &TokenStream, path: Option<&syn::Path>) -> TokenStream {
    match path {
        None => quote!(::core::option::Option::None),
        Some(path) => {
            let c = completer_value(krate, path);
            quote!(::core::option::Option::Some(#c))
        }
    }
}

/// A `Completer` running `path(value, cx)`.
pub(crate) fn completer_value(krate: &TokenStream, path: &syn::Path) -> TokenStream {
    let call = quote_spanned! {path.span()=> #path(__value, __cx) };
    quote! {
        #krate::__private::Completer::new(|__value, __cx| #krate::__private::boxed(#call))
    }
}

fn prompt_type(ident: &Ident) -> Ident {
    format_ident!("__mcp_resolve_prompt_{}", unraw(ident))
}

/// Expands `#[prompt(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let f = match attr_fn::parse::<PromptArgs>("prompt", args, item, &mut errors) {
        Ok(parsed) => parsed,
        Err(out) => return out,
    };
    let (args, sig, krate) = (&f.args, &f.sig, &f.krate);
    validate::signature_of("prompt", sig, &mut errors);
    let params = parse_params(sig, &mut errors);
    let scopes = args
        .scopes
        .as_ref()
        .map_or_else(Vec::new, |e| validate::scopes(&e.0, &mut errors));
    let wire_name = match &args.name {
        Some(n) => {
            if n.is_empty() {
                errors.push(syn::Error::new(
                    n.span(),
                    "a prompt's name cannot be empty: remove `name` to use the function's",
                ));
            }
            (**n).clone()
        }
        None => unraw(&sig.ident),
    };
    let ty_ident = prompt_type(&sig.ident);
    if !errors.is_empty() {
        return f.failed(errors, |f| {
            let krate = &f.krate;
            let value = crate::util::fn_value::placeholder(krate, &f.vis, &f.sig.ident, &ty_ident, &f.doc_attrs);
            quote! {
                #value
                #[doc(hidden)]
                const _: () = {
                    #[automatically_derived]
                    impl #krate::__private::Prompt for #ty_ident {
                        fn definition(&self) -> #krate::__private::PromptDefinition {
                            ::core::unreachable!()
                        }
                        fn get(
                            &self,
                            _: #krate::__private::PromptCall,
                        ) -> #krate::__private::BoxFuture<
                            'static,
                            ::core::result::Result<#krate::__private::GetPromptResult, #krate::__private::ErrorObject>,
                        > {
                            ::core::unreachable!()
                        }
                    }
                };
            }
        });
    }
    let description = match &args.description {
        Some(d) => quote!(#d),
        None => docs::description(&f.doc_attrs),
    };
    let title = match &args.title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let ident = &sig.ident;
    let output = &sig.output;
    let arguments = params.iter().filter_map(|p| {
        let key = &p.key;
        let desc = match &p.description {
            Some(d) => quote!(::core::option::Option::Some(#d)),
            None => quote!(::core::option::Option::None),
        };
        let complete = completer(krate, p.complete.as_ref());
        match p.kind {
            Kind::Context | Kind::Resolved(_) => None,
            Kind::Required => Some(quote!((#key, #desc, true, #complete))),
            Kind::Optional => Some(quote!((#key, #desc, false, #complete))),
        }
    });
    let args_ty = args_type(&wire_name, "arguments");
    let mut slots = Slots::new(
        format!("the prompt `{wire_name}`"),
        params
            .iter()
            .filter(|p| matches!(p.kind, Kind::Required | Kind::Optional))
            .map(|p| p.key.clone())
            .collect(),
        "argument",
    );
    // Hidden locals, never the parameters' names (`param_locals`).
    let locals = crate::util::param_locals(params.iter().map(|p| &p.ident));
    let takes: Vec<TokenStream> = params
        .iter()
        .zip(&locals)
        .map(|(p, local)| {
            let ident = &p.ident;
            let key = &p.key;
            match &p.kind {
                Kind::Context => quote! { let #local = __call.context.clone(); },
                Kind::Required => quote! { let #local = #krate::__private::prompt_required(&__call, #key)?; },
                Kind::Optional => quote! { let #local = #krate::__private::prompt_optional(&__call, #key); },
                Kind::Resolved(path) => slots.bind(krate, &args_ty, (path, ident, &p.ty), local, "prompt_resolved"),
            }
        })
        .collect();
    let has_args = has_args(
        krate,
        &args_ty,
        params.iter().filter_map(|p| match p.kind {
            Kind::Required | Kind::Optional => Some((p.key.as_str(), ty(&p.ty))),
            Kind::Context | Kind::Resolved(_) => None,
        }),
    );
    let resolver_checks = slots.checks();
    let resolvers_fn = slots.resolvers_fn(krate);
    let (ret_span, out, ret_krate) = result_slot(krate, ident, output);
    let into_result = quote_spanned! {ret_span=>
        #ret_krate::__private::IntoPromptResult::into_prompt_result(#out)
    };
    let value_items = KeptFn {
        krate,
        vis: &f.vis,
        ident,
        ty_ident: &ty_ident,
        doc_attrs: &f.doc_attrs,
        fn_attrs: &f.fn_attrs,
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
        block: &f.block,
    }
    .value();
    quote! {
        #value_items

        #[doc(hidden)]
        #[allow(non_snake_case, non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #has_args
            #(#resolver_checks)*

            #[automatically_derived]
            impl #krate::__private::Prompt for #ty_ident {
                fn definition(&self) -> #krate::__private::PromptDefinition {
                    #krate::__private::prompt_definition(
                        #wire_name,
                        #title,
                        #description,
                        &[#(#arguments),*],
                        &[#(#scopes),*],
                    )
                }

                #resolvers_fn

                fn get(
                    &self,
                    __call: #krate::__private::PromptCall,
                ) -> #krate::__private::BoxFuture<
                    'static,
                    ::core::result::Result<#krate::__private::GetPromptResult, #krate::__private::ErrorObject>,
                > {
                    let __mcp_resolve_f = #ident;
                    ::std::boxed::Box::pin(async move {
                        #(#takes)*
                        let #out = __mcp_resolve_f(#(#locals),*).await;
                        #into_result
                    })
                }
            }
        };
    }
}
