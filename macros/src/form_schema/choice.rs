//! A unit-only enum → a choice: its values (`rename`, `rename_all`) and titles, checked.

use super::input::{FormInput, FormVariant};
use super::literals::lit_str;
use crate::util::errors::Errors;
use crate::util::spans::unraw;
use darling::FromAttributes;
use std::collections::HashSet;
use syn::{DataEnum, Fields, Ident, LitStr};

/// A unit enum, checked.
pub(crate) struct EnumModel {
    pub(crate) enum_names: bool,
    pub(crate) variants: Vec<VariantModel>,
}

/// One choice.
pub(crate) struct VariantModel {
    pub(crate) ident: Ident,
    pub(crate) value: String,
    pub(crate) title: Option<LitStr>,
}

/// How `rename_all` turns a variant name into a wire value.
#[derive(Clone, Copy)]
enum Case {
    Lower,
    Snake,
    Kebab,
    ScreamingSnake,
    Camel,
}

impl Case {
    fn apply(self, name: &str) -> String {
        let mut snake = String::new();
        for (i, c) in name.char_indices() {
            if c.is_uppercase() && i > 0 {
                snake.push('_');
            }
            snake.extend(c.to_lowercase());
        }
        match self {
            Self::Lower => name.to_ascii_lowercase(),
            Self::Snake => snake,
            Self::Kebab => snake.replace('_', "-"),
            Self::ScreamingSnake => snake.to_ascii_uppercase(),
            Self::Camel => {
                let mut cs = name.chars();
                cs.next()
                    .map(|c| c.to_lowercase().chain(cs).collect())
                    .unwrap_or_default()
            }
        }
    }
}

/// A unit-only enum → a choice.
pub(crate) fn choice(input: &FormInput, ident: &Ident, data: &DataEnum, errors: &mut Errors) -> EnumModel {
    for (o, key) in [(&input.title, "title"), (&input.description, "description")] {
        if let Some(o) = o {
            errors.push(syn::Error::new(
                o.key,
                format!(
                    "`{key}` on a choice enum has nowhere to go: put `#[form({key} = \"...\")]` on the form field of this type, and `#[form(title = \"...\")]` on variants to title the choices"
                ),
            ));
        }
    }
    let case = input.rename_all.as_ref().and_then(|o| {
        let s = lit_str(o, "rename_all", errors)?;
        match s.value().as_str() {
            "lowercase" => Some(Case::Lower),
            "snake_case" => Some(Case::Snake),
            "kebab-case" => Some(Case::Kebab),
            "SCREAMING_SNAKE_CASE" => Some(Case::ScreamingSnake),
            "camelCase" => Some(Case::Camel),
            other => {
                errors.spanned(
                    &s,
                    format!(
                        "unknown `rename_all` `{other}`; expected `\"lowercase\"`, `\"snake_case\"`, `\"kebab-case\"`, `\"SCREAMING_SNAKE_CASE\"` or `\"camelCase\"`"
                    ),
                );
                None
            }
        }
    });
    if data.variants.is_empty() {
        errors.spanned(
            ident,
            format!("`{ident}` has no variants, so a form could offer no choice: add unit variants, one per choice"),
        );
    }
    let mut seen = HashSet::new();
    let mut variants = Vec::new();
    for v in &data.variants {
        let attr = FormVariant::from_attributes(&v.attrs).unwrap_or_else(|e| {
            errors.darling(e);
            FormVariant::default()
        });
        if !matches!(v.fields, Fields::Unit) {
            errors.spanned(
                &v.fields,
                format!(
                    "choice `{}` carries data, but a form choice is a plain value: remove the fields, or ask for the data in separate form fields",
                    v.ident
                ),
            );
            continue;
        }
        let name = unraw(&v.ident);
        let (value, span) = match attr.rename.as_ref().and_then(|o| lit_str(o, "rename", errors)) {
            Some(s) => (s.value(), s.span()),
            None => (case.unwrap_or(Case::Snake).apply(&name), v.ident.span()),
        };
        if !seen.insert(value.clone()) {
            errors.push(syn::Error::new(
                span,
                format!(
                    "two choices have the value `{value}`: give one another value with `#[form(rename = \"...\")]`"
                ),
            ));
        }
        let title = attr.title.as_ref().and_then(|o| lit_str(o, "title", errors));
        variants.push(VariantModel {
            ident: v.ident.clone(),
            value,
            title,
        });
    }
    EnumModel {
        enum_names: input.enum_names.is_present(),
        variants,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases() {
        assert_eq!(Case::Snake.apply("Stg"), "stg");
        assert_eq!(Case::Snake.apply("InProgress"), "in_progress");
        assert_eq!(Case::Kebab.apply("InProgress"), "in-progress");
        assert_eq!(Case::ScreamingSnake.apply("InProgress"), "IN_PROGRESS");
        assert_eq!(Case::Camel.apply("InProgress"), "inProgress");
        assert_eq!(Case::Lower.apply("InProgress"), "inprogress");
    }
}
