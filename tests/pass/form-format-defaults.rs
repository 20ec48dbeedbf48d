//! Defaults that fit their field's `format` compile (each is checked at compile time with the
//! server's own rules).
use mcp_resolve::FormSchema;

#[derive(FormSchema)]
struct Trip {
    #[form(format = "date", default = "2024-02-29")]
    day: String,
    #[form(format = "email", default = "ann@example.com")]
    contact: String,
    #[form(format = "uri", default = "https://example.com/x")]
    site: String,
    #[form(format = "date-time", default = "2026-09-01T10:00:00+09:00")]
    at: String,
}

fn main() {
    let _ = <Trip as mcp_resolve::form::FormSchema>::requested_schema(Default::default());
}
