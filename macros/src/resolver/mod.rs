//! `#[resolver]`: parse → validate → generate.
//!
//! A resolver becomes a plain `fn` of the same name returning a `BodyFuture`, and a hidden marker
//! type of the same name (in the type namespace, so one `use` imports both) that carries its
//! identity: a hidden `ResolverSpec` describing its dependencies, a run function that reads its
//! parameters, and a `Fits<A>` impl whose bounds say, where the resolver is written, that each
//! parameter is an argument of `A` and each dependency fits `A` too. A tool that uses the
//! resolver requires `Fits<its arguments>` of the function's marker, so nothing the resolver names
//! has to be in scope at the tool (docs/resolver.md, "Modules"); a mistake is reported at the
//! tool's `#[resolve(f)]`, naming the resolver's parameter. Dependency cycles are found by a
//! constant evaluation over the specs, reported with their path.

mod codegen;
mod parse;
mod validate;

use crate::util::attr_fn;
use crate::util::errors::Errors;
use crate::util::spans::unraw;
use parse::ResolverArgs;
use proc_macro2::TokenStream;

/// Expands `#[resolver(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let f = match attr_fn::parse::<ResolverArgs>("resolver", args, item, &mut errors) {
        Ok(parsed) => parsed,
        Err(out) => return out,
    };
    validate::signature(&f.sig, &mut errors);
    let params = parse::params(f.sig.inputs.iter(), &mut errors);
    let name = unraw(&f.sig.ident);
    let key = validate::key(f.args.key.as_ref(), &name, &mut errors);
    let once = f
        .args
        .once
        .as_ref()
        .map(|flag| flag.check("#[resolver(once)]", &mut errors))
        .is_some();

    if !errors.is_empty() {
        return f.failed(errors, |f| {
            codegen::fallback(&f.krate, &f.vis, &f.sig, &name, &key, &f.doc_attrs)
        });
    }
    codegen::expand(&codegen::ResolverModel {
        krate: f.krate,
        vis: f.vis,
        ident: f.sig.ident,
        name,
        key,
        once,
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
    use quote::quote;

    fn errors_of(args: TokenStream, item: TokenStream) -> usize {
        expand(args, item).to_string().matches("compile_error").count()
    }

    #[test]
    fn valid_resolver_has_no_errors() {
        assert_eq!(
            errors_of(
                quote!(),
                quote!(
                    async fn ask(path: String, #[resolve(other)] ok: bool) -> Resolution<Confirm> {
                        ::core::todo!()
                    }
                )
            ),
            0
        );
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let n = errors_of(
            quote!(key = ""),
            quote!(
                fn f<T>(
                    &self,
                    (a, b): (u8, u8),
                    #[resolve(x)]
                    #[resolve(x)]
                    c: u8,
                    #[arg] d: u8,
                ) {
                }
            ),
        );
        // not async, generic, self, pattern, duplicate #[resolve], #[arg], empty key
        assert_eq!(n, 7);
    }

    #[test]
    fn a_method_is_given_back_without_parameter_attributes() {
        let out = expand(
            quote!(),
            quote!(
                async fn f(&self, #[arg(rename = "x")] a: u8, #[resolve(g)] b: u8, #[confirm("?")] c: bool) {}
            ),
        )
        .to_string();
        // No resolver is made of a method: no marker, no spec.
        assert!(!out.contains("__mcp_resolve_spec"), "{out}");
        assert!(!out.contains("__MCP_RESOLVE_DEF"), "{out}");
        assert!(
            out.contains(
                &quote!(
                    async fn f(&self, a: u8, b: u8, c: bool) {}
                )
                .to_string()
            ),
            "{out}"
        );
    }
}
