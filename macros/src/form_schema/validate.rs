//! Receivers → a checked form model. Every mistake is collected, each at its option or literal.

use super::input::{FormField, FormInput};
use super::literals::{Checked, DefaultLit, checked, default_lit, lit_f64, lit_str, lit_u64};
use crate::util::docs;
use crate::util::errors::Errors;
use crate::util::spans::unraw;
use darling::FromAttributes;
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::HashSet;
use syn::{Attribute, FieldsNamed, Generics, Ident, LitStr, Type};

/// A struct, checked.
pub(crate) struct StructModel {
    pub(crate) title: Option<LitStr>,
    /// A `&'static str` expression.
    pub(crate) description: Option<TokenStream>,
    pub(crate) fields: Vec<FieldModel>,
}

/// One form field, checked.
pub(crate) struct FieldModel {
    pub(crate) ident: Ident,
    /// The field's name in messages (no `r#`).
    pub(crate) name: String,
    pub(crate) ty: Type,
    pub(crate) wire: String,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<TokenStream>,
    pub(crate) min_length: Option<Checked<u64>>,
    pub(crate) max_length: Option<Checked<u64>>,
    /// The `Format` variant's name.
    pub(crate) format: Option<Checked<&'static str>>,
    pub(crate) minimum: Option<Checked<f64>>,
    pub(crate) maximum: Option<Checked<f64>>,
    pub(crate) min_items: Option<Checked<u64>>,
    pub(crate) max_items: Option<Checked<u64>>,
    pub(crate) default: Option<Checked<DefaultLit>>,
    /// `required` with a `default`: the field stays in `required`.
    pub(crate) required: bool,
}

/// `#[form(...)]` on the type, parsed; on error, the defaults (and the error is collected).
pub(crate) fn container(attrs: &[Attribute], errors: &mut Errors) -> FormInput {
    FormInput::from_attributes(attrs).unwrap_or_else(|e| {
        errors.darling(e);
        FormInput::default()
    })
}

/// No generics: a form's schema is one fixed shape.
pub(crate) fn no_generics(generics: &Generics, what: &str, errors: &mut Errors) {
    if !generics.params.is_empty() {
        errors.spanned(
            &generics.params,
            format!(
                "`#[derive(FormSchema)]` {what} cannot be generic: the schema is built once, from concrete field types; remove the parameters"
            ),
        );
    } else if let Some(w) = &generics.where_clause {
        errors.spanned(
            w,
            format!("`#[derive(FormSchema)]` {what} cannot have a `where` clause: remove it"),
        );
    }
}

// ---------------------------------------------------------------- structs

/// A struct with named fields → a form.
pub(crate) fn form(
    input: &FormInput,
    docs_attrs: &[Attribute],
    fields: &FieldsNamed,
    errors: &mut Errors,
) -> StructModel {
    if let Some(o) = &input.rename_all {
        errors.push(syn::Error::new(
            o.key,
            "`rename_all` applies to choice enums; to rename a form field, put `#[form(rename = \"...\")]` on the field",
        ));
    }
    if input.enum_names.is_present() {
        errors.push(syn::Error::new(
            input.enum_names.span(),
            "`enum_names` applies to choice enums: put it on the enum the field's type derives `FormSchema` for",
        ));
    }
    let title = input.title.as_ref().and_then(|o| lit_str(o, "title", errors));
    let description = match &input.description {
        Some(o) => lit_str(o, "description", errors).map(|s| quote!(#s)),
        None => described(docs_attrs),
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for f in &fields.named {
        let Some(ident) = f.ident.clone() else { continue };
        if let Some(model) = field(ident, f, errors) {
            if !seen.insert(model.wire.clone()) {
                errors.spanned(
                    &model.ident,
                    format!(
                        "two fields use the name `{}`: rename one with `#[form(rename = \"...\")]`",
                        model.wire
                    ),
                );
            }
            out.push(model);
        }
    }
    StructModel {
        title,
        description,
        fields: out,
    }
}

fn described(attrs: &[Attribute]) -> Option<TokenStream> {
    let (doc_attrs, _) = docs::take_docs(attrs.to_vec());
    (!doc_attrs.is_empty()).then(|| docs::description(&doc_attrs))
}

fn field(ident: Ident, f: &syn::Field, errors: &mut Errors) -> Option<FieldModel> {
    let attr = FormField::from_attributes(&f.attrs).unwrap_or_else(|e| {
        errors.darling(e);
        FormField::default()
    });
    let name = unraw(&ident);
    let (wire, wire_span) = match attr.rename.as_ref().and_then(|o| lit_str(o, "rename", errors)) {
        Some(s) => (s.value(), s.span()),
        None => (name.clone(), ident.span()),
    };
    if !attr.not_secret.is_present() && is_secret(&wire) {
        errors.push(syn::Error::new(
            wire_span,
            format!(
                "form mode must not ask for secrets (`{wire}`): use URL mode, where the user types it on your own page, or add `#[form(not_secret)]` if this is not a secret"
            ),
        ));
    }
    let title = attr.title.as_ref().and_then(|o| lit_str(o, "title", errors));
    let description = match &attr.description {
        Some(o) => lit_str(o, "description", errors).map(|s| quote!(#s)),
        None => described(&f.attrs),
    };
    let min_length = checked(&attr.min_length, "min_length", lit_u64, errors);
    let max_length = checked(&attr.max_length, "max_length", lit_u64, errors);
    let min_items = checked(&attr.min_items, "min_items", lit_u64, errors);
    let max_items = checked(&attr.max_items, "max_items", lit_u64, errors);
    let minimum = checked(&attr.minimum, "minimum", lit_f64, errors);
    let maximum = checked(&attr.maximum, "maximum", lit_f64, errors);
    let format = attr.format.as_ref().and_then(|o| {
        let s = lit_str(o, "format", errors)?;
        let value = match s.value().as_str() {
            "email" => "Email",
            "uri" => "Uri",
            "date" => "Date",
            "date-time" => "DateTime",
            other => {
                errors.spanned(
                    &s,
                    format!(
                        "unknown `format` `{other}`; a form accepts `\"email\"`, `\"uri\"`, `\"date\"` or `\"date-time\"`"
                    ),
                );
                return None;
            }
        };
        Some(Checked {
            value,
            key: o.key,
            lit: o.span(),
        })
    });
    let default = attr.default.as_ref().and_then(|o| {
        default_lit(o, errors).map(|value| Checked {
            value,
            key: o.key,
            lit: o.span(),
        })
    });
    // `required` only changes a field that has a `default`; on any other it would say nothing
    // (or, on an `Option`, contradict its type), so it is refused rather than ignored.
    let required = attr.required.is_present();
    if required && attr.default.is_none() {
        errors.push(syn::Error::new(
            attr.required.span(),
            format!(
                "`required` keeps a field that has a `default` in `required`, and `{name}` has no `default`: without one a field is required already (an `Option` never is); remove `required`"
            ),
        ));
    }

    let m = FieldModel {
        ident,
        name,
        ty: f.ty.clone(),
        wire,
        title,
        description,
        min_length,
        max_length,
        format,
        minimum,
        maximum,
        min_items,
        max_items,
        default,
        required,
    };
    literal_checks(&m, errors);
    Some(m)
}

/// Checks between literals: `min_* <= max_*`, and a default within them.
fn literal_checks(m: &FieldModel, errors: &mut Errors) {
    fn ordered<T: PartialOrd + std::fmt::Display>(
        lo: &Option<Checked<T>>,
        hi: &Option<Checked<T>>,
        names: (&str, &str),
        errors: &mut Errors,
    ) {
        if let (Some(lo), Some(hi)) = (lo, hi)
            && lo.value > hi.value
        {
            errors.push(syn::Error::new(
                lo.lit,
                format!(
                    "`{} = {}` is greater than `{} = {}`, so no value fits: swap or fix them",
                    names.0, lo.value, names.1, hi.value
                ),
            ));
        }
    }
    ordered(&m.min_length, &m.max_length, ("min_length", "max_length"), errors);
    ordered(&m.minimum, &m.maximum, ("minimum", "maximum"), errors);
    ordered(&m.min_items, &m.max_items, ("min_items", "max_items"), errors);
    let Some(d) = &m.default else { return };
    let outside = |n: f64, lo: &Option<Checked<f64>>, hi: &Option<Checked<f64>>| {
        lo.as_ref().is_some_and(|l| n < l.value) || hi.as_ref().is_some_and(|h| n > h.value)
    };
    let counted = |n: u64, lo: &Option<Checked<u64>>, hi: &Option<Checked<u64>>| {
        lo.as_ref().is_some_and(|l| n < l.value) || hi.as_ref().is_some_and(|h| n > h.value)
    };
    let bad = match &d.value {
        DefaultLit::Int(i) => outside(*i as f64, &m.minimum, &m.maximum),
        DefaultLit::Float(f) => outside(*f, &m.minimum, &m.maximum),
        DefaultLit::Str(s) => counted(s.chars().count() as u64, &m.min_length, &m.max_length),
        DefaultLit::List(l) => counted(l.len() as u64, &m.min_items, &m.max_items),
        DefaultLit::Bool(_) => false,
    };
    if bad {
        errors.push(syn::Error::new(
            d.lit,
            format!(
                "this `default` breaks the field's own constraints, so field `{}` would refuse it: fix the default or the limits",
                m.name
            ),
        ));
    }
}

/// The words that make a name look like a secret, and the names that are one; the runtime
/// refuses URL-mode query parameters with the same list (`form::SECRET_WORDS`, compared in the
/// tests).
const SECRET_WORDS: (&[&str], &[&str]) = (
    &[
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "privatekey",
        "creditcard",
        "cardnumber",
        "cvv",
        "cvc",
    ],
    &["pin", "ssn"],
);

/// Whether a wire name looks like a secret: lowercased without `_` and `-`, it contains a
/// secret's word, or is one.
pub(crate) fn is_secret(wire: &str) -> bool {
    let norm: String = wire
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_WORDS.0.iter().any(|w| norm.contains(w)) || SECRET_WORDS.1.contains(&norm.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets() {
        for s in [
            "password",
            "db-Pass_word",
            "API_KEY",
            "access_token",
            "pin",
            "SSN",
            "card-number",
            "cvc",
        ] {
            assert!(is_secret(s), "{s}");
        }
        for s in ["spinner", "name", "pins", "email"] {
            assert!(!is_secret(s), "{s}");
        }
    }
}

#[cfg(test)]
mod secret_words {
    /// The runtime refuses URL-mode query parameters with the same list.
    #[test]
    fn the_same_list_as_the_runtime() {
        assert_eq!(super::SECRET_WORDS, mcp_resolve::form::SECRET_WORDS);
    }
}
