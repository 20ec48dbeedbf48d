//! Reading one inbound message: the JSON-RPC members and the params' members, found in one pass
//! over the frame and borrowed from it. No `serde_json::Value` tree of the message is built.

use super::envelope::{KnownMeta, Meta};
use super::jsonrpc::{ErrorObject, RequestId, member_names, raw_str, read_members};
use super::messages::{ParamsHead, ParamsInto, ParamsShape};
use serde::de::DeserializeSeed;
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// One inbound message, classified. Borrows the frame it was read from.
#[derive(Debug)]
pub(crate) enum Inbound<'a> {
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: ParamsHead<'a>,
    },
    Notification {
        method: Cow<'a, str>,
        params: ParamsHead<'a>,
    },
    Response {
        id: RequestId,
        outcome: Result<Value, ErrorObject>,
    },
    /// Not a valid message: answer with this error (the id is known when the frame had a usable one).
    Invalid { id: Option<RequestId>, error: ErrorObject },
}

/// The members of a message, each kept as raw text: finding them is one pass over the frame, and
/// nothing is built for members nobody reads. Filled in place ([`MembersInto`]): the params are
/// read into `params` as they are met.
#[derive(Default)]
struct Members<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    /// What `params` was; when an object, its members are in `params`.
    shape: ParamsShape,
    params: ParamsHead<'a>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

member_names! {
    /// The members of a message [`Members`] keeps.
    enum MessageMember {
        Jsonrpc = "jsonrpc",
        Id = "id",
        Method = "method",
        Params = "params",
        Result = "result",
        Error = "error",
    }
}

/// Reads a message's members into [`Members`] in place.
struct MembersInto<'x, 'a>(&'x mut Members<'a>);

impl<'a> serde::de::DeserializeSeed<'a> for MembersInto<'_, 'a> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'a>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'a> serde::de::Visitor<'a> for MembersInto<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }
    fn visit_map<A: serde::de::MapAccess<'a>>(self, mut map: A) -> Result<(), A::Error> {
        let m = self.0;
        read_members(&mut map, |name, map| {
            // Present even as `null`, but `params`, where `null` is none.
            match name {
                MessageMember::Other => {}
                MessageMember::Jsonrpc => m.jsonrpc = Some(map.next_value()?),
                MessageMember::Id => m.id = Some(map.next_value()?),
                MessageMember::Method => m.method = Some(map.next_value()?),
                MessageMember::Params => m.shape = map.next_value_seed(ParamsInto(&mut m.params))?,
                MessageMember::Result => m.result = Some(map.next_value()?),
                MessageMember::Error => m.error = Some(map.next_value()?),
            }
            Ok(())
        })
    }
}

fn invalid<'a>(id: Option<RequestId>, message: impl Into<String>) -> Inbound<'a> {
    Inbound::Invalid {
        id,
        error: ErrorObject::invalid_request(message),
    }
}

/// Classifies one frame's bytes.
pub(crate) fn classify(bytes: &[u8]) -> Inbound<'_> {
    classify_with(bytes, read)
}

/// Frames longer than this are read whole even when they hold a known `_meta`
/// ([`classify_knowing`]): the copy it makes is bounded by this, and in a larger frame the
/// envelope is a small part of the reading anyway.
const KNOWN_META_MAX_FRAME: usize = 16 * 1024;

/// [`classify`], for a frame from a client that sent `known` as an earlier request's `_meta`:
/// where the frame holds that text again as its params' `_meta`, the text is not read again.
///
/// The text is looked for after the frame's first `"_meta"` key. The frame is copied into
/// `scratch` with the text replaced by `{}`, and the copy is read. When the reader met the `{}`
/// exactly where the text was, as the params' `_meta`, reading the frame itself would have been
/// the same in every other member (the text is a whole JSON object: reading it ends where it
/// ends, in the state reading `{}` ends in), and the params' `_meta` is the text, in the frame.
/// In any other case (the key and text lie elsewhere, in the arguments or another member; the
/// copy does not read) the frame itself is read: a frame costs at most two readings.
pub(crate) fn classify_knowing<'a>(bytes: &'a [u8], known: Option<&KnownMeta>, scratch: &'a mut String) -> Inbound<'a> {
    classify_with(bytes, |text, m| {
        match known
            .filter(|_| text.len() <= KNOWN_META_MAX_FRAME)
            .and_then(|k| k.find(text))
        {
            Some(at) => read_replacing(text, at, scratch, m),
            None => read(text, m),
        }
    })
}

/// Classifies a frame whose object text `read` reads into its members. Inlined: the members are
/// not moved between the reading and the classifying.
#[inline(always)]
fn classify_with<'a>(
    bytes: &'a [u8],
    read: impl FnOnce(&'a str, &mut Members<'a>) -> Result<(), ErrorObject>,
) -> Inbound<'a> {
    let text = match object_text(bytes) {
        Ok(text) => text,
        Err(error) => return Inbound::Invalid { id: None, error },
    };
    let mut m = Members::default();
    match read(text, &mut m) {
        Ok(()) => classify_members(m),
        Err(error) => Inbound::Invalid { id: None, error },
    }
}

/// Reads `text` into `m` with its bytes `at` (a known `_meta`, [`classify_knowing`]) replaced by
/// `{}` in a copy, when they are the params' `_meta`; reads `text` itself otherwise.
fn read_replacing<'a>(
    text: &'a str,
    at: std::ops::Range<usize>,
    scratch: &'a mut String,
    m: &mut Members<'a>,
) -> Result<(), ErrorObject> {
    let (Some(before), Some(known), Some(after)) = (text.get(..at.start), text.get(at.clone()), text.get(at.end..))
    else {
        return read(text, m);
    };
    scratch.clear();
    scratch.push_str(before);
    scratch.push_str("{}");
    scratch.push_str(after);
    let copy: &'a str = scratch;
    let mut de = serde_json::Deserializer::from_str(copy);
    let read_whole = MembersInto(m).deserialize(&mut de).and_then(|()| de.end()).is_ok();
    let in_place = m
        .params
        .meta
        .text()
        .is_some_and(|t| std::ptr::eq(t.as_ptr(), copy.as_ptr().wrapping_add(at.start)));
    if read_whole && in_place {
        m.params.meta = Meta::known(known);
        return Ok(());
    }
    *m = Members::default();
    read(text, m)
}

/// The frame's text, when it is an object in UTF-8; the error it is answered with otherwise.
#[inline(always)]
fn object_text(bytes: &[u8]) -> Result<&str, ErrorObject> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(classify_other(bytes));
    }
    // Validated as UTF-8 once, here: raw members read from a `str` are not validated again.
    std::str::from_utf8(bytes).map_err(ErrorObject::parse_error)
}

/// Reads an object's text into `m`; the error it is answered with when it is not a message.
fn read<'a>(text: &'a str, m: &mut Members<'a>) -> Result<(), ErrorObject> {
    let mut de = serde_json::Deserializer::from_str(text);
    match MembersInto(m).deserialize(&mut de).and_then(|()| de.end()) {
        Ok(()) => Ok(()),
        // JSON that does not fit (a member given twice): not a request. The read stops at the
        // second member, so the rest of the frame is checked too: if it is not JSON, it is a
        // parse error like any other (found by fuzzing).
        Err(e) if e.is_data() => Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => ErrorObject::invalid_request(format!("Invalid Request: {e}")),
            Err(syntax) => ErrorObject::parse_error(syntax),
        }),
        Err(e) => Err(ErrorObject::parse_error(e)),
    }
}

/// What a message with these members is. Inlined, as [`classify_with`] is.
#[inline(always)]
fn classify_members(m: Members<'_>) -> Inbound<'_> {
    let id = match m.id {
        None => None,
        Some(raw) => match RequestId::from_raw(raw) {
            Some(id) => Some(id),
            None => return invalid(None, "Invalid Request: `id` must be a string or a number"),
        },
    };
    let version_ok = m
        .jsonrpc
        .is_some_and(|raw| raw.get() == "\"2.0\"" || raw_str(raw).is_some_and(|v| v == "2.0"));
    if !version_ok {
        return invalid(id, "Invalid Request: `jsonrpc` must be \"2.0\"");
    }
    if let Some(method) = m.method {
        let Some(method) = raw_str(method) else {
            return invalid(id, "Invalid Request: `method` must be a string");
        };
        let params = match m.shape {
            ParamsShape::Object => m.params,
            ParamsShape::Absent => ParamsHead::default(),
            ParamsShape::Other => {
                return match id {
                    Some(id) => Inbound::Invalid {
                        id: Some(id),
                        error: ErrorObject::invalid_params("Invalid params: `params` must be an object"),
                    },
                    // A notification with bad params gets no answer.
                    None => Inbound::Notification {
                        method,
                        params: ParamsHead::default(),
                    },
                };
            }
        };
        return match id {
            Some(id) => Inbound::Request { id, method, params },
            None => Inbound::Notification { method, params },
        };
    }
    let Some(id) = id else {
        return invalid(None, "Invalid Request: no `method`, and no `id`");
    };
    if let Some(result) = m.result {
        // An answer's tree is built only when its estimated memory is within reason (an
        // elicitation answer is a small flat object).
        let outcome = if crate::budget::tree_cost(result.get()) > crate::budget::MAX_RESULT_MEMORY {
            Err(ErrorObject::internal("the client's result is too large"))
        } else {
            serde_json::from_str(result.get()).map_err(|_| ErrorObject::internal("malformed result"))
        };
        return Inbound::Response { id, outcome };
    }
    if let Some(error) = m.error {
        let outcome = match serde_json::from_str::<ErrorObject>(error.get()) {
            Ok(e) => Err(e),
            Err(_) => Err(ErrorObject::internal("malformed error object in response")),
        };
        return Inbound::Response { id, outcome };
    }
    invalid(Some(id), "Invalid Request: no `method`, `result` or `error`")
}

/// Frames that are not a JSON object: a parse error, a batch, or a scalar.
fn classify_other(bytes: &[u8]) -> ErrorObject {
    // Checked as UTF-8 first, as objects are: skipping a value does not validate its strings.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(ErrorObject::parse_error),
        Err(e) => Err(ErrorObject::parse_error(e)),
    };
    match parsed {
        Err(error) => error,
        Ok(_) if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') => {
            ErrorObject::invalid_request("Invalid Request: batches are not supported")
        }
        Ok(_) => ErrorObject::invalid_request("Invalid Request: a message must be a JSON object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_every_shape() {
        assert!(matches!(classify(b"{nope"), Inbound::Invalid { id: None, error } if error.code == -32700));
        // A batch (an array, even after blanks) is told so; any other non-object is not a message.
        for (frame, says) in [
            (&b"[]"[..], "batches are not supported"),
            (b" \n[{\"jsonrpc\":\"2.0\"}]", "batches are not supported"),
            (b"42", "a message must be a JSON object"),
            (b" \"x\"", "a message must be a JSON object"),
        ] {
            assert!(
                matches!(classify(frame), Inbound::Invalid { id: None, error } if error.code == -32600 && error.message.contains(says)),
                "{}",
                String::from_utf8_lossy(frame)
            );
        }
        // Not UTF-8, so not JSON, whether or not the frame is an object (found by fuzzing: a
        // string or an array with invalid UTF-8 inside was taken as JSON and got -32600).
        for frame in [&b"\"\x8a\""[..], b"[1,\"\xff\"]", b"{\"\x8a\":1}"] {
            assert!(matches!(classify(frame), Inbound::Invalid { id: None, error } if error.code == -32700));
        }
        assert!(matches!(
            classify(br#"{"jsonrpc":"1.0","id":3,"method":"x"}"#),
            Inbound::Invalid { id: Some(_), error } if error.code == -32600
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#),
            Inbound::Invalid { id: None, error } if error.code == -32600
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":"a","method":"x","params":[1]}"#),
            Inbound::Invalid { error, .. } if error.code == -32602
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Inbound::Notification { .. }
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Inbound::Response { .. }
        ));
        let Inbound::Request { id, method, params } =
            classify(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}}"#)
        else {
            panic!("not a request")
        };
        assert_eq!(id, RequestId::from(7));
        assert_eq!(method, "tools/list");
        assert!(params.name.is_none() && !params.meta.has_envelope());
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
            Inbound::Invalid { id: None, error } if error.code == -32600
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#),
            Inbound::Invalid { error, .. } if error.code == -32600
        ));
        // A member given twice in a frame that is not JSON further on: a parse error.
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x" nope"#),
            Inbound::Invalid { id: None, error } if error.code == -32700
        ));
        let Inbound::Request { id, method, .. } =
            classify(br#"{"jsonrpc":"2.0","id":"a\u0062","method":"tools\/list"}"#)
        else {
            panic!("escapes are read")
        };
        assert_eq!(id, RequestId::String("ab".into()));
        assert_eq!(method, "tools/list");
    }

    /// The members are read in place with the rules a derived reader had: a member given twice
    /// is refused (-32600), in the params too, while unknown members may repeat; `params: null`
    /// is no params, any other non-object is -32602; a name written with escapes is its name;
    /// `protocolVersion: null` is present (and refused later as a version), `name: null` absent.
    #[test]
    fn members_are_read_in_place_as_a_derived_reader_read_them() {
        let code = |frame: &[u8]| match classify(frame) {
            Inbound::Invalid { error, .. } => Some(error.code),
            _ => None,
        };
        for twice in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}"#[..],
            br#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{},"params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a","name":"b"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{},"_meta":{}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":null,"na\u006de":"b"}}"#,
        ] {
            assert_eq!(code(twice), Some(-32600), "{}", String::from_utf8_lossy(twice));
        }
        let unknown_twice = br#"{"jsonrpc":"2.0","id":1,"method":"x","x":1,"x":2,"params":{"y":[1],"y":{}}}"#;
        assert!(matches!(classify(unknown_twice), Inbound::Request { .. }));
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#),
            Some(-32602)
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":"p"}"#),
            Some(-32602)
        );
        let frame = br#"{"params":{"n\u0061me":"echo","arguments":{"a":1},"protocolVersion":null,"uri":null,"_meta":[1]},"method":"tools/call","id":3,"jsonrpc":"2.0"}"#;
        let Inbound::Request { params, .. } = classify(frame) else {
            panic!("a request, whatever the order of its members")
        };
        assert_eq!(params.name.map(RawValue::get), Some("\"echo\""));
        assert_eq!(params.arguments.map(RawValue::get), Some(r#"{"a":1}"#));
        assert_eq!(params.protocol_version.map(RawValue::get), Some("null"));
        assert!(params.uri.is_none());
        assert!(
            !params.meta.has_envelope(),
            "a `_meta` that is not an object has no members"
        );
        let Inbound::Request { params, .. } = classify(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#)
        else {
            panic!("`params: null` is no params")
        };
        assert!(params.name.is_none());
    }

    /// A frame read knowing an earlier `_meta` is read as it is without, wherever the text lies
    /// (the params' `_meta`, the arguments, another member, twice, spaced, after a syntax error);
    /// the copy is used only where the text is the params' `_meta`.
    #[test]
    fn a_known_meta_is_skipped_only_where_it_is_the_params_meta() {
        let m = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;
        let known = KnownMeta::new(m);
        // A request of `len` bytes with the text as its `_meta`.
        let padded = |len: usize| {
            let frame = |pad: usize| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{m},"pad":"{}"}}}}"#,
                    "x".repeat(pad)
                )
            };
            let frame = frame(len - frame(0).len());
            assert_eq!(frame.len(), len);
            frame
        };
        // (frame, whether the copy is what was read)
        let cases = [
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{m},"name":"echo","arguments":{{"text":"hi"}}}}}}"#
                ),
                true,
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{}},"_meta" :  {m} }}}}"#
                ),
                true,
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{{"_meta":{m}}}}}"#),
                true,
            ),
            // The text in the arguments too, under another key: the `_meta` key is what is found.
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":{m}}},"_meta":{m}}}}}"#
                ),
                true,
            ),
            // A `_meta` key first in the arguments: the frame itself is read, its `_meta` where it is.
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"_meta":{m}}},"_meta":{m}}}}}"#
                ),
                false,
            ),
            // Only in the arguments, or nested deeper, or outside the params: no `_meta` taken from it.
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"_meta":{m}}}}}}}"#
                ),
                false,
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","_meta":{m},"params":{{"name":"echo"}}}}"#),
                false,
            ),
            (format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"_meta":{m}}}}}"#), false),
            // Given twice (refused, -32600), or with a syntax error further on (-32700, at the
            // frame's own column).
            (
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{m},"_meta":{m}}}}}"#),
                false,
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{m},"name":}}}}"#),
                false,
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{m}}}}} tail"#),
                false,
            ),
            // Another `_meta`: not found.
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{}}}"#.to_owned(),
                false,
            ),
            // At the bound (16 KiB, as docs/SECURITY.md says), copied; one byte over it, read whole.
            (padded(16 * 1024), true),
            (padded(16 * 1024 + 1), false),
        ];
        for (frame, copied) in cases {
            let mut scratch = String::new();
            let plain = format!("{:?}", classify(frame.as_bytes()));
            let knowing = classify_knowing(frame.as_bytes(), Some(&known), &mut scratch);
            assert_eq!(format!("{knowing:?}"), plain, "{frame}");
            let params = match &knowing {
                Inbound::Request { params, .. } | Inbound::Notification { params, .. } => Some(params),
                _ => None,
            };
            if let Some(meta) = params.and_then(|p| p.meta.text()) {
                let at = meta.as_ptr() as usize - frame.as_ptr() as usize;
                assert!(at < frame.len(), "the `_meta` lies in the frame itself: {frame}");
            }
            // Read from the copy: the method's text is not the frame's.
            let method_in_copy = match &knowing {
                Inbound::Request { method, .. } | Inbound::Notification { method, .. } => {
                    !frame.as_bytes().as_ptr_range().contains(&method.as_ptr())
                }
                _ => false,
            };
            assert_eq!(method_in_copy, copied, "{frame}");
        }
        // The text, or a `_meta` member of it, put at every place of a frame (most of them make
        // it unreadable): read the same either way.
        let base = r#"{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"a\"b","n":[1,{}]}}}"#;
        let mut places = 0;
        for at in (0..=base.len()).filter(|&i| base.is_char_boundary(i)) {
            for insert in [m.to_owned(), format!(r#""_meta":{m},"#), format!(r#","_meta":{m}"#)] {
                let frame = format!("{}{insert}{}", &base[..at], &base[at..]);
                let mut scratch = String::new();
                let knowing = classify_knowing(frame.as_bytes(), Some(&known), &mut scratch);
                assert_eq!(
                    format!("{knowing:?}"),
                    format!("{:?}", classify(frame.as_bytes())),
                    "{frame}"
                );
                places += usize::from(matches!(&knowing, Inbound::Request { method, .. }
                    if !frame.as_bytes().as_ptr_range().contains(&method.as_ptr())));
            }
        }
        // The copy was read at the four insertions that make a params member: first, between
        // `name` and `arguments` (either way round its comma), and last.
        assert_eq!(places, 4, "the copy was read at {places} places");
    }
}
