//! An error accumulator: collect every problem, then report them together.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

/// Collects `syn::Error`s; `finish` folds them into one.
#[derive(Default)]
pub(crate) struct Errors {
    all: Option<syn::Error>,
}

impl Errors {
    pub(crate) fn push(&mut self, e: syn::Error) {
        match &mut self.all {
            Some(all) => all.combine(e),
            None => self.all = Some(e),
        }
    }
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }
    pub(crate) fn darling(&mut self, e: darling::Error) {
        self.push(e.into());
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.all.is_none()
    }
    pub(crate) fn into_tokens(self) -> TokenStream {
        self.all.map(|e| e.into_compile_error()).unwrap_or_default()
    }
}
