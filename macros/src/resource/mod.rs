//! `#[resource]`: a static resource (`uri = "…"`) takes the `Context`; a template
//! (`template = "…{var}…"`) also takes one `String` per variable, named like it. Either may take
//! `#[resolve(fn)]` values (asked like a tool's; the resolvers may read the variables). The steps
//! every item takes are `item::expand`'s.

mod template;

use crate::item::{self, Cx, Generated, Helpers, ItemKind, Kind, Param, Source, completer, direct_call, option};
use crate::util::attr_fn::{AsWritten, Options};
use crate::util::errors::Errors;
use crate::util::resolved::args_type;
use crate::util::spans::unraw;
use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Ident, PatType, Type};
use template::template_variables;

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

fn is_named(ty: &Type, want: &str) -> bool {
    matches!(ty, Type::Path(tp) if tp.qself.is_none()
        && tp.path.segments.last().is_some_and(|s| s.ident == want && s.arguments.is_none()))
}

/// A `#[resource]` being expanded.
pub(crate) struct Resource {
    args: ResourceArgs,
    /// The OAuth scopes a caller needs.
    scopes: Vec<String>,
    /// The URI or the URI template.
    location: String,
    is_template: bool,
    /// The template's variables.
    variables: Vec<String>,
    /// Whether the template parsed: the parameters cannot be checked against one that did not.
    template_ok: bool,
    /// The variables a parameter stands for (a `String` parameter's name, or a parameter of
    /// another type, which is an error of its own).
    bound: Vec<String>,
    wire_name: String,
}

impl ItemKind for Resource {
    const KIND: Kind = Kind::Resource;
    type Args = ResourceArgs;

    /// The scopes, and the URI or the template with its variables, which the parameters are read
    /// against.
    fn new(args: ResourceArgs, errors: &mut Errors) -> Self {
        let scopes = args
            .scopes
            .as_ref()
            .map_or_else(Vec::new, |e| item::scopes(&e.0, errors));
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
        Resource {
            args,
            scopes,
            location,
            is_template,
            variables,
            template_ok,
            bound: Vec::new(),
            wire_name: String::new(),
        }
    }

    /// A `#[resolve]` value, the `Context`, or a template variable (a `String` named like it).
    fn source(&mut self, pt: &PatType, ident: &Ident, helpers: &Helpers<'_>, errors: &mut Errors) -> Option<Source> {
        let complete = helpers.options().and_then(|a| a.complete.as_ref());
        if let Some((Source::Resolve(path), _)) = &helpers.source {
            if let Some(c) = complete {
                errors.spanned(
                    c,
                    "a `#[resolve]` parameter is not a template variable, so it has no completions: remove `complete`",
                );
            }
            return Some(Source::Resolve(path.clone()));
        }
        if is_named(&pt.ty, "Context") || item::is_state(&pt.ty) {
            if let Some(path) = complete {
                errors.spanned(
                    path,
                    "the `Context` and application state (`State<T>`) are not template variables, so they have no completions: remove `complete`",
                );
            }
            return Some(Source::Context);
        }
        let name = unraw(ident);
        if !is_named(&pt.ty, "String") {
            errors.spanned(
                &pt.ty,
                format!("a template variable is a `String` (write `{name}: String`, and parse it in the body); the other `#[resource]` parameters are the request's `Context`, application state (`State<T>`) and `#[resolve(a_resolver)]` values"),
            );
            self.bound.push(name);
            return None;
        }
        if !self.is_template {
            errors.spanned(
                &pt.pat,
                format!("a static resource has no variables, so `{name}` has no value: use `template = \"…/{{{name}}}\"`, or take only `Context`"),
            );
        } else if self.template_ok && !self.variables.contains(&name) {
            let known = self
                .variables
                .iter()
                .map(|v| format!("`{{{v}}}`"))
                .collect::<Vec<_>>()
                .join(", ");
            errors.spanned(
                &pt.pat,
                format!("`{name}` is not a variable of the URI template (it has {known}): rename the parameter, or add `{{{name}}}` to the template"),
            );
        }
        self.bound.push(name);
        Some(Source::ARGUMENT)
    }

    /// Every variable of the template has its parameter.
    fn check(&mut self, ident: &Ident, _: &[Param], errors: &mut Errors) {
        if let Some(t) = &self.args.template {
            for v in self.variables.iter().filter(|v| !self.bound.contains(v)) {
                errors.push(syn::Error::new(
                    t.span(),
                    format!("the URI template's `{{{v}}}` has no parameter: add `{v}: String` to the function"),
                ));
            }
        }
        self.wire_name = self.args.name.clone().unwrap_or_else(|| unraw(ident));
    }

    fn wire_name(&self) -> &str {
        &self.wire_name
    }

    fn description(&self) -> Option<&String> {
        self.args.description.as_ref()
    }

    /// The template's variables, which resolvers may read.
    fn arguments(&self, _: &[Param]) -> Vec<(String, TokenStream)> {
        self.variables
            .iter()
            .map(|v| (v.clone(), quote!(::std::string::String)))
            .collect()
    }

    fn args_type(&self, ident: &Ident) -> Ident {
        args_type(&unraw(ident), "variables")
    }

    fn generate(&self, cx: &mut Cx<'_>) -> Generated {
        let krate = cx.krate;
        let completers = cx.params.iter().filter(|p| p.is_argument()).filter_map(|p| {
            let name = &p.key;
            let c = completer(krate, p.complete.as_ref()?);
            Some(quote!(.complete(#name, #c)))
        });
        let (location, is_template, wire_name, description, scopes) = (
            &self.location,
            self.is_template,
            &self.wire_name,
            &cx.description,
            &self.scopes,
        );
        let title = option(self.args.title.as_ref());
        let mime = option(self.args.mime_type.as_ref());
        let definition = quote! {
            #krate::__private01::resource_definition(
                #location,
                #is_template,
                #wire_name,
                #title,
                #description,
                #mime,
                &[#(#scopes),*],
            )
            #(#completers)*
        };
        let (ret_span, out, ret_krate) = &cx.result;
        let convert = quote_spanned! {*ret_span=>
            #ret_krate::__private01::IntoResourceContents::into_contents(#out, &__call.uri, #mime)
        };
        let read = |p: &Param| {
            let name = &p.key;
            quote!(#krate::__private01::resource_variable(&__call, #name)?)
        };
        Generated {
            definition,
            items: quote!(),
            methods: quote!(),
            call: direct_call(cx, "resolved", read, convert),
        }
    }
}

/// Expands `#[resource(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    item::expand::<Resource>(args, item)
}
