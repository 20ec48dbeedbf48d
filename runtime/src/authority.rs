//! Hosts and origins, parsed: what names this machine (loopback), and the one parse of a `Host`
//! header, an `Origin` and a page URL's authority. Everything goes through the `http` crate's
//! parser; nothing here splits authorities by hand.

use http::Uri;
use http::uri::{Authority, Scheme};
use std::net::IpAddr;

/// Whether `host` (as [`Authority::host`] gives it: an IPv6 literal keeps its brackets) is this
/// machine: `localhost`, an IPv4 literal in 127.0.0.0/8, or `::1`. Decided on the parsed host,
/// never on a prefix: `127.attacker.example` is not loopback.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    literal.eq_ignore_ascii_case("localhost") || literal.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A `Host` header's value (`host[:port]`), parsed; `None` when it does not parse, is empty, or
/// carries userinfo (`user@host` is not a host: a parser that reads the part after `@` would be
/// fooled).
pub(crate) fn parse_host(value: &str) -> Option<Authority> {
    let authority: Authority = value.parse().ok()?;
    (!authority.host().is_empty() && !authority.as_str().contains('@') && valid_brackets(&authority))
        .then_some(authority)
}

/// An `Origin` header's value (`scheme://host[:port]`, RFC 6454), parsed into its scheme and
/// authority; `None` for `null`, a path, userinfo, or anything that does not parse.
pub(crate) fn parse_origin(value: &str) -> Option<(Scheme, Authority)> {
    let uri: Uri = value.parse().ok()?;
    let parts = uri.into_parts();
    let path_ok = parts
        .path_and_query
        .as_ref()
        .is_none_or(|p| p.as_str().is_empty() || p.as_str() == "/");
    let scheme = parts.scheme?;
    let authority = parts.authority?;
    (path_ok && !authority.host().is_empty() && !authority.as_str().contains('@') && valid_brackets(&authority))
        .then_some((scheme, authority))
}

/// An absolute URL, parsed; `None` when it does not parse or lacks a scheme or host.
pub(crate) fn parse_url(value: &str) -> Option<(Scheme, Authority, Uri)> {
    let uri: Uri = value.parse().ok()?;
    let scheme = uri.scheme()?.clone();
    let authority = uri.authority()?.clone();
    (!authority.host().is_empty() && valid_brackets(&authority)).then_some((scheme, authority, uri))
}

/// An IPv6 literal is a whole, valid address in brackets, followed by nothing or a port:
/// `[::1]evil.com` is no authority at all.
fn valid_brackets(authority: &Authority) -> bool {
    let host = authority.host();
    let Some(inner) = host.strip_prefix('[') else {
        return !host.contains([']', '[']);
    };
    let Some(inner) = inner.strip_suffix(']') else {
        return false;
    };
    if inner.parse::<std::net::Ipv6Addr>().is_err() {
        return false;
    }
    // What follows the literal: nothing, or `:port`.
    let rest = &authority.as_str()[authority.as_str().rfind(']').map_or(0, |i| i + 1)..];
    rest.is_empty()
        || rest
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_decided_on_the_parsed_host() {
        for yes in ["localhost", "127.0.0.1", "127.255.0.9", "[::1]", "::1", "LOCALHOST"] {
            assert!(is_loopback_host(yes), "{yes}");
        }
        for no in [
            "127.attacker.example",
            "127.0.0.1.attacker.example",
            "localhost.attacker.example",
            "[::1]evil.com",
            "0.0.0.0",
            "[::ffff:127.0.0.1]",
            "10.0.0.1",
            "",
        ] {
            assert!(!is_loopback_host(no), "{no}");
        }
    }

    #[test]
    fn hosts_parse_or_are_refused() {
        assert_eq!(
            parse_host("127.0.0.1:8000").map(|a| a.host().to_owned()).as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            parse_host("[::1]:8000").map(|a| a.host().to_owned()).as_deref(),
            Some("[::1]")
        );
        for bad in [
            "",
            "127.0.0.1:1@evil.com",
            "[::1",
            "[::1]evil.com",
            "[x]",
            "a b",
            "[l_b.[nwcfb[",
        ] {
            assert!(parse_host(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn origins_parse_or_are_refused() {
        let (scheme, authority) = parse_origin("http://[::1]:3000").unwrap();
        assert_eq!((scheme.as_str(), authority.host()), ("http", "[::1]"));
        for bad in [
            "null",
            "http://[::1]evil.com",
            "http://[x",
            "http://u@127.0.0.1",
            "http://127.0.0.1/path",
            "127.0.0.1",
            "",
        ] {
            assert!(parse_origin(bad).is_none(), "{bad:?}");
        }
    }
}
