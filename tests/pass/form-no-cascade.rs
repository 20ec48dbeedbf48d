// Uses of a form elsewhere (as a generic argument, in an `impl`) compile next to the derive: the
// expansion adds impls only, inside `const _`, and leaves the type as written.
use mcp_resolve::form::{FormField, FormSchema, RenderOptions};
use mcp_resolve::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Choice {
    A,
    B,
}

#[derive(Debug, FormSchema)]
struct Pick {
    choice: Choice,
    more: Vec<Choice>,
}

impl Pick {
    fn ask() -> serde_json::Value {
        serde_json::Value::Object(<Self as FormSchema>::requested_schema(RenderOptions::default()))
    }
}

fn kind<T: FormField>() -> mcp_resolve::form::FieldKind {
    T::KIND
}

fn main() {
    assert_eq!(Pick::ask()["required"], serde_json::json!(["choice", "more"]));
    assert_eq!(kind::<Choice>(), mcp_resolve::form::FieldKind::Choice);
    assert_eq!(kind::<Vec<Choice>>(), mcp_resolve::form::FieldKind::MultiChoice);
}
