//! `#[resolver]`: parse → validate → generate.
//!
//! A resolver becomes a plain `fn` of the same name returning a `BodyFuture` whose hidden marker
//! type carries its identity (found from the function's type by the tools that use it), a
//! hidden `ResolverSpec` describing its dependencies, a run function that reads its parameters,
//! and a `macro_rules!` checker with the resolver's own name (in the macro namespace). A tool that
//! uses the resolver invokes the checker with its argument type: the checker re-emits the
//! resolver's parameter tokens as trait bounds, so an unknown argument or a wrong type is reported
//! at the resolver's parameter, and it calls the checkers of the resolver's dependencies in turn.
//! The re-emitted tokens resolve in the tool's module: a dependency's path and a parameter's type
//! must be nameable there as the resolver names them (docs/resolver.md, "Modules").

mod codegen;
mod parse;
mod validate;
pub(crate) mod visit;

use crate::util::attr_fn;
use crate::util::errors::Errors;
use crate::util::spans::unraw;
use parse::ResolverArgs;
use proc_macro2::TokenStream;

/// FNV-1a: a stable hash, for the resolver's id.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Expands `#[resolver(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    // Unique among resolvers that share a name: the name and a hash of the whole item.
    let item_hash = fnv(item.to_string().as_bytes());
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
        id: format!("{name}#{item_hash:016x}"),
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
        assert!(!out.contains("__mcp_resolve_resolver_f"), "{out}");
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
