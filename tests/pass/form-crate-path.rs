use ::mcp_resolve::form::{FormSchema as _, RenderOptions};

// A local module with the facade's name must not confuse the absolute path.
#[allow(dead_code)]
mod mcp_resolve {}

mod renamed {
    pub(crate) use ::mcp_resolve as mcp;
}

#[derive(Clone, Copy, ::mcp_resolve::FormSchema)]
#[form(crate = "renamed::mcp")]
enum Answer {
    Yes,
    No,
}

#[derive(::mcp_resolve::FormSchema)]
#[form(crate = "::mcp_resolve")]
struct Confirm {
    answer: Answer,
}

fn main() {
    let schema = serde_json::Value::Object(Confirm::requested_schema(RenderOptions::default()));
    assert_eq!(schema["properties"]["answer"]["enum"], serde_json::json!(["yes", "no"]));
}

// No prelude in scope: the expansion names everything by absolute path.
mod bare {
    #![no_implicit_prelude]
    #![allow(dead_code)]

    #[derive(::core::clone::Clone, ::core::marker::Copy, ::mcp_resolve::FormSchema)]
    enum Pick {
        A,
    }

    #[derive(::mcp_resolve::FormSchema)]
    struct Bare {
        #[form(min_length = 1, default = "x")]
        text: ::std::string::String,
        pick: ::std::option::Option<Pick>,
        more: ::std::vec::Vec<Pick>,
    }
}
