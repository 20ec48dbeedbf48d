//! The `payment` example over real HTTP (`payment --http 127.0.0.1:PORT`, HS256 bearer tokens
//! from its environment): the official MCP Python SDK client (`tests/interop/py_client.py --url
//! URL --bearer TOKEN`) calls `pay` on both eras, URL mode being in both (2025-11-25 and
//! 2026-07-28), while the test plays the user's browser with plain HTTP requests: it signs in at
//! `/login` with the sign-in form (its CSRF token and pre-sign-in cookie), opens the URL the
//! client was given, and pays.
//!
//! What it proves: the page shows the call's amount, read from the server's flow (a link edited
//! to another amount still shows, and charges, the call's); paying gives the call its result
//! with the page's reference; the completion is single-use (paying, cancelling or opening again
//! is refused with 409), and on 2026-07-28 a replayed retry (its `requestState` and answer sent
//! again) is refused with -32602; only the caller's own browser may pay (no sign-in 401, another
//! user 403, a post from another origin 403); cancelling on the page declines the call; the
//! client's own decline and cancel give their own results; a wrong amount is an error for the
//! model, asking nothing. And as `cargo run --example payment` starts it, MCP on its real stdio
//! with the page on a free loopback port and no tokens: the link alone opens the page, and paying
//! completes the call on both eras.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::time::Duration;
use support::{Era, HttpChild, PyCall, payment_bin};

/// The secret the server checks tokens with (HS256) and the test signs them with: 32 random bytes
/// in base64, as `openssl rand -base64 32` makes them (fixed, so that a failure reproduces).
const SECRET: &str = "o8YqkUv0l1cW4xq3B9b0bJ7mKXbq0cVfQw5rK0kYy7Q=";
/// How long any one wait (a question, a result) may take.
const WAIT: Duration = Duration::from_secs(60);
/// What the call asks, and what the client is told.
const MESSAGE: &str = "Pay 125.00 EUR to Acme Hosting for invoice INV-1042: open the payment page";
const SESSION_COOKIE: &str = "__Host-connect_session";
const SIGN_IN_COOKIE: &str = "__Host-connect_sign_in";

fn audience(addr: SocketAddr) -> String {
    format!("http://{addr}/mcp")
}

/// An HS256 token for `sub`, issued for the server at `addr`.
fn token(sub: &str, addr: SocketAddr) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"sub": sub, "aud": audience(addr), "iat": now, "exp": now + 600});
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_base64_secret(SECRET).unwrap(),
    )
    .unwrap()
}

/// A fresh `payment --http` server taking HS256 tokens issued for its own URL.
fn start_server(label: &str) -> HttpChild {
    HttpChild::start(payment_bin(), label, &|addr| {
        vec![
            ("MCP_RESOLVE_JWT_SECRET".into(), SECRET.into()),
            ("MCP_RESOLVE_JWT_AUDIENCE".into(), audience(addr)),
            ("MCP_RESOLVE_AUTH_SERVER".into(), "https://auth.test".into()),
        ]
    })
}

/// One HTTP/1.1 exchange with the server (`Connection: close`): status, headers (lowercase
/// names), body.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    /// The value of the cookie `name` this response sets.
    fn cookie(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .filter(|(k, _)| k == "set-cookie")
            .find_map(|(_, v)| {
                v.strip_prefix(name)?
                    .strip_prefix('=')?
                    .split(';')
                    .next()
                    .map(str::to_owned)
            })
    }

    /// The JSON-RPC message of an MCP response: a JSON body, or the last `data:` of an SSE one.
    fn json(&self) -> Value {
        let text = if self.body.trim_start().starts_with('{') {
            self.body.as_str()
        } else {
            self.body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|d| !d.is_empty())
                .unwrap_or_else(|| panic!("no JSON in {}", self.body))
        };
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }
}

fn http(addr: SocketAddr, method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    try_http(addr, method, target, headers, body).unwrap_or_else(|e| panic!("{method} {target} on {addr}: {e}"))
}

fn try_http(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<Reply> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(40)))?;
    let mut req = format!(
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw.as_str(), ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Ok(Reply { status, headers, body })
}

/// The body of a chunked response.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].strip_prefix("\r\n").unwrap_or(&rest[size..]);
    }
    out
}

/// The text between `before` and the next `after` in `page`.
fn between<'a>(page: &'a str, before: &str, after: &str) -> Option<&'a str> {
    let start = page.find(before)? + before.len();
    let len = page[start..].find(after)?;
    Some(&page[start..start + len])
}

/// The user's browser, signed in as one user: its session cookie.
struct Browser {
    addr: SocketAddr,
    cookie: String,
}

impl Browser {
    /// Signs in as `user` with the sign-in form, as a browser does: `GET /login` hands out a
    /// form (a CSRF token) and a pre-sign-in cookie, `POST /login` from this origin with both and
    /// the user's token answers with a session cookie.
    fn sign_in(server: &HttpChild, user: &str) -> Browser {
        let addr = server.addr;
        let form = http(addr, "GET", "/login", &[], "");
        assert_eq!(form.status, 200, "{}", form.body);
        let pre = form.cookie(SIGN_IN_COOKIE).expect("a pre-sign-in cookie");
        let csrf = between(&form.body, "name=\"csrf\" value=\"", "\"").expect("a CSRF token");
        let origin = format!("http://{addr}");
        let cookie = format!("{SIGN_IN_COOKIE}={pre}");
        let body = format!("csrf={csrf}&token={}", token(user, addr));
        let signed_in = http(
            addr,
            "POST",
            "/login",
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Origin", &origin),
                ("Cookie", &cookie),
            ],
            &body,
        );
        assert_eq!(signed_in.status, 303, "{}", signed_in.body);
        let session = signed_in.cookie(SESSION_COOKIE).expect("a session cookie");
        Browser {
            addr,
            cookie: format!("{SESSION_COOKIE}={session}"),
        }
    }

    fn open(&self, target: &str) -> Reply {
        http(self.addr, "GET", target, &[("Cookie", &self.cookie)], "")
    }

    /// Posts the page's form (`decision`: pay or cancel) from `origin`.
    fn post_from(&self, origin: &str, flow: &str, decision: &str) -> Reply {
        http(
            self.addr,
            "POST",
            "/pay",
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Origin", origin),
                ("Cookie", &self.cookie),
            ],
            &format!("flow={flow}&decision={decision}"),
        )
    }

    /// Posts the page's form from the page itself.
    fn post(&self, flow: &str, decision: &str) -> Reply {
        self.post_from(&format!("http://{}", self.addr), flow, decision)
    }
}

fn pay_args() -> Value {
    json!({"invoice": "INV-1042", "payee": "Acme Hosting", "amount_cents": 12500})
}

/// `py_client.py` calling `pay` as `user`, answering every question with `answer` (`{}` accepts:
/// a URL-mode accept is consent only).
fn call(server: &HttpChild, era: Era, user: &str, answer: &str, args: &Value) -> PyCall {
    let steps = json!([{"op": "call", "tool": "pay", "args": args}]);
    let url = server.url();
    let bearer = token(user, server.addr);
    PyCall::spawn(
        &[
            "--url",
            &url,
            "--bearer",
            &bearer,
            "--mode",
            era.mode(),
            "--answer",
            answer,
            "--timeout",
            "50",
            "--steps",
            &steps.to_string(),
        ],
        WAIT,
    )
}

#[track_caller]
fn check(run: &PyCall, server: &mut HttpChild, ok: bool, what: impl std::fmt::Display) {
    if !ok {
        panic!("{what}\n{}\n--- server stderr ---\n{}", run.transcript(), server.stop());
    }
}

/// The URL-mode question the client got: its message checked, the page's target and flow.
fn question(run: &mut PyCall, server: &mut HttpChild, era: Era) -> (String, String) {
    let connected = run
        .wait_for("connected", WAIT)
        .unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    check(run, server, connected["protocol_version"] == era.version(), "the era");
    let asked = run
        .wait_for("elicitation", WAIT)
        .unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    check(run, server, asked["mode"] == "url", format_args!("URL mode: {asked}"));
    check(
        run,
        server,
        asked["message"] == MESSAGE,
        format_args!("the message: {asked}"),
    );
    let url = asked["url"].as_str().unwrap_or_default();
    let base = format!("http://{}", server.addr);
    let target = url.strip_prefix(&base).unwrap_or_default().to_owned();
    check(
        run,
        server,
        target.starts_with("/pay?invoice=INV-1042&payee=Acme+Hosting&amount_cents=12500&flow="),
        format_args!("the page's URL: {url}"),
    );
    let flow = target.rsplit("flow=").next().unwrap_or_default().to_owned();
    (target, flow)
}

/// The text of the call's result.
fn result_text(run: &mut PyCall, server: &mut HttpChild) -> String {
    let result = run
        .wait_for("result", WAIT)
        .unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    check(
        run,
        server,
        result["result"]["isError"] != true,
        format_args!("not an error: {result}"),
    );
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Paying on the page: the amount shown is the call's (an edited link changes nothing), only the
/// caller's browser may pay, the call's result carries the page's reference, and the completed
/// payment cannot be completed (or cancelled, or opened) again.
fn pay_on_the_page(era: Era) {
    let mut server = start_server(&format!("pay {era:?}"));
    let mut run = call(&server, era, "alice", "{}", &pay_args());
    let (target, flow) = question(&mut run, &mut server, era);

    // Not signed in: 401, nothing shown.
    let anonymous = http(server.addr, "GET", &target, &[], "");
    check(
        &run,
        &mut server,
        anonymous.status == 401,
        format_args!("no sign-in: {}", anonymous.body),
    );

    let alice = Browser::sign_in(&server, "alice");
    let shown = alice.open(&target);
    check(
        &run,
        &mut server,
        shown.status == 200,
        format_args!("the page: {}", shown.body),
    );
    let amount = |page: &str| between(page, "<b class=\"amount\">", "</b>").map(str::to_owned);
    check(
        &run,
        &mut server,
        amount(&shown.body).as_deref() == Some("125.00 EUR") && shown.body.contains("Acme Hosting"),
        format_args!("the page shows the call's amount: {}", shown.body),
    );
    // The client could edit the link: the page reads the amount from the flow, not the link.
    let edited = target.replace("amount_cents=12500", "amount_cents=1");
    check(&run, &mut server, edited != target, "the link was edited");
    let shown_edited = alice.open(&edited);
    check(
        &run,
        &mut server,
        shown_edited.status == 200 && amount(&shown_edited.body).as_deref() == Some("125.00 EUR"),
        format_args!("an edited link still shows the call's amount: {}", shown_edited.body),
    );

    // Another user's browser can neither see nor pay alice's payment.
    let bob = Browser::sign_in(&server, "bob");
    let bobs_view = bob.open(&target);
    check(
        &run,
        &mut server,
        bobs_view.status == 403,
        format_args!("bob sees: {}", bobs_view.body),
    );
    let bobs_post = bob.post(&flow, "pay");
    check(
        &run,
        &mut server,
        bobs_post.status == 403,
        format_args!("bob pays: {}", bobs_post.body),
    );
    // A form posted from another origin pays nothing, even with alice's cookie.
    let forged = alice.post_from("http://127.0.0.1:1", &flow, "pay");
    check(
        &run,
        &mut server,
        forged.status == 403,
        format_args!("a forged post: {}", forged.body),
    );

    let paid = alice.post(&flow, "pay");
    check(
        &run,
        &mut server,
        paid.status == 200,
        format_args!("paying: {}", paid.body),
    );
    check(
        &run,
        &mut server,
        amount(&paid.body).as_deref() == Some("125.00 EUR"),
        format_args!("the completion confirms the call's amount: {}", paid.body),
    );
    let reference = between(&paid.body, "<b class=\"reference\">", "</b>")
        .unwrap_or_default()
        .to_owned();
    check(
        &run,
        &mut server,
        reference.len() == 20 && reference.starts_with("PAY-"),
        format_args!("a reference: {}", paid.body),
    );

    let text = result_text(&mut run, &mut server);
    check(
        &run,
        &mut server,
        text == format!("Paid 125.00 EUR to Acme Hosting for invoice INV-1042. Payment reference: {reference}"),
        format_args!("the call's result: {text}"),
    );

    // Single-use: the completed payment cannot be paid, cancelled or opened again.
    for (what, again) in [
        ("paying again", alice.post(&flow, "pay")),
        ("cancelling afterwards", alice.post(&flow, "cancel")),
        ("opening again", alice.open(&target)),
    ] {
        check(
            &run,
            &mut server,
            again.status == 409,
            format_args!("{what}: {} {}", again.status, again.body),
        );
    }
    let status = run.finish().unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    check(
        &run,
        &mut server,
        status.success() && !run.named("done").is_empty(),
        "the driver ends cleanly",
    );
    if let Era::Old = era {
        // 2025-11-25: the question names its flow, and its completion is announced.
        let asked = run.named("elicitation");
        check(
            &run,
            &mut server,
            asked[0]["elicitationId"] == flow.as_str(),
            "the elicitationId is the flow",
        );
        let completed = run.named("notification").iter().any(|n| {
            n["method"] == "notifications/elicitation/complete" && n["params"]["elicitationId"] == flow.as_str()
        });
        check(
            &run,
            &mut server,
            completed,
            "notifications/elicitation/complete names the flow",
        );
    }
}

/// Cancelling on the page declines the call.
fn cancel_on_the_page(era: Era) {
    let mut server = start_server(&format!("cancel {era:?}"));
    let mut run = call(&server, era, "alice", "{}", &pay_args());
    let (_, flow) = question(&mut run, &mut server, era);
    let alice = Browser::sign_in(&server, "alice");
    let cancelled = alice.post(&flow, "cancel");
    check(
        &run,
        &mut server,
        cancelled.status == 200,
        format_args!("cancelling: {}", cancelled.body),
    );
    let text = result_text(&mut run, &mut server);
    check(
        &run,
        &mut server,
        text == "Not paid: you declined the payment of 125.00 EUR to Acme Hosting for invoice INV-1042.",
        format_args!("the call's result: {text}"),
    );
    let again = alice.post(&flow, "pay");
    check(
        &run,
        &mut server,
        again.status == 409,
        format_args!("paying a cancelled payment: {}", again.body),
    );
}

/// The client's own decline and cancel, without the page; a wrong amount asks nothing.
fn without_the_page(era: Era) {
    let mut server = start_server(&format!("client {era:?}"));
    for (answer, expected) in [
        (
            "decline",
            "Not paid: you declined the payment of 125.00 EUR to Acme Hosting for invoice INV-1042.",
        ),
        (
            "cancel",
            "Not paid: the payment was dismissed. Nothing was charged for invoice INV-1042; ask again when you are ready.",
        ),
    ] {
        let mut run = call(&server, era, "alice", answer, &pay_args());
        question(&mut run, &mut server, era);
        let text = result_text(&mut run, &mut server);
        check(&run, &mut server, text == expected, format_args!("{answer}: {text}"));
        check(&run, &mut server, run.named("elicitation").len() == 1, "asked once");
    }
    let mut run = call(
        &server,
        era,
        "alice",
        "{}",
        &json!({"invoice": "INV-1042", "payee": "Acme Hosting", "amount_cents": 0}),
    );
    let result = run
        .wait_for("result", WAIT)
        .unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
    check(
        &run,
        &mut server,
        result["result"]["isError"] == true
            && result["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("`amount_cents` must be from 1 to 1000000")),
        format_args!("a wrong amount is the model's to fix: {result}"),
    );
    check(&run, &mut server, run.named("elicitation").is_empty(), "nothing asked");
}

#[test]
fn paying_on_the_page_completes_the_call_once_on_2026_07_28() {
    pay_on_the_page(Era::New);
}

#[test]
fn paying_on_the_page_completes_the_call_once_on_2025_11_25() {
    pay_on_the_page(Era::Old);
}

#[test]
fn cancelling_on_the_page_declines_the_call_on_both_eras() {
    cancel_on_the_page(Era::New);
    cancel_on_the_page(Era::Old);
}

#[test]
fn the_client_declines_or_cancels_without_the_page_on_both_eras() {
    without_the_page(Era::New);
    without_the_page(Era::Old);
}

/// One 2026-07-28 `tools/call` of `pay` as alice, over plain HTTP.
fn modern_call(server: &HttpChild, id: u64, mut params: Value) -> Reply {
    params["name"] = json!("pay");
    params["arguments"] = pay_args();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "payment-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string();
    let bearer = format!("Bearer {}", token("alice", server.addr));
    http(
        server.addr,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "pay"),
            ("Authorization", &bearer),
        ],
        &body,
    )
}

/// 2026-07-28, by hand: the retry that carries the page's outcome completes the call; sending
/// that retry again (its state and answer, captured) is refused, and pays nothing.
#[test]
fn a_replayed_retry_is_refused_on_2026_07_28() {
    let mut server = start_server("replay");
    let first = modern_call(&server, 1, json!({}));
    let first = first.json();
    let asked = &first["result"]["inputRequests"]["payment"]["params"];
    assert_eq!(asked["mode"], "url", "{first}");
    assert_eq!(asked["message"], MESSAGE, "{first}");
    let url = asked["url"].as_str().unwrap();
    let flow = url.rsplit("flow=").next().unwrap();
    let alice = Browser::sign_in(&server, "alice");
    let paid = alice.post(flow, "pay");
    assert_eq!(paid.status, 200, "{}", paid.body);
    let reference = between(&paid.body, "<b class=\"reference\">", "</b>")
        .unwrap()
        .to_owned();

    let retry = json!({
        "inputResponses": {"payment": {"action": "accept"}},
        "requestState": first["result"]["requestState"],
    });
    let done = modern_call(&server, 2, retry.clone()).json();
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("Paid 125.00 EUR to Acme Hosting for invoice INV-1042. Payment reference: {reference}"),
        "{done}"
    );
    let replayed = modern_call(&server, 3, retry);
    assert_eq!(replayed.status, 400, "{}", replayed.body);
    assert_eq!(replayed.json()["error"]["code"], -32602, "{}", replayed.body);
    assert!(
        server.exit_status().is_none(),
        "the server still runs:\n{}",
        server.stop()
    );
}

/// As `cargo run --example payment` runs it: MCP on stdio, the page on a free loopback port, no
/// tokens (the flows bound to no one: the link is the proof). The page shows the call's amount
/// and paying completes the call, once, on both eras.
#[test]
fn over_stdio_the_link_alone_opens_the_page_on_both_eras() {
    for era in [Era::New, Era::Old] {
        // The client stays a moment after the call: a stdio server ends with its client, and the
        // page's answer to the payment must not race that.
        let steps =
            json!([{"op": "call", "tool": "pay", "args": pay_args()}, {"op": "sleep", "seconds": 3}]).to_string();
        let bin = payment_bin().to_string_lossy().into_owned();
        let mut run = PyCall::spawn(
            &[
                "--mode",
                era.mode(),
                "--answer",
                "{}",
                "--timeout",
                "50",
                "--steps",
                &steps,
                "--",
                &bin,
            ],
            WAIT,
        );
        let asked = run
            .wait_for("elicitation", WAIT)
            .unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
        assert_eq!(asked["message"], MESSAGE, "{}", run.transcript());
        let url = asked["url"].as_str().unwrap();
        let rest = url.strip_prefix("http://").unwrap_or_else(|| panic!("not http: {url}"));
        let (host, target) = rest.split_at(rest.find('/').unwrap());
        let addr = host.to_socket_addrs().unwrap().next().unwrap();
        assert!(addr.ip().is_loopback(), "{url}");
        let flow = target.rsplit("flow=").next().unwrap();

        let shown = http(addr, "GET", target, &[], "");
        assert_eq!(shown.status, 200, "{}", shown.body);
        assert!(
            shown.body.contains("<b class=\"amount\">125.00 EUR</b>"),
            "{}",
            shown.body
        );
        let origin = format!("http://{addr}");
        let form = [
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Origin", origin.as_str()),
        ];
        let body = format!("flow={flow}&decision=pay");
        let paid = http(addr, "POST", "/pay", &form, &body);
        assert_eq!(paid.status, 200, "{}", paid.body);
        let reference = between(&paid.body, "<b class=\"reference\">", "</b>")
            .unwrap()
            .to_owned();
        assert_eq!(http(addr, "POST", "/pay", &form, &body).status, 409, "paid once");
        let result = run
            .wait_for("result", WAIT)
            .unwrap_or_else(|e| panic!("{e}\n{}", run.transcript()));
        assert_eq!(
            result["result"]["content"][0]["text"],
            format!("Paid 125.00 EUR to Acme Hosting for invoice INV-1042. Payment reference: {reference}"),
            "{}",
            run.transcript()
        );
        assert!(run.finish().is_ok_and(|s| s.success()), "{}", run.transcript());
    }
}
