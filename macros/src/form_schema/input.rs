//! `#[form(...)]` receivers (darling), one per position. Values are kept as written, with the
//! spans of their key and value, and typed in `validate`, so a mistake is reported at the option
//! or literal that made it.

use darling::util::Flag;
use darling::{FromAttributes, FromMeta};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Meta};

/// An option written `key = value`: the value expression as written, and both spans.
#[derive(Clone, Debug)]
pub(crate) struct Opt {
    /// The option's name, e.g. `min_length`.
    pub(crate) key: Span,
    /// The value, invisible groups removed.
    pub(crate) value: Expr,
}

impl Opt {
    /// The value's span.
    pub(crate) fn span(&self) -> Span {
        self.value.span()
    }
}

impl FromMeta for Opt {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        match item {
            Meta::NameValue(nv) => {
                let mut value = &nv.value;
                while let Expr::Group(g) = value {
                    value = &g.expr;
                }
                Ok(Self {
                    key: nv.path.span(),
                    value: value.clone(),
                })
            }
            _ => Err(darling::Error::custom("expected `option = value`").with_span(item)),
        }
    }
}

/// `#[form(...)]` on the struct or enum.
#[derive(Debug, Default, FromAttributes)]
#[darling(attributes(form))]
pub(crate) struct FormInput {
    /// The form's title (structs).
    pub(crate) title: Option<Opt>,
    /// The form's description (structs); defaults to the doc comment.
    pub(crate) description: Option<Opt>,
    /// How variant names become wire values (enums).
    pub(crate) rename_all: Option<Opt>,
    /// Render with the legacy `enum` + `enumNames` (enums).
    pub(crate) enum_names: Flag,
    /// Path of the facade crate in generated code; defaults to `::mcp_resolve`.
    #[darling(rename = "crate")]
    pub(crate) krate: Option<syn::Path>,
}

/// `#[form(...)]` on a struct field.
#[derive(Debug, Default, FromAttributes)]
#[darling(attributes(form))]
pub(crate) struct FormField {
    /// The property name on the wire; defaults to the field's name.
    pub(crate) rename: Option<Opt>,
    /// `title`.
    pub(crate) title: Option<Opt>,
    /// `description`; defaults to the doc comment.
    pub(crate) description: Option<Opt>,
    /// `minLength`.
    pub(crate) min_length: Option<Opt>,
    /// `maxLength`.
    pub(crate) max_length: Option<Opt>,
    /// `format`.
    pub(crate) format: Option<Opt>,
    /// `minimum`.
    pub(crate) minimum: Option<Opt>,
    /// `maximum`.
    pub(crate) maximum: Option<Opt>,
    /// `minItems`.
    pub(crate) min_items: Option<Opt>,
    /// `maxItems`.
    pub(crate) max_items: Option<Opt>,
    /// `default`.
    pub(crate) default: Option<Opt>,
    /// Stays in `required` although it has a `default` (the client pre-fills it).
    pub(crate) required: Flag,
    /// The name looks like a secret, but is not one.
    pub(crate) not_secret: Flag,
}

/// `#[form(...)]` on an enum variant.
#[derive(Debug, Default, FromAttributes)]
#[darling(attributes(form))]
pub(crate) struct FormVariant {
    /// The wire value; defaults to the variant's name in `rename_all` case (snake_case).
    pub(crate) rename: Option<Opt>,
    /// The choice's title.
    pub(crate) title: Option<Opt>,
}
