//! URL mode beside stdio: `connect --pages 127.0.0.1:PORT` serves MCP on its real stdin and
//! stdout, as a client starts a local server, and only its consent page on HTTP
//! (`Server::serve_stdio_with_pages`). A client over the pipes gets the URL-mode question, the
//! page at that URL (over real HTTP) records the approval, and the retry finishes the call; the
//! listener answers no MCP request.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, unreachable_pub)]

mod support;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use support::{connect_debug_bin, http};

/// The server's child process, killed when the test ends (also on failure).
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// One request over the real pipes, 2026-07-28 (`_meta` with URL-mode elicitation), and its
    /// response.
    fn call(&mut self, id: u64, params: Value) -> Value {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "url-pages-test", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}},
        });
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        writeln!(self.stdin, "{frame}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("the server answers on stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }
}

#[test]
fn a_stdio_server_serves_its_consent_page_on_http_and_the_call_finishes() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(connect_debug_bin())
        .args(["--pages", &format!("127.0.0.1:{port}")])
        .env_remove("MCP_RESOLVE_JWT_SECRET")
        .env_remove("MCP_RESOLVE_JWKS_URL")
        .env("CONNECT_URL_WAIT_SECS", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("connect starts");
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let mut server = Server {
        child,
        stdin,
        stdout: BufReader::new(stdout),
    };
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the page listener never came up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let first = server.call(
        1,
        json!({"name": "connect_account", "arguments": {"service": "github"}}),
    );
    let url = first["result"]["inputRequests"]["connect"]["params"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("no URL-mode question: {first}"))
        .to_owned();
    let base = format!("http://127.0.0.1:{port}");
    let target = url
        .strip_prefix(&base)
        .unwrap_or_else(|| panic!("{url} is not on {base}"));
    let flow = target.rsplit("flow=").next().unwrap().to_owned();

    // The listener serves the pages only.
    let (status, _) = http(port, "POST", "/mcp", &[("Content-Type", "application/json")], "{}");
    assert_eq!(status, 404, "no MCP endpoint beside stdio");

    let (status, page) = http(port, "GET", target, &[], "");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Connect your github account"), "{page}");
    let approve = format!("flow={flow}&service=github&decision=approve");
    let form = [
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Origin", base.as_str()),
    ];
    let (status, done) = http(port, "POST", "/connect", &form, &approve);
    assert_eq!(status, 200, "{done}");

    let retry = server.call(
        2,
        json!({"name": "connect_account", "arguments": {"service": "github"},
               "inputResponses": {"connect": {"action": "accept"}},
               "requestState": first["result"]["requestState"]}),
    );
    assert_eq!(
        retry["result"]["content"][0]["text"], "connected github as anonymous",
        "{retry}"
    );
}
