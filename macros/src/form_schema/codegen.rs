//! Code generation for `#[derive(FormSchema)]`: quote only, no parsing.

use super::choice::EnumModel;
use super::literals::{Checked, DefaultLit};
use super::validate::{FieldModel, StructModel};
use crate::util::spans::located_at;
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

fn some_str(s: &Option<LitStr>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

fn some_expr(s: &Option<TokenStream>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// A `panic!` message literal: braces escaped, since it is a format string.
fn message(text: &str, span: Span) -> LitStr {
    LitStr::new(&text.replace('{', "{{").replace('}', "}}"), span)
}

fn ops_ident(i: usize) -> Ident {
    format_ident!("__MCP_RESOLVE_FIELD_{}", i, span = Span::mixed_site())
}

fn spec_ident(i: usize) -> Ident {
    format_ident!("__MCP_RESOLVE_SPEC_{}", i, span = Span::mixed_site())
}

/// `impl FormSchema for S`, with the field specs and compile-time checks.
pub(crate) fn form(krate: &TokenStream, ident: &Ident, m: &StructModel) -> TokenStream {
    let p = quote!(#krate::__private01);
    let mut items = Vec::new();
    let mut adds = Vec::new();
    let mut reads = Vec::new();
    for (i, f) in m.fields.iter().enumerate() {
        let ops = ops_ident(i);
        let spec = spec_ident(i);
        let ty = &f.ty;
        // The only use of `T: FormField`, spanned on the field's type: a type that is not a flat
        // form field is reported there, once.
        let ty_p = located_at(&p, ty.span());
        let ops_value = quote_spanned! {ty.span()=> #ty_p::form_field::<#ty>() };
        let spec_value = field_spec(&p, f);
        items.push(quote! {
            const #ops: #p::FieldOps<#ty> = #ops_value;
            const #spec: #p::FieldSpec = #spec_value;
        });
        items.extend(kind_checks(&p, f, &ops));
        adds.push(quote!(__form.field(&#ops, &#spec);));
        let member = &f.ident;
        reads.push(quote!(#member: #ops.read(__content, &#spec)?,));
    }
    let title = some_str(&m.title);
    let description = some_expr(&m.description);
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #(#items)*

            #[automatically_derived]
            impl #p::FormSchema for #ident {
                fn requested_schema(
                    __options: #p::RenderOptions,
                ) -> #p::JsonMap<::std::string::String, #p::JsonValue> {
                    let mut __form = <#p::FormBuilder as ::core::default::Default>::default();
                    #(#adds)*
                    __form.finish(__options, #title, #description)
                }

                fn from_content(
                    __content: &#p::JsonMap<::std::string::String, #p::JsonValue>,
                ) -> ::core::result::Result<Self, #p::FormError> {
                    ::core::result::Result::Ok(Self { #(#reads)* })
                }
            }
        };
    }
}

fn field_spec(p: &TokenStream, f: &FieldModel) -> TokenStream {
    let wire = &f.wire;
    let mut sets = Vec::new();
    if f.title.is_some() {
        let v = some_str(&f.title);
        sets.push(quote!(title: #v,));
    }
    if f.description.is_some() {
        let v = some_expr(&f.description);
        sets.push(quote!(description: #v,));
    }
    for (name, v) in [
        ("min_length", &f.min_length),
        ("max_length", &f.max_length),
        ("min_items", &f.min_items),
        ("max_items", &f.max_items),
    ] {
        if let Some(v) = v {
            let key = Ident::new(name, Span::call_site());
            let n = Literal::u64_suffixed(v.value);
            sets.push(quote!(#key: ::core::option::Option::Some(#n),));
        }
    }
    for (name, v) in [("minimum", &f.minimum), ("maximum", &f.maximum)] {
        if let Some(v) = v {
            let key = Ident::new(name, Span::call_site());
            let n = Literal::f64_suffixed(v.value);
            sets.push(quote!(#key: ::core::option::Option::Some(#n),));
        }
    }
    if let Some(v) = &f.format {
        let variant = Ident::new(v.value, Span::call_site());
        sets.push(quote!(format: ::core::option::Option::Some(#p::Format::#variant),));
    }
    if let Some(d) = &f.default {
        let value = match &d.value {
            DefaultLit::Str(s) => quote!(Str(#s)),
            DefaultLit::Int(i) => {
                let n = Literal::i64_suffixed(*i);
                quote!(Int(#n))
            }
            DefaultLit::Float(x) => {
                let n = Literal::f64_suffixed(*x);
                quote!(Float(#n))
            }
            DefaultLit::Bool(b) => quote!(Bool(#b)),
            DefaultLit::List(l) => quote!(List(&[#(#l),*])),
        };
        sets.push(quote!(default: ::core::option::Option::Some(#p::DefaultValue::#value),));
    }
    if f.required {
        sets.push(quote!(required: true,));
    }
    quote!(#p::FieldSpec { #(#sets)* ..#p::FieldSpec::new(#wire) })
}

/// `const _: () = if !ok { panic!(msg) };`, all spanned at `span`, so rustc's "evaluation
/// panicked" points at the option.
fn check(span: Span, ok: TokenStream, text: &str) -> TokenStream {
    let msg = message(text, span);
    quote_spanned! {span=>
        const _: () = if !(#ok) { ::core::panic!(#msg) };
    }
}

/// Checks that each option applies to the field's kind, and that a default fits it.
fn kind_checks(p: &TokenStream, f: &FieldModel, ops: &Ident) -> Vec<TokenStream> {
    let name = &f.name;
    let is = |kinds: &[&str], span: Span| {
        let p = located_at(p, span);
        let tests = kinds.iter().map(|k| {
            let k = Ident::new(k, span);
            quote_spanned!(span=> #p::form_check::is(#ops.kind, #p::FieldKind::#k))
        });
        quote_spanned!(span=> false #(|| #tests)*)
    };
    let mut out = Vec::new();
    let mut applies = |opt: Option<Span>, key: &str, kinds: &[&str], what: &str| {
        if let Some(span) = opt {
            out.push(check(
                span,
                is(kinds, span),
                &format!("`{key}` applies to {what}, and `{name}` is not one"),
            ));
        }
    };
    let key = |s: &Option<Checked<u64>>| s.as_ref().map(|s| s.key);
    let text = "text fields (`String`)";
    applies(key(&f.min_length), "min_length", &["Text"], text);
    applies(key(&f.max_length), "max_length", &["Text"], text);
    applies(f.format.as_ref().map(|s| s.key), "format", &["Text"], text);
    let numeric = "integer and number fields";
    let nkey = |s: &Option<Checked<f64>>| s.as_ref().map(|s| s.key);
    applies(nkey(&f.minimum), "minimum", &["Integer", "Number"], numeric);
    applies(nkey(&f.maximum), "maximum", &["Integer", "Number"], numeric);
    let multi = "multi-select fields (`Vec<E>` of a choice enum)";
    applies(key(&f.min_items), "min_items", &["MultiChoice"], multi);
    applies(key(&f.max_items), "max_items", &["MultiChoice"], multi);

    let Some(d) = &f.default else { return out };
    // One rule for a left-out field: an `Option` is `None`, a field with a default is the
    // default. Both on one field would make `None` unreachable (a form cannot send `null`).
    out.push(check(
        d.key,
        quote_spanned!(d.key=> !#ops.optional),
        &format!(
            "`{name}` is an `Option` with a `default`: a form that leaves it out gets the default, so it would never be `None`; drop the `Option` (the default fills it in) or the `default` (left out is `None`)"
        ),
    ));
    let span = d.lit;
    let (kinds, what): (&[&str], &str) = match &d.value {
        DefaultLit::Str(_) => (&["Text", "Choice"], "a string, which fits text and choice fields"),
        DefaultLit::Int(_) => (
            &["Integer", "Number"],
            "an integer, which fits integer and number fields",
        ),
        DefaultLit::Float(_) => (&["Number"], "a float, which fits number fields (`f32`, `f64`)"),
        DefaultLit::Bool(_) => (&["Boolean"], "a boolean, which fits `bool` fields"),
        DefaultLit::List(_) => (
            &["MultiChoice"],
            "a list, which fits multi-select fields (`Vec<E>` of a choice enum)",
        ),
    };
    out.push(check(
        span,
        is(kinds, span),
        &format!("this `default` is {what}, and `{name}` is not one"),
    ));
    let pc = located_at(p, span);
    match &d.value {
        DefaultLit::Str(s) => {
            out.push(check(
                span,
                quote_spanned! {span=>
                    !#pc::form_check::is(#ops.kind, #pc::FieldKind::Choice)
                        || #pc::form_check::has_choice(#ops.choices, #s)
                },
                &format!("`default = {s:?}` is not one of the choices of `{name}`'s enum: use a choice's wire value"),
            ));
            // The server checks every answer against the format; a default it would refuse
            // would break each answer that leaves the field out.
            if let Some(f) = &f.format {
                let variant = Ident::new(f.value, span);
                let wire = match f.value {
                    "Email" => "email",
                    "Uri" => "uri",
                    "Date" => "date (YYYY-MM-DD)",
                    _ => "date-time (RFC 3339, e.g. 2026-09-01T10:00:00Z)",
                };
                out.push(check(
                    span,
                    quote_spanned! {span=> #pc::Format::#variant.check(#s) },
                    &format!("`default = {s:?}` is not a valid {wire}, the field's `format`: fix the default or remove it"),
                ));
            }
        }
        DefaultLit::List(l) => out.push(check(
            span,
            quote_spanned! {span=>
                !#pc::form_check::is(#ops.kind, #pc::FieldKind::MultiChoice)
                    || #pc::form_check::has_all(#ops.choices, &[#(#l),*])
            },
            &format!("this `default` lists a value that is not one of the choices of `{name}`'s enum: use the choices' wire values"),
        )),
        _ => {}
    }
    out
}

/// `impl FormChoice` and `impl FormField` for a unit enum, and the `Copy` check.
pub(crate) fn choice(krate: &TokenStream, ident: &Ident, m: &EnumModel) -> TokenStream {
    let p = quote!(#krate::__private01);
    let choices = m.variants.iter().map(|v| {
        let value = &v.value;
        let title = some_str(&v.title);
        quote!(#p::Choice { value: #value, title: #title })
    });
    let style = if m.enum_names {
        quote!(EnumNames)
    } else {
        quote!(Standard)
    };
    let idents: Vec<&Ident> = m.variants.iter().map(|v| &v.ident).collect();
    let index: Vec<Literal> = (0..idents.len()).map(Literal::usize_unsuffixed).collect();
    let p_at_name = located_at(&p, ident.span());
    let copy_check = quote_spanned! {ident.span()=>
        const _: () = #p_at_name::assert_choice_is_copy::<#ident>();
    };
    let all = format_ident!("__MCP_RESOLVE_CHOICES", span = Span::mixed_site());
    let field = field_impl(&p, ident, &all);
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #copy_check

            // Shared by both impls rather than read through `<Self as FormChoice>`, so an enum
            // that is not `Copy` is not reported a third time.
            const #all: &'static [#p::Choice] = &[#(#choices),*];

            #[automatically_derived]
            impl #p::FormChoice for #ident {
                const CHOICES: &'static [#p::Choice] = #all;
                const STYLE: #p::ChoiceStyle = #p::ChoiceStyle::#style;
                fn from_index(__index: usize) -> ::core::option::Option<Self> {
                    match __index {
                        #(#index => ::core::option::Option::Some(Self::#idents),)*
                        _ => ::core::option::Option::None,
                    }
                }
                fn index(self) -> usize {
                    match self {
                        #(Self::#idents => #index,)*
                    }
                }
            }

            #field
        };
    }
}

fn field_impl(p: &TokenStream, ident: &Ident, all: &Ident) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #p::FormField for #ident {
            const KIND: #p::FieldKind = #p::FieldKind::Choice;
            const CHOICES: &'static [#p::Choice] = #all;
            fn schema(__spec: &#p::FieldSpec) -> #p::JsonMap<::std::string::String, #p::JsonValue> {
                #p::choice_schema::<Self>(__spec)
            }
            fn parse(
                __value: &#p::JsonValue,
                _: &#p::FieldSpec,
            ) -> ::core::result::Result<Self, ::std::string::String> {
                #p::parse_choice::<Self>(__value)
            }
        }
    }
}

/// After errors in a struct: a stub `FormSchema` impl, so uses elsewhere do not cascade, and the
/// field type checks, so a bad field type is reported alongside.
pub(crate) fn form_fallback(krate: &TokenStream, ident: &Ident, types: &[&syn::Type]) -> TokenStream {
    let p = quote!(#krate::__private01);
    let checks = types.iter().enumerate().map(|(i, ty)| {
        let ops = ops_ident(i);
        let ty_p = located_at(&p, ty.span());
        let v = quote_spanned! {ty.span()=> #ty_p::form_field::<#ty>() };
        quote!(const #ops: #p::FieldOps<#ty> = #v;)
    });
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #(#checks)*
            #[automatically_derived]
            impl #p::FormSchema for #ident {
                fn requested_schema(
                    _: #p::RenderOptions,
                ) -> #p::JsonMap<::std::string::String, #p::JsonValue> {
                    ::core::unreachable!()
                }
                fn from_content(
                    _: &#p::JsonMap<::std::string::String, #p::JsonValue>,
                ) -> ::core::result::Result<Self, #p::FormError> {
                    ::core::unreachable!()
                }
            }
        };
    }
}

/// After errors in an enum: a stub `FormField` impl (not `FormChoice`, which needs `Copy`).
pub(crate) fn choice_fallback(krate: &TokenStream, ident: &Ident) -> TokenStream {
    let p = quote!(#krate::__private01);
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #[automatically_derived]
            impl #p::FormField for #ident {
                const KIND: #p::FieldKind = #p::FieldKind::Choice;
                fn schema(_: &#p::FieldSpec) -> #p::JsonMap<::std::string::String, #p::JsonValue> {
                    ::core::unreachable!()
                }
                fn parse(
                    _: &#p::JsonValue,
                    _: &#p::FieldSpec,
                ) -> ::core::result::Result<Self, ::std::string::String> {
                    ::core::unreachable!()
                }
            }
        };
    }
}
