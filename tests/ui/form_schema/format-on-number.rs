use mcp_resolve::prelude::*;

#[derive(FormSchema)]
struct Booking {
    #[form(format = "date")]
    day: u32,
}

fn main() {}
