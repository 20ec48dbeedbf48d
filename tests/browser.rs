//! URL mode end to end with real components: the release-built `connect` example
//! (`connect --http 127.0.0.1:PORT`, HS256 bearer tokens from its environment), the official
//! Python SDK client (`tests/interop/py_client.py --url URL --bearer TOKEN`) calling
//! `connect_account` on both eras, and Debian's headless Chromium driven through chromedriver's
//! W3C WebDriver HTTP API, which signs in with the form at `/login` (typing the token), opens the
//! URL the client was given and clicks Approve or Deny.
//!
//! What it proves: the URL the client receives opens the consent page for the user who asked
//! (and only for them: no sign-in is a 401, another user's browser a 403 that offers no buttons,
//! and that user's forged post is refused too), the page's decision finishes the call that is
//! still waiting ("connected github as alice" / "declined: github not connected"), each flow
//! completes once (409 on a second visit), on 2026-07-28 every re-ask carries the same URL, and
//! on 2025-11-25 the question names the flow (`elicitationId`) and is followed by
//! `notifications/elicitation/complete` before the result. The third-party token an approval
//! mints stays on the server: the same client's next call, `list_repos`, uses it there for alice
//! ("github repositories of alice: …"), bob's client (his own token) and alice's after a denial
//! get the tool error telling the model to call `connect_account` first, and no HTTP response
//! either client received (the driver's `--wire-log`) holds the token's `tpat_` prefix. And
//! login CSRF fails: an attacker's
//! page on another origin (another port of this host, served by the test) can neither send the
//! browser to a sign-in link nor post a sign-in for the attacker, so the victim's browser never
//! approves the attacker's flow.
//!
//! It installs what it needs once per test binary: `cargo build --release --example connect
//! --all-features` (or `MCP_RESOLVE_CONNECT_BIN`), `scripts/setup-python.sh` and
//! `scripts/setup-chromium.sh` (Debian's `chromium` and `chromium-driver` through apt-get when
//! /usr/bin/chromium is missing). The tests take turns: one server, one Python client and one
//! browser (its own chromedriver, a fresh profile) at a time, each killed when its test ends. On
//! failure the message carries the client's events and stderr, the server's log, the
//! chromedriver log and what the browser showed.
//!
//! Why WebDriver rather than Playwright: chromedriver comes from the same Debian source package
//! as chromium, so the two always match without pinning anything, and the W3C protocol is a
//! handful of JSON requests over loopback HTTP (a small client below, no dependency, no npm
//! packages or Node runtime involved).

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Era, HttpChild, PyCall, chromedriver, connect_bin, drain, target_dir, text_of};

/// The secret the server checks tokens with (HS256) and the tests sign them with: 32 random bytes
/// in base64, as `openssl rand -base64 32` makes them (fixed here so a failure reproduces).
const SECRET: &str = "Sue4F7Q+2jR4k9BLWAi1rqj0Lwgm1sldzPntctzsHb4=";
/// The server's pre-sign-in cookie (the one its sign-in form is bound to).
const SIGN_IN_COOKIE: &str = "__Host-connect_sign_in";
/// What the resolver asks.
const MESSAGE: &str = "Connect your github account: open the page and approve";
/// How long any one wait (a question, a result, a page) may take.
const WAIT: Duration = Duration::from_secs(30);
/// The Python driver's own deadline, below the tests' waits added up.
const DRIVER_TIMEOUT_SECS: &str = "90";

/// One protocol era as the Python client reaches it.
/// The tests take turns: a browser, a server and a client each, on a machine with few cores.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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

fn audience(addr: SocketAddr) -> String {
    format!("http://{addr}/mcp")
}

/// A fresh `connect --http` server taking HS256 tokens issued for its own URL.
fn start_server(label: &str) -> HttpChild {
    HttpChild::start(connect_bin(), label, &|addr| {
        vec![
            ("MCP_RESOLVE_JWT_SECRET".into(), SECRET.into()),
            ("MCP_RESOLVE_JWT_AUDIENCE".into(), audience(addr)),
            ("MCP_RESOLVE_AUTH_SERVER".into(), "https://auth.test".into()),
        ]
    })
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// The browser: chromedriver (one per test, its own port) and one Chromium session.
// ---------------------------------------------------------------------------------------------

/// The W3C key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

struct Browser {
    driver: Child,
    port: u16,
    session: String,
    profile: PathBuf,
    log: Arc<Mutex<Vec<u8>>>,
}

/// One HTTP/1.1 exchange with chromedriver: the status and the JSON body.
fn webdriver_http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<(u16, Value), String> {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("{method} {path}: connect: {e}"))?;
    tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes())
        .map_err(|e| format!("{method} {path}: write: {e}"))?;
    // Read by Content-Length (or chunks): chromedriver says `Connection: close` but may keep
    // the connection open.
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let io = |e: std::io::Error| format!("{method} {path}: read: {e}");
    let split = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = tcp.read(&mut chunk).map_err(io)?;
        if n == 0 {
            return Err(format!(
                "{method} {path}: no header end in {:?}",
                String::from_utf8_lossy(&raw)
            ));
        }
        raw.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{method} {path}: no status in {head:?}"))?;
    let header = |name: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':').map(|v| v.trim().to_owned()))
    };
    let mut payload = raw[split + 4..].to_vec();
    if let Some(length) = header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| format!("{method} {path}: Content-Length {length:?}"))?;
        while payload.len() < length {
            let n = tcp.read(&mut chunk).map_err(io)?;
            if n == 0 {
                return Err(format!("{method} {path}: the body ended early"));
            }
            payload.extend_from_slice(&chunk[..n]);
        }
        payload.truncate(length);
    } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            if let Some(body) = dechunk(&payload) {
                payload = body;
                break;
            }
            let n = tcp.read(&mut chunk).map_err(io)?;
            if n == 0 {
                return Err(format!("{method} {path}: a broken chunked body"));
            }
            payload.extend_from_slice(&chunk[..n]);
        }
    } else {
        tcp.read_to_end(&mut payload).map_err(io)?;
    }
    let value = serde_json::from_slice(&payload).map_err(|e| {
        format!(
            "{method} {path}: {status} with a body that is not JSON ({e}): {:?}",
            String::from_utf8_lossy(&payload)
        )
    })?;
    Ok((status, value))
}

fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&body[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(body.get(..size)?);
        body = body.get(size + 2..)?;
    }
}

impl Browser {
    /// chromedriver on a free port, and a headless Chromium session with a fresh profile.
    fn start(label: &str) -> Browser {
        let driver_bin = chromedriver();
        let port = free_port();
        let mut driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("[{label}] cannot spawn {}: {e}", driver_bin.display()));
        let (log, _) = drain(driver.stdout.take().unwrap());
        let (errors, _) = drain(driver.stderr.take().unwrap());
        let started = Instant::now();
        while webdriver_http(port, "GET", "/status", None).is_err() {
            if let Ok(Some(status)) = driver.try_wait() {
                panic!(
                    "[{label}] chromedriver exited with {status}:\n{}{}",
                    text_of(&log),
                    text_of(&errors)
                );
            }
            if started.elapsed() > WAIT {
                let _ = driver.kill();
                panic!(
                    "[{label}] chromedriver did not answer on port {port}:\n{}",
                    text_of(&log)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let dir = target_dir().join("browser");
        std::fs::create_dir_all(&dir).unwrap();
        let profile = dir.join(format!("profile-{label}-{port}"));
        let _ = std::fs::remove_dir_all(&profile);
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    format!("--user-data-dir={}", profile.display()),
                ],
            },
        }}});
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
            profile,
            log,
        };
        match webdriver_http(port, "POST", "/session", Some(&capabilities)) {
            Ok((200, v)) if v["value"]["sessionId"].is_string() => {
                browser.session = v["value"]["sessionId"].as_str().unwrap().to_owned();
                browser
            }
            other => panic!(
                "[{label}] chromedriver started no Chromium session: {other:?}\n--- chromedriver ---\n{}",
                text_of(&browser.log)
            ),
        }
    }

    /// A WebDriver command of this session; its `value`, or what went wrong.
    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let full = format!("/session/{}{path}", self.session);
        let (status, v) = webdriver_http(self.port, method, &full, body.as_ref())?;
        if status == 200 {
            Ok(v["value"].clone())
        } else {
            Err(format!("WebDriver {method} {path}: {status} {}", v["value"]))
        }
    }

    fn goto(&self, url: &str) -> Result<(), String> {
        self.command("POST", "/url", Some(json!({"url": url}))).map(|_| ())
    }

    fn script(&self, script: &str, args: Value) -> Result<Value, String> {
        self.command("POST", "/execute/sync", Some(json!({"script": script, "args": args})))
    }

    /// The HTTP status of the page shown (its navigation's response), and its visible text.
    fn page(&self) -> Result<(u64, String), String> {
        let v = self.script(
            "const nav = performance.getEntriesByType('navigation')[0];\
             return [document.readyState, nav ? nav.responseStatus : 0, location.href,\
                     document.body ? document.body.innerText : ''];",
            json!([]),
        )?;
        if v[0] != "complete" {
            return Err(format!("the page at {} is still loading", v[2]));
        }
        Ok((v[1].as_u64().unwrap_or(0), v[3].as_str().unwrap_or_default().to_owned()))
    }

    /// Waits until the page shown contains `text` (a click's or a form's navigation may still
    /// be under way); its status and text.
    fn page_with(&self, text: &str) -> Result<(u64, String), String> {
        self.page_at(None, text)
    }

    /// Waits until the page shown is at `href` (when given) and contains `text`.
    fn page_at(&self, href: Option<&str>, text: &str) -> Result<(u64, String), String> {
        let started = Instant::now();
        loop {
            let shown = self.page();
            let here = href.is_none_or(|h| self.href().is_ok_and(|at| at == h));
            if let Ok((status, body)) = &shown
                && here
                && body.contains(text)
            {
                return Ok((*status, body.clone()));
            }
            if started.elapsed() > WAIT {
                return Err(format!("the browser never showed {text:?}; last: {shown:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn href(&self) -> Result<String, String> {
        self.command("GET", "/url", None)
            .map(|v| v.as_str().unwrap_or_default().to_owned())
    }

    /// The elements matching a CSS selector.
    fn find_all(&self, css: &str) -> Result<Vec<String>, String> {
        let v = self.command(
            "POST",
            "/elements",
            Some(json!({"using": "css selector", "value": css})),
        )?;
        Ok(v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e[ELEMENT].as_str().map(str::to_owned))
            .collect())
    }

    fn click(&self, css: &str) -> Result<(), String> {
        let found = self.find_all(css)?;
        let [element] = found.as_slice() else {
            return Err(format!("expected one {css}, found {}", found.len()));
        };
        self.command("POST", &format!("/element/{element}/click"), Some(json!({})))
            .map(|_| ())
    }

    /// Signs the browser in as the holder of `token`, as a user does: opens `/login`, types the
    /// token into its form and clicks Sign in; the page then says who is signed in.
    fn sign_in(&self, addr: SocketAddr, token: &str, user: &str) -> Result<(), String> {
        let login = format!("http://{addr}/login");
        self.goto(&login)?;
        let found = self.find_all("input#token")?;
        let [field] = found.as_slice() else {
            return Err(format!("no token field on {login}: {:?}", self.page()));
        };
        self.command("POST", &format!("/element/{field}/value"), Some(json!({"text": token})))?;
        self.click("button#sign-in")?;
        let (status, text) = self.page_at(Some(&login), &format!("Signed in as {user}"))?;
        if status != 200 {
            return Err(format!("signing in as {user}: {status} {text:?}"));
        }
        Ok(())
    }

    /// Waits until the page shown is on `origin` and loaded (a page elsewhere sent the browser
    /// there); its URL, status and text.
    fn landed_on(&self, origin: &str) -> Result<(String, u64, String), String> {
        let started = Instant::now();
        loop {
            let href = self.href();
            if let Ok(at) = &href
                && at.starts_with(origin)
                && let Ok((status, text)) = self.page()
            {
                return Ok((at.clone(), status, text));
            }
            if started.elapsed() > WAIT {
                return Err(format!("the browser never reached {origin}; it is at {href:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The cookies the browser holds for the page shown (HttpOnly ones included): name → value.
    fn cookies(&self) -> Result<Vec<(String, String)>, String> {
        let v = self.command("GET", "/cookie", None)?;
        Ok(v.as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                (text("name"), text("value"))
            })
            .collect())
    }

    fn log(&self) -> String {
        text_of(&self.log)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = webdriver_http(self.port, "DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

// ---------------------------------------------------------------------------------------------
// The attacker's site: another origin on this host, serving fixed pages.
// ---------------------------------------------------------------------------------------------

/// One page of the attacker's site: its path, extra response headers and HTML.
type SitePage = (String, Vec<String>, String);

/// A web site of the attacker's on another port of 127.0.0.1: another origin than the server's,
/// but the same site (cookies ignore ports, and `SameSite` cookies go with its requests), the
/// hardest place to forge a sign-in from. Serves its pages by exact path (404 otherwise) until
/// dropped.
struct AttackerSite {
    addr: SocketAddr,
    pages: Arc<Mutex<Vec<SitePage>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AttackerSite {
    fn start() -> AttackerSite {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let pages: Arc<Mutex<Vec<SitePage>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (served, stopped) = (pages.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((tcp, _)) => Self::answer(tcp, &served),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        AttackerSite {
            addr,
            pages,
            stop,
            thread: Some(thread),
        }
    }

    /// Serves `html` at `path`, with these extra headers; its URL.
    fn serve(&self, path: &str, headers: Vec<String>, html: String) -> String {
        self.pages.lock().unwrap().push((path.into(), headers, html));
        format!("http://{}{path}", self.addr)
    }

    /// Answers one request (read within a few seconds) and closes the connection.
    fn answer(mut tcp: TcpStream, pages: &Mutex<Vec<SitePage>>) {
        let _ = tcp.set_nonblocking(false);
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
        let mut head = Vec::new();
        let mut chunk = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match tcp.read(&mut chunk) {
                Ok(n) if n > 0 => head.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        }
        let head = String::from_utf8_lossy(&head);
        let path = head.split_whitespace().nth(1).unwrap_or_default();
        let found = pages.lock().unwrap().iter().find(|(p, _, _)| p == path).cloned();
        let (status, headers, html) = match found {
            Some((_, headers, html)) => ("200 OK", headers, html),
            None => ("404 Not Found", Vec::new(), String::new()),
        };
        let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
        let _ = write!(
            tcp,
            "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n{extra}\
             Content-Length: {}\r\nConnection: close\r\n\r\n{html}",
            html.len()
        );
    }
}

impl Drop for AttackerSite {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A sign-in form of the server's, fetched outside any browser (as the attacker would for
/// themselves): its pre-sign-in id (the cookie's value) and CSRF token.
fn attackers_own_form(addr: SocketAddr) -> Result<(String, String), String> {
    let mut tcp = TcpStream::connect(addr).map_err(|e| format!("GET /login: {e}"))?;
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    write!(tcp, "GET /login HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
        .map_err(|e| format!("GET /login: {e}"))?;
    let mut raw = String::new();
    tcp.read_to_string(&mut raw).map_err(|e| format!("GET /login: {e}"))?;
    let form = raw
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            let value = value.trim();
            (name.eq_ignore_ascii_case("set-cookie") && value.starts_with(SIGN_IN_COOKIE)).then_some(value)
        })
        .and_then(|c| c.strip_prefix(SIGN_IN_COOKIE)?.strip_prefix('=')?.split(';').next())
        .ok_or_else(|| format!("GET /login set no {SIGN_IN_COOKIE}: {raw}"))?;
    let csrf = raw
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .ok_or_else(|| format!("GET /login has no CSRF token: {raw}"))?;
    Ok((form.to_owned(), csrf.to_owned()))
}

// ---------------------------------------------------------------------------------------------
// The client: the Python SDK driver, its events read as they arrive.
// ---------------------------------------------------------------------------------------------

/// `py_client.py` calling `connect_account {service: github}` with `token`, accepting every
/// question (a URL-mode accept is consent only), then `list_repos {service: github}`, which uses
/// what the first call kept on the server. Every HTTP response the client receives goes to
/// `wire_log` too.
fn start_call(server: &HttpChild, era: Era, token: &str, wire_log: &Path) -> PyCall {
    let steps = json!([
        {"op": "call", "tool": "connect_account", "args": {"service": "github"}},
        {"op": "call", "tool": "list_repos", "args": {"service": "github"}},
    ]);
    run_steps(server, era, token, "{}", &steps, Some(wire_log))
}

/// `connect_account {service: github}` alone, answering every question with `answer` (`{}`
/// accepts, `decline`, `cancel`, or `none`: no elicitation capability at all).
fn call_answering(server: &HttpChild, era: Era, token: &str, answer: &str) -> PyCall {
    let steps = json!([{"op": "call", "tool": "connect_account", "args": {"service": "github"}}]);
    run_steps(server, era, token, answer, &steps, None)
}

/// `py_client.py` running `steps` with `token`, answering questions with `answer`, its HTTP
/// responses copied to `wire_log` when given.
fn run_steps(
    server: &HttpChild,
    era: Era,
    token: &str,
    answer: &str,
    steps: &Value,
    wire_log: Option<&Path>,
) -> PyCall {
    let url = server.url();
    let steps = steps.to_string();
    let mut args = vec![
        "--url",
        &url,
        "--bearer",
        token,
        "--mode",
        era.mode(),
        "--answer",
        answer,
        "--timeout",
        DRIVER_TIMEOUT_SECS,
        "--steps",
        &steps,
    ];
    let log = wire_log.map(|p| p.display().to_string());
    if let Some(log) = &log {
        args.extend(["--wire-log", log.as_str()]);
    }
    PyCall::spawn(&args, WAIT)
}

/// Where a test's client copies what it receives (emptied first).
fn wire_log(label: &str, who: &str) -> PathBuf {
    let dir = target_dir().join("tmp");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("browser-{label}-{who}-{}.wire", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// How the connect example's stand-in third-party access tokens start: nothing a client
/// receives may contain it.
const ACCESS_TOKEN_PREFIX: &str = "tpat_";

/// What `list_repos {service: github}` says to a user with no github connection.
const CONNECT_FIRST: &str =
    "github is not connected for you: call connect_account with service \"github\" first, then call list_repos again";

// ---------------------------------------------------------------------------------------------
// A test's scene, and what every failure message carries.
// ---------------------------------------------------------------------------------------------

struct Scene {
    label: String,
    era: Era,
    /// Who calls `connect_account` (alice, unless a test says otherwise).
    caller: String,
    /// Every HTTP response the caller's client received.
    wire_log: PathBuf,
    server: HttpChild,
    browser: Browser,
    client: Option<PyCall>,
    started: Instant,
}

impl Scene {
    /// A server, alice's call to it, and a browser (starting while the client starts: a call
    /// that waits longer for the page is asked again, with the same URL).
    fn new(label: &str, era: Era) -> Scene {
        Self::called_by(label, era, "alice")
    }

    /// The same, with `caller`'s call.
    fn called_by(label: &str, era: Era, caller: &str) -> Scene {
        let started = Instant::now();
        let server = start_server(label);
        let token = token(caller, server.addr);
        let wire_log = wire_log(label, caller);
        let client = start_call(&server, era, &token, &wire_log);
        let browser = Browser::start(label);
        Scene {
            label: label.into(),
            era,
            caller: caller.into(),
            wire_log,
            server,
            browser,
            client: Some(client),
            started,
        }
    }

    fn addr(&self) -> SocketAddr {
        self.server.addr
    }

    fn client(&mut self) -> &mut PyCall {
        match self.client.as_mut() {
            Some(c) => c,
            None => panic!("[{}] no client started", self.label),
        }
    }

    #[track_caller]
    fn fail(&mut self, what: impl std::fmt::Display) -> ! {
        let (events, stderr) = match &mut self.client {
            Some(c) => {
                c.settle(Duration::from_millis(200));
                let events: Vec<String> = c.events.iter().map(Value::to_string).collect();
                (events.join("\n"), text_of(&c.stderr))
            }
            None => (String::new(), String::new()),
        };
        let shown = self.browser.page();
        let browser_log = self.browser.log();
        let server_log = self.server.stop();
        panic!(
            "[{}] {what}\n--- after {:.1?}; the browser shows: {shown:?}\n--- client events ---\n{events}\n\
             --- client stderr ---\n{stderr}\n--- server stderr ---\n{server_log}\n--- chromedriver ---\n{browser_log}",
            self.label,
            self.started.elapsed(),
        )
    }

    #[track_caller]
    fn ok<T>(&mut self, r: Result<T, String>) -> T {
        match r {
            Ok(v) => v,
            Err(e) => self.fail(e),
        }
    }

    #[track_caller]
    fn check(&mut self, ok: bool, what: impl std::fmt::Display) {
        if !ok {
            self.fail(what)
        }
    }

    /// The page URL of the first question of the caller's call, checked.
    #[track_caller]
    fn question(&mut self) -> String {
        let connected = self.client().wait_for("connected", WAIT);
        let connected = self.ok(connected);
        self.check(
            connected["protocol_version"] == self.era.version(),
            format_args!(
                "negotiated {} instead of {}",
                connected["protocol_version"],
                self.era.version()
            ),
        );
        let question = self.client().wait_for("elicitation", WAIT);
        let question = self.ok(question);
        self.check(
            question["mode"] == "url",
            format_args!("not a URL-mode question: {question}"),
        );
        self.check(question["message"] == MESSAGE, format_args!("message: {question}"));
        let url = question["url"].as_str().unwrap_or_default().to_owned();
        let prefix = format!("http://{}/connect?service=github&flow=", self.addr());
        let flow = url.strip_prefix(&prefix).unwrap_or_default().to_owned();
        self.check(
            flow.len() == 22
                && flow
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            format_args!("the URL is not the page's with a flow id: {url:?}"),
        );
        match self.era {
            // 2026-07-28 has no elicitationId: the flow travels in the URL only.
            Era::New => self.check(
                question["elicitationId"].is_null(),
                format_args!("an elicitationId on 2026-07-28: {question}"),
            ),
            // 2025-11-25 names the elicitation: the flow's id.
            Era::Old => self.check(
                question["elicitationId"] == flow.as_str(),
                format_args!("elicitationId is not the flow {flow}: {question}"),
            ),
        }
        self.check(
            self.client.as_ref().is_some_and(|c| c.named("result").is_empty()),
            "the call finished before the page was opened",
        );
        url
    }

    /// Signs the browser in as `user`.
    #[track_caller]
    fn sign_in(&mut self, user: &str) {
        let token = token(user, self.addr());
        let r = self.browser.sign_in(self.addr(), &token, user);
        self.ok(r);
    }

    /// Opens `url` in the browser; the page's status and text.
    #[track_caller]
    fn open(&mut self, url: &str) -> (u64, String) {
        let r = self.browser.goto(url).and_then(|()| self.browser.page());
        self.ok(r)
    }

    /// Whether the page shown has the Approve and Deny buttons.
    #[track_caller]
    fn buttons(&mut self) -> (usize, usize) {
        let approve = self.browser.find_all("button#approve").map(|v| v.len());
        let deny = self.browser.find_all("button#deny").map(|v| v.len());
        (self.ok(approve), self.ok(deny))
    }

    /// Opens the caller's page, checks it, clicks `button` and waits for the page saying
    /// `outcome`.
    #[track_caller]
    fn decide(&mut self, url: &str, button: &str, outcome: &str) {
        let (status, text) = self.open(url);
        self.check(
            status == 200,
            format_args!("the consent page answered {status}: {text:?}"),
        );
        let signed_in = format!("Signed in as {}", self.caller);
        self.check(
            text.contains(MESSAGE) && text.contains(&signed_in),
            format_args!("the consent page does not show the question and the user: {text:?}"),
        );
        let buttons = self.buttons();
        self.check(buttons == (1, 1), format_args!("Approve / Deny buttons: {buttons:?}"));
        let r = self
            .browser
            .click(&format!("button#{button}"))
            .and_then(|()| self.browser.page_with(outcome));
        let (status, _) = self.ok(r);
        self.check(status == 200, format_args!("the decision page answered {status}"));
    }

    /// The call's result text, once it arrives; the client then ends cleanly.
    #[track_caller]
    fn result_text(&mut self) -> String {
        let result = self.client().wait_for("result", WAIT);
        let result = self.ok(result);
        let exit = self.client().finish();
        let exit = self.ok(exit);
        let c = self.client.as_ref().unwrap();
        let exceptions = c.named("exception").len();
        let done_last = c.events.last().is_some_and(|e| e["event"] == "done");
        self.check(
            exit.success() && exceptions == 0 && done_last,
            format_args!("the client did not end cleanly: {exit}"),
        );
        self.check(
            result["result"]["isError"] == false,
            format_args!("the call failed: {result}"),
        );
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The caller's second call, `list_repos {service: github}` (after `result_text`): whether it
    /// is a tool error, and its text.
    #[track_caller]
    fn listed(&mut self) -> (bool, String) {
        let c = self.client.as_ref().unwrap();
        let results: Vec<Value> = c.named("result").into_iter().cloned().collect();
        self.check(
            results.len() == 2,
            format_args!("two results (connect_account, list_repos), got {}", results.len()),
        );
        let listed = &results[1]["result"];
        (
            listed["isError"] == true,
            listed["content"][0]["text"].as_str().unwrap_or_default().to_owned(),
        )
    }

    /// `user` (another verified user, with a token of their own) calls `list_repos {service:
    /// github}`: whether it is a tool error, and its text. Nothing is asked.
    #[track_caller]
    fn list_as(&mut self, user: &str) -> (bool, String) {
        let token = token(user, self.addr());
        let log = wire_log(&self.label, user);
        let steps = json!([{"op": "call", "tool": "list_repos", "args": {"service": "github"}}]);
        let mut call = run_steps(&self.server, self.era, &token, "{}", &steps, Some(&log));
        let result = call.wait_for("result", WAIT);
        let result = self.ok(result);
        let finished = call.finish();
        let finished = self.ok(finished);
        self.check(finished.success(), format_args!("{user}'s client: {finished}"));
        self.check(
            call.named("elicitation").is_empty(),
            format_args!("{user} was asked something: {:?}", call.events),
        );
        self.check_no_token(&log, &call.events, "list_repos");
        let _ = std::fs::remove_file(&log);
        (
            result["result"]["isError"] == true,
            result["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        )
    }

    /// Nothing the client received (every HTTP response in `wire_log`, every event the driver
    /// reported) holds a third-party token; and the wire log did record the calls (it holds
    /// `seen`), so its silence means something.
    #[track_caller]
    fn check_no_token(&mut self, wire_log: &Path, events: &[Value], seen: &str) {
        let wire = std::fs::read(wire_log).unwrap_or_default();
        let wire = String::from_utf8_lossy(&wire);
        self.check(
            wire.contains(seen),
            format_args!("the wire log {} lacks {seen:?}: {wire}", wire_log.display()),
        );
        self.check(
            !wire.contains(ACCESS_TOKEN_PREFIX),
            format_args!("a third-party token reached the client: {wire}"),
        );
        let events: Vec<String> = events.iter().map(Value::to_string).collect();
        let leaked = events.iter().find(|e| e.contains(ACCESS_TOKEN_PREFIX));
        self.check(
            leaked.is_none(),
            format_args!("a third-party token in the client's events: {leaked:?}"),
        );
    }

    /// Era-specific questions around a finished call: on 2026-07-28 every re-ask carries the same
    /// URL; on 2025-11-25 there is one question, and `notifications/elicitation/complete` for its
    /// flow arrives before the result.
    #[track_caller]
    fn check_questions(&mut self, url: &str) {
        let c = self.client.as_ref().unwrap();
        let questions: Vec<Value> = c.named("elicitation").into_iter().cloned().collect();
        let urls: Vec<&str> = questions.iter().filter_map(|q| q["url"].as_str()).collect();
        let same = !urls.is_empty() && urls.len() == questions.len() && urls.iter().all(|u| *u == url);
        self.check(same, format_args!("the questions' URLs differ from {url}: {urls:?}"));
        if self.era == Era::Old {
            let flow = url.rsplit("flow=").next().unwrap_or_default().to_owned();
            let c = self.client.as_ref().unwrap();
            let complete = c.events.iter().position(|e| {
                e["event"] == "notification"
                    && e["method"] == "notifications/elicitation/complete"
                    && e["params"]["elicitationId"] == flow.as_str()
            });
            let result = c.events.iter().position(|e| e["event"] == "result");
            let count = questions.len();
            self.check(count == 1, format_args!("2025-11-25 asks once, got {count} questions"));
            self.check(
                matches!((complete, result), (Some(n), Some(r)) if n < r),
                format_args!(
                    "no notifications/elicitation/complete for {flow} before the result ({complete:?}, {result:?})"
                ),
            );
        }
    }

    /// The page again, after its flow was completed: 409, no buttons.
    #[track_caller]
    fn check_finished(&mut self, url: &str) {
        let (status, text) = self.open(url);
        self.check(
            status == 409 && text.contains("completed already"),
            format_args!("a finished flow's page: {status} {text:?}"),
        );
        let buttons = self.buttons();
        self.check(
            buttons == (0, 0),
            format_args!("a finished flow's page has buttons: {buttons:?}"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------------------------

/// Alice's browser clicks `button` on her page; the page says `outcome`, and the call that was
/// waiting finishes with `result`. Her `list_repos` then answers `listed` (a tool error when
/// `listed_error`); bob, another verified user, gets "connect first" either way (alice's token is
/// not his); and no third-party token reached either client.
fn decide(label: &str, era: Era, button: &str, outcome: &str, result: &str, listed: (bool, &str)) {
    let _turn = one_at_a_time();
    let mut scene = Scene::new(label, era);
    scene.sign_in("alice");
    let url = scene.question();
    scene.decide(&url, button, outcome);
    let text = scene.result_text();
    scene.check(text == result, format_args!("result text: {text:?}"));
    scene.check_questions(&url);
    scene.check_finished(&url);
    let got = scene.listed();
    scene.check(
        (got.0, got.1.as_str()) == listed,
        format_args!("alice's list_repos: {got:?}"),
    );
    let (log, events) = (scene.wire_log.clone(), scene.client.as_ref().unwrap().events.clone());
    scene.check_no_token(&log, &events, result);
    let bobs = scene.list_as("bob");
    scene.check(
        bobs == (true, CONNECT_FIRST.to_owned()),
        format_args!("bob's list_repos: {bobs:?}"),
    );
    let _ = std::fs::remove_file(&log);
    eprintln!("[{label}] {:.1?}", scene.started.elapsed());
}

/// What alice's `list_repos {service: github}` answers once her github account is connected.
const ALICES_REPOS: &str = "github repositories of alice: alice/notes, alice/website";

const APPROVED: &str = "Your github account is connected";
const DENIED: &str = "You denied access to your github account";

/// The browser opens alice's URL signed out (401), then signed in as bob (403, no buttons, and
/// bob's forged post of Approve is refused too); alice's call is still waiting, and completes
/// once alice's own browser approves.
fn another_user(label: &str, era: Era) {
    let _turn = one_at_a_time();
    let mut scene = Scene::new(label, era);
    let url = scene.question();

    let (status, text) = scene.open(&url);
    scene.check(
        status == 401 && text.contains("You are not signed in"),
        format_args!("signed out: {status} {text:?}"),
    );
    let buttons = scene.buttons();
    scene.check(
        buttons == (0, 0),
        format_args!("signed out, the page has buttons: {buttons:?}"),
    );

    scene.sign_in("bob");
    let (status, text) = scene.open(&url);
    scene.check(
        status == 403 && text.contains("this page was opened for another user") && text.contains("signed in as bob"),
        format_args!("bob's browser: {status} {text:?}"),
    );
    let buttons = scene.buttons();
    scene.check(buttons == (0, 0), format_args!("bob's page has buttons: {buttons:?}"));

    // Bob knows the URL: his browser posts Approve for alice's flow from the page itself
    // (same origin, his cookie).
    let flow = url.rsplit("flow=").next().unwrap_or_default().to_owned();
    let forged = scene
        .browser
        .script(
            "const f = document.createElement('form'); f.method = 'post'; f.action = '/connect';\
             for (const [name, value] of Object.entries(arguments[0])) {\
               const i = document.createElement('input'); i.type = 'hidden'; i.name = name; i.value = value;\
               f.appendChild(i);\
             }\
             document.body.appendChild(f); f.submit(); return true;",
            json!([{"flow": flow, "service": "github", "decision": "approve"}]),
        )
        .and_then(|_| {
            let at = format!("http://{}/connect", scene.addr());
            scene.browser.page_at(Some(&at), "Not your page")
        });
    let (status, text) = scene.ok(forged);
    scene.check(
        status == 403 && text.contains("this page was opened for another user"),
        format_args!("bob's forged post: {status} {text:?}"),
    );

    // Alice's call is not finished by any of it.
    scene.client().settle(Duration::from_millis(500));
    let results = scene.client.as_ref().map_or(0, |c| c.named("result").len());
    scene.check(results == 0, "alice's call finished from another user's browser");

    scene.sign_in("alice");
    scene.decide(&url, "approve", APPROVED);
    let text = scene.result_text();
    scene.check(
        text == "connected github as alice",
        format_args!("result text: {text:?}"),
    );
    scene.check_questions(&url);
    eprintln!("[{label}] {:.1?}", scene.started.elapsed());
}

/// Login CSRF, refused. Mallory calls `connect_account` and wants alice's browser to approve his
/// flow. A page of his on another port of this host (the same site) first sends her browser to
/// the old sign-in link `/login?token=<mallory's token>`: refused (400), nobody signed in. It then
/// plants the pre-sign-in cookie of a sign-in form Mallory fetched for himself in her browser, and
/// posts that form's CSRF token with his token: the cookie and token match, but the post comes
/// from his origin, so it is refused (403), nobody signed in. Her browser opening his URL is a
/// 401 with no buttons; signed in as herself, a 403 with none; his call is still waiting, and
/// completes only when his own browser approves.
#[test]
fn a_forced_sign_in_from_another_origin_is_refused() {
    let _turn = one_at_a_time();
    let label = "forced-sign-in";
    let mut scene = Scene::called_by(label, Era::New, "mallory");
    let url = scene.question();
    let server = format!("http://{}", scene.addr());
    let login = format!("{server}/login");
    let mallory = token("mallory", scene.addr());
    let site = AttackerSite::start();

    // 1. A link that signs in (the old `/login?token=…`), followed by her browser.
    let link = format!("{login}?token={mallory}");
    let page = site.serve(
        "/link",
        Vec::new(),
        format!("<p>Loading…</p><script>location.href = {};</script>", json!(link)),
    );
    let landed = scene
        .browser
        .goto(&page)
        .and_then(|()| scene.browser.landed_on(&server));
    let (at, status, text) = scene.ok(landed);
    scene.check(
        at == link && status == 400 && text.contains("A token never goes in a link"),
        format_args!("the sign-in link: {at} {status} {text:?}"),
    );
    let (status, text) = scene.open(&login);
    scene.check(
        status == 200 && text.contains("Not signed in") && !text.contains("mallory"),
        format_args!("after the sign-in link, /login: {status} {text:?}"),
    );

    // 2. A form of the server's own, fetched by mallory, its cookie planted in her browser and
    //    its CSRF token posted with his token from his page.
    let form = attackers_own_form(scene.addr());
    let (form, csrf) = scene.ok(form);
    let page = site.serve(
        "/post",
        vec![format!(
            "Set-Cookie: {SIGN_IN_COOKIE}={form}; Path=/; Secure; SameSite=Lax"
        )],
        format!(
            "<form method=\"post\" action=\"{login}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"token\" value=\"{mallory}\"></form>\
             <script>document.forms[0].submit();</script>"
        ),
    );
    let landed = scene
        .browser
        .goto(&page)
        .and_then(|()| scene.browser.landed_on(&server));
    let (at, status, text) = scene.ok(landed);
    scene.check(
        at == login && status == 403 && text.contains("Not from this site"),
        format_args!("the forged sign-in post: {at} {status} {text:?}"),
    );
    // The planted cookie was there and went with the post: only the origin check refused it.
    let cookies = scene.browser.cookies();
    let cookies = scene.ok(cookies);
    scene.check(
        cookies.iter().any(|(n, v)| n == SIGN_IN_COOKIE && *v == form),
        format_args!("the planted pre-sign-in cookie is not in the browser: {cookies:?}"),
    );
    let (status, text) = scene.open(&login);
    scene.check(
        status == 200 && text.contains("Not signed in") && !text.contains("mallory"),
        format_args!("after the forged post, /login: {status} {text:?}"),
    );

    // 3. Her browser cannot approve his flow: signed out, then signed in as herself.
    let (status, text) = scene.open(&url);
    scene.check(
        status == 401 && text.contains("You are not signed in"),
        format_args!("mallory's URL in her browser: {status} {text:?}"),
    );
    let buttons = scene.buttons();
    scene.check(buttons == (0, 0), format_args!("her page has buttons: {buttons:?}"));
    scene.sign_in("alice");
    let (status, text) = scene.open(&url);
    scene.check(
        status == 403 && text.contains("this page was opened for another user") && text.contains("signed in as alice"),
        format_args!("mallory's URL, signed in as alice: {status} {text:?}"),
    );
    let buttons = scene.buttons();
    scene.check(buttons == (0, 0), format_args!("her page has buttons: {buttons:?}"));
    scene.client().settle(Duration::from_millis(500));
    let results = scene.client.as_ref().map_or(0, |c| c.named("result").len());
    scene.check(results == 0, "mallory's call finished from alice's browser");

    // His flow was live all along: his own browser approves it.
    scene.sign_in("mallory");
    scene.decide(&url, "approve", APPROVED);
    let text = scene.result_text();
    scene.check(
        text == "connected github as mallory",
        format_args!("result text: {text:?}"),
    );
    eprintln!("[{label}] {:.1?}", scene.started.elapsed());
}

#[test]
fn approve_in_the_browser_completes_the_call_on_2026_07_28() {
    decide(
        "approve-2026",
        Era::New,
        "approve",
        APPROVED,
        "connected github as alice",
        (false, ALICES_REPOS),
    );
}

#[test]
fn approve_in_the_browser_completes_the_call_on_2025_11_25() {
    decide(
        "approve-2025",
        Era::Old,
        "approve",
        APPROVED,
        "connected github as alice",
        (false, ALICES_REPOS),
    );
}

#[test]
fn deny_in_the_browser_declines_the_call_on_2026_07_28() {
    decide(
        "deny-2026",
        Era::New,
        "deny",
        DENIED,
        "declined: github not connected",
        (true, CONNECT_FIRST),
    );
}

#[test]
fn deny_in_the_browser_declines_the_call_on_2025_11_25() {
    decide(
        "deny-2025",
        Era::Old,
        "deny",
        DENIED,
        "declined: github not connected",
        (true, CONNECT_FIRST),
    );
}

#[test]
fn another_users_browser_is_refused_on_2026_07_28() {
    another_user("other-user-2026", Era::New);
}

#[test]
fn another_users_browser_is_refused_on_2025_11_25() {
    another_user("other-user-2025", Era::Old);
}

// ---------------------------------------------------------------------------------------------
// The paths that need no browser: the client itself declines or cancels, or cannot be asked in
// URL mode at all.
// ---------------------------------------------------------------------------------------------

/// The client's own answer without the page: `decline` and `cancel` end the call with those
/// outcomes at once, on both eras; nothing waits for the page.
#[test]
fn the_client_declines_or_cancels_without_opening_the_page() {
    let _turn = one_at_a_time();
    for era in [Era::New, Era::Old] {
        let server = start_server("client-answers");
        let alice = token("alice", server.addr);
        for (answer, expected) in [
            ("decline", "declined: github not connected"),
            ("cancel", "cancelled: github not connected"),
        ] {
            let mut call = call_answering(&server, era, &alice, answer);
            let asked = call.wait_for("elicitation", WAIT).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(asked["mode"], "url", "{asked}");
            let result = call
                .wait_for("result", WAIT)
                .unwrap_or_else(|e| panic!("{e}: {:?}", call.events));
            assert_eq!(
                result["result"]["content"][0]["text"],
                expected,
                "{answer} on {}: {result}",
                era.mode()
            );
            assert_eq!(call.named("elicitation").len(), 1, "asked once: {:?}", call.events);
            assert!(call.finish().is_ok_and(|s| s.success()));
        }
    }
}

/// A client that declares no URL-mode elicitation gets -32021 naming it, on both eras, and the
/// server goes on serving.
#[test]
fn a_client_without_url_mode_is_told_what_it_lacks() {
    let _turn = one_at_a_time();
    for era in [Era::New, Era::Old] {
        let server = start_server("no-url-mode");
        let alice = token("alice", server.addr);
        let mut call = call_answering(&server, era, &alice, "none");
        let error = call
            .wait_for("error", WAIT)
            .unwrap_or_else(|e| panic!("{e}: {:?}", call.events));
        assert_eq!(error["code"], -32021, "{error}");
        assert_eq!(
            error["data"],
            json!({"requiredCapabilities": {"elicitation": {"url": {}}}})
        );
        assert!(call.named("elicitation").is_empty());
        assert!(call.finish().is_ok_and(|s| s.success()));
    }
}
