//! `#[derive(FormSchema)]`: parse → validate → generate.
//!
//! A struct with named fields becomes a form (`impl FormSchema`); a unit-only enum becomes a
//! choice (`impl FormChoice` + `impl FormField`). What can only be checked with the field types
//! known (which options apply to a field, whether a default fits) is generated as `const` checks
//! spanned at the option, so rustc reports them there.

mod choice;
mod codegen;
mod input;
mod literals;
mod validate;

use crate::util::errors::Errors;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Data, DeriveInput, Fields};

/// Expands `#[derive(FormSchema)]` on `item`.
pub(crate) fn expand(item: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => return e.into_compile_error(),
    };
    let mut errors = Errors::default();
    let attrs = validate::container(&input.attrs, &mut errors);
    let krate = match &attrs.krate {
        Some(p) => p.to_token_stream(),
        None => quote!(::mcp_resolve),
    };
    let ident = &input.ident;
    match &input.data {
        Data::Struct(s) => {
            validate::no_generics(&input.generics, "structs", &mut errors);
            let model = match &s.fields {
                Fields::Named(named) => Some(validate::form(&attrs, &input.attrs, named, &mut errors)),
                Fields::Unnamed(u) => {
                    errors.spanned(
                        u,
                        "`#[derive(FormSchema)]` needs named fields, since each field's name is its key in the form: write `struct Name { field: Type, … }`",
                    );
                    None
                }
                Fields::Unit => {
                    errors.spanned(
                        ident,
                        "`#[derive(FormSchema)]` needs named fields to ask for: write `struct Name { field: Type, … }`",
                    );
                    None
                }
            };
            match model {
                Some(m) if errors.is_empty() => codegen::form(&krate, ident, &m),
                _ => {
                    let mut out = errors.into_tokens();
                    // A stub impl keeps uses elsewhere quiet; a generic struct gets none, since
                    // its impl would need bounds the user has not written.
                    if input.generics.params.is_empty() && input.generics.where_clause.is_none() {
                        let types: Vec<&syn::Type> = match &s.fields {
                            Fields::Named(n) => n.named.iter().map(|f| &f.ty).collect(),
                            _ => Vec::new(),
                        };
                        out.extend(codegen::form_fallback(&krate, ident, &types));
                    }
                    out
                }
            }
        }
        Data::Enum(e) => {
            validate::no_generics(&input.generics, "enums", &mut errors);
            let model = choice::choice(&attrs, ident, e, &mut errors);
            if errors.is_empty() {
                codegen::choice(&krate, ident, &model)
            } else {
                let mut out = errors.into_tokens();
                if input.generics.params.is_empty() && input.generics.where_clause.is_none() {
                    out.extend(codegen::choice_fallback(&krate, ident));
                }
                out
            }
        }
        Data::Union(u) => syn::Error::new_spanned(
            u.union_token,
            "`#[derive(FormSchema)]` goes on a struct with named fields (a form) or an enum of unit variants (a choice); use a struct",
        )
        .into_compile_error(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn errors_of(item: DeriveInput) -> usize {
        expand(item.into_token_stream())
            .to_string()
            .matches("compile_error")
            .count()
    }

    #[test]
    fn a_good_form_has_no_errors() {
        let n = errors_of(parse_quote! {
            /// Confirm the deployment.
            #[form(title = "Deploy")]
            struct Deploy {
                #[form(title = "Environment", default = "stg")]
                environment: Environment,
                #[form(title = "Notify the on-call channel", default = true)]
                notify: bool,
                #[form(format = "date-time", title = "Deploy at")]
                window: Option<String>,
                #[form(minimum = -1.5, maximum = 10, default = 2)]
                score: f64,
                #[form(min_length = 1, max_length = 40, default = "Ada")]
                name: String,
                #[form(min_items = 1, max_items = 2, default = ["x"])]
                tags: Vec<Tag>,
                #[form(rename = "api_key_hint", not_secret)]
                r#type: String,
            }
        });
        assert_eq!(n, 0);
    }

    #[test]
    fn a_good_choice_has_no_errors() {
        let n = errors_of(parse_quote! {
            #[form(rename_all = "kebab-case", enum_names)]
            enum Environment {
                #[form(title = "Staging")]
                Stg,
                #[form(rename = "prd")]
                Production,
                InProgress,
            }
        });
        assert_eq!(n, 0);
    }

    #[test]
    fn every_field_problem_is_reported_at_once() {
        let n = errors_of(parse_quote! {
            #[form(rename_all = "snake_case")]
            struct F {
                #[form(format = "mail")]
                a: String,
                #[form(min_length = 5, max_length = 2)]
                b: String,
                #[form(minimum = 3, maximum = "x")]
                c: u8,
                password: String,
                #[form(rename = "e")]
                d: String,
                e: String,
                #[form(titel = "x")]
                f: String,
                #[form(default = 1 + 2)]
                g: u8,
            }
        });
        // rename_all on a struct, format, min > max, maximum not a number, secret, duplicate
        // name, unknown option, default not a literal
        assert_eq!(n, 8);
    }

    #[test]
    fn defaults_outside_their_limits_are_errors() {
        let n = errors_of(parse_quote! {
            struct F {
                #[form(minimum = 1, maximum = 5, default = 9)]
                a: u8,
                #[form(max_length = 2, default = "long")]
                b: String,
                #[form(max_items = 1, default = ["a", "b"])]
                c: Vec<E>,
                #[form(minimum = 0, default = 1.5)]
                d: f64,
            }
        });
        assert_eq!(n, 3);
    }

    #[test]
    fn required_goes_with_a_default() {
        let n = errors_of(parse_quote! {
            struct F {
                #[form(default = "stg", required)]
                a: Environment,
                #[form(required, default = 2)]
                b: u8,
            }
        });
        assert_eq!(n, 0);
        // Without a default, `required` says nothing (or contradicts an `Option`): refused, each.
        let n = errors_of(parse_quote! {
            struct F {
                #[form(required)]
                a: String,
                #[form(required, format = "date")]
                b: Option<String>,
            }
        });
        assert_eq!(n, 2);
    }

    #[test]
    fn shapes_that_are_not_forms() {
        assert_eq!(
            errors_of(parse_quote!(
                struct T(u8, u8);
            )),
            1
        );
        assert_eq!(
            errors_of(parse_quote!(
                struct U;
            )),
            1
        );
        assert_eq!(
            errors_of(parse_quote!(
                struct G<T> {
                    a: T,
                }
            )),
            1
        );
        assert_eq!(
            errors_of(parse_quote!(
                struct W
                where
                    u8: Copy,
                {
                    a: u8,
                }
            )),
            1
        );
        assert_eq!(errors_of(parse_quote!(union X { a: u8 })), 1);
    }

    #[test]
    fn every_enum_problem_is_reported_at_once() {
        let n = errors_of(parse_quote! {
            #[form(title = "x", rename_all = "PascalCase")]
            enum E<T> {
                A(T),
                B { x: u8 },
                C,
                #[form(rename = "c")]
                D,
                #[form(nme = "x")]
                F,
            }
        });
        // generics, title, rename_all, two data variants, duplicate value, unknown option
        assert_eq!(n, 7);
    }

    #[test]
    fn an_empty_enum_is_an_error() {
        assert_eq!(
            errors_of(parse_quote!(
                enum E {}
            )),
            1
        );
    }

    #[test]
    fn a_secret_can_be_allowed() {
        assert_eq!(
            errors_of(parse_quote!(
                struct F {
                    token: String,
                }
            )),
            1
        );
        assert_eq!(
            errors_of(parse_quote!(
                struct F {
                    #[form(not_secret)]
                    token: String,
                }
            )),
            0
        );
        assert_eq!(
            errors_of(parse_quote!(
                struct F {
                    #[form(rename = "api-key")]
                    hint: String,
                }
            )),
            1
        );
    }
}
