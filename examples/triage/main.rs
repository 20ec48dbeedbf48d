//! An issue-triage server: a tool that finds the open issues matching some words and asks which
//! to close, asks the user to sign in to the tracker on a page of this server (URL mode), asks
//! for a closing comment when more than three are picked, and confirms naming them; a prompt
//! that lists a repository's open issues; and a resource template, `issues://{+repo}/open`.
//!
//! ```text
//! cargo run --example triage                              # stdio; the sign-in page on a free loopback port
//! cargo run --example triage -- --pages 127.0.0.1:8700    # stdio; the sign-in page on that address
//! cargo run --example triage -- --http 127.0.0.1:8700     # Streamable HTTP on /mcp, the page beside it
//! ```
//!
//! The files are laid out as a server of one's own would be:
//! - `model.rs`: the tracker (the application state, registered once with `Server::state`), the
//!   page's address, and the forms;
//! - `resolvers.rs`: the four questions, each a `#[resolver]`, in the order they are asked;
//! - `tools.rs`: the tool, the prompt and the resource, importing the resolvers they name;
//! - `main.rs`: the sign-in page and the server.
//!
//! With `close_issues {"repo": "acme/app", "query": "crash"}` the user is asked, in turn:
//! "5 open issues of acme/app match "crash". Which should be closed?" (the five, as options);
//! to sign in to the tracker on `http://127.0.0.1:PORT/sign-in?flow=…` (once per caller; the page
//! asks for the account name, a stand-in for the tracker's own sign-in, and keeps the session on
//! the server); "Closing 4 issues: leave a comment saying why" only when four or more were
//! picked; and "Close #101, #102, #104, #105 in acme/app as alice with the comment "…"?". A
//! declined pick asks nothing more.
//!
//! On stdio there is one user and no token, so the sign-in flows are bound to no one
//! (`Server::anonymous_url_flows`): the unguessable flow id in the URL is the proof, which suits
//! a server on the user's own machine. Logs go to stderr (`RUST_LOG=debug` for more).

pub(crate) mod model;
pub(crate) mod resolvers;
pub(crate) mod tools;

use mcp_resolve::http::{Method, Request, Response, StatusCode, header};
use mcp_resolve::prelude::*;
use mcp_resolve::url_flow::{FlowError, UrlFlows};
use mcp_resolve::{Bytes, HttpOptions};
use model::{Account, PageBase, Tracker};
use std::net::SocketAddr;

/// The sign-in page's state: the server's flows, the tracker it signs users in to, and this
/// server's origin (the only one whose posts it takes).
#[derive(Clone)]
pub(crate) struct SignInPage {
    pub(crate) flows: UrlFlows,
    pub(crate) tracker: State<Tracker>,
    pub(crate) base: PageBase,
}

impl SignInPage {
    /// `GET /sign-in?flow=…` shows the form; `POST /sign-in` (the form: `flow`, `account`,
    /// `decision`) signs the user in, or records that they refused.
    pub(crate) async fn serve(&self, req: Request<Bytes>) -> Response<Bytes> {
        match *req.method() {
            Method::GET => self.show(&req).await,
            Method::POST => self.decide(&req).await,
            _ => page(StatusCode::METHOD_NOT_ALLOWED, "This page answers GET and POST only."),
        }
    }

    async fn show(&self, req: &Request<Bytes>) -> Response<Bytes> {
        let query = req.uri().query().unwrap_or("").as_bytes();
        let Some(flow) = one_field(query, "flow") else {
            return page(StatusCode::BAD_REQUEST, "This link is incomplete.");
        };
        match self.flows.open(&flow, None).await {
            Ok(open) => page(
                StatusCode::OK,
                &format!(
                    "<p>{}</p><form method=\"post\" action=\"/sign-in\">\
                     <input type=\"hidden\" name=\"flow\" value=\"{}\">\
                     <label>Tracker account <input name=\"account\" required></label>\
                     <button name=\"decision\" value=\"sign-in\">Sign in</button>\
                     <button name=\"decision\" value=\"refuse\" formnovalidate>Refuse</button></form>",
                    escape(&open.message),
                    escape(&flow)
                ),
            ),
            Err(e) => refused(&e),
        }
    }

    async fn decide(&self, req: &Request<Bytes>) -> Response<Bytes> {
        // A form of this page, posted from this page's origin: no other site may sign the user in.
        let origin = req.headers().get(header::ORIGIN).and_then(|o| o.to_str().ok());
        if origin != Some(self.base.0.as_str()) {
            return page(StatusCode::FORBIDDEN, "This form must be sent from the sign-in page.");
        }
        let body = req.body().as_ref();
        let (Some(flow), Some(decision)) = (one_field(body, "flow"), one_field(body, "decision")) else {
            return page(StatusCode::BAD_REQUEST, "This form is incomplete.");
        };
        let outcome = match (decision.as_str(), one_field(body, "account")) {
            ("refuse", _) => self.flows.decline(&flow, None).await.map(|()| "Not signed in."),
            ("sign-in", Some(account)) if valid_account(&account) => {
                match self
                    .flows
                    .complete(
                        &flow,
                        None,
                        &Account {
                            account: account.clone(),
                        },
                    )
                    .await
                {
                    Ok(()) => {
                        // The flows of a stdio server are bound to no one: the session is this
                        // server's one user's.
                        self.tracker.sign_in(Tracker::caller(None), &account);
                        Ok("Signed in: you can go back to the assistant.")
                    }
                    Err(e) => Err(e),
                }
            }
            ("sign-in", _) => {
                return page(
                    StatusCode::BAD_REQUEST,
                    "An account name is 1 to 39 letters, digits or dashes.",
                );
            }
            _ => return page(StatusCode::BAD_REQUEST, "This form is incomplete."),
        };
        match outcome {
            Ok(text) => page(StatusCode::OK, text),
            Err(e) => refused(&e),
        }
    }
}

/// An account name: 1 to 39 ASCII letters, digits or dashes.
fn valid_account(account: &str) -> bool {
    (1..=39).contains(&account.len()) && account.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The one value of `name` in a query string or form body; `None` when missing or given twice.
fn one_field(encoded: &[u8], name: &str) -> Option<String> {
    let mut values = form_urlencoded::parse(encoded).filter(|(n, _)| n == name);
    let first = values.next()?;
    values.next().is_none().then(|| first.1.into_owned())
}

/// `s` as HTML text.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn page(status: StatusCode, body_html: &str) -> Response<Bytes> {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Tracker sign-in</title></head>\
         <body>{body_html}</body></html>"
    );
    let mut resp = Response::new(Bytes::from(html));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/html; charset=utf-8"),
    );
    resp
}

fn refused(err: &FlowError) -> Response<Bytes> {
    match err {
        FlowError::NotFound => page(StatusCode::NOT_FOUND, "This link expired."),
        FlowError::Finished => page(StatusCode::CONFLICT, "This sign-in was completed already."),
        FlowError::NotYours => page(StatusCode::FORBIDDEN, "This page was opened for another user."),
        other => page(StatusCode::SERVICE_UNAVAILABLE, &escape(&other.to_string())),
    }
}

/// The server, with `tracker` as its state and its sign-in page reached at `base`.
pub(crate) fn server(tracker: Tracker, base: PageBase) -> Server {
    Server::new("triage")
        .version(env!("CARGO_PKG_VERSION"))
        .state(tracker)
        .state(base)
        .tool(tools::close_issues)
        .prompt(tools::triage)
        .resource(tools::open_issues)
        // No tokens here: the sign-in flows are bound to no one (see the header).
        .anonymous_url_flows()
}

/// `options` serving the sign-in page of `server` at `/sign-in`; `None` when the server holds no
/// tracker.
pub(crate) fn with_sign_in(server: &Server, base: PageBase, options: HttpOptions) -> Option<HttpOptions> {
    let sign_in = SignInPage {
        flows: server.url_flows(),
        // The very tracker the tools see.
        tracker: server.state_of::<Tracker>()?,
        base,
    };
    Some(options.page("/sign-in", move |req| {
        let sign_in = sign_in.clone();
        async move { sign_in.serve(req).await }
    }))
}

fn usage(message: &str) -> ! {
    eprintln!("{message}\nusage: triage [--pages HOST:PORT | --http HOST:PORT]");
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
    let (addr, http) = match args.as_slice() {
        [] => (SocketAddr::from(([127, 0, 0, 1], 0)), false),
        [flag, addr] if flag == "--pages" || flag == "--http" => (
            addr.parse::<SocketAddr>()
                .unwrap_or_else(|e| usage(&format!("{flag} {addr}: {e}"))),
            flag == "--http",
        ),
        _ => usage("unknown arguments"),
    };
    // Bound first, so that the page's address is known when it is a free port.
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let base = PageBase(format!("http://{}", listener.local_addr()?));
    let server = server(Tracker::sample(), base.clone());
    let options = with_sign_in(&server, base, HttpOptions::default())
        .ok_or_else(|| std::io::Error::other("the server holds no tracker"))?;
    if http {
        server.serve_http_on(listener, options).await
    } else {
        server.serve_stdio_with_pages(listener, options).await
    }
}
