//! The ceiling: a framework-free "server" that reads JSON lines on stdin and writes a canned
//! answer for each, finding the id and the protocol version by string search. It does no JSON
//! parsing and no dispatch, so what the driver measures against it is the driver and the pipes.
//!
//! - `tools/call` → a text result `hello`;
//! - `initialize` → the version asked for;
//! - `server/discover` → a fixed discover result;
//! - any other request → `{}`; notifications get nothing.
//!
//! With `--json` it reads each request with serde_json instead (the envelope and the params,
//! borrowed from the line; the arguments into a map, as a framework hands them to a tool) and
//! writes a `tools/call`'s answer with serde_json, echoing the `text` argument: the floor of a
//! server that parses JSON, still without dispatch, sessions or anything of MCP's rules.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::io::{BufRead, BufWriter, Write};

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    arguments: Map<String, Value>,
    #[serde(borrow, default, rename = "protocolVersion")]
    protocol_version: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct Response<'a, T> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: T,
}

#[derive(Serialize)]
struct CallResult {
    content: [Text; 1],
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Serialize)]
struct Text {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

/// One request read and answered with serde_json; a notification or a bad line gets nothing.
fn answer_json(line: &str, out: &mut impl Write) -> std::io::Result<()> {
    let Ok(request) = serde_json::from_str::<Request<'_>>(line) else {
        return Ok(());
    };
    let Some(id) = request.id else { return Ok(()) };
    let mut params = request.params;
    let written = match &*request.method {
        "tools/call" => {
            let text = match params.as_mut().map(|p| (p.name.as_deref(), p.arguments.remove("text"))) {
                Some((Some(_), Some(Value::String(text)))) => text,
                _ => String::new(),
            };
            let result = CallResult {
                content: [Text { kind: "text", text }],
                is_error: false,
            };
            respond(out, id, result)
        }
        // The other methods' results are the plain mode's, canned.
        method => {
            let version = params.as_ref().and_then(|p| p.protocol_version).map(|v| v.get());
            let result = RawValue::from_string(canned(method, version)).map_err(std::io::Error::other)?;
            respond(out, id, result)
        }
    };
    written.map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

/// Writes the response to request `id`.
fn respond<T: Serialize>(out: &mut impl Write, id: &RawValue, result: T) -> serde_json::Result<()> {
    serde_json::to_writer(
        out,
        &Response {
            jsonrpc: "2.0",
            id,
            result,
        },
    )
}

/// The canned result of `method`; `version`: an `initialize`'s `protocolVersion`, as JSON text.
fn canned(method: &str, version: Option<&str>) -> String {
    match method {
        "tools/call" => r#"{"content":[{"type":"text","text":"hello"}],"isError":false}"#.to_string(),
        "initialize" => {
            let v = version.unwrap_or("\"2025-11-25\"");
            format!(
                r#"{{"protocolVersion":{v},"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"null","version":"0"}}}}"#
            )
        }
        "server/discover" => r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"null","version":"0"},"ttlMs":0,"cacheScope":"public"}"#.to_string(),
        _ => "{}".to_string(),
    }
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(key)? + key.len();
    let rest = line[at..].trim_start_matches([' ', ':']);
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

fn main() -> std::io::Result<()> {
    let json = std::env::args().any(|a| a == "--json");
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let line = line?;
        if json {
            answer_json(&line, &mut out)?;
            out.flush()?;
            continue;
        }
        let Some(id) = field(&line, "\"id\"") else { continue };
        let method = if line.contains("\"tools/call\"") {
            "tools/call"
        } else if line.contains("\"initialize\"") {
            "initialize"
        } else if line.contains("\"server/discover\"") {
            "server/discover"
        } else {
            ""
        };
        let version = (method == "initialize")
            .then(|| field(&line, "\"protocolVersion\""))
            .flatten();
        let result = canned(method, version);
        writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)?;
        out.flush()?;
    }
    Ok(())
}
