//! `#[resource]`: parse → validate → generate. A static resource (`uri = "…"`) takes the
//! `Context`; a template (`template = "…{var}…"`) also takes one `String` per variable, named
//! like it. Either may take `#[resolve(fn)]` values (asked like a tool's; the resolvers may read
//! the variables). The signature rules, `scopes` and the function it becomes are the
//! tool's.

use crate::tool::validate;
use crate::util::attr_fn::{self, AsWritten, Options};
use crate::util::docs;
use crate::util::errors::Errors;
use crate::util::fn_value::{BodyParam, KeptFn, result_slot};
use crate::util::param_attrs::{Helper, ParamAttrs};
use crate::util::resolved::{Slots, args_type, has_args};
use crate::util::spans::unraw;
use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{FnArg, Ident, Pat, Type};

/// The options of `#[resource(...)]`.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub(crate) struct ResourceArgs {
    /// A static resource's URI.
    uri: Option<SpannedValue<String>>,
    /// A template's URI template.
    template: Option<SpannedValue<String>>,
    /// The resource's name; defaults to the function's name.
    name: Option<String>,
    /// A human-readable title.
    title: Option<String>,
    /// A description; defaults to the doc comment.
    description: Option<String>,
    /// The MIME type of its contents.
    mime_type: Option<String>,
    /// Path of the facade crate in generated code.
    #[darling(rename = "crate")]
    krate: Option<syn::Path>,
    /// OAuth scopes a caller's token must grant.
    scopes: Option<AsWritten>,
}

impl Options for ResourceArgs {
    fn krate(&self) -> Option<&syn::Path> {
        self.krate.as_ref()
    }
}

/// The `{var}` names of a URI template (RFC 6570 level 1), or what is wrong with it. The runtime's
/// `UriTemplate::parse` reads the same grammar when the resource is registered.
fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = template;
    let mut last_was_var = false;
    while let Some(i) = rest.find(['{', '}']) {
        if rest.as_bytes()[i] == b'}' {
            return Err("unmatched `}` in the URI template: only `{name}` variables are supported".into());
        }
        if i > 0 {
            last_was_var = false;
        }
        let after = &rest[i + 1..];
        let Some(end) = after.find('}') else {
            return Err("unclosed `{` in the URI template: write `{name}`".into());
        };
        let name = &after[..end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "`{{{name}}}` is not supported: only `{{name}}` variables (letters, digits, `_`; RFC 6570 level 1) are"
            ));
        }
        if last_was_var {
            return Err("two variables touch in the URI template: put literal text (e.g. `/`) between them".into());
        }
        if names.iter().any(|n| n == name) {
            return Err(format!(
                "`{{{name}}}` appears twice in the URI template: name each variable once"
            ));
        }
        names.push(name.to_owned());
        last_was_var = true;
        rest = &after[end + 1..];
    }
    if names.is_empty() {
        return Err("this template has no `{variable}`: use `uri = \"…\"` for a static resource".into());
    }
    Ok(names)
}

enum Kind {
    Variable,
    Context,
    /// `#[resolve(path)]`: a resolver's value.
    Resolved(syn::Path),
}

struct Param {
    kind: Kind,
    ident: Ident,
    mutability: Option<syn::token::Mut>,
    ty: Type,
    kept_attrs: Vec<syn::Attribute>,
}

fn is_named(ty: &Type, want: &str) -> bool {
    matches!(ty, Type::Path(tp) if tp.qself.is_none()
        && tp.path.segments.last().is_some_and(|s| s.ident == want && s.arguments.is_none()))
}

fn resource_type(ident: &Ident) -> Ident {
    format_ident!("__mcp_resolve_resource_{}", unraw(ident))
}

/// Expands `#[resource(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let f = match attr_fn::parse::<ResourceArgs>("resource", args, item, &mut errors) {
        Ok(parsed) => parsed,
        Err(out) => return out,
    };
    let (args, sig, krate) = (&f.args, &f.sig, &f.krate);
    validate::signature_of("resource", sig, &mut errors);
    let scopes = args
        .scopes
        .as_ref()
        .map_or_else(Vec::new, |e| validate::scopes(&e.0, &mut errors));

    // The URI or the template, and the template's variables.
    let mut template_ok = true;
    let (location, is_template, variables) = match (&args.uri, &args.template) {
        (Some(uri), None) => {
            if uri.is_empty() {
                errors.push(syn::Error::new(uri.span(), "a resource's URI cannot be empty"));
            } else if uri.contains(['{', '}']) {
                errors.push(syn::Error::new(
                    uri.span(),
                    "this URI has `{…}`: write `template = \"…\"` for a URI template",
                ));
            }
            ((**uri).clone(), false, Vec::new())
        }
        (None, Some(t)) => match template_variables(t) {
            Ok(vars) => ((**t).clone(), true, vars),
            Err(e) => {
                errors.push(syn::Error::new(t.span(), e));
                // The parameters cannot be checked against a template that does not parse.
                template_ok = false;
                ((**t).clone(), true, Vec::new())
            }
        },
        (Some(_), Some(t)) => {
            errors.push(syn::Error::new(
                t.span(),
                "give either `uri = \"…\"` (a static resource) or `template = \"…\"` (a URI template), not both",
            ));
            (String::new(), false, Vec::new())
        }
        (None, None) => {
            errors.push(syn::Error::new(
                Span::call_site(),
                "`#[resource]` needs `uri = \"test://…\"` (a static resource) or `template = \"test://…/{id}\"` (a URI template)",
            ));
            (String::new(), false, Vec::new())
        }
    };

    let mut params = Vec::new();
    let mut bound: Vec<String> = Vec::new();
    let mut completers: Vec<(String, syn::Path)> = Vec::new();
    for arg in &sig.inputs {
        let pt = match arg {
            FnArg::Receiver(r) => {
                errors.spanned(
                    r,
                    "`#[resource]` cannot take `self`: make it a free `async fn`, and reach shared state through a `static` (e.g. a `LazyLock`)",
                );
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let attrs = ParamAttrs::parse(&pt.attrs, &mut errors);
        let mut complete = None;
        let mut resolve: Option<syn::Path> = None;
        // A parameter whose attribute was refused is left out: its type says nothing more.
        let mut refused = false;
        for h in &attrs.helpers {
            let hint = match &h.helper {
                Helper::Arg(o) if o.rename.is_none() && o.description.is_none() => {
                    complete = o.complete.clone();
                    continue;
                }
                Helper::Arg(_) => {
                    "`#[arg]` takes only `complete = …` on `#[resource]` parameters: a template variable is named by its parameter"
                }
                Helper::Resolve(path) if resolve.is_none() => {
                    resolve = Some(path.clone());
                    continue;
                }
                Helper::Resolve(_) => "a parameter takes one `#[resolve]`: remove this `#[resolve]`",
                Helper::Confirm(_) => {
                    refused = true;
                    "`#[confirm]` is not supported on `#[resource]` parameters: write a `#[resolver]` that returns `Elicit::<Confirm>::form(\"…\")` and take it with `#[resolve(that_resolver)]`"
                }
            };
            errors.spanned(h.attr.path(), hint);
        }
        if refused {
            continue;
        }
        let (ident, mutability) = match &*pt.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => (pi.ident.clone(), pi.mutability),
            other => {
                errors.spanned(
                    other,
                    "`#[resource]` parameters must be plain names, since the name is the template variable's: bind a name and destructure it in the body",
                );
                continue;
            }
        };
        let kind = if let Some(path) = resolve {
            if let Some(c) = complete.take() {
                errors.spanned(
                    c,
                    "a `#[resolve]` parameter is not a template variable, so it has no completions: remove `complete`",
                );
            }
            Kind::Resolved(path)
        } else if is_named(&pt.ty, "Context") {
            if let Some(path) = complete.take() {
                errors.spanned(
                    path,
                    "the `Context` is not a template variable, so it has no completions: remove `complete`",
                );
            }
            Kind::Context
        } else if is_named(&pt.ty, "String") {
            let name = unraw(&ident);
            if !is_template {
                errors.spanned(
                    &pt.pat,
                    format!("a static resource has no variables, so `{name}` has no value: use `template = \"…/{{{name}}}\"`, or take only `Context`"),
                );
            } else if template_ok && !variables.contains(&name) {
                let known = variables
                    .iter()
                    .map(|v| format!("`{{{v}}}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                errors.spanned(
                    &pt.pat,
                    format!("`{name}` is not a variable of the URI template (it has {known}): rename the parameter, or add `{{{name}}}` to the template"),
                );
            }
            if let Some(path) = complete.take() {
                completers.push((name.clone(), path));
            }
            bound.push(name);
            Kind::Variable
        } else {
            let name = unraw(&ident);
            errors.spanned(
                &pt.ty,
                format!("a template variable is a `String` (write `{name}: String`, and parse it in the body); the other `#[resource]` parameters are the request's `Context` and `#[resolve(a_resolver)]` values"),
            );
            bound.push(name);
            continue;
        };
        params.push(Param {
            kind,
            ident,
            mutability,
            ty: (*pt.ty).clone(),
            kept_attrs: attrs.other,
        });
    }
    if let Some(t) = &args.template {
        for v in variables.iter().filter(|v| !bound.contains(v)) {
            errors.push(syn::Error::new(
                t.span(),
                format!("the URI template's `{{{v}}}` has no parameter: add `{v}: String` to the function"),
            ));
        }
    }

    let ty_ident = resource_type(&sig.ident);
    if !errors.is_empty() {
        return f.failed(errors, |f| {
            let krate = &f.krate;
            let value = crate::util::fn_value::placeholder(krate, &f.vis, &f.sig.ident, &ty_ident, &f.doc_attrs);
            quote! {
                #value
                #[doc(hidden)]
                const _: () = {
                    #[automatically_derived]
                    impl #krate::__private::Resource for #ty_ident {
                        fn definition(&self) -> #krate::__private::ResourceDefinition {
                            ::core::unreachable!()
                        }
                        fn read(
                            &self,
                            _: #krate::__private::ResourceCall,
                        ) -> #krate::__private::BoxFuture<
                            'static,
                            ::core::result::Result<
                                ::std::vec::Vec<#krate::__private::ResourceContents>,
                                #krate::__private::ErrorObject,
                            >,
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
    let opt = |v: &Option<String>| match v {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let completer_items = completers.iter().map(|(name, path)| {
        let c = crate::prompt::completer_value(krate, path);
        quote!(.complete(#name, #c))
    });
    let title = opt(&args.title);
    let mime = opt(&args.mime_type);
    let wire_name = args.name.clone().unwrap_or_else(|| unraw(&sig.ident));
    let ident = &sig.ident;
    let output = &sig.output;
    let args_ty = args_type(&unraw(ident), "variables");
    let mut slots = Slots::new(
        format!("the resource `{wire_name}`"),
        variables.to_vec(),
        "template variable",
    );
    // Hidden locals, never the parameters' names (`param_locals`).
    let locals = crate::util::param_locals(params.iter().map(|p| &p.ident));
    let takes: Vec<TokenStream> = params
        .iter()
        .zip(&locals)
        .map(|(p, local)| {
            let ident = &p.ident;
            match &p.kind {
                Kind::Context => quote! { let #local = __call.context.clone(); },
                Kind::Variable => {
                    let name = unraw(ident);
                    quote! { let #local = #krate::__private::resource_variable(&__call, #name)?; }
                }
                Kind::Resolved(path) => slots.bind(krate, &args_ty, (path, ident, &p.ty), local, "resource_resolved"),
            }
        })
        .collect();
    let has_args = has_args(
        krate,
        &args_ty,
        variables.iter().map(|v| (v.as_str(), quote!(::std::string::String))),
    );
    let resolver_checks = slots.checks();
    let resolvers_fn = slots.resolvers_fn(krate);
    let (ret_span, out, ret_krate) = result_slot(krate, ident, output);
    let into_contents = quote_spanned! {ret_span=>
        #ret_krate::__private::IntoResourceContents::into_contents(#out, &__call.uri, #mime)
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
            impl #krate::__private::Resource for #ty_ident {
                fn definition(&self) -> #krate::__private::ResourceDefinition {
                    #krate::__private::resource_definition(
                        #location,
                        #is_template,
                        #wire_name,
                        #title,
                        #description,
                        #mime,
                        &[#(#scopes),*],
                    )
                    #(#completer_items)*
                }

                #resolvers_fn

                fn read(
                    &self,
                    __call: #krate::__private::ResourceCall,
                ) -> #krate::__private::BoxFuture<
                    'static,
                    ::core::result::Result<
                        ::std::vec::Vec<#krate::__private::ResourceContents>,
                        #krate::__private::ErrorObject,
                    >,
                > {
                    let __mcp_resolve_f = #ident;
                    ::std::boxed::Box::pin(async move {
                        #(#takes)*
                        let #out = __mcp_resolve_f(#(#locals),*).await;
                        #into_contents
                    })
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::template_variables;

    #[test]
    fn template_variables_are_level_one_only() {
        assert_eq!(template_variables("test://t/{id}/data").unwrap(), ["id"]);
        assert_eq!(template_variables("a/{x}/b/{y}").unwrap(), ["x", "y"]);
        for bad in ["a/{x", "a/}", "a/{}", "a/{+x}", "a/{x}{y}", "a/{x}/{x}", "a/b"] {
            assert!(template_variables(bad).is_err(), "{bad}");
        }
    }
}
