use mcp_resolve::prelude::*;

struct Address {
    street: String,
}

#[derive(FormSchema)]
struct Signup {
    name: String,
    address: Address,
}

fn main() {}
