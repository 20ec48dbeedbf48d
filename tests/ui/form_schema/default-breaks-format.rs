use mcp_resolve::FormSchema;

#[derive(FormSchema)]
struct Trip {
    #[form(format = "date", default = "yesterday")]
    day: String,
    #[form(format = "email", default = "nobody")]
    contact: String,
    #[form(format = "uri", default = "example.com")]
    site: String,
    #[form(format = "date-time", default = "2026-09-01 10:00")]
    at: String,
    // Valid defaults compile.
    #[form(format = "date", default = "2024-02-29")]
    leap: String,
}

fn main() {}
