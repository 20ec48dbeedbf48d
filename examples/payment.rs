//! Paying an invoice in URL mode: a tool `pay(invoice, payee, amount_cents)` whose resolver sends
//! the user to a payment page served by this same server (a stand-in for a payment provider's
//! checkout). The user pays there, never in the client; the call then finishes with the payment's
//! reference: `Paid 125.00 EUR to Acme Hosting for invoice INV-1042. Payment reference: PAY-…`.
//!
//! ```text
//! cargo run --example payment                              # MCP on stdio; the page on a free loopback port
//! cargo run --example payment -- --pages 127.0.0.1:8000    # MCP on stdio; the page on that address
//! cargo run --example payment -- --http 127.0.0.1:8000     # Streamable HTTP on /mcp, the page beside it
//! ```
//!
//! With `pay {"invoice": "INV-1042", "payee": "Acme Hosting", "amount_cents": 12500}` the client
//! is asked to open `http://127.0.0.1:PORT/pay?invoice=INV-1042&payee=Acme+Hosting&amount_cents=12500&flow=…`
//! ("Pay 125.00 EUR to Acme Hosting for invoice INV-1042: open the payment page"). The page shows
//! what is to be paid, with Pay and Cancel buttons; Pay records the payment and its reference,
//! Cancel declines (`Not paid: …`). What it guarantees:
//!
//! - **The amount is the call's.** The page reads what to charge from the flow, on the server
//!   ([`UrlFlow::url`]: the URL as the resolver made it from the call's arguments), never from the
//!   query of the request: the client shows the link and could edit it, and a link edited to
//!   `amount_cents=1` still shows, and charges, 125.00 EUR. The page records what it charged, and
//!   the tool checks it is what the call asked for before it reports a payment.
//! - **Paid once.** A flow completes once: posting the page again, or opening it again, is
//!   refused (409 "Already done"). The resolver is `once`: on 2026-07-28 a retry's
//!   `requestState` is consumed, so a replayed retry (state and answer sent again) is refused with
//!   -32602 and the call's body never runs twice. A real page would charge through the provider
//!   with the flow id as the idempotency key.
//! - **Only the person asked pays.** Over HTTP with bearer tokens (the variables of
//!   `examples/notes.rs`, `--features jwt`), the browser signs in at `/login` with the same
//!   identity as the MCP caller, with the sign-in of `examples/connect.rs` (reused as a module:
//!   a form that refuses login CSRF, a session id in a `__Host-` cookie, no token in any URL;
//!   docs/url-mode.md, "Signing the browser in"), and another user's browser gets 403. Without
//!   tokens (stdio, or `--http` without the variables) the flows are bound to no one
//!   ([`Server::anonymous_url_flows`]): the unguessable flow id in the URL is the proof, which suits a
//!   server on the user's own machine.
//!
//! The client may also decline or cancel the question without opening the page: `Not paid: you
//! declined…` and `Not paid: the payment was dismissed…`. `PAYMENT_URL_WAIT_SECS` sets how long a
//! 2026-07-28 retry waits for the page before asking again ([`Server::url_wait`], 30 s). Logs go
//! to stderr (`RUST_LOG=debug` for more).
//!
//! [`UrlFlow::url`]: mcp_resolve::url_flow::UrlFlow::url
//! [`Server::anonymous_url_flows`]: mcp_resolve::Server::anonymous_url_flows
//! [`Server::url_wait`]: mcp_resolve::Server::url_wait

// The browser sign-in (`/login`) of the consent example, whole: the sign-in form, its CSRF
// token, the sessions and who the browser's user is (`Pages::viewer`).
#[path = "connect.rs"]
#[allow(dead_code)]
mod connect;

use connect::{PageBase, Pages, TokenVault, escape};
use mcp_resolve::http::header::{self, HeaderValue};
use mcp_resolve::http::{Method, Request, Response, StatusCode};
use mcp_resolve::prelude::*;
use mcp_resolve::url_flow::{FlowError, UrlFlows};
use mcp_resolve::{Bytes, HttpOptions, Principal};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::Duration;

/// What the payment page records once the user paid: what it charged, and the reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Paid {
    pub(crate) invoice: String,
    pub(crate) payee: String,
    pub(crate) amount_cents: u64,
    pub(crate) reference: String,
}

/// What a payment is for: the call's arguments, written into the page's URL by the resolver and
/// read back by the page from the flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bill {
    pub(crate) invoice: String,
    pub(crate) payee: String,
    pub(crate) amount_cents: u64,
}

/// The largest payment this page takes: 10 000.00 EUR.
const MAX_CENTS: u64 = 1_000_000;

impl Bill {
    /// The bill of a call's arguments; `Err` says which is wrong, for the model to fix.
    fn new(invoice: &str, payee: &str, amount_cents: u64) -> Result<Bill, String> {
        let invoice_ok =
            (1..=32).contains(&invoice.len()) && invoice.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !invoice_ok {
            return Err(format!(
                "`invoice` must be 1 to 32 letters, digits or dashes (e.g. INV-1042), not {invoice:?}"
            ));
        }
        let payee_ok =
            (1..=64).contains(&payee.chars().count()) && payee.trim() == payee && !payee.chars().any(char::is_control);
        if !payee_ok {
            return Err(format!("`payee` must be a name of 1 to 64 characters, not {payee:?}"));
        }
        if !(1..=MAX_CENTS).contains(&amount_cents) {
            return Err(format!(
                "`amount_cents` must be from 1 to {MAX_CENTS} (10 000.00 EUR), not {amount_cents}"
            ));
        }
        Ok(Bill {
            invoice: invoice.to_owned(),
            payee: payee.to_owned(),
            amount_cents,
        })
    }

    /// The page's query for this bill.
    fn query(&self) -> String {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("invoice", &self.invoice)
            .append_pair("payee", &self.payee)
            .append_pair("amount_cents", &self.amount_cents.to_string())
            .finish()
    }

    /// The bill in the query of `url` (a flow's URL, as the resolver made it).
    fn from_url(url: &str) -> Option<Bill> {
        let query = url.split_once('?')?.1;
        let one = |name: &str| one_field(query.as_bytes(), name);
        Bill::new(&one("invoice")?, &one("payee")?, one("amount_cents")?.parse().ok()?).ok()
    }

    fn amount(&self) -> String {
        euros(self.amount_cents)
    }
}

/// `12500` as `125.00 EUR`.
pub(crate) fn euros(cents: u64) -> String {
    format!("{}.{:02} EUR", cents / 100, cents % 100)
}

/// Sends the user to the payment page for the call's invoice. `once`: a retry's state and
/// answer count for one call only (a replay is refused).
#[resolver(key = "payment", once)]
async fn ask_payment(
    invoice: String,
    payee: String,
    amount_cents: u64,
    base: State<PageBase>,
) -> Result<Elicit<Paid>, String> {
    // A wrong argument is the model's to fix: an error, not a question to the user.
    let bill = Bill::new(&invoice, &payee, amount_cents)?;
    Ok(Elicit::url(
        format!(
            "Pay {} to {payee} for invoice {invoice}: open the payment page",
            bill.amount()
        ),
        format!("{}/pay?{}", base.0, bill.query()),
    ))
}

/// Pay an invoice: the user pays on a payment page of this server (never in the client); returns
/// the payment's reference.
#[tool(open_world = true)]
pub(crate) async fn pay(
    /// The invoice's number, e.g. `INV-1042`.
    invoice: String,
    /// Who is paid, e.g. `Acme Hosting`.
    payee: String,
    /// How much, in euro cents: `12500` is 125.00 EUR.
    amount_cents: u64,
    #[resolve(ask_payment)] payment: ElicitationResult<Paid>,
) -> Result<String, String> {
    let amount = euros(amount_cents);
    match payment {
        ElicitationResult::Accepted(paid)
            if paid.invoice == invoice && paid.payee == payee && paid.amount_cents == amount_cents =>
        {
            Ok(format!(
                "Paid {amount} to {payee} for invoice {invoice}. Payment reference: {}",
                paid.reference
            ))
        }
        // The page charges what the flow says, which is this call's; anything else is not this
        // payment, and is never reported as done.
        ElicitationResult::Accepted(paid) => Err(format!(
            "the page recorded a payment of {} to {} for invoice {} (reference {}), not this one: \
             check the payments before paying again",
            euros(paid.amount_cents),
            paid.payee,
            paid.invoice,
            paid.reference
        )),
        // The user refused: say so; the model should not ask again on its own.
        ElicitationResult::Declined => Ok(format!(
            "Not paid: you declined the payment of {amount} to {payee} for invoice {invoice}."
        )),
        // Dismissed without a decision: stop now; the user may pay later.
        ElicitationResult::Cancelled => Ok(format!(
            "Not paid: the payment was dismissed. Nothing was charged for invoice {invoice}; ask again when you are ready."
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// The payment page (`/pay`).
// ---------------------------------------------------------------------------------------------

/// The payment page's state: the server's flows, the browser sign-in, and this server's origin
/// (the only one whose posts it takes).
#[derive(Clone)]
pub(crate) struct PayPage {
    pub(crate) flows: UrlFlows,
    pub(crate) sign_in: Pages,
    pub(crate) base: PageBase,
}

impl PayPage {
    /// `GET /pay?…&flow=…` shows what is to be paid; `POST /pay` (`flow`, `decision`: `pay` or
    /// `cancel`) records it.
    pub(crate) async fn serve(&self, req: Request<Bytes>) -> Response<Bytes> {
        match *req.method() {
            Method::GET => self.show(&req).await,
            Method::POST => self.decide(&req).await,
            _ => page(
                StatusCode::METHOD_NOT_ALLOWED,
                "Not here",
                "<p>This page answers GET and POST only.</p>",
            ),
        }
    }

    /// The bill of flow `flow`, for `viewer`: read from the flow (the server's copy of the link),
    /// whatever the request's own query says.
    async fn bill(&self, flow: &str, viewer: Option<&Principal>) -> Result<(String, Bill), Response<Bytes>> {
        let open = self.flows.open(flow, viewer).await.map_err(|e| refused(&e, viewer))?;
        let bill = Bill::from_url(&open.url).ok_or_else(|| {
            tracing::error!(url = %open.url, "a payment flow whose URL names no bill");
            page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "No bill",
                "<p>This payment names nothing to pay.</p>",
            )
        })?;
        Ok((open.message, bill))
    }

    async fn show(&self, req: &Request<Bytes>) -> Response<Bytes> {
        let viewer = match self.sign_in.viewer(req).await {
            Ok(v) => v,
            Err(refusal) => return refusal,
        };
        // Only the flow is taken from the link; the rest of its query is the client's to edit.
        let Some(flow) = one_field(req.uri().query().unwrap_or("").as_bytes(), "flow") else {
            return page(
                StatusCode::BAD_REQUEST,
                "Bad link",
                "<p>This page needs the whole link the assistant gave you.</p>",
            );
        };
        let (message, bill) = match self.bill(&flow, viewer.as_ref()).await {
            Ok(b) => b,
            Err(refusal) => return refusal,
        };
        let who = viewer.as_ref().map_or_else(String::new, |p| {
            format!("<p>Signed in as <b class=\"user\">{}</b>.</p>", escape(&p.subject))
        });
        let body = format!(
            "<p>The assistant asks: <q class=\"message\">{message}</q></p>\n{who}\n\
             <p>Pay <b class=\"amount\">{amount}</b> to <b class=\"payee\">{payee}</b> for invoice \
             <b class=\"invoice\">{invoice}</b>.</p>\n\
             <form method=\"post\" action=\"/pay\">\
             <input type=\"hidden\" name=\"flow\" value=\"{flow}\">\
             <button type=\"submit\" name=\"decision\" value=\"pay\" id=\"pay\">Pay {amount}</button>\
             <button type=\"submit\" name=\"decision\" value=\"cancel\" id=\"cancel\">Cancel</button>\
             </form>",
            message = escape(&message),
            amount = escape(&bill.amount()),
            payee = escape(&bill.payee),
            invoice = escape(&bill.invoice),
            flow = escape(&flow),
        );
        page(StatusCode::OK, "Payment", &body)
    }

    async fn decide(&self, req: &Request<Bytes>) -> Response<Bytes> {
        // Posted from this server's own page: a form elsewhere cannot pay in the user's name.
        let origin = req.headers().get(header::ORIGIN).and_then(|o| o.to_str().ok());
        if origin != Some(self.base.0.as_str()) {
            return page(
                StatusCode::FORBIDDEN,
                "Not from this site",
                "<p>This form was not sent from this server's own page, so nothing was paid.</p>",
            );
        }
        let viewer = match self.sign_in.viewer(req).await {
            Ok(v) => v,
            Err(refusal) => return refusal,
        };
        let body = req.body().as_ref();
        let (Some(flow), Some(decision)) = (one_field(body, "flow"), one_field(body, "decision")) else {
            return page(
                StatusCode::BAD_REQUEST,
                "Bad form",
                "<p>The form needs its flow and decision.</p>",
            );
        };
        let (_, bill) = match self.bill(&flow, viewer.as_ref()).await {
            Ok(b) => b,
            Err(refusal) => return refusal,
        };
        match decision.as_str() {
            "pay" => {
                let Some(reference) = reference() else {
                    return page(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "Try again",
                        "<p>Nothing was paid: try again.</p>",
                    );
                };
                let paid = Paid {
                    invoice: bill.invoice.clone(),
                    payee: bill.payee.clone(),
                    amount_cents: bill.amount_cents,
                    reference,
                };
                // Recorded once: a second post (or a race of two) finds the flow finished.
                match self.flows.complete(&flow, viewer.as_ref(), &paid).await {
                    Ok(()) => {
                        tracing::info!(invoice = %paid.invoice, amount_cents = paid.amount_cents, reference = %paid.reference, "paid");
                        page(
                            StatusCode::OK,
                            "Paid",
                            &format!(
                                "<p class=\"outcome\">Paid <b class=\"amount\">{}</b> to {} for invoice {}. \
                                 Reference <b class=\"reference\">{}</b>. You can close this page and return to the assistant.</p>",
                                escape(&bill.amount()),
                                escape(&paid.payee),
                                escape(&paid.invoice),
                                escape(&paid.reference)
                            ),
                        )
                    }
                    Err(e) => refused(&e, viewer.as_ref()),
                }
            }
            "cancel" => match self.flows.decline(&flow, viewer.as_ref()).await {
                Ok(()) => page(
                    StatusCode::OK,
                    "Not paid",
                    "<p class=\"outcome\">Payment cancelled: nothing was charged. You can close this page.</p>",
                ),
                Err(e) => refused(&e, viewer.as_ref()),
            },
            _ => page(
                StatusCode::BAD_REQUEST,
                "Bad form",
                "<p>The decision must be pay or cancel.</p>",
            ),
        }
    }
}

/// A fresh payment reference: `PAY-` and 16 hex digits from the operating system's random source
/// (`None` when it fails: nothing is paid then).
fn reference() -> Option<String> {
    let mut raw = [0u8; 8];
    getrandom::fill(&mut raw).ok()?;
    Some(format!(
        "PAY-{}",
        raw.iter().map(|b| format!("{b:02X}")).collect::<String>()
    ))
}

/// The one value of `name` in a query string or form body; `None` when missing or given twice.
fn one_field(encoded: &[u8], name: &str) -> Option<String> {
    let mut values = form_urlencoded::parse(encoded).filter(|(n, _)| n == name);
    let first = values.next()?;
    values.next().is_none().then(|| first.1.into_owned())
}

/// A page: `status`, a title and an HTML body (already escaped).
fn page(status: StatusCode, title: &str, body_html: &str) -> Response<Bytes> {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\n\
         <body><h1>{title}</h1>\n{body_html}\n</body></html>\n",
        title = escape(title)
    );
    let mut resp = Response::new(Bytes::from(html));
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // No scripts, no outside resources; forms post only back here.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; form-action 'self'; frame-ancestors 'none'"),
    );
    resp
}

/// The page for a flow that cannot be read or paid.
fn refused(err: &FlowError, viewer: Option<&Principal>) -> Response<Bytes> {
    let (status, title, text) = match err {
        FlowError::NotYours => {
            let who = viewer.map_or_else(
                || "You are not signed in.".to_owned(),
                |p| format!("You are signed in as {}.", p.subject),
            );
            (StatusCode::FORBIDDEN, "Not your payment", format!("{err}. {who}"))
        }
        FlowError::NotFound => (
            StatusCode::NOT_FOUND,
            "No such payment",
            "There is no such payment, or it expired. Ask the assistant again for a new link.".to_owned(),
        ),
        FlowError::Finished => (
            StatusCode::CONFLICT,
            "Already done",
            "This payment was paid or cancelled already: nothing more was charged.".to_owned(),
        ),
        other => {
            tracing::error!(error = %other, "the payment page could not read its flow");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "Try again",
                "Nothing was paid: try again in a moment.".to_owned(),
            )
        }
    };
    page(status, title, &format!("<p class=\"refusal\">{}</p>", escape(&text)))
}

fn usage(message: &str) -> ! {
    eprintln!("{message}\nusage: payment [--pages HOST:PORT | --http HOST:PORT]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // No argument: MCP on stdio, the page on a free loopback port.
    let (addr, http) = match args.as_slice() {
        [] => (SocketAddr::from(([127, 0, 0, 1], 0)), false),
        [flag, addr] if flag == "--pages" || flag == "--http" => (
            addr.parse::<SocketAddr>()
                .unwrap_or_else(|e| usage(&format!("{flag} {addr}: {e}"))),
            flag == "--http",
        ),
        _ => usage("unknown arguments"),
    };
    // Bound first, so that the page's address is known when it is a free port. Plain http is
    // accepted for a loopback address only; a deployment serves the page over https under its
    // public name, and builds the base from that name.
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let base = PageBase(format!("http://{}", listener.local_addr()?));
    let mut server = Server::new("payment")
        .version(env!("CARGO_PKG_VERSION"))
        .state(base.clone())
        .tool(pay);
    if let Ok(v) = std::env::var("PAYMENT_URL_WAIT_SECS") {
        let secs = v
            .parse()
            .unwrap_or_else(|_| usage(&format!("PAYMENT_URL_WAIT_SECS={v}: give a whole number of seconds")));
        server = server.url_wait(Duration::from_secs(secs));
    }
    // Over HTTP, bearer tokens from the environment when set (a mistake stops the server here,
    // naming the variable); a stdio caller carries none.
    let options = if http {
        HttpOptions::default()
            .bearer_from_env()
            .unwrap_or_else(|e| usage(&e.to_string()))
    } else {
        HttpOptions::default()
    };
    // The page signs browsers in with the very verifier the endpoint checks tokens with.
    let verifier = options.token_verifier();
    if verifier.is_some() {
        tracing::info!("bearer tokens required; browsers sign in at /login before they pay");
    } else {
        tracing::warn!("no tokens: the payment page is open to whoever holds its link (anonymous_url_flows)");
        server = server.anonymous_url_flows();
    }
    let pay_page = PayPage {
        flows: server.url_flows(),
        // connect's pages keep third-party tokens in a vault; no page here approves one.
        sign_in: Pages::new(server.url_flows(), verifier, base.clone(), TokenVault::default()),
        base,
    };
    let login = pay_page.sign_in.clone();
    let options = options
        .page("/login", move |req| {
            let login = login.clone();
            async move { login.login(req).await }
        })
        .page("/pay", move |req| {
            let pay_page = pay_page.clone();
            async move { pay_page.serve(req).await }
        });
    if http {
        server.serve_http_on(listener, options).await
    } else {
        server.serve_stdio_with_pages(listener, options).await
    }
}
