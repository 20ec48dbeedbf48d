//! `#[prompt]`: a prompt's arguments are strings, so its parameters are `String` (required),
//! `Option<String>` (optional), the `Context`, or `#[resolve(fn)]` values (hidden from the
//! argument list, asked like a tool's). The steps every item takes are `item::expand`'s.

use crate::item::{self, Cx, Generated, Helpers, ItemKind, Kind, Param, Source, completer, direct_call, option};
use crate::util::attr_fn::{AsWritten, Options};
use crate::util::errors::Errors;
use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::{Ident, PatType, Type};

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

const TYPE_HINT: &str = "MCP prompt arguments are strings: use `String` for a required argument, `Option<String>` for an optional one, `Context` for the request's context, `State<T>` for application state, or `#[resolve(a_resolver)]` for a value a resolver provides";

/// Where a parameter's value comes from, read from how its type is written (`String`,
/// `Option<String>`, `Context`, with or without a path).
fn source_of(ty: &Type) -> Option<Source> {
    if item::is_state(ty) {
        return Some(Source::Context);
    }
    let Type::Path(tp) = ty else { return None };
    if tp.qself.is_some() {
        return None;
    }
    let last = tp.path.segments.last()?;
    match (last.ident.to_string().as_str(), &last.arguments) {
        ("String", syn::PathArguments::None) => Some(Source::ARGUMENT),
        ("Context", syn::PathArguments::None) => Some(Source::Context),
        ("Option", syn::PathArguments::AngleBracketed(a)) if a.args.len() == 1 => match a.args.first() {
            Some(syn::GenericArgument::Type(inner)) => match source_of(inner) {
                Some(Source::Argument { optional: false }) => Some(Source::Argument { optional: true }),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// A `#[prompt]` being expanded.
#[derive(Default)]
pub(crate) struct Prompt {
    args: PromptArgs,
    wire_name: String,
    /// The OAuth scopes a caller needs.
    scopes: Vec<String>,
}

impl ItemKind for Prompt {
    const KIND: Kind = Kind::Prompt;
    type Args = PromptArgs;

    fn new(args: PromptArgs, _: &mut Errors) -> Self {
        Prompt {
            args,
            ..Prompt::default()
        }
    }

    /// A `#[resolve]` parameter takes no `#[arg]` options.
    fn helpers(&self, helpers: &Helpers<'_>, pt: &PatType, errors: &mut Errors) {
        if let (Some(_), Some(options)) = (&helpers.source, helpers.options())
            && (options.rename.is_some() || options.description.is_some() || options.complete.is_some())
        {
            errors.spanned(
                &pt.ty,
                "a `#[resolve]` parameter is not an argument, so `#[arg(...)]` options do not apply to it: remove them",
            );
        }
    }

    fn source(&mut self, pt: &PatType, _: &Ident, helpers: &Helpers<'_>, errors: &mut Errors) -> Option<Source> {
        let source = match &helpers.source {
            Some((source, _)) => source.clone(),
            None => match source_of(&pt.ty) {
                Some(source) => source,
                None => {
                    errors.spanned(&pt.ty, TYPE_HINT);
                    return None;
                }
            },
        };
        if let (Source::Context, Some(options)) = (&source, helpers.options())
            && (options.rename.is_some() || options.description.is_some() || options.complete.is_some())
        {
            errors.spanned(
                &pt.ty,
                "the `Context` and application state (`State<T>`) are not arguments, so `#[arg(...)]` options do not apply to them: remove them",
            );
        }
        Some(source)
    }

    fn check(&mut self, ident: &Ident, params: &[Param], errors: &mut Errors) {
        item::unique_keys(
            params,
            |key| format!("two arguments are named `{key}`: rename one with `#[arg(rename = \"…\")]`"),
            errors,
        );
        self.scopes = self
            .args
            .scopes
            .as_ref()
            .map_or_else(Vec::new, |e| item::scopes(&e.0, errors));
        let not_empty = |name: &str| {
            if name.is_empty() {
                return Err("a prompt's name cannot be empty: remove `name` to use the function's".to_string());
            }
            Ok(())
        };
        self.wire_name = item::wire_name(self.args.name.as_ref(), ident, not_empty, errors);
    }

    fn wire_name(&self) -> &str {
        &self.wire_name
    }

    fn description(&self) -> Option<&String> {
        self.args.description.as_ref()
    }

    fn generate(&self, cx: &mut Cx<'_>) -> Generated {
        let krate = cx.krate;
        let arguments = cx.params.iter().filter_map(|p| {
            let Source::Argument { optional } = p.source else {
                return None;
            };
            let (key, required) = (&p.key, !optional);
            let desc = option(p.description.as_ref());
            let complete = option(p.complete.as_ref().map(|path| completer(krate, path)));
            Some(quote!((#key, #desc, #required, #complete)))
        });
        let (wire_name, title, description, scopes) = (
            &self.wire_name,
            option(self.args.title.as_ref()),
            &cx.description,
            &self.scopes,
        );
        let definition = quote! {
            #krate::__private01::prompt_definition(
                #wire_name,
                #title,
                #description,
                &[#(#arguments),*],
                &[#(#scopes),*],
            )
        };
        let (ret_span, out, ret_krate) = &cx.result;
        let convert = quote_spanned! {*ret_span=>
            #ret_krate::__private01::IntoPromptResult::into_prompt_result(#out)
        };
        let read = |p: &Param| {
            let key = &p.key;
            match p.source {
                Source::Argument { optional: true } => quote!(#krate::__private01::prompt_optional(&__call, #key)),
                _ => quote!(#krate::__private01::prompt_required(&__call, #key)?),
            }
        };
        Generated {
            definition,
            items: quote!(),
            methods: quote!(),
            call: direct_call(cx, "resolved", read, convert),
        }
    }
}

/// Expands `#[prompt(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    item::expand::<Prompt>(args, item)
}
