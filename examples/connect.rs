//! Connecting a third-party account in URL mode: a tool `connect_account(service)` whose resolver
//! asks the user to open a page on this same server that stands in for an OAuth consent screen
//! (Approve / Deny). The page records the outcome, and the call finishes with
//! `connected {service} as {account}`, or `declined: {service} not connected`.
//!
//! **Where the third-party token goes.** On Approve the page mints a stand-in access token (32
//! random bytes from the operating system, `tpat_…`; a failing random source connects nothing)
//! and keeps it in a token vault on the server, under the verified user (the issuer and subject
//! of the MCP caller's bearer token, the identity the flow is bound to) and the service, for an
//! hour. The token is never in the page, its URL, the flow's outcome, a tool's result or a log:
//! the model sees `connected github as alice` and nothing more. A second tool,
//! `list_repos(service)`, finds the calling user's own token in the vault and uses it on the
//! server (a stand-in provider answers with the account's repositories); with no token for this
//! user and service (never connected, denied, expired) it returns an ordinary tool error telling
//! the model to call `connect_account` first. Another user's token is under another key, so it is
//! never found. docs/url-mode.md, "Keeping the third-party token", says how a real OAuth provider
//! takes the stand-in's place.
//!
//! ```text
//! export MCP_RESOLVE_JWT_SECRET="$(openssl rand -base64 32)"  # 32 random bytes; passphrases are refused
//! MCP_RESOLVE_JWT_AUDIENCE=http://127.0.0.1:8000/mcp MCP_RESOLVE_AUTH_SERVER=https://auth.example.com \
//!   cargo run --example connect --features jwt -- --http 127.0.0.1:8000
//! ```
//!
//! Then, with a token signed with that secret for that audience (`sub` is the user):
//! 1. an MCP client calls `connect_account` with `Authorization: Bearer <token>` and gets a
//!    URL-mode question: open `http://127.0.0.1:8000/connect?service=github&flow=…`. (2026-07-28:
//!    an input request; its retry waits for the page, then asks again with the same URL.
//!    2025-11-25: an `elicitation/create` request with an `elicitationId`, answered once the page
//!    is done, followed by `notifications/elicitation/complete`.)
//! 2. the user signs the browser in at `/login`: a form where they paste the same token (a
//!    stand-in for the server's real sign-in, e.g. an OAuth login of its own with the same
//!    identity provider). The form posts to `/login`; the page checks that the post comes from
//!    its own origin and carries the form's one-time CSRF token, bound to a pre-sign-in cookie of
//!    this browser, checks the token with the same verifier as the MCP endpoint, and keeps only a
//!    random session id in the cookie (the user it stands for is kept on the server, for an
//!    hour). A token in a URL (`/login?token=…`) is refused, never used;
//! 3. the user opens the URL and sees the question's message and Approve / Deny; the page checks
//!    the session on every request and passes its user to [`UrlFlows`] as the viewer, so a flow
//!    made for one user cannot be read or completed by another (403 "this page was opened for
//!    another user"); each flow completes once (409 afterwards), an unknown or expired one is a
//!    404, no sign-in a 401;
//! 4. the call finishes; `list_repos {service: github}` then answers
//!    `github repositories of alice: alice/notes, alice/website` for alice, and
//!    `github is not connected for you: call connect_account …` for anyone else.
//!
//! Why the sign-in is built this way (docs/url-mode.md, "Signing the browser in"): the flow is
//! bound to the MCP caller, and the page's viewer is whoever the browser is signed in as. A
//! sign-in that another site can trigger (login CSRF: it makes the victim's browser sign in as
//! the attacker) would let the victim approve the attacker's flow; so every post must come from
//! this origin and carry the CSRF token, and no credential ever travels in a URL (URLs end up in
//! history, logs and `Referer`s).
//!
//! Cookies: `__Host-` names with `Secure; HttpOnly; Path=/` and no `Domain`, so no other host
//! (a sibling subdomain) can set or overwrite them, no script reads them, and they never go over
//! plain http to a host that is not loopback. Browsers treat `http://127.0.0.1`, `http://[::1]`
//! and `http://localhost` as potentially trustworthy: Chromium (156) keeps and sends `Secure` and
//! `__Host-` cookies there (`tests/browser.rs` signs in that way), so the same cookies serve a
//! loopback test server and an `https` deployment alike. Cookies are not isolated by port:
//! another server on this host can set cookies this one reads, which is why the `Origin` check,
//! not the cookie alone, refuses a post from another port.
//!
//! Sign-ins (forms handed out, and sessions) live in a store of the pages' own, at most 10 000
//! at once (past it `/login` answers 503 until some expire), so a flood of forms cannot fill the
//! store the flows live in. A real server would also rate-limit `/login` and offer a sign-out.
//!
//! It shows [`Elicit::url`], the flow's page served beside `/mcp` with [`HttpOptions::page`], and
//! [`UrlFlows::open`] / [`UrlFlows::complete`] / [`UrlFlows::decline`]. Without any token
//! variable there is no sign-in: the unguessable flow id in the URL is then the only proof, and
//! whoever holds the URL may complete it.
//!
//! `--http ADDR` is required (the page needs HTTP). The page's URL is made from that address:
//! `http://127.0.0.1:PORT` is accepted because it is loopback. A real deployment serves the page
//! over `https` under its public name (behind a TLS proxy), accepts that name with
//! [`HttpOptions::allow_host`], and makes the URL from it (which is then also the one origin
//! whose posts the pages take); plain `http` to any other host is refused when the question is
//! asked.
//!
//! **Beside stdio.** `connect --pages 127.0.0.1:8000` serves MCP on stdin and stdout, as a client
//! starts a local server, and only the pages on that address
//! ([`Server::serve_stdio_with_pages`]); the resolver builds the URL from the same `PageBase`
//! state. A stdio caller carries no token, so there is no sign-in: the flows are anonymous
//! ([`Server::anonymous_url_flows`]) and the unguessable flow id is the proof.
//!
//! Bearer tokens come from the environment as in `examples/notes.rs`
//! ([`HttpOptions::bearer_from_env`], built with `--features jwt`): `MCP_RESOLVE_JWT_SECRET`
//! (HS256) or `MCP_RESOLVE_JWKS_URL`, for the audience `MCP_RESOLVE_JWT_AUDIENCE`, from the
//! issuer `MCP_RESOLVE_JWT_ISSUER` (optional with a shared secret, required with a JWKS). `CONNECT_URL_WAIT_SECS` sets how long a 2026-07-28 retry waits
//! for the page before asking again ([`Server::url_wait`], default 30 s); each re-ask is a round,
//! and a call stops after [`Server::max_rounds`] (10) of them, so on 2026-07-28 the user has about
//! ten times that wait on the page (the handshake era waits up to the elicitation timeout). Logs
//! go to stderr (`RUST_LOG=debug` for more).
//!
//! [`UrlFlows`]: mcp_resolve::url_flow::UrlFlows
//! [`UrlFlows::open`]: mcp_resolve::url_flow::UrlFlows::open
//! [`UrlFlows::complete`]: mcp_resolve::url_flow::UrlFlows::complete
//! [`UrlFlows::decline`]: mcp_resolve::url_flow::UrlFlows::decline
//! [`HttpOptions::page`]: mcp_resolve::HttpOptions::page
//! [`HttpOptions::allow_host`]: mcp_resolve::HttpOptions::allow_host
//! [`HttpOptions::bearer_from_env`]: mcp_resolve::HttpOptions::bearer_from_env
//! [`Server::url_wait`]: mcp_resolve::Server::url_wait
//! [`Server::max_rounds`]: mcp_resolve::Server::max_rounds
//! [`Server::serve_stdio_with_pages`]: mcp_resolve::Server::serve_stdio_with_pages
//! [`Server::anonymous_url_flows`]: mcp_resolve::Server::anonymous_url_flows

use base64::Engine as _;
use mcp_resolve::http::header::{self, HeaderValue};
use mcp_resolve::http::{Method, Request, Response, StatusCode};
use mcp_resolve::prelude::*;
use mcp_resolve::{
    Bytes, Principal,
    auth::TokenVerifier,
    store::{MemoryStore, Store, StoreError},
    url_flow::{FlowError, UrlFlows},
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// Where users reach this server's pages (`http://127.0.0.1:PORT`, or its public `https` name):
/// application state the resolver builds the page's URL from (`State<PageBase>`), and the one
/// origin whose form posts the pages take.
#[derive(Clone, Debug)]
pub(crate) struct PageBase(pub(crate) String);

/// The session cookie: a random id the pages map to the signed-in user on the server. Never the
/// token itself: a cookie sits in the browser's profile and goes with every request, and a leaked
/// id ends with its session, while a leaked token works wherever the token does.
const SESSION_COOKIE: &str = "__Host-connect_session";
/// The pre-sign-in cookie: a random id naming the sign-in form this browser was handed, whose
/// CSRF token a sign-in must carry.
const SIGN_IN_COOKIE: &str = "__Host-connect_sign_in";
/// How long a signed-in browser stays signed in.
const SESSION_TTL: Duration = Duration::from_secs(60 * 60);
/// How long a sign-in form may wait to be posted.
const SIGN_IN_TTL: Duration = Duration::from_secs(10 * 60);
/// How many sign-ins (forms handed out, and sessions) the pages hold at once by default; past it
/// `/login` answers 503 until some expire.
const MAX_SIGN_INS: usize = 10_000;
/// Where the pages keep sessions and sign-in forms in their store.
const SESSION_KEY: &str = "connect/session/";
const SIGN_IN_KEY: &str = "connect/sign-in/";

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
async fn ask_consent(service: String, base: State<PageBase>) -> Result<Elicit<Connected>, String> {
    if !valid_service(&service) {
        return Err(format!(
            "`service` must be 1 to 32 lowercase letters, digits or dashes (e.g. github), not {service:?}"
        ));
    }
    let base = &base.0;
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

/// List the repositories of your account on a service you connected with `connect_account`.
#[tool(read_only = true)]
pub(crate) async fn list_repos(
    /// The service, e.g. `github`.
    service: String,
    cx: Context,
    vault: State<TokenVault>,
) -> Result<String, String> {
    if !valid_service(&service) {
        return Err(format!(
            "`service` must be 1 to 32 lowercase letters, digits or dashes (e.g. github), not {service:?}"
        ));
    }
    // The calling user's own connection, found by who the bearer token says they are: another
    // user's is under another key, whatever the arguments say.
    let connection = vault.connection(cx.principal(), &service).await.map_err(|e| {
        tracing::error!(error = %e, "the token vault failed");
        "the server could not read its connections just now: try again in a moment".to_owned()
    })?;
    // Not connected (never, denied, or expired): an error the model can fix by itself.
    let Some(connection) = connection else {
        return Err(format!(
            "{service} is not connected for you: call connect_account with service {service:?} first, \
             then call list_repos again"
        ));
    };
    let repos = stand_in_provider_repos(&connection)?;
    Ok(format!(
        "{service} repositories of {}: {}",
        connection.account,
        repos.join(", ")
    ))
}

// ---------------------------------------------------------------------------------------------
// The vault: the third-party tokens, on the server, per verified user and service.
// ---------------------------------------------------------------------------------------------

/// How the stand-in provider's access tokens start (as real providers mark theirs, so a token
/// pasted where it should not be is recognised and revoked).
pub(crate) const ACCESS_TOKEN_PREFIX: &str = "tpat_";
/// How long a connection lasts: the stand-in provider's access tokens expire after an hour. (A
/// real provider says so in `expires_in`; a refresh token, kept beside the access token, gets a
/// new one without asking the user again.)
const CONNECTION_TTL: Duration = Duration::from_secs(60 * 60);
/// How many connections the vault holds at once by default; past it an approval answers 503.
const MAX_CONNECTIONS: usize = 10_000;
/// Where the vault keeps connections in its store.
const CONNECTION_KEY: &str = "connect/token/";

/// What the vault keeps for one user and one service: the account and its access token. It never
/// leaves the server: not in the page, its URL, the flow's outcome (what the call reads), or a
/// tool's result.
#[derive(Serialize, Deserialize)]
pub(crate) struct Connection {
    pub(crate) account: String,
    access_token: String,
}

impl Connection {
    /// A connection of `account` with a fresh stand-in access token (32 bytes from the operating
    /// system); `None` when the random source fails (nothing is connected), never a weaker token.
    pub(crate) fn mint(account: &str) -> Option<Self> {
        Some(Self {
            account: account.to_owned(),
            access_token: format!("{ACCESS_TOKEN_PREFIX}{}", random_id()?),
        })
    }
}

/// Stands in for a call to the provider's API with the user's token (`Authorization: Bearer
/// <access token>` on `GET /user/repos`, say): the provider takes only its own tokens, and
/// answers with the account's repositories. The token itself goes nowhere else.
fn stand_in_provider_repos(connection: &Connection) -> Result<Vec<String>, String> {
    let token = &connection.access_token;
    if !token.strip_prefix(ACCESS_TOKEN_PREFIX).is_some_and(well_formed_id) {
        return Err("the provider refused the stored token: call connect_account again".to_owned());
    }
    let account = &connection.account;
    Ok(vec![format!("{account}/notes"), format!("{account}/website")])
}

/// The third-party tokens, kept on the server: one connection per verified user (the issuer and
/// subject of the MCP caller's bearer token, the identity the flows are bound to) and service.
/// The consent page puts one in when its user approves; `list_repos` takes the caller's own. Its
/// own store by default (at most [`MAX_CONNECTIONS`]); replicas would share one (a `RedisStore`),
/// kept encrypted at rest in a real deployment.
#[derive(Clone)]
pub(crate) struct TokenVault {
    store: Arc<dyn Store>,
}

impl Default for TokenVault {
    fn default() -> Self {
        Self::in_store(Arc::new(MemoryStore::with_capacity(MAX_CONNECTIONS)))
    }
}

impl TokenVault {
    /// A vault keeping its connections in `store`.
    pub(crate) fn in_store(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    /// Where `user`'s connection to `service` lives: issuer and subject as a JSON pair (so no two
    /// users share a key, whatever their names hold), base64url. No user: the one anonymous user
    /// of a server without tokens.
    fn key(user: Option<&Principal>, service: &str) -> Option<String> {
        let who = match user {
            Some(p) => serde_json::to_vec(&(p.issuer.as_deref(), p.subject.as_str())),
            None => serde_json::to_vec(&(None::<&str>, "anonymous")),
        }
        .ok()?;
        let who = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(who);
        Some(format!("{CONNECTION_KEY}{service}/{who}"))
    }

    /// Keeps `connection` as `user`'s to `service`, in place of any earlier one.
    pub(crate) async fn keep(
        &self,
        user: Option<&Principal>,
        service: &str,
        connection: &Connection,
    ) -> Result<(), StoreError> {
        let key = Self::key(user, service).ok_or_else(|| StoreError::new("no key for this user"))?;
        let value = serde_json::to_vec(connection).map_err(|e| StoreError::new(e.to_string()))?;
        // The store offers insert-if-absent and compare-and-set: either one wins, unless another
        // approval of the same user wrote in between (then try again).
        for _ in 0..3 {
            let kept = match self.store.get(&key).await? {
                None => self.store.insert_new(&key, &value, CONNECTION_TTL).await?,
                Some(old) => self.store.replace(&key, &old, &value, CONNECTION_TTL).await?,
            };
            if kept {
                return Ok(());
            }
        }
        Err(StoreError::new("the connection kept changing while it was written"))
    }

    /// `user`'s connection to `service`, unless there is none (or it expired).
    pub(crate) async fn connection(
        &self,
        user: Option<&Principal>,
        service: &str,
    ) -> Result<Option<Connection>, StoreError> {
        let key = Self::key(user, service).ok_or_else(|| StoreError::new("no key for this user"))?;
        let Some(raw) = self.store.get(&key).await? else {
            return Ok(None);
        };
        serde_json::from_slice(&raw)
            .map(Some)
            .map_err(|e| StoreError::new(format!("a connection does not read back: {e}")))
    }
}

// ---------------------------------------------------------------------------------------------
// The pages: sign-in (`/login`) and consent (`/connect`).
// ---------------------------------------------------------------------------------------------

/// The pages' state: the server's flows, and the browser sign-in (none when the server takes no
/// tokens: the flows are then bound to no one).
#[derive(Clone)]
pub(crate) struct Pages {
    flows: UrlFlows,
    sign_in: Option<SignIn>,
    /// Where an approval keeps the user's new third-party token.
    vault: TokenVault,
    /// This server's origin: the only one whose posts are taken.
    base: PageBase,
}

/// What signs browsers in: the MCP endpoint's verifier, and the store of sign-in forms and
/// sessions (their own, by default: a flood of forms cannot fill the store the flows live in).
#[derive(Clone)]
struct SignIn {
    verifier: Arc<dyn TokenVerifier>,
    store: Arc<dyn Store>,
}

/// What a session id stands for: the user the token named (flows are bound to issuer and subject).
#[derive(Serialize, Deserialize)]
struct Session {
    sub: String,
    iss: Option<String>,
}

/// A fresh random id: 32 bytes from the operating system, base64url (43 characters). A failing
/// random source is `None` (the request is refused), never a weaker id.
fn random_id() -> Option<String> {
    let mut raw = [0u8; 32];
    if let Err(e) = getrandom::fill(&mut raw) {
        tracing::error!(error = %e, "no randomness for an id");
        return None;
    }
    Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw))
}

/// Whether `id` has the shape [`random_id`] makes; anything else is not looked up.
fn well_formed_id(id: &str) -> bool {
    id.len() == 43 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Compares two secrets in a time that does not tell where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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

/// The value of the one cookie `name` in the request's `Cookie` headers; `None` when it is
/// missing or given twice (another server on this host may have planted a second one: read
/// neither).
fn cookie<'a>(req: &'a Request<Bytes>, name: &str) -> Option<&'a str> {
    let mut values = req
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(name)?.strip_prefix('='));
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

/// A `Set-Cookie` for one of the pages' cookies. `__Host-` with `Secure`, `Path=/` and no
/// `Domain`: the browser keeps it only when set that way by this very host, so no sibling
/// subdomain can set or overwrite it, and never sends it over plain http but to loopback.
/// `HttpOnly`: no script reads it. `max_age` zero deletes it.
fn set_cookie(name: &str, value: &str, max_age: Duration, same_site: &str) -> Option<HeaderValue> {
    let text = format!(
        "{name}={value}; Path=/; Secure; HttpOnly; SameSite={same_site}; Max-Age={}",
        max_age.as_secs()
    );
    // Values are ids made here (base64url): always a valid header; `None` rather than written
    // otherwise.
    HeaderValue::from_str(&text).ok()
}

/// Whether a post comes from this server's own pages: its `Origin` is exactly this server's.
/// Browsers send `Origin` with every form post and no page can choose it, so a form on another
/// site, or on another port of this host (same site: `SameSite` cookies still go with it), is
/// refused here. The framework's own check accepts any loopback origin (and, on a public bind
/// without an allow-list, any at all): it stops DNS rebinding, not forged posts.
fn from_our_pages(req: &Request<Bytes>, base: &PageBase) -> bool {
    let ours = &base.0;
    let mut origins = req.headers().get_all(header::ORIGIN).iter();
    match (origins.next(), origins.next()) {
        (Some(origin), None) => origin.to_str().is_ok_and(|o| o.eq_ignore_ascii_case(ours)),
        _ => false,
    }
}

/// Whether the request's body is an HTML form's (`application/x-www-form-urlencoded`).
fn is_form(req: &Request<Bytes>) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"))
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

/// The page for a refusal: what went wrong, and what to do.
fn refusal(status: StatusCode, title: &str, detail: &str) -> Response<Bytes> {
    page(status, title, &format!("<p class=\"refusal\">{}</p>", escape(detail)))
}

/// The page for a post that did not come from this server's own page.
fn forged() -> Response<Bytes> {
    refusal(
        StatusCode::FORBIDDEN,
        "Not from this site",
        "This form was not sent from this server's own page, so nothing was done. \
         Open the page yourself and use its form.",
    )
}

/// The page for a store or a random source that failed: nothing was done.
fn try_again() -> Response<Bytes> {
    refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        "Try again",
        "The server could not do this just now. Try again in a moment.",
    )
}

fn store_failed(e: &StoreError) -> Response<Bytes> {
    tracing::error!(error = %e, "the pages' store failed");
    try_again()
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
        FlowError::Store(e) => store_failed(e),
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
    /// The pages for `flows`; browsers sign in with tokens `verifier` accepts (none: no sign-in),
    /// and an approval keeps its token in `vault` (the one the tools read).
    /// Sign-ins are kept in a store of their own holding at most [`MAX_SIGN_INS`]; replicas would
    /// share one instead (a `RedisStore`), so that a browser signed in on one is on all.
    pub(crate) fn new(
        flows: UrlFlows,
        verifier: Option<Arc<dyn TokenVerifier>>,
        base: PageBase,
        vault: TokenVault,
    ) -> Self {
        let sign_in = verifier.map(|verifier| SignIn {
            verifier,
            store: Arc::new(MemoryStore::with_capacity(MAX_SIGN_INS)),
        });
        Self {
            flows,
            sign_in,
            base,
            vault,
        }
    }

    /// The signed-in user: `Ok(None)` when this server has no sign-in, a 401 page when it has
    /// one and the browser is not signed in (or its session expired).
    pub(crate) async fn viewer(&self, req: &Request<Bytes>) -> Result<Option<Principal>, Response<Bytes>> {
        let Some(sign_in) = &self.sign_in else {
            return Ok(None);
        };
        let not_signed_in = |why: &str| {
            refusal(
                StatusCode::UNAUTHORIZED,
                "Sign in first",
                &format!("{why} Sign in at /login, then open the link the assistant gave you again."),
            )
        };
        let Some(id) = cookie(req, SESSION_COOKIE).filter(|id| well_formed_id(id)) else {
            return Err(not_signed_in("You are not signed in."));
        };
        let record = sign_in
            .store
            .get(&format!("{SESSION_KEY}{id}"))
            .await
            .map_err(|e| store_failed(&e))?;
        let Some(session) = record.and_then(|r| serde_json::from_slice::<Session>(&r).ok()) else {
            return Err(not_signed_in("Your sign-in expired."));
        };
        let mut user = Principal::new(session.sub);
        user.issuer = session.iss;
        Ok(Some(user))
    }

    /// `GET /login` says who is signed in and hands out a sign-in form; `POST /login` signs in.
    pub(crate) async fn login(&self, req: Request<Bytes>) -> Response<Bytes> {
        let Some(sign_in) = &self.sign_in else {
            return refusal(
                StatusCode::NOT_FOUND,
                "No sign-in",
                "This server takes no tokens, so it has no sign-in: its pages are open to whoever holds the link.",
            );
        };
        // Nothing is taken from the URL, a token least of all: URLs stay in history, proxy and
        // server logs, and anyone can make a victim's browser follow a link (the old
        // `/login?token=…` let any page sign a victim in as its author).
        if req.uri().query().is_some_and(|q| !q.is_empty()) {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Sign-in refused",
                "A token never goes in a link: nobody was signed in. If someone sent you this link, \
                 do not use it. Open /login and paste your own token into the form.",
            );
        }
        let done = match *req.method() {
            Method::GET => self.sign_in_form(sign_in, &req).await,
            Method::POST => self.sign_in(sign_in, req).await,
            _ => return method_not_allowed("GET, POST"),
        };
        done.unwrap_or_else(|refused| refused)
    }

    /// The sign-in form, with a fresh CSRF token kept on the server under a fresh pre-sign-in
    /// id that only this browser gets (its cookie). A sign-in is taken only with both, and a page
    /// elsewhere can know neither, so it cannot post a sign-in of its own choosing.
    async fn sign_in_form(&self, sign_in: &SignIn, req: &Request<Bytes>) -> Result<Response<Bytes>, Response<Bytes>> {
        let status = match self.viewer(req).await {
            Ok(Some(user)) => format!(
                "<p>Signed in as <b class=\"user\">{}</b>. Open the link the assistant gave you.</p>",
                escape(&user.subject)
            ),
            Ok(None) | Err(_) => "<p class=\"user\">Not signed in.</p>".to_owned(),
        };
        let (form, csrf) = (random_id().ok_or_else(try_again)?, random_id().ok_or_else(try_again)?);
        let kept = sign_in
            .store
            .insert_new(&format!("{SIGN_IN_KEY}{form}"), csrf.as_bytes(), SIGN_IN_TTL)
            .await
            .map_err(|e| store_failed(&e))?;
        if !kept {
            // 32 random bytes made twice: the random source is broken.
            return Err(try_again());
        }
        let body = format!(
            "{status}\n<form method=\"post\" action=\"/login\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <p><label for=\"token\">Your token</label> \
             <input type=\"password\" name=\"token\" id=\"token\" autocomplete=\"off\" required></p>\
             <button type=\"submit\" id=\"sign-in\">Sign in</button></form>"
        );
        let mut resp = page(StatusCode::OK, "Sign in", &body);
        // SameSite=Strict: only this site's own requests carry it, and the form's post is one.
        let cookie = set_cookie(SIGN_IN_COOKIE, &form, SIGN_IN_TTL, "Strict").ok_or_else(try_again)?;
        resp.headers_mut().append(header::SET_COOKIE, cookie);
        Ok(resp)
    }

    /// Signs the browser in, if the post came from this server's own sign-in form in this very
    /// browser, with a token the MCP endpoint would take.
    async fn sign_in(&self, sign_in: &SignIn, req: Request<Bytes>) -> Result<Response<Bytes>, Response<Bytes>> {
        // 1. Posted from this server's own page (a forged post names its own origin, or none).
        if !from_our_pages(&req, &self.base) {
            tracing::debug!(origin = ?req.headers().get(header::ORIGIN), "a sign-in posted from elsewhere was refused");
            return Err(forged());
        }
        if !is_form(&req) {
            return Err(refusal(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Bad form",
                "Sign in with the form at /login.",
            ));
        }
        let pairs = std::str::from_utf8(req.body())
            .ok()
            .and_then(form_pairs)
            .ok_or_else(|| refusal(StatusCode::BAD_REQUEST, "Bad form", "The form does not decode."))?;
        // 2. The form's CSRF token is the one kept for this browser's pre-sign-in cookie, and is
        //    used up: a form signs in once.
        let not_our_form = || {
            refusal(
                StatusCode::FORBIDDEN,
                "Sign-in refused",
                "This sign-in did not come from the form this browser was given, or the form expired or \
                 was used already. Nobody was signed in. Open /login and sign in again.",
            )
        };
        let form = cookie(&req, SIGN_IN_COOKIE)
            .filter(|id| well_formed_id(id))
            .ok_or_else(not_our_form)?;
        let csrf = field(&pairs, "csrf")
            .filter(|c| well_formed_id(c))
            .ok_or_else(not_our_form)?;
        let key = format!("{SIGN_IN_KEY}{form}");
        let kept = sign_in
            .store
            .get(&key)
            .await
            .map_err(|e| store_failed(&e))?
            .ok_or_else(not_our_form)?;
        if !same_secret(&kept, csrf.as_bytes()) {
            return Err(not_our_form());
        }
        let used_up = sign_in
            .store
            .replace(&key, &kept, b"used", SIGN_IN_TTL)
            .await
            .map_err(|e| store_failed(&e))?;
        if !used_up {
            return Err(not_our_form());
        }
        // 3. The token, checked as the MCP endpoint checks it: the browser's user is then the
        //    same principal as the MCP caller holding that token.
        let token = field(&pairs, "token").unwrap_or_default().trim();
        let user = sign_in.verifier.verify(token).await.map_err(|e| {
            tracing::debug!(reason = %e, "a sign-in token was refused");
            refusal(
                StatusCode::UNAUTHORIZED,
                "Sign-in refused",
                "That token is not valid for this server. Open /login and try again.",
            )
        })?;
        // 4. A new session id, never one the browser brought (no session fixation), standing for
        //    the user on the server.
        let session = random_id().ok_or_else(try_again)?;
        let record = serde_json::to_vec(&Session {
            sub: user.subject.clone(),
            iss: user.issuer.clone(),
        })
        .map_err(|_| try_again())?;
        let kept = sign_in
            .store
            .insert_new(&format!("{SESSION_KEY}{session}"), &record, SESSION_TTL)
            .await
            .map_err(|e| store_failed(&e))?;
        if !kept {
            return Err(try_again());
        }
        tracing::info!(user = %user.subject, "a browser signed in");
        let mut resp = page(
            StatusCode::SEE_OTHER,
            "Signed in",
            "<p><a href=\"/login\">Continue</a></p>",
        );
        // SameSite=Lax: the session goes with a link followed from another site (a web-based
        // assistant's), which only shows a page; a post from another site never carries it, and
        // every post is checked for its origin anyway.
        let session_cookie = set_cookie(SESSION_COOKIE, &session, SESSION_TTL, "Lax").ok_or_else(try_again)?;
        let form_gone = set_cookie(SIGN_IN_COOKIE, "", Duration::ZERO, "Strict").ok_or_else(try_again)?;
        let headers = resp.headers_mut();
        headers.append(header::SET_COOKIE, session_cookie);
        headers.append(header::SET_COOKIE, form_gone);
        headers.insert(header::LOCATION, HeaderValue::from_static("/login"));
        Ok(resp)
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
        // A post of this form is taken only from this origin, and only for the flow's own user
        // (`UrlFlows` checks the viewer again): knowing the flow id is never enough.
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

    /// What an approval does before it completes the flow: checks the flow is this viewer's and
    /// still waiting (nothing is minted for a flow that cannot complete), then keeps a fresh access
    /// token for the viewer and `service` in the vault. A real provider's callback does the same
    /// with the tokens it got for the authorization code (docs/url-mode.md, "Keeping the
    /// third-party token"). Only then does the call learn that the step is done, so a tool the
    /// model calls next finds the token.
    async fn keep_new_token(
        &self,
        flow: &str,
        viewer: Option<&Principal>,
        service: &str,
        account: &str,
    ) -> Result<(), Response<Bytes>> {
        self.flows
            .open(flow, viewer)
            .await
            .map_err(|e| flow_refused(&e, viewer))?;
        let connection = Connection::mint(account).ok_or_else(try_again)?;
        self.vault
            .keep(viewer, service, &connection)
            .await
            .map_err(|e| store_failed(&e))?;
        tracing::info!(%service, user = %account, "a token was kept for this user (its value is never logged)");
        Ok(())
    }

    async fn decide(&self, req: Request<Bytes>) -> Response<Bytes> {
        // Posted from this server's own page; the viewer is checked again below, by `UrlFlows`.
        if !from_our_pages(&req, &self.base) {
            tracing::debug!(origin = ?req.headers().get(header::ORIGIN), "a decision posted from elsewhere was refused");
            return forged();
        }
        if !is_form(&req) {
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
            "approve" => {
                if let Err(refused) = self.keep_new_token(flow, viewer.as_ref(), service, account).await {
                    return refused;
                }
                (
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
                    format!(
                        "Your {service} account is connected. You can close this page and return to the assistant."
                    ),
                )
            }
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

fn usage(message: &str) -> ! {
    eprintln!("{message}\nusage: connect --http HOST:PORT | connect --pages HOST:PORT (MCP on stdio)");
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
    // `--http`: MCP and the pages on one listener; `--pages`: MCP on stdio, the pages on HTTP.
    let (addr, stdio) = match args.as_slice() {
        [flag, addr] if flag == "--http" || flag == "--pages" => (
            addr.parse::<std::net::SocketAddr>()
                .unwrap_or_else(|e| usage(&format!("{flag} {addr}: {e}"))),
            flag == "--pages",
        ),
        _ => usage("connect needs an HTTP address: its consent page needs a browser"),
    };
    let url_wait = match std::env::var("CONNECT_URL_WAIT_SECS") {
        Err(_) => None,
        Ok(v) => match v.parse::<u64>() {
            Ok(secs) => Some(Duration::from_secs(secs)),
            Err(_) => usage(&format!("CONNECT_URL_WAIT_SECS={v}: give a whole number of seconds")),
        },
    };
    // The third-party tokens: the consent page puts them in, `list_repos` reads the caller's.
    let vault = TokenVault::default();
    let mut server = Server::new("connect")
        .version(env!("CARGO_PKG_VERSION"))
        .state(vault.clone())
        .tool(connect_account)
        .tool(list_repos);
    if let Some(wait) = url_wait {
        server = server.url_wait(wait);
    }
    // Plain http is accepted for a loopback address only; see the header for a deployment.
    let base = match addr {
        std::net::SocketAddr::V4(a) => format!("http://{a}"),
        std::net::SocketAddr::V6(a) => format!("http://[{}]:{}", a.ip(), a.port()),
    };
    server = server.state(PageBase(base.clone()));
    // A mistake in the token variables stops the server here, with a message naming the variable.
    // (On stdio no token travels: the pages have no sign-in then.)
    let options = if stdio {
        mcp_resolve::HttpOptions::default()
    } else {
        mcp_resolve::HttpOptions::default()
            .bearer_from_env()
            .unwrap_or_else(|e| usage(&e.to_string()))
    };
    // The page signs browsers in with the very verifier the endpoint checks tokens with.
    let verifier = options.token_verifier();
    if verifier.is_some() {
        tracing::info!("bearer tokens required; browsers sign in at /login");
    } else {
        // Without tokens nobody can be told apart: URL-mode questions are refused unless the
        // server says otherwise, as here, for trying the example on one's own machine.
        tracing::warn!("no tokens: the consent page is open to whoever holds its link (anonymous_url_flows)");
        server = server.anonymous_url_flows();
    }
    let pages = Pages::new(server.url_flows(), verifier, PageBase(base.clone()), vault);
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
    if stdio {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        return server.serve_stdio_with_pages(listener, options).await;
    }
    server.serve_http(addr, options).await
}
