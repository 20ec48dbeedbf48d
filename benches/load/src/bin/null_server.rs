//! The ceiling: a framework-free "server" that reads JSON lines on stdin and writes a canned
//! answer for each, finding the id and the protocol version by string search. It does no JSON
//! parsing and no dispatch, so what the driver measures against it is the driver and the pipes.
//!
//! - `tools/call` → a text result `hello`;
//! - `initialize` → the version asked for;
//! - `server/discover` → a fixed discover result;
//! - any other request → `{}`; notifications get nothing.

use std::io::{BufRead, BufWriter, Write};

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(key)? + key.len();
    let rest = line[at..].trim_start_matches([' ', ':']);
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let line = line?;
        let Some(id) = field(&line, "\"id\"") else { continue };
        let result = if line.contains("\"tools/call\"") {
            r#"{"content":[{"type":"text","text":"hello"}],"isError":false}"#.to_string()
        } else if line.contains("\"initialize\"") {
            let v = field(&line, "\"protocolVersion\"").unwrap_or("\"2025-11-25\"");
            format!(
                r#"{{"protocolVersion":{v},"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"null","version":"0"}}}}"#
            )
        } else if line.contains("\"server/discover\"") {
            r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"null","version":"0"},"ttlMs":0,"cacheScope":"public"}"#.to_string()
        } else {
            "{}".to_string()
        };
        writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)?;
        out.flush()?;
    }
    Ok(())
}
