//! Doors for `benches/micro.rs` and the fuzz targets under `fuzz/`, behind the non-default
//! `bench` feature. Not API: thin doors onto crate-private machinery, so a benchmark measures, and
//! a fuzzer drives, the real code paths without a transport.

use crate::dispatch::{Dispatch, Dispatcher};
use crate::elicit::Elicit;
use crate::form::{FormSchema, RenderOptions};
use crate::protocol::envelope::{ClientCapabilities, EnvelopeCache, KnownMeta};
use crate::protocol::inbound::{Inbound, classify, classify_knowing};
use crate::protocol::jsonrpc::{RequestId, raw_str};
use crate::protocol::messages::ParamsHead;
use crate::protocol::{Implementation, ProtocolVersion};
use crate::question::{AskSpec, Settled};
use crate::resolve::ask::{Asked, Question};
use crate::resolve::collect::Collect;
use crate::resolve::state::{CallBinding, RoundState};
use crate::seal::Sealer;
use crate::server::Session;
use crate::transport::frames::{Frame, FrameReader};
use futures_util::FutureExt as _;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Seals and unseals `requestState` as the server does for a `tools/call` of `tool` with
/// `arguments`, for `audience`, without a principal.
#[derive(Debug, Clone)]
pub struct StateSealer(Sealer);

fn binding<'a>(tool: &'a str, arguments: &'a Map<String, Value>, audience: &'a str) -> CallBinding<'a> {
    CallBinding {
        method: "tools/call",
        tool,
        arguments,
        audience,
        principal: None,
    }
}

impl StateSealer {
    /// A sealer with these keys and token lifetime.
    pub fn new(keys: crate::seal::StateKeys, ttl: Duration) -> Self {
        Self(Sealer::new(Some(keys), ttl))
    }

    /// The sealed token (`v2.…`) of a state given as JSON text, as the engine holds its kept
    /// answers; `None` when sealing failed.
    pub fn seal(&self, state: &RawValue, tool: &str, arguments: &Map<String, Value>, audience: &str) -> Option<String> {
        binding(tool, arguments, audience).seal(&self.0, state).ok()
    }

    /// The state inside `token`, or `None` when it is refused (the reason is not told).
    pub fn unseal(&self, token: &str, tool: &str, arguments: &Map<String, Value>, audience: &str) -> Option<Value> {
        binding(tool, arguments, audience).open(&self.0, token).ok()
    }

    /// Whether `token` opens as the engine's own round state, as a `tools/call` retry opens it.
    pub fn opens_round_state(&self, token: &str, tool: &str, arguments: &Map<String, Value>, audience: &str) -> bool {
        binding(tool, arguments, audience)
            .open::<RoundState>(&self.0, token)
            .is_ok()
    }

    /// As [`StateSealer::unseal`], but the state comes back as the JSON text it was sealed as
    /// (authenticated, fresh, bound), without building a value from it.
    pub fn unseal_raw(
        &self,
        token: &str,
        tool: &str,
        arguments: &Map<String, Value>,
        audience: &str,
    ) -> Option<Box<RawValue>> {
        binding(tool, arguments, audience).open(&self.0, token).ok()
    }
}

/// Serves one JSON-RPC frame as the stateless HTTP path does, minus the I/O: parse, dispatch
/// (resolvers, tool body, sealing), encode the response (no framing). Each frame gets a fresh
/// session and no back-channel, so this serves the 2026-07-28 era; a handshake-era `tools/call`
/// gets "not initialized". Progress notifications are dropped. `None` for frames that get no
/// response (notifications, responses).
#[derive(Clone)]
pub struct FrameHandler(Dispatcher);

impl FrameHandler {
    /// A handler for `server`.
    pub fn new(server: crate::server::Server) -> Self {
        Self(Dispatcher::stateless(Arc::new(server)))
    }

    /// The response to one frame.
    pub async fn handle(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        match self.0.dispatch(&mut Session::new(), None, None, classify(bytes), None) {
            Dispatch::Done => None,
            Dispatch::Reply(message) => Some(message.encode()),
            Dispatch::Forbidden(id, forbidden) => {
                Some(crate::protocol::jsonrpc::Outgoing::error(Some(id), forbidden.error()).encode())
            }
            Dispatch::Call(call) => call.run_detached(None).await.map(|m| m.encode()),
        }
    }
}

/// Serves one newline-delimited connection over `reader` and `writer` exactly as
/// [`Server::serve_stdio`](crate::server::Server::serve_stdio) serves stdin and stdout (the same
/// connection loop): the door of the allocation counts (`tests/counts.rs`), which drive it over
/// an in-memory pipe.
pub async fn serve_lines<R, W>(server: crate::server::Server, reader: R, writer: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    crate::transport::connection::serve_connection(Arc::new(server), reader, writer).await
}

// ---------------------------------------------------------------- fuzzing doors (`fuzz/`)

/// One frame as [`read_frames`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameOut {
    /// A non-blank line, without its `\n` / `\r\n`.
    Line(Vec<u8>),
    /// A line longer than the limit, skipped; its length.
    TooLarge(usize),
}

/// Every frame in `reader`, as the stdio transport's `FrameReader` cuts them with limit `max`,
/// until the end of input.
pub async fn read_frames<R: tokio::io::AsyncRead + Unpin>(reader: R, max: usize) -> std::io::Result<Vec<FrameOut>> {
    let mut frames = FrameReader::new(reader, max);
    let mut out = Vec::new();
    loop {
        match frames.next().await? {
            Frame::Line(line) => out.push(FrameOut::Line(line)),
            Frame::TooLarge(n) => out.push(FrameOut::TooLarge(n)),
            Frame::Eof => return Ok(out),
        }
    }
}

/// What `classify`, then the reading of the params' members and of the 2026-07-28 `_meta`
/// envelope, made of one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Classified {
    /// `request`, `notification`, `response` or `invalid`.
    pub kind: &'static str,
    /// The JSON-RPC error code an invalid frame is answered with.
    pub error: Option<i64>,
    /// For a request or notification: the envelope's version, or the error code it is refused with.
    pub envelope: Option<Result<ProtocolVersion, i64>>,
    /// Whether validating the same envelope again, through the connection's cache, said the same.
    pub cache_agrees: bool,
}

/// Reads every member a session would read from a request's params (without running it).
fn read_params(params: &ParamsHead<'_>, out: &mut Classified) {
    let meta = &params.meta;
    let _ = (meta.has_envelope(), meta.progress_token());
    let mut cache = EnvelopeCache::default();
    let first = meta.envelope_cached(&mut cache);
    let again = meta.envelope_cached(&mut cache);
    out.cache_agrees = match (&first, &again) {
        (Ok(a), Ok(b)) => {
            a.version == b.version
                && a.capabilities == b.capabilities
                && a.client_info == b.client_info
                && a.progress_token == b.progress_token
        }
        (Err(a), Err(b)) => a == b,
        _ => false,
    };
    out.envelope = Some(match first {
        Ok(envelope) => {
            let caps = &envelope.capabilities;
            let _ = (caps.as_map().len(), caps.elicitation_form(), caps.elicitation_url());
            let _ = (caps.sampling(), caps.roots());
            Ok(envelope.version)
        }
        Err(e) => Err(e.code),
    });
    // The handshake era's `initialize` members.
    if let Some(raw) = params.capabilities {
        let caps = ClientCapabilities::from_raw(raw);
        let _ = (caps.as_map().len(), caps.elicitation_form(), caps.elicitation_url());
    }
    let _ = params.client_info.map(Implementation::from_raw);
    let _ = params
        .protocol_version
        .and_then(raw_str)
        .map(|v| ProtocolVersion::parse(&v));
    let _ = params.request_id.map(RequestId::from_raw);
    let _ = (params.name.and_then(raw_str), params.uri.and_then(raw_str));
    let _ = params.request_state.and_then(raw_str);
}

/// Classifies one frame and reads its params and envelope, as the dispatcher and the session do.
pub fn classify_frame(bytes: &[u8]) -> Classified {
    let mut out = Classified {
        kind: "invalid",
        error: None,
        envelope: None,
        cache_agrees: true,
    };
    match classify(bytes) {
        Inbound::Request { params, .. } => {
            out.kind = "request";
            read_params(&params, &mut out);
        }
        Inbound::Notification { params, .. } => {
            out.kind = "notification";
            read_params(&params, &mut out);
        }
        Inbound::Response { .. } => out.kind = "response",
        Inbound::Invalid { error, .. } => out.error = Some(error.code),
    }
    out
}

/// Whether a connection that knows `known` as an earlier request's `_meta` classifies the frame
/// as a fresh read does (the reading that skips a repeated `_meta`). `known` is the frame's own
/// params' `_meta` when `None`; the frame is taken as it is when it has none.
pub fn classify_knowing_agrees(bytes: &[u8], known: Option<&str>) -> bool {
    let plain = classify(bytes);
    let own = match &plain {
        Inbound::Request { params, .. } | Inbound::Notification { params, .. } => params.meta.text(),
        _ => None,
    };
    let Some(known) = known.or(own) else { return true };
    // Only an object a client could have sent as its `_meta` is ever known.
    if !known.starts_with('{') || serde_json::from_str::<serde::de::IgnoredAny>(known).is_err() {
        return true;
    }
    let known = KnownMeta::new(known);
    let mut scratch = String::new();
    format!("{plain:?}") == format!("{:?}", classify_knowing(bytes, Some(&known), &mut scratch))
}

/// How the 2026-07-28 asker took one answer to a form question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormAnswer {
    /// Accepted, and the content matched the form.
    Accepted,
    /// `decline` or `cancel`.
    Answered(&'static str),
    /// The call stops with this message (content that does not match the form, and the like).
    Refused(String),
    /// Malformed (not an answer at all): the question is asked again.
    AskedAgain,
}

fn form_answer(asked: Asked) -> FormAnswer {
    match asked {
        Asked::Done(Ok(Settled::Answered(crate::elicit::Action::Accept, Some(_)))) => FormAnswer::Accepted,
        Asked::Done(Ok(Settled::Answered(action, _) | Settled::Refused(action, _))) => {
            FormAnswer::Answered(action.as_str())
        }
        Asked::Done(Ok(Settled::Value(_))) => FormAnswer::Refused("a value where an answer was expected".into()),
        Asked::Done(Err(message)) => FormAnswer::Refused(message),
        Asked::Pending => FormAnswer::AskedAgain,
        Asked::Abort(e) => FormAnswer::Refused(e.message),
    }
}

/// Answers a question for form `F` with `answer` (an `inputResponses` entry) as a 2026-07-28 retry
/// does, then, when the answer was kept, replays the kept answer from the next round's state
/// (after a JSON round trip of that state, as sealing makes). Returns both outcomes.
pub fn answer_form<F: FormSchema + Send + Sync + 'static>(
    message: &str,
    answer: &Value,
) -> (FormAnswer, Option<FormAnswer>) {
    const KEY: &str = "answer";
    let ask = AskSpec::erase(crate::elicit::Ask::from(Elicit::<F>::form(message)));
    let crate::elicit::AskRequest::Form { message, schema } = &ask.request else {
        return (FormAnswer::Refused("a form question is a form".into()), None);
    };
    let neutral = schema.render(RenderOptions::default());
    let digest = crate::seal::question_digest(message, &neutral);
    let question = Question {
        kind: "tool",
        target: "fuzz",
        key: KEY,
        ask: &ask,
        schema: Some(neutral),
        digest: digest.clone(),
        who: format!("resolver `{KEY}`"),
        version: ProtocolVersion::V2026_07_28,
    };
    let mut state = RoundState {
        round: 1,
        ..RoundState::default()
    };
    state.asked.insert(KEY.to_owned(), digest);
    let mut responses = Map::new();
    responses.insert(KEY.to_owned(), answer.clone());
    let asking = || crate::server::Server::new("fuzz").ask_context(None);
    // A form's answer is taken without waiting for anything: the future is ready at once.
    let now = |asked: Option<Asked>| asked.map_or(FormAnswer::Refused("the asker waited".into()), form_answer);
    let mut collect = Collect::new(state, responses, asking());
    let first = now(collect.ask(&question).now_or_never());
    let replay = collect.keep.remove(KEY).map(|kept| {
        let mut next = RoundState {
            round: 2,
            ..RoundState::default()
        };
        next.outcomes.insert(KEY.to_owned(), kept);
        let next = serde_json::to_string(&next)
            .ok()
            .and_then(|text| serde_json::from_str::<RoundState>(&text).ok());
        match next {
            Some(next) => now(Collect::new(next, Map::new(), asking()).ask(&question).now_or_never()),
            None => FormAnswer::Refused("the kept state did not survive a JSON round trip".into()),
        }
    });
    (first, replay)
}

/// Serves one HTTP/1.1 connection over `io` with a fresh listener state, as the Streamable HTTP
/// listener serves an accepted stream (time limits included). `check_hosts` is what a loopback
/// bind sets.
#[cfg(feature = "http")]
pub async fn serve_http_connection<IO>(
    server: Arc<crate::server::Server>,
    options: crate::transport::http::HttpOptions,
    check_hosts: bool,
    io: IO,
) where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    crate::transport::http::serve_io(server, options, check_hosts, io).await;
}
