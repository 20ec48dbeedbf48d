//! Table booking that asks for another date when the requested one is full (the how-to's
//! `book_table`), written as a resolver so it runs unchanged on both protocol eras.
//!
//! ```text
//! cargo run --example booking
//! ```

use mcp_resolve::prelude::*;

/// What to ask when the date is full.
#[derive(Clone, Debug, FormSchema)]
pub(crate) struct BookingPreferences {
    /// Check another date?
    #[form(rename = "checkAlternative")]
    check_alternative: bool,
    /// Alternative date (YYYY-MM-DD)
    #[form(rename = "alternativeDate", format = "date", default = "2024-12-26")]
    alternative_date: String,
}

/// Christmas Day is fully booked: ask for another date. Any other date needs no question: the
/// booking goes ahead on the date asked for.
#[resolver]
async fn alternative(date: String, party_size: u32) -> Resolution<BookingPreferences> {
    if date != "2024-12-25" {
        return Resolution::Value(BookingPreferences {
            check_alternative: true,
            alternative_date: date,
        });
    }
    Elicit::form(format!("No table for {party_size} on {date}. Try another date?")).into()
}

/// Book a table; when the date is full, offer another one.
#[tool]
pub(crate) async fn book_table(
    /// The date, YYYY-MM-DD.
    date: String,
    /// The time, HH:MM.
    time: String,
    /// How many people.
    party_size: u32,
    #[resolve(alternative)] booking: ElicitationResult<BookingPreferences>,
) -> String {
    let _ = date;
    match booking {
        ElicitationResult::Accepted(p) if p.check_alternative => {
            format!(
                "[SUCCESS] Booked a table for {party_size} on {} at {time}",
                p.alternative_date
            )
        }
        ElicitationResult::Accepted(_) => "[CANCELLED] No booking made".into(),
        ElicitationResult::Declined | ElicitationResult::Cancelled => "[CANCELLED] Booking cancelled".into(),
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    Server::new("booking").tool(book_table).serve_stdio().await
}
