//! Doc comments → descriptions. Literal doc lines are joined at expansion time; a doc attribute
//! that is an expression (`#[doc = include_str!("…")]`) is kept as an expression through `concat!`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// Splits `attrs` into doc attributes and the rest.
pub(crate) fn take_docs(attrs: Vec<Attribute>) -> (Vec<Attribute>, Vec<Attribute>) {
    attrs.into_iter().partition(|a| a.path().is_ident("doc"))
}

/// A `&'static str` expression with the description built from doc attributes (empty when none).
pub(crate) fn description(docs: &[Attribute]) -> TokenStream {
    let mut lines = Vec::new();
    let mut exprs = Vec::new();
    let mut all_literal = true;
    for a in docs {
        if let Meta::NameValue(nv) = &a.meta {
            match &nv.value {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
                    let v = s.value();
                    let line = v.strip_prefix(' ').unwrap_or(&v).trim_end().to_string();
                    exprs.push(quote!(#line));
                    lines.push(line);
                }
                other => {
                    all_literal = false;
                    exprs.push(quote!(#other));
                }
            }
        }
    }
    if all_literal {
        let text = tidy(&lines);
        quote!(#text)
    } else {
        let mut parts = Vec::new();
        for (i, e) in exprs.iter().enumerate() {
            if i > 0 {
                parts.push(quote!("\n"));
            }
            parts.push(e.clone());
        }
        quote!(::core::concat!(#(#parts),*))
    }
}

/// Joins doc lines: trims leading and trailing blank lines; keeps paragraphs.
fn tidy(lines: &[String]) -> String {
    let start = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |i| i + 1);
    lines[start..end].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn literal_docs_are_joined() {
        let docs: Vec<Attribute> = vec![
            parse_quote!(#[doc = " Delete a folder."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " Asks first."]),
        ];
        let got = description(&docs).to_string();
        assert_eq!(got, quote!("Delete a folder.\n\nAsks first.").to_string());
    }

    #[test]
    fn expression_docs_use_concat() {
        let docs: Vec<Attribute> = vec![parse_quote!(#[doc = include_str!("x.md")])];
        let got: syn::Expr = syn::parse2(description(&docs)).unwrap();
        assert!(matches!(got, syn::Expr::Macro(_)));
    }
}
