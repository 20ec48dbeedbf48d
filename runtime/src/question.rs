//! A question and its answer with the value's type erased: what the engine carries between a
//! resolver that asks and the parameter that receives the answer, and what a tool body's own
//! question ([`Context::ask`](crate::context::Context::ask)) settles to.

use crate::elicit::{Action, AskRequest, ElicitationResult, ParseFn};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A resolved value, type-erased.
pub(crate) type AnyValue = Arc<dyn Any + Send + Sync>;

/// A resolver's finished value: computed, or answered by the user.
#[derive(Clone)]
pub enum Settled {
    /// Returned by the resolver without asking.
    Value(AnyValue),
    /// The user's answer; the value is there for `accept`.
    Answered(Action, Option<AnyValue>),
    /// Declined or cancelled: this question (its key), or one this resolver needed.
    Refused(Action, String),
}

impl fmt::Debug for Settled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Value(_) => f.write_str("Value(..)"),
            Self::Answered(a, _) => write!(f, "Answered({a})"),
            Self::Refused(a, q) => write!(f, "Refused({a}, {q})"),
        }
    }
}

/// A question in flight, type-erased.
pub struct AskSpec {
    pub(crate) request: AskRequest,
    pub(crate) parse: ParseFn<AnyValue>,
}

impl AskSpec {
    /// The question, its value type erased.
    pub(crate) fn erase<T: Send + Sync + 'static>(a: crate::elicit::Ask<T>) -> Self {
        let parse = a.parse;
        Self {
            request: a.request,
            parse: Box::new(move |v| parse(v).map(|t| Arc::new(t) as AnyValue)),
        }
    }
}

/// How a parameter receives a resolver's value: as the value itself (a declined or cancelled
/// question then stops the call), or as [`ElicitationResult`] (to branch on all three outcomes).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive what this resolver produces (`{O}`)",
    label = "expected `{O}` or `ElicitationResult<{O}>`",
    note = "take `{O}` (a decline or cancel then stops the call before the body runs), or `ElicitationResult<{O}>` to branch on accept, decline and cancel"
)]
pub trait FromResolved<O>: Sized {
    /// The conversion for parameter `param` of a `kind` (`tool`, `prompt`, `resource`); `Err`
    /// stops the call with that message.
    fn from_resolved(r: &Settled, param: &'static str, kind: &'static str) -> Result<Self, String>;
}

fn downcast<O: Clone + 'static>(v: &AnyValue, param: &str) -> Result<O, String> {
    v.downcast_ref::<O>()
        .cloned()
        .ok_or_else(|| format!("internal error: `{param}` has an unexpected type"))
}

impl<O: Clone + 'static> FromResolved<O> for O {
    fn from_resolved(r: &Settled, param: &'static str, kind: &'static str) -> Result<Self, String> {
        match r {
            Settled::Value(v) | Settled::Answered(Action::Accept, Some(v)) => downcast(v, param),
            Settled::Refused(action, _) | Settled::Answered(action @ (Action::Decline | Action::Cancel), _) => {
                let what = if *action == Action::Cancel {
                    "cancelled"
                } else {
                    "declined"
                };
                let question = match r {
                    Settled::Refused(_, q) => q.as_str(),
                    _ => param,
                };
                Err(format!(
                    "`{param}` was not resolved: the user {what} the question `{question}`, so the {kind} did not run"
                ))
            }
            Settled::Answered(Action::Accept, None) => Err(format!("`{param}` was accepted without content")),
        }
    }
}

impl<O: Clone + 'static> FromResolved<O> for ElicitationResult<O> {
    fn from_resolved(r: &Settled, param: &'static str, _: &'static str) -> Result<Self, String> {
        match r {
            Settled::Value(v) | Settled::Answered(Action::Accept, Some(v)) => {
                downcast(v, param).map(ElicitationResult::Accepted)
            }
            Settled::Answered(Action::Decline, _) | Settled::Refused(Action::Decline, _) => {
                Ok(ElicitationResult::Declined)
            }
            Settled::Answered(Action::Cancel, _) | Settled::Refused(Action::Cancel, _) => {
                Ok(ElicitationResult::Cancelled)
            }
            Settled::Refused(Action::Accept, q) => Err(format!("`{param}`: the question `{q}` was refused")),
            Settled::Answered(Action::Accept, None) => Err(format!("`{param}` was accepted without content")),
        }
    }
}

impl FromResolved<crate::elicit::Confirm> for bool {
    fn from_resolved(r: &Settled, param: &'static str, kind: &'static str) -> Result<Self, String> {
        <crate::elicit::Confirm as FromResolved<crate::elicit::Confirm>>::from_resolved(r, param, kind).map(|c| c.ok)
    }
}
