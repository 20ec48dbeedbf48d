//! `#[tool]`: a function the client calls with JSON arguments, each parameter an argument its
//! type describes in the inputSchema, or a value asked of the human (`#[resolve]`, `#[confirm]`).
//! The steps every item takes are `item::expand`'s.

mod args;
mod codegen;
mod validate;

use crate::item::{self, Cx, Generated, Helpers, ItemKind, Kind, Param, Source};
use crate::util::errors::Errors;
use args::ToolArgs;
use proc_macro2::TokenStream;
use syn::{Ident, PatType, Type};

/// A `#[tool]` being expanded.
#[derive(Default)]
pub(crate) struct Tool {
    args: ToolArgs,
    wire_name: String,
    /// The OAuth scopes a caller needs.
    scopes: Vec<String>,
    /// `#[tool(destructive = true, replayable)]`: opted out of single-use answers.
    replayable: bool,
    /// `#[tool(task = "…")]`: the `TaskSupport` variant.
    task: Option<&'static str>,
}

impl ItemKind for Tool {
    const KIND: Kind = Kind::Tool;
    type Args = ToolArgs;

    fn new(args: ToolArgs, _: &mut Errors) -> Self {
        Tool {
            args,
            ..Tool::default()
        }
    }

    fn helpers(&self, helpers: &Helpers<'_>, _: &PatType, errors: &mut Errors) {
        validate::arg_options(helpers, errors);
    }

    fn source(&mut self, pt: &PatType, _: &Ident, helpers: &Helpers<'_>, errors: &mut Errors) -> Option<Source> {
        if let Type::ImplTrait(it) = &*pt.ty {
            errors.spanned(
                it,
                "`#[tool]` parameters need concrete types to build the inputSchema: replace `impl Trait` with a type",
            );
            return None;
        }
        // Application state is no argument: nothing in the schema, and resolvers do not read
        // it by name (they take a `State<T>` of their own).
        let plain = if item::is_state(&pt.ty) {
            Source::Context
        } else {
            Source::ARGUMENT
        };
        Some(helpers.source.as_ref().map_or(plain, |(source, _)| source.clone()))
    }

    fn check(&mut self, ident: &Ident, params: &[Param], errors: &mut Errors) {
        validate::unique_keys(params, errors);
        validate::confirm_messages(params, errors);
        validate::headers(params, errors);
        let args = &self.args;
        self.replayable = args
            .replayable
            .as_ref()
            .map(|flag| validate::replayable(flag, args.destructive, params, errors))
            .is_some();
        self.task = args.task.as_ref().and_then(|t| validate::task_support(&t.0, errors));
        self.scopes = args
            .scopes
            .as_ref()
            .map_or_else(Vec::new, |e| item::scopes(&e.0, errors));
        self.wire_name = item::wire_name(args.name.as_ref(), ident, validate::tool_name, errors);
    }

    fn wire_name(&self) -> &str {
        &self.wire_name
    }

    fn description(&self) -> Option<&String> {
        self.args.description.as_ref()
    }

    fn generate(&self, cx: &mut Cx<'_>) -> Generated {
        let a = &self.args;
        let definition = codegen::Definition {
            wire_name: &self.wire_name,
            title: a.title.as_ref(),
            annotations: [a.read_only, a.destructive, a.idempotent, a.open_world],
            scopes: &self.scopes,
            replayable: self.replayable,
            task: self.task,
        };
        codegen::generate(&definition, cx)
    }
}

/// Expands `#[tool(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    item::expand::<Tool>(args, item)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

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
