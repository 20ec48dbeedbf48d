//! Connecting a third-party account in URL mode: a tool `connect_account(service)` whose resolver
//! asks the user to open a page on this same server that stands in for an OAuth consent screen
//! (Approve / Deny). The page records the outcome, and the call finishes with
//! `connected {service} as {account}`, or `declined: {service} not connected`.
//!
//! ```text
//! export MCP_RESOLVE_JWT_SECRET="$(openssl rand -base64 32)"  # 32 random bytes; passphrases are refused
//! MCP_RESOLVE_JWT_AUDIENCE=http://127.0.0.1:8000/mcp \
//!   cargo run --example connect --features jwt -- --http 127.0.0.1:8000
//! ```
//!
//! Then, with a token signed with that secret for that audience (`sub` is the user):
//! 1. an MCP client calls `connect_account` with `Authorization: Bearer <token>` and gets a
//!    URL-mode question: open `http://127.0.0.1:8000/connect?service=github&flow=…`. (2026-07-28:
//!    an input request; its retry waits for the page, then asks again with the same URL.
//!    2025-11-25: an `elicitation/create` request with an `elicitationId`, answered once the page
//!    is done, followed by `notifications/elicitation/complete`.)
//! 2. the user signs the browser in: `GET /login?token=<token>` checks the token with the same
//!    verifier as the MCP endpoint and keeps it in an `HttpOnly; SameSite=Strict` cookie (a
//!    stand-in for the server's real sign-in, e.g. an OAuth login of its own);
//! 3. the user opens the URL and sees the question's message and Approve / Deny; the page checks
//!    the cookie on every request and passes its user to [`UrlFlows`] as the viewer, so a flow
//!    made for one user cannot be read or completed by another (403 "this page was opened for
//!    another user"); each flow completes once (409 afterwards), an unknown or expired one is a
//!    404, no sign-in a 401;
//! 4. the call finishes.
//!
//! It shows [`Elicit::url`], the flow's page served beside `/mcp` with [`HttpOptions::page`], and
//! [`UrlFlows::open`] / [`UrlFlows::complete`] / [`UrlFlows::decline`]. Without any token
//! variable there is no sign-in: the unguessable flow id in the URL is then the only proof, and
//! whoever holds the URL may complete it.
//!
//! `--http ADDR` is required (the page needs HTTP). The page's URL is made from that address:
//! `http://127.0.0.1:PORT` is accepted because it is loopback. A real deployment serves the page
//! over `https` under its public name (behind a TLS proxy), accepts that name with
//! [`HttpOptions::allow_host`], and makes the URL from it; plain `http` to any other host is
//! refused when the question is asked.
//!
//! Bearer tokens come from the environment as in `examples/notes.rs`
//! ([`HttpOptions::bearer_from_env`], built with `--features jwt`): `MCP_RESOLVE_JWT_SECRET`
//! (HS256) or `MCP_RESOLVE_JWKS_URL`, for the audience `MCP_RESOLVE_JWT_AUDIENCE`, optionally
//! from `MCP_RESOLVE_JWT_ISSUER`. `CONNECT_URL_WAIT_SECS` sets how long a 2026-07-28 retry waits
//! for the page before asking again ([`Server::url_wait`], default 30 s); each re-ask is a round,
//! and a call stops after [`Server::max_rounds`] (10) of them, so on 2026-07-28 the user has about
//! ten times that wait on the page (the handshake era waits up to the elicitation timeout). Logs
//! go to stderr (`RUST_LOG=debug` for more).
//!
//! [`UrlFlows`]: mcp_resolve::UrlFlows
//! [`UrlFlows::open`]: mcp_resolve::UrlFlows::open
//! [`UrlFlows::complete`]: mcp_resolve::UrlFlows::complete
//! [`UrlFlows::decline`]: mcp_resolve::UrlFlows::decline
//! [`HttpOptions::page`]: mcp_resolve::HttpOptions::page
//! [`HttpOptions::allow_host`]: mcp_resolve::HttpOptions::allow_host
//! [`HttpOptions::bearer_from_env`]: mcp_resolve::HttpOptions::bearer_from_env
//! [`Server::url_wait`]: mcp_resolve::Server::url_wait
//! [`Server::max_rounds`]: mcp_resolve::Server::max_rounds

use mcp_resolve::http::header::{self, HeaderValue};
use mcp_resolve::http::{Method, Request, Response, StatusCode};
use mcp_resolve::prelude::*;
use mcp_resolve::{Bytes, FlowError, Principal, TokenVerifier, UrlFlows};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Where users reach this server's pages (`http://127.0.0.1:PORT`), set once it knows its address.
pub(crate) static PAGE_BASE: OnceLock<String> = OnceLock::new();

/// The cookie the sign-in page sets: the user's verified token.
const SESSION_COOKIE: &str = "connect_session";

/// What the consent page records: the service the user approved, and as whom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Connected {
    pub(crate) service: String,
    pub(crate) account: String,
}

/// A service name as it may appear in the page's URL: 1 to 32 lowercase letters, digits or `-`.
fn valid_service(service: &str) -> bool {
    (1..=32).contains(&service.len())
        && service
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Sends the user to the consent page for `service`.
#[resolver(key = "connect")]
async fn ask_consent(service: String) -> Result<Elicit<Connected>, String> {
    if !valid_service(&service) {
        return Err(format!(
            "`service` must be 1 to 32 lowercase letters, digits or dashes (e.g. github), not {service:?}"
        ));
    }
    let base = PAGE_BASE
        .get()
        .ok_or("the consent page is not served: start the server with --http")?;
    Ok(Elicit::url(
        format!("Connect your {service} account: open the page and approve"),
        format!("{base}/connect?service={service}"),
    ))
}

/// Connect a third-party account (a stand-in for an OAuth consent): the user approves or denies
/// on a page of this server, never in the client.
#[tool]
pub(crate) async fn connect_account(
    /// The service to connect, e.g. `github`.
    service: String,
    #[resolve(ask_consent)] consent: ElicitationResult<Connected>,
) -> Result<String, String> {
    match consent {
        ElicitationResult::Accepted(c) if c.service == service => {
            Ok(format!("connected {} as {}", c.service, c.account))
        }
        // The page records the service it showed; a URL edited to another service is not this one.
        ElicitationResult::Accepted(c) => Err(format!(
            "the page connected {}, not {service}: nothing connected",
            c.service
        )),
        ElicitationResult::Declined => Ok(format!("declined: {service} not connected")),
        ElicitationResult::Cancelled => Ok(format!("cancelled: {service} not connected")),
    }
}

// ---------------------------------------------------------------------------------------------
// The pages: sign-in (`/login`) and consent (`/connect`).
// ---------------------------------------------------------------------------------------------

/// The pages' state: the server's flows and the verifier that signs browsers in (none: no
/// sign-in, the flows are bound to no one).
#[derive(Clone)]
pub(crate) struct Pages {
    flows: UrlFlows,
    verifier: Option<Arc<dyn TokenVerifier>>,
}

/// Escapes text for HTML element content and quoted attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Decodes one `application/x-www-form-urlencoded` component (`+` is a space); `None` when it
/// has a broken `%` escape or is not UTF-8.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let digit = |d: u8| char::from(d).to_digit(16);
                let value = digit(hex[0])? * 16 + digit(hex[1])?;
                out.push(u8::try_from(value).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The name/value pairs of a query string or form body; `None` when one does not decode.
fn form_pairs(s: &str) -> Option<Vec<(String, String)>> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (name, value) = p.split_once('=').unwrap_or((p, ""));
            Some((decode(name)?, decode(value)?))
        })
        .collect()
}

/// The value of the one field `name`; `None` when it is missing or given twice.
fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    let mut values = pairs.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

/// The value of cookie `name` in the request's `Cookie` headers.
fn cookie<'a>(req: &'a Request<Bytes>, name: &str) -> Option<&'a str> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(name)?.strip_prefix('='))
}

/// A page: `status`, a title and an HTML body (already escaped).
fn page(status: StatusCode, title: &str, body_html: &str) -> Response<Bytes> {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <style>body{{font-family:sans-serif;max-width:36em;margin:3em auto;padding:0 1em}}\
         button{{font-size:1.1em;margin-right:1em;padding:.4em 1.2em}}</style></head>\n\
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
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    // `HttpOptions::page` adds `Referrer-Policy: same-origin`, `Cache-Control: no-store` and
    // `X-Frame-Options: DENY`.
    resp
}

/// The page for a refusal: who is signed in, and what went wrong.
fn refusal(status: StatusCode, title: &str, detail: &str) -> Response<Bytes> {
    page(status, title, &format!("<p class=\"refusal\">{}</p>", escape(detail)))
}

/// The page for a flow that cannot be read or completed.
fn flow_refused(err: &FlowError, viewer: Option<&Principal>) -> Response<Bytes> {
    match err {
        FlowError::NotYours => {
            let who = viewer.map_or_else(
                || "You are not signed in.".to_string(),
                |p| format!("You are signed in as {}.", p.subject),
            );
            refusal(
                StatusCode::FORBIDDEN,
                "Not your page",
                &format!("{err}. {who} Sign in as the user the assistant asked, then open the link again."),
            )
        }
        FlowError::NotFound => refusal(
            StatusCode::NOT_FOUND,
            "No such step",
            "There is no such step, or it expired. Ask the assistant again for a new link.",
        ),
        FlowError::Finished => refusal(
            StatusCode::CONFLICT,
            "Already done",
            "This step was completed already. You can close this page and return to the assistant.",
        ),
        FlowError::Store(e) => {
            tracing::error!(error = %e, "the flow store failed");
            refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "Try again",
                "The server could not look this step up just now. Try again in a moment.",
            )
        }
        other => {
            tracing::error!(error = %other, "a flow error this page does not know");
            refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                &other.to_string(),
            )
        }
    }
}

impl Pages {
    pub(crate) fn new(flows: UrlFlows, verifier: Option<Arc<dyn TokenVerifier>>) -> Self {
        Self { flows, verifier }
    }

    /// The signed-in user: `Ok(None)` when this server has no sign-in, a 401 page when it has
    /// one and the browser is not signed in (or its token expired).
    async fn viewer(&self, req: &Request<Bytes>) -> Result<Option<Principal>, Response<Bytes>> {
        let Some(verifier) = &self.verifier else {
            return Ok(None);
        };
        let not_signed_in = |why: &str| {
            refusal(
                StatusCode::UNAUTHORIZED,
                "Sign in first",
                &format!("{why} Sign in (/login), then open the link the assistant gave you again."),
            )
        };
        let Some(token) = cookie(req, SESSION_COOKIE) else {
            return Err(not_signed_in("You are not signed in."));
        };
        match verifier.verify(token).await {
            Ok(p) => Ok(Some(p)),
            Err(e) => {
                tracing::debug!(reason = %e, "a session cookie was refused");
                Err(not_signed_in("Your sign-in expired or is not valid."))
            }
        }
    }

    /// `GET /login?token=<jwt>`: checks the token and keeps it in the session cookie, then
    /// redirects to `/login` (so the token leaves the address bar); `GET /login` says who is
    /// signed in.
    pub(crate) async fn login(&self, req: Request<Bytes>) -> Response<Bytes> {
        if req.method() != Method::GET {
            return method_not_allowed("GET");
        }
        let Some(verifier) = &self.verifier else {
            return refusal(
                StatusCode::NOT_FOUND,
                "No sign-in",
                "This server takes no tokens, so it has no sign-in: its pages are open to whoever holds the link.",
            );
        };
        let Some(pairs) = form_pairs(req.uri().query().unwrap_or("")) else {
            return refusal(StatusCode::BAD_REQUEST, "Bad link", "The link's query does not decode.");
        };
        let Some(token) = field(&pairs, "token") else {
            return match self.viewer(&req).await {
                Ok(Some(p)) => page(
                    StatusCode::OK,
                    "Signed in",
                    &format!(
                        "<p>Signed in as <b class=\"user\">{}</b>. Open the link the assistant gave you.</p>",
                        escape(&p.subject)
                    ),
                ),
                Ok(None) | Err(_) => refusal(
                    StatusCode::UNAUTHORIZED,
                    "Not signed in",
                    "Sign in with /login?token=<your token>.",
                ),
            };
        };
        let principal = match verifier.verify(token).await {
            Ok(p) => p,
            Err(e) => {
                tracing::debug!(reason = %e, "a sign-in token was refused");
                return refusal(
                    StatusCode::UNAUTHORIZED,
                    "Sign-in refused",
                    "That token is not valid for this server.",
                );
            }
        };
        // Only the token's own characters go into the header (a verified JWT is base64url and
        // dots); anything else is refused rather than written.
        let Ok(set_cookie) =
            HeaderValue::from_str(&format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"))
        else {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Sign-in refused",
                "That token cannot be kept in a cookie.",
            );
        };
        tracing::info!(user = %principal.subject, "a browser signed in");
        let mut resp = page(
            StatusCode::SEE_OTHER,
            "Signed in",
            "<p><a href=\"/login\">Continue</a></p>",
        );
        resp.headers_mut().insert(header::SET_COOKIE, set_cookie);
        resp.headers_mut()
            .insert(header::LOCATION, HeaderValue::from_static("/login"));
        resp
    }

    /// `GET /connect?service=…&flow=…` shows the consent; `POST /connect` records it.
    pub(crate) async fn connect(&self, req: Request<Bytes>) -> Response<Bytes> {
        match *req.method() {
            Method::GET => self.show(req).await,
            Method::POST => self.decide(req).await,
            _ => method_not_allowed("GET, POST"),
        }
    }

    async fn show(&self, req: Request<Bytes>) -> Response<Bytes> {
        let viewer = match self.viewer(&req).await {
            Ok(v) => v,
            Err(page) => return page,
        };
        let Some(pairs) = form_pairs(req.uri().query().unwrap_or("")) else {
            return refusal(StatusCode::BAD_REQUEST, "Bad link", "The link's query does not decode.");
        };
        let (Some(flow), Some(service)) = (field(&pairs, "flow"), field(&pairs, "service")) else {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Bad link",
                "This page needs the whole link the assistant gave you (its service and flow).",
            );
        };
        if !valid_service(service) {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Bad link",
                "The link names no service this page knows.",
            );
        }
        let asked = match self.flows.open(flow, viewer.as_ref()).await {
            Ok(f) => f,
            Err(e) => return flow_refused(&e, viewer.as_ref()),
        };
        let who = viewer.as_ref().map_or_else(String::new, |p| {
            format!("<p>Signed in as <b class=\"user\">{}</b>.</p>", escape(&p.subject))
        });
        // The flow id in the form is the per-flow CSRF measure: a forged post must know it, and
        // it is bound to the signed-in user; the SameSite=Strict cookie is not sent cross-site.
        let body = format!(
            "<p>The assistant asks: <q class=\"message\">{message}</q></p>\n{who}\n\
             <p>Allow the assistant to use your <b>{service}</b> account?</p>\n\
             <form method=\"post\" action=\"/connect\">\
             <input type=\"hidden\" name=\"flow\" value=\"{flow}\">\
             <input type=\"hidden\" name=\"service\" value=\"{service}\">\
             <button type=\"submit\" name=\"decision\" value=\"approve\" id=\"approve\">Approve</button>\
             <button type=\"submit\" name=\"decision\" value=\"deny\" id=\"deny\">Deny</button>\
             </form>",
            message = escape(&asked.message),
            service = escape(service),
            flow = escape(flow),
        );
        page(StatusCode::OK, &format!("Connect {service}"), &body)
    }

    async fn decide(&self, req: Request<Bytes>) -> Response<Bytes> {
        let form_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"));
        if !form_type {
            return refusal(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Bad form",
                "The decision must be posted from the page's form.",
            );
        }
        let viewer = match self.viewer(&req).await {
            Ok(v) => v,
            Err(page) => return page,
        };
        let Some(pairs) = std::str::from_utf8(req.body()).ok().and_then(form_pairs) else {
            return refusal(StatusCode::BAD_REQUEST, "Bad form", "The form does not decode.");
        };
        let (Some(flow), Some(service), Some(decision)) = (
            field(&pairs, "flow"),
            field(&pairs, "service"),
            field(&pairs, "decision"),
        ) else {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Bad form",
                "The form needs its flow, service and decision.",
            );
        };
        if !valid_service(service) {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Bad form",
                "The form names no service this page knows.",
            );
        }
        let account = viewer.as_ref().map_or("anonymous", |p| p.subject.as_str());
        let (recorded, title, text) = match decision {
            "approve" => (
                self.flows
                    .complete(
                        flow,
                        viewer.as_ref(),
                        &Connected {
                            service: service.to_owned(),
                            account: account.to_owned(),
                        },
                    )
                    .await,
                format!("Connected {service}"),
                format!("Your {service} account is connected. You can close this page and return to the assistant."),
            ),
            "deny" => (
                self.flows.decline(flow, viewer.as_ref()).await,
                format!("{service} not connected"),
                format!(
                    "You denied access to your {service} account. You can close this page and return to the assistant."
                ),
            ),
            _ => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "Bad form",
                    "The decision must be approve or deny.",
                );
            }
        };
        match recorded {
            Ok(()) => {
                tracing::info!(%service, user = %account, %decision, "the consent page recorded a decision");
                page(
                    StatusCode::OK,
                    &title,
                    &format!("<p class=\"outcome\">{}</p>", escape(&text)),
                )
            }
            Err(e) => {
                tracing::info!(%service, user = %account, error = %e, "the consent page refused a decision");
                flow_refused(&e, viewer.as_ref())
            }
        }
    }
}

fn method_not_allowed(allow: &'static str) -> Response<Bytes> {
    let mut resp = refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        "Not here",
        &format!("This page answers {allow} only."),
    );
    resp.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    resp
}

/// The verifier that signs browsers in: the same settings as the MCP endpoint's bearer tokens
/// (`HttpOptions::bearer_from_env` checked them already, so they are well formed here).
#[cfg(feature = "jwt")]
fn page_verifier() -> Result<Option<Arc<dyn TokenVerifier>>, mcp_resolve::AuthError> {
    use mcp_resolve::auth::env::{JWKS_URL, JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET};
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let audience = var(JWT_AUDIENCE).unwrap_or_default();
    let issuer = var(JWT_ISSUER);
    if let Some(secret) = var(JWT_SECRET) {
        let mut v = mcp_resolve::Hs256Verifier::from_encoded(&secret, &audience)?;
        if let Some(i) = &issuer {
            v = v.issuer(i);
        }
        return Ok(Some(Arc::new(v)));
    }
    if let Some(url) = var(JWKS_URL) {
        let mut v = mcp_resolve::JwksVerifier::new(&url, &audience)?;
        if let Some(i) = &issuer {
            v = v.issuer(i);
        }
        return Ok(Some(Arc::new(v)));
    }
    Ok(None)
}

/// Without the `jwt` feature there are no tokens (`bearer_from_env` refuses their variables).
#[cfg(not(feature = "jwt"))]
fn page_verifier() -> Result<Option<Arc<dyn TokenVerifier>>, mcp_resolve::AuthError> {
    Ok(None)
}

fn usage(message: &str) -> ! {
    eprintln!("{message}\nusage: connect --http HOST:PORT");
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
    let addr = match args.as_slice() {
        [flag, addr] if flag == "--http" => addr
            .parse::<std::net::SocketAddr>()
            .unwrap_or_else(|e| usage(&format!("--http {addr}: {e}"))),
        _ => usage("connect serves HTTP only: its consent page needs a browser"),
    };
    let url_wait = match std::env::var("CONNECT_URL_WAIT_SECS") {
        Err(_) => None,
        Ok(v) => match v.parse::<u64>() {
            Ok(secs) => Some(Duration::from_secs(secs)),
            Err(_) => usage(&format!("CONNECT_URL_WAIT_SECS={v}: give a whole number of seconds")),
        },
    };
    let mut server = Server::new("connect")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(connect_account);
    if let Some(wait) = url_wait {
        server = server.url_wait(wait);
    }
    // Plain http is accepted for a loopback address only; see the header for a deployment.
    let base = match addr {
        std::net::SocketAddr::V4(a) => format!("http://{a}"),
        std::net::SocketAddr::V6(a) => format!("http://[{}]:{}", a.ip(), a.port()),
    };
    let _ = PAGE_BASE.set(base.clone());
    // A mistake in the token variables stops the server here, with a message naming the variable.
    let options = mcp_resolve::HttpOptions::default()
        .bearer_from_env()
        .unwrap_or_else(|e| usage(&e.to_string()));
    let verifier = page_verifier().unwrap_or_else(|e| usage(&e.to_string()));
    if verifier.is_some() {
        tracing::info!("bearer tokens required; browsers sign in at /login");
    } else {
        tracing::info!("no tokens: the consent page is open to whoever holds its link");
    }
    let pages = Pages::new(server.url_flows(), verifier);
    let (login, connect) = (pages.clone(), pages);
    let options = options
        .page("/login", move |req| {
            let pages = login.clone();
            async move { pages.login(req).await }
        })
        .page("/connect", move |req| {
            let pages = connect.clone();
            async move { pages.connect(req).await }
        });
    tracing::info!(%addr, "serving Streamable HTTP on /mcp, the consent page on {base}/connect");
    server.serve_http(addr, options).await
}
