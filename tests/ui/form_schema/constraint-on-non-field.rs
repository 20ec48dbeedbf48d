use mcp_resolve::prelude::*;

struct Address {
    street: String,
}

// The bad type is reported once, at the type; the option on it adds no second error.
#[derive(FormSchema)]
struct Signup {
    #[form(min_length = 1, default = "x")]
    address: Address,
}

fn main() {}
