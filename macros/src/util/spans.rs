//! Span helpers for generated code.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use syn::Ident;

/// `tokens`, reported at `span` but resolved as before.
pub(crate) fn located_at(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut inner = Group::new(g.delimiter(), located_at(&g.stream(), span));
                inner.set_span(g.span().located_at(span));
                tt = TokenTree::Group(inner);
            } else {
                tt.set_span(tt.span().located_at(span));
            }
            tt
        })
        .collect()
}

/// `tokens`, reported at `span` and resolved there too (for absolute paths, which resolve the
/// same anywhere): no macro backtrace, so two uses at one place are one diagnostic.
pub(crate) fn respanned(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut inner = Group::new(g.delimiter(), respanned(&g.stream(), span));
                inner.set_span(span);
                tt = TokenTree::Group(inner);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// An identifier's name without a raw `r#` prefix: the name on the wire.
pub(crate) fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    match s.strip_prefix("r#") {
        Some(rest) => rest.to_string(),
        None => s,
    }
}
