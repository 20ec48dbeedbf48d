//! Table booking that asks for another date when the requested one is full (the how-to's
//! `book_table`), written as a resolver so it runs unchanged on both protocol eras, with the
//! how-to's advice for clients that cannot be asked: an optional `alternative_date` argument the
//! resolver reads instead of asking, and an error saying so when neither is there. Beside it,
//! `book_table_now` asks from the tool body itself (`Context::elicit`), as the how-to does: on
//! the handshake era only; on 2026-07-28 it says to use a resolver.
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
/// booking goes ahead on the date asked for. A client that cannot be asked (it declared no form
/// elicitation) is not asked: the `alternative_date` argument stands in for the answer, and
/// without it the call ends saying how to book.
#[resolver]
async fn alternative(
    date: String,
    party_size: u32,
    alternative_date: Option<String>,
    cx: Context,
) -> Result<Resolution<BookingPreferences>, String> {
    if date != "2024-12-25" {
        return Ok(Resolution::Value(BookingPreferences {
            check_alternative: true,
            alternative_date: date,
        }));
    }
    if !cx.client_capabilities().elicitation_form() {
        return match alternative_date {
            Some(alternative_date) => Ok(Resolution::Value(BookingPreferences {
                check_alternative: true,
                alternative_date,
            })),
            None => Err(format!(
                "{date} is fully booked and this client cannot be asked for another date: call again with `alternative_date`"
            )),
        };
    }
    Ok(Elicit::form(format!("No table for {party_size} on {date}. Try another date?")).into())
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
    /// Another date to take when `date` is full, for clients that cannot be asked.
    alternative_date: Option<String>,
    #[resolve(alternative)] booking: ElicitationResult<BookingPreferences>,
) -> String {
    let _ = (date, alternative_date);
    booked(booking, party_size, &time)
}

fn booked(booking: ElicitationResult<BookingPreferences>, party_size: u32, time: &str) -> String {
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

/// Book a table, asking from the body when the date is full (handshake era only: prefer
/// `book_table`, whose resolver works on both eras).
#[tool]
pub(crate) async fn book_table_now(date: String, time: String, party_size: u32, cx: Context) -> CallToolResult {
    if date != "2024-12-25" {
        return CallToolResult::success(vec![Content::text(format!(
            "[SUCCESS] Booked a table for {party_size} on {date} at {time}"
        ))]);
    }
    let message = format!("No table for {party_size} on {date}. Try another date?");
    match cx.elicit::<BookingPreferences>(message).await {
        Ok(answer) => CallToolResult::success(vec![Content::text(booked(answer, party_size, &time))]),
        Err(e) => e.into_result(),
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    Server::new("booking")
        .tool(book_table)
        .tool(book_table_now)
        .serve_stdio()
        .await
}
