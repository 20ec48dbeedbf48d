//! The fuzz targets. Each takes arbitrary bytes, drives real runtime code through the `bench`
//! doors (`runtime/src/bench.rs`), and panics only when an invariant breaks:
//!
//! - `frames`: the stdio `FrameReader`, read in fuzz-chosen chunks and cancelled at fuzz-chosen
//!   points, against a plain model of newline framing;
//! - `classify`: JSON-RPC classification, then the params' members and the `_meta` envelope;
//! - `unseal`: `requestState` opening, on arbitrary text and on edits of a real sealed state;
//!   only the untouched state may open;
//! - `form`: an `inputResponses` answer checked against a form with every field kind; an answer
//!   kept in the state must be taken the same way in the next round;
//! - `http`: raw bytes of an HTTP/1.1 connection into the Streamable HTTP service.
//!
//! The AFL binaries (`src/bin/`) call these; the workspace's `tests/fuzz_corpus.rs` compiles this
//! same file and replays `fuzz/corpus/<target>/` through it, without AFL.

use base64::Engine as _;
use mcp_resolve::auth::BoxFuture;
use mcp_resolve::bench::{self, FormAnswer, FrameOut, StateSealer};
use mcp_resolve::prelude::*;
use mcp_resolve::{
    HttpOptions, Principal,
    auth::{AuthError, TokenVerifier},
    elicit::Confirm,
    seal::StateKeys,
};
use serde_json::{Map, Value, json};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, ReadBuf};
use tokio::runtime::Runtime;

/// A target: arbitrary bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// Every target, by the name of its binary and corpus folder.
pub const TARGETS: [(&str, Target); 5] = [
    ("frames", frames),
    ("classify", classify),
    ("unseal", unseal),
    ("form", form),
    ("http", http),
];

/// One current-thread runtime for the whole process, as a fuzzer runs inputs one after another.
fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap_or_else(|e| panic!("no tokio runtime: {e}"))
    })
}

// ---------------------------------------------------------------- frames

/// A reader that hands out at most `chunk` bytes per read, and is not ready (waking itself) on
/// the reads the `pending` bit pattern picks.
struct Chunky<'a> {
    data: &'a [u8],
    chunk: usize,
    pending: u8,
    reads: u32,
}

impl AsyncRead for Chunky<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.reads += 1;
        if self.pending & (1 << (self.reads % 8)) != 0 && !self.reads.is_multiple_of(3) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let n = self.chunk.min(self.data.len()).min(buf.remaining());
        let (now, rest) = self.data.split_at(n);
        buf.put_slice(now);
        self.data = rest;
        Poll::Ready(Ok(()))
    }
}

/// Newline framing as the stdio transport documents it: lines split on `\n`; a line longer than
/// `max` (counting a trailing `\r`) is reported by its length; otherwise one trailing `\r` goes
/// and blank lines are skipped.
fn framing_model(stream: &[u8], max: usize) -> Vec<FrameOut> {
    let mut out = Vec::new();
    for line in stream.split(|&b| b == b'\n') {
        if line.len() > max {
            out.push(FrameOut::TooLarge(line.len()));
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            out.push(FrameOut::Line(line.to_vec()));
        }
    }
    out
}

/// `FrameReader`: byte 0 sets the limit (1 to 64), byte 1 the read size (1 to 16 bytes), byte 2
/// which reads are not ready (each one cancels the pending `next()`, as the connection's
/// `select!` may); the rest is the stream. The frames must be the model's.
pub fn frames(data: &[u8]) {
    let [limit, chunk, pending, stream @ ..] = data else {
        return;
    };
    let max = usize::from(limit & 0x3f) + 1;
    let reader = Chunky {
        data: stream,
        chunk: usize::from(chunk & 0x0f) + 1,
        pending: *pending,
        reads: 0,
    };
    let got = runtime()
        .block_on(bench::read_frames(reader, max))
        .unwrap_or_else(|e| panic!("an in-memory read failed: {e}"));
    assert_eq!(
        got,
        framing_model(stream, max),
        "frames differ from the model (max {max})"
    );
}

// ---------------------------------------------------------------- classify

/// `classify`, the params' members and the `_meta` envelope. Errors are only the documented
/// codes; a frame that is not JSON (UTF-8 text, one value) gets the parse error, and one that
/// serde_json reads whole as a value does not. In between lie frames whose strings hold an
/// unpaired surrogate escape (`"\ud800"`): grammatical JSON whose meaning RFC 8259 leaves
/// open. They are taken as they come where nobody reads them, and a parse error where they must
/// be read (a member name).
pub fn classify(data: &[u8]) {
    let c = bench::classify_frame(data);
    if let Some(code) = c.error {
        assert!(matches!(code, -32700 | -32600 | -32602), "unexpected error code {code}");
    }
    let text = std::str::from_utf8(data).ok();
    let grammatical = text.is_some_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok());
    let readable = text.is_some_and(|t| serde_json::from_str::<Value>(t).is_ok());
    let parse_error = c.error == Some(-32700);
    assert!(
        grammatical || parse_error,
        "no parse error for a frame that is not JSON: {:?}",
        c.error
    );
    assert!(!readable || !parse_error, "a parse error for a frame that is JSON");
    if let Some(Err(code)) = c.envelope {
        assert!(matches!(code, -32602 | -32022), "unexpected envelope error code {code}");
    }
    assert!(c.cache_agrees, "the envelope cache disagrees with a fresh read");
    // A connection that knows the frame's `_meta` (or the first object in it, wherever it lies)
    // from an earlier request reads the frame as a fresh read does.
    assert!(
        bench::classify_knowing_agrees(data, None),
        "a known `_meta` changed the reading"
    );
    if let Some(object) = first_object(data) {
        assert!(
            bench::classify_knowing_agrees(data, Some(object)),
            "a known object changed the reading"
        );
    }
}

/// The first `{…}` in `data` that is a JSON object by itself (inside the frame's first object).
fn first_object(data: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(data).ok()?;
    let start = text.char_indices().skip(1).find(|&(_, c)| c == '{')?.0;
    let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<serde::de::IgnoredAny>();
    de.next()?.ok()?;
    text.get(start..start + de.byte_offset())
}

// ---------------------------------------------------------------- unseal

const TOOL: &str = "fuzz_tool";
const AUDIENCE: &str = "fuzz-audience";

struct Sealed {
    sealer: StateSealer,
    arguments: Map<String, Value>,
    token: String,
    /// The token's first four decoded bytes: the key id (a 32-byte salt follows it).
    kid: Vec<u8>,
}

/// base64url without padding: fuzz inputs reach the cipher only through this encoding.
fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn b64url_decode(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .unwrap_or_default()
}

fn sealed() -> &'static Sealed {
    static SEALED: OnceLock<Sealed> = OnceLock::new();
    SEALED.get_or_init(|| {
        let keys = StateKeys::new(b"fuzz: a fixed secret of 32+ bytes, never deployed")
            .and_then(|k| k.with_previous(b"fuzz: the previous secret, still able to unseal"))
            .unwrap_or_else(|e| panic!("{e}"));
        let sealer = StateSealer::new(keys, Duration::from_secs(24 * 3600));
        let arguments = json!({"path": "/tmp/x", "force": false})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let state = serde_json::value::to_raw_value(&json!({
            "r": 1,
            "outcomes": {"confirm": {"action": "accept", "content": {"ok": true}, "q": "K3a1"}},
            "asked": {"name": "Qm9v"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let token = sealer
            .seal(&state, TOOL, &arguments, AUDIENCE)
            .unwrap_or_else(|| panic!("sealing failed"));
        let kid = b64url_decode(&token["v2.".len()..])[..4].to_vec();
        Sealed {
            sealer,
            arguments,
            token,
            kid,
        }
    })
}

/// Applies an edit script to `token`: each 4 bytes are (operation, position high, position low,
/// argument). Operations: replace a character, flip a bit, truncate, insert, delete, splice in a
/// piece of the token itself, swap two characters.
fn edit(token: &str, script: &[u8]) -> String {
    let mut t = token.as_bytes().to_vec();
    for op in script.chunks_exact(4) {
        let at = usize::from(u16::from_be_bytes([op[1], op[2]]));
        let arg = op[3];
        let pos = at % (t.len() + 1);
        match op[0] % 7 {
            0 if pos < t.len() => t[pos] = arg,
            1 if pos < t.len() => t[pos] ^= 1 << (arg % 8),
            2 => t.truncate(pos),
            3 => t.insert(pos, arg),
            4 if pos < t.len() => {
                t.remove(pos);
            }
            5 => {
                let from = usize::from(arg) % (token.len() + 1);
                let piece = &token.as_bytes()[from..];
                t.splice(pos..pos, piece.iter().copied().take(64));
            }
            6 if pos < t.len() => {
                let other = usize::from(arg) % t.len();
                t.swap(pos, other);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&t).into_owned()
}

/// `requestState` opening. Byte 0 picks the shape of the candidate: the rest as text (old `v1.`
/// tokens included); `v2.` and the rest; `v2.` and the base64url of the key id and the rest (salt,
/// ciphertext, tag: so a token key is derived and the cipher itself is reached); or the real token
/// under the rest as an edit script. Only the real token opens.
pub fn unseal(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let s = sealed();
    let candidate = match mode % 4 {
        0 => String::from_utf8_lossy(rest).into_owned(),
        1 => format!("v2.{}", String::from_utf8_lossy(rest)),
        2 => format!("v2.{}", b64url(&[&s.kid[..], rest].concat())),
        _ => edit(&s.token, rest),
    };
    let as_round_state = s.sealer.opens_round_state(&candidate, TOOL, &s.arguments, AUDIENCE);
    let as_raw = s.sealer.unseal_raw(&candidate, TOOL, &s.arguments, AUDIENCE).is_some();
    if candidate == s.token {
        assert!(as_round_state && as_raw, "the real token did not open");
    } else {
        assert!(!as_round_state && !as_raw, "a changed token opened: {candidate}");
    }
}

// ---------------------------------------------------------------- form

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Env {
    #[form(title = "Staging")]
    Stg,
    #[form(title = "Production")]
    Prd,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
enum Tag {
    X,
    Y,
    Z,
}

#[derive(Clone, Copy, Debug, PartialEq, FormSchema)]
#[form(enum_names)]
enum Legacy {
    #[form(title = "Option A")]
    A,
    #[form(title = "Option B")]
    B,
}

/// A form with every field kind, format and bound a form may declare.
#[allow(dead_code)] // Its fields are only ever parsed.
#[derive(Debug, FormSchema)]
#[form(title = "Everything")]
struct Everything {
    #[form(min_length = 1, max_length = 8, default = "Ada")]
    name: String,
    #[form(format = "email")]
    email: Option<String>,
    #[form(format = "uri")]
    site: Option<String>,
    #[form(format = "date")]
    day: Option<String>,
    #[form(format = "date-time")]
    at: Option<String>,
    #[form(minimum = 0, maximum = 150, default = 30)]
    age: u8,
    #[form(minimum = -1000, maximum = 1000)]
    delta: Option<i16>,
    tiny: Option<i8>,
    count: Option<i32>,
    wide: Option<i64>,
    unsigned: Option<u16>,
    big: Option<u32>,
    huge: Option<u64>,
    #[form(minimum = 0, maximum = 100, default = 95.5)]
    score: f64,
    ratio: Option<f32>,
    ok: bool,
    #[form(default = "stg")]
    env: Env,
    legacy: Option<Legacy>,
    #[form(min_items = 1, max_items = 2, default = ["x"])]
    tags: Vec<Tag>,
}

/// An answer checked against a form, as a 2026-07-28 retry's `inputResponses` entry: byte 0
/// picks the form (every field kind, or the built-in `Confirm`), the rest is the answer's JSON.
/// An answer that was kept must be taken the same way when the next round replays it.
pub fn form(data: &[u8]) {
    let Some((&which, text)) = data.split_first() else {
        return;
    };
    let Ok(answer) = serde_json::from_slice::<Value>(text) else {
        return;
    };
    let (first, replay) = match which % 2 {
        0 => bench::answer_form::<Everything>("Fill in everything", &answer),
        _ => bench::answer_form::<Confirm>("Go ahead?", &answer),
    };
    match (&first, &replay) {
        (FormAnswer::Accepted | FormAnswer::Answered(_), Some(again)) => {
            assert_eq!(&first, again, "a kept answer was taken differently in the next round");
        }
        (FormAnswer::Accepted | FormAnswer::Answered(_), None) => panic!("a taken answer was not kept"),
        (_, Some(again)) => panic!("a refused answer was kept: {again:?}"),
        (_, None) => {}
    }
}

// ---------------------------------------------------------------- http

/// The form the HTTP server's tool asks.
#[derive(Clone, Debug, FormSchema)]
struct Name {
    #[form(min_length = 1, max_length = 20)]
    name: String,
}

#[resolver]
async fn who() -> Resolution<Name> {
    Elicit::form("What is your name?").into()
}

/// Echo the text back.
#[tool(read_only = true)]
async fn echo(text: String) -> String {
    text
}

/// Ask a name, then greet.
#[tool]
async fn greet(#[resolve(who)] user: ElicitationResult<Name>) -> String {
    match user {
        ElicitationResult::Accepted(n) => format!("hello {}", n.name),
        ElicitationResult::Declined => "declined".into(),
        ElicitationResult::Cancelled => "cancelled".into(),
    }
}

/// Bearer tokens `user-<name>` are the principal `<name>`; anything else is refused.
struct Users;

impl TokenVerifier for Users {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move {
            match token.strip_prefix("user-") {
                Some(name) if !name.is_empty() => Ok(Principal {
                    subject: name.to_owned(),
                    issuer: None,
                    scopes: vec![],
                }),
                _ => Err(AuthError::new("unknown token")),
            }
        })
    }
}

struct HttpFixture {
    server: Arc<Server>,
    options: HttpOptions,
}

fn http_fixture() -> &'static HttpFixture {
    static FIXTURE: OnceLock<HttpFixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let keys =
            StateKeys::new(b"fuzz: a fixed secret of 32+ bytes, never deployed").unwrap_or_else(|e| panic!("{e}"));
        let server = Server::new("fuzz")
            .version("0.0.0")
            .state_keys(keys)
            .tool(echo)
            .tool(greet);
        let options = HttpOptions::default()
            .bearer(Users)
            .max_body_bytes(4096)
            .max_sessions(4)
            .max_sessions_per_principal(2);
        HttpFixture {
            server: Arc::new(server),
            options,
        }
    })
}

/// The bytes of one HTTP/1.1 connection, written by a client that then half-closes, into the
/// Streamable HTTP service on a loopback-like listener (Host/Origin checked). The connection
/// must end, and whatever the server wrote must be HTTP responses (1.0 to a 1.0 request).
pub fn http(data: &[u8]) {
    let out = http_exchange(data);
    assert!(
        out.is_empty() || out.starts_with(b"HTTP/1.1 ") || out.starts_with(b"HTTP/1.0 "),
        "not an HTTP response: {:?}",
        String::from_utf8_lossy(&out[..out.len().min(64)])
    );
}

/// What the server wrote back on a connection that carried `data` (see [`http`]).
///
/// The runtime's clock is paused, so it moves only when every task waits: the client sleeps a
/// (virtual) second after writing, which ends once the server has done all it could with the
/// bytes, then half-closes. The server's configuration is the real one, where a client's EOF ends
/// the connection. The client reads all along, so a long answer never blocks the server.
pub fn http_exchange(data: &[u8]) -> Vec<u8> {
    let fixture = http_fixture();
    paused_runtime().block_on(async {
        let (client, server_end) = tokio::io::duplex(64 * 1024);
        let (mut from_server, mut to_server) = tokio::io::split(client);
        let serve = bench::serve_http_connection(fixture.server.clone(), fixture.options.clone(), true, server_end);
        let write = async move {
            // The server may stop reading (a refused request, a closed connection): then the
            // write fails, and what was answered is still read.
            let _ = to_server.write_all(data).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
            let _ = to_server.shutdown().await;
        };
        let read = async move {
            let mut out = Vec::new();
            let _ = from_server.read_to_end(&mut out).await;
            out
        };
        let ended = tokio::time::timeout(Duration::from_secs(60), async { tokio::join!(serve, write, read) }).await;
        match ended {
            Ok((_, (), out)) => out,
            Err(_) => panic!("the connection did not end within a minute after the client's EOF"),
        }
    })
}

/// A current-thread runtime whose clock is paused (see [`http_exchange`]).
fn paused_runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap_or_else(|e| panic!("no tokio runtime: {e}"))
    })
}
