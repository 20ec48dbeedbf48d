//! The literals `#[form(...)]` options take, read: each wrong one is an error at it.

use super::input::Opt;
use crate::util::errors::Errors;
use proc_macro2::Span;
use syn::{Expr, ExprLit, Lit, LitStr, UnOp};

/// A value from an option, with the spans of its key and of its value.
pub(crate) struct Checked<T> {
    pub(crate) value: T,
    pub(crate) key: Span,
    pub(crate) lit: Span,
}

/// A `default = …` literal.
pub(crate) enum DefaultLit {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<String>),
}

/// `key = "…"`: a string literal.
pub(super) fn lit_str(o: &Opt, key: &str, errors: &mut Errors) -> Option<LitStr> {
    match &o.value {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.clone()),
        other => {
            errors.spanned(other, format!("`{key}` takes a string literal: `{key} = \"...\"`"));
            None
        }
    }
}

/// An option's literal, read by `read`, with the spans of its key and literal.
pub(super) fn checked<T>(
    o: &Option<Opt>,
    key: &str,
    read: fn(&Opt, &str, &mut Errors) -> Option<T>,
    errors: &mut Errors,
) -> Option<Checked<T>> {
    let o = o.as_ref()?;
    read(o, key, errors).map(|value| Checked {
        value,
        key: o.key,
        lit: o.span(),
    })
}

/// `key = 1`: a non-negative integer literal.
pub(super) fn lit_u64(o: &Opt, key: &str, errors: &mut Errors) -> Option<u64> {
    if let Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) = &o.value
        && let Ok(n) = i.base10_parse::<u64>()
    {
        return Some(n);
    }
    errors.spanned(
        &o.value,
        format!("`{key}` takes a non-negative integer literal, e.g. `{key} = 1`"),
    );
    None
}

/// An integer or float literal, maybe negated: its value and whether it was an integer.
fn number(e: &Expr) -> Option<(f64, Option<i64>)> {
    let (neg, inner) = match e {
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => (true, &*u.expr),
        other => (false, other),
    };
    let sign = if neg { -1.0 } else { 1.0 };
    match inner {
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => {
            let n = i.base10_parse::<i128>().ok()?;
            let n = if neg { -n } else { n };
            Some((n as f64, i64::try_from(n).ok()))
        }
        Expr::Lit(ExprLit { lit: Lit::Float(f), .. }) => {
            let v = f.base10_parse::<f64>().ok()?;
            v.is_finite().then_some((sign * v, None))
        }
        _ => None,
    }
}

/// `key = -1.5`: a number literal, integer or not.
pub(super) fn lit_f64(o: &Opt, key: &str, errors: &mut Errors) -> Option<f64> {
    let n = number(&o.value).map(|(v, _)| v);
    if n.is_none() {
        errors.spanned(
            &o.value,
            format!("`{key}` takes a number literal, e.g. `{key} = 0` or `{key} = -1.5`"),
        );
    }
    n
}

/// `default = …`: a string, an integer, a number, a boolean, or a list of strings.
pub(super) fn default_lit(o: &Opt, errors: &mut Errors) -> Option<DefaultLit> {
    let v = match &o.value {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(DefaultLit::Str(s.value())),
        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Some(DefaultLit::Bool(b.value)),
        Expr::Array(a) => {
            let mut items = Vec::new();
            for e in &a.elems {
                match e {
                    Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => items.push(s.value()),
                    other => {
                        errors.spanned(
                            other,
                            "a multi-select `default` lists choice values as strings: `default = [\"a\", \"b\"]`",
                        );
                        return None;
                    }
                }
            }
            Some(DefaultLit::List(items))
        }
        e => match number(e) {
            Some((_, Some(i))) => Some(DefaultLit::Int(i)),
            Some((f, None)) if !is_int_lit(e) => Some(DefaultLit::Float(f)),
            _ => None,
        },
    };
    if v.is_none() {
        errors.spanned(
            &o.value,
            "`default` takes a literal: a string, an integer, a number, `true`/`false`, or `[\"a\", \"b\"]` for a multi-select",
        );
    }
    v
}

/// Whether `e` is an integer literal, maybe negated.
fn is_int_lit(e: &Expr) -> bool {
    let e = match e {
        Expr::Unary(u) => &*u.expr,
        e => e,
    };
    matches!(e, Expr::Lit(ExprLit { lit: Lit::Int(_), .. }))
}
