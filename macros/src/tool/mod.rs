//! `#[tool]`: parse → validate → generate.

pub(crate) mod args;
mod codegen;
mod param;
pub(crate) mod validate;

use crate::util::errors::Errors;
use crate::util::spans::unraw;
use crate::util::{attr_fn, docs};
use args::ToolArgs;
use proc_macro2::TokenStream;
use quote::quote;

/// Expands `#[tool(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let f = match attr_fn::parse::<ToolArgs>("tool", args, item, &mut errors) {
        Ok(parsed) => parsed,
        Err(out) => return out,
    };
    let (args, sig) = (&f.args, &f.sig);
    validate::signature(sig, &mut errors);
    let params = param::parse_params(sig.inputs.iter(), &mut errors);
    validate::unique_keys(&params, &mut errors);
    validate::confirm_messages(&params, &mut errors);
    validate::headers(&params, &mut errors);
    let replayable = args
        .replayable
        .as_ref()
        .map(|flag| validate::replayable(flag, args.destructive, &params, &mut errors))
        .is_some();
    let scopes = args
        .scopes
        .as_ref()
        .map_or_else(Vec::new, |e| validate::scopes(&e.0, &mut errors));
    let wire_name = match &args.name {
        Some(n) => {
            if let Err(msg) = validate::tool_name(n) {
                errors.push(syn::Error::new(n.span(), msg));
            }
            (**n).clone()
        }
        None => unraw(&sig.ident),
    };

    if !errors.is_empty() {
        return f.failed(errors, |f| {
            codegen::fallback(&f.krate, &f.vis, &f.sig.ident, &f.doc_attrs)
        });
    }
    let description = match &args.description {
        Some(d) => quote!(#d),
        None => docs::description(&f.doc_attrs),
    };
    let annotations = [args.read_only, args.destructive, args.idempotent, args.open_world];
    codegen::expand(&codegen::ToolModel {
        krate: f.krate,
        vis: f.vis,
        ident: f.sig.ident,
        wire_name,
        title: f.args.title,
        description,
        annotations,
        scopes,
        replayable,
        doc_attrs: f.doc_attrs,
        fn_attrs: f.fn_attrs,
        params,
        output: f.sig.output,
        block: *f.block,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(args: TokenStream, item: TokenStream) -> usize {
        expand(args, item).to_string().matches("compile_error").count()
    }

    #[test]
    fn valid_tool_has_no_errors() {
        assert_eq!(
            errors_of(
                quote!(),
                quote!(
                    async fn add(a: i64, b: i64) -> String {
                        String::new()
                    }
                )
            ),
            0
        );
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let n = errors_of(
            quote!(name = "bad name"),
            quote!(
                fn f(
                    &self,
                    (a, b): (u8, u8),
                    #[arg]
                    #[arg]
                    c: u8,
                ) {
                }
            ),
        );
        // not async, self, pattern, duplicate #[arg], bad name
        assert_eq!(n, 5);
    }

    #[test]
    fn a_method_is_given_back_as_written() {
        let out = expand(
            quote!(),
            quote!(
                async fn f(&self, #[arg(rename = "x")] a: u8) {}
            ),
        )
        .to_string();
        assert_eq!(out.matches("compile_error").count(), 1);
        // No items that cannot sit in an `impl`, and no `#[arg]` left for rustc to reject.
        assert!(!out.contains("__mcp_resolve_tool_f"), "{out}");
        assert!(
            out.contains(
                &quote!(
                    async fn f(&self, a: u8) {}
                )
                .to_string()
            ),
            "{out}"
        );
    }

    #[test]
    fn a_method_loses_every_parameter_attribute_the_macros_own() {
        let out = expand(
            quote!(),
            quote!(
                async fn f(
                    &self,
                    /// Docs.
                    #[resolve(g)]
                    a: u8,
                    #[confirm("?")]
                    #[allow(unused)]
                    b: bool,
                ) {
                }
            ),
        )
        .to_string()
        // rustfmt lays the input out with a trailing comma, and the expectation without one.
        .replace(" ,)", ")");
        let expected = quote!(
            async fn f(&self, a: u8, #[allow(unused)] b: bool) {}
        )
        .to_string();
        assert!(out.contains(&expected), "{out}");
    }

    #[test]
    fn a_declaration_without_a_body_loses_them_too() {
        let out = expand(
            quote!(),
            quote!(
                async fn f(&self, #[arg(rename = "x")] a: u8, #[resolve(g)] b: u8);
            ),
        )
        .to_string();
        assert_eq!(out.matches("compile_error").count(), 1);
        assert!(
            out.contains(
                &quote!(
                    async fn f(&self, a: u8, b: u8);
                )
                .to_string()
            ),
            "{out}"
        );
    }

    #[test]
    fn unknown_option_is_an_error() {
        assert_eq!(
            errors_of(
                quote!(nam = "x"),
                quote!(
                    async fn f() {}
                )
            ),
            1
        );
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        assert_eq!(
            errors_of(
                quote!(),
                quote!(
                    async fn f(a: u8, #[arg(rename = "a")] b: u8) {}
                )
            ),
            1
        );
    }
}
