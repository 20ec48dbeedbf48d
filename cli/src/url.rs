//! A URL-mode page's address, taken apart so that a person sees where it really leads: the host
//! picked out, and warnings for what can mislead (punycode labels, plain http, a user name before
//! the host).

use std::ops::Range;

/// A page's URL and what was found in it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Page {
    /// The URL in full, as the server sent it.
    pub(crate) url: String,
    /// Its scheme, lowercased (`https`).
    pub(crate) scheme: String,
    /// Where the host is in `url` (empty when there is none).
    pub(crate) host: Range<usize>,
    /// Whether anything stands before the host (`user@`).
    pub(crate) userinfo: bool,
}

impl Page {
    /// Takes `url` apart; `None` when it has no `scheme://host`.
    pub(crate) fn parse(url: &str) -> Option<Self> {
        let (scheme, rest) = url.split_once("://")?;
        if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
            return None;
        }
        let start = scheme.len() + 3;
        let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..authority_len];
        let (userinfo, host_port, host_start) = match authority.rfind('@') {
            Some(at) => (true, &authority[at + 1..], start + at + 1),
            None => (false, authority, start),
        };
        let host_len = if host_port.starts_with('[') {
            host_port.find(']').map_or(host_port.len(), |i| i + 1)
        } else {
            host_port.rfind(':').unwrap_or(host_port.len())
        };
        if host_len == 0 {
            return None;
        }
        Some(Self {
            url: url.to_owned(),
            scheme: scheme.to_ascii_lowercase(),
            host: host_start..host_start + host_len,
            userinfo,
        })
    }

    /// The host, as written.
    pub(crate) fn host(&self) -> &str {
        &self.url[self.host.clone()]
    }

    /// Whether a browser may be asked to open it (http or https).
    pub(crate) fn openable(&self) -> bool {
        matches!(self.scheme.as_str(), "http" | "https")
    }

    /// The URL with the host passed through `style` (e.g. bold).
    pub(crate) fn highlighted(&self, style: impl Fn(&str) -> String) -> String {
        format!(
            "{}{}{}",
            &self.url[..self.host.start],
            style(self.host()),
            &self.url[self.host.end..]
        )
    }

    /// What a person should know before opening it.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let host = self.host().to_ascii_lowercase();
        if host.split('.').any(|label| label.starts_with("xn--")) {
            let decoded = unicode_host(&host);
            out.push(match decoded {
                Some(d) => format!("punycode host: it reads {d}, letters that may imitate a name you know"),
                None => "punycode host (xn--…) that does not decode: it may imitate a name you know".to_owned(),
            });
        }
        if !self.host().is_ascii() {
            out.push(format!(
                "the host {} has non-ASCII letters: check it is the site you expect",
                self.host()
            ));
        }
        if self.userinfo {
            out.push(format!(
                "the URL has a user name before the host (…@): the page is on {}, not on what stands before the @",
                self.host()
            ));
        }
        match self.scheme.as_str() {
            "https" => {}
            "http" if loopback(&host) => out.push(format!(
                "plain http, not https: the page is on this machine ({host}), unencrypted"
            )),
            "http" => out.push(format!(
                "plain http, not https: anything you type on {host} travels unencrypted and may be read or changed on the way"
            )),
            other => out.push(format!("`{other}:` is no web page: it will not be opened")),
        }
        out
    }
}

/// The host with its punycode labels (`xn--…`) decoded; `None` if one does not decode.
pub(crate) fn unicode_host(host: &str) -> Option<String> {
    let labels: Option<Vec<String>> = host
        .split('.')
        .map(|label| match label.strip_prefix("xn--") {
            Some(encoded) => punycode_decode(encoded),
            None => Some(label.to_owned()),
        })
        .collect();
    labels.map(|l| l.join("."))
}

/// Decodes one punycode label (RFC 3492, section 6.2), without its `xn--`.
fn punycode_decode(input: &str) -> Option<String> {
    const BASE: u32 = 36;
    const T_MIN: u32 = 1;
    const T_MAX: u32 = 26;
    const SKEW: u32 = 38;
    const DAMP: u32 = 700;
    fn adapt(delta: u32, points: u32, first: bool) -> u32 {
        let mut delta = if first { delta / DAMP } else { delta / 2 };
        delta += delta / points;
        let mut k = 0;
        while delta > ((BASE - T_MIN) * T_MAX) / 2 {
            delta /= BASE - T_MIN;
            k += BASE;
        }
        k + (BASE - T_MIN + 1) * delta / (delta + SKEW)
    }
    if !input.is_ascii() {
        return None;
    }
    let (basic, rest) = match input.rfind('-') {
        Some(i) => (&input[..i], &input[i + 1..]),
        None => ("", input),
    };
    let mut output: Vec<char> = basic.chars().collect();
    let (mut n, mut i, mut bias) = (128u32, 0u32, 72u32);
    let mut digits = rest.bytes().peekable();
    while digits.peek().is_some() {
        let old_i = i;
        let mut w = 1u32;
        let mut k = BASE;
        loop {
            let digit = match digits.next()? {
                b @ b'a'..=b'z' => u32::from(b - b'a'),
                b @ b'A'..=b'Z' => u32::from(b - b'A'),
                b @ b'0'..=b'9' => u32::from(b - b'0') + 26,
                _ => return None,
            };
            i = i.checked_add(digit.checked_mul(w)?)?;
            let t = if k <= bias {
                T_MIN
            } else if k >= bias + T_MAX {
                T_MAX
            } else {
                k - bias
            };
            if digit < t {
                break;
            }
            w = w.checked_mul(BASE - t)?;
            k += BASE;
        }
        let points = u32::try_from(output.len()).ok()? + 1;
        bias = adapt(i - old_i, points, old_i == 0);
        n = n.checked_add(i / points)?;
        i %= points;
        output.insert(usize::try_from(i).ok()?, char::from_u32(n)?);
        i += 1;
    }
    Some(output.into_iter().collect())
}

/// `localhost`, `127.x.x.x` or `[::1]`.
fn loopback(host: &str) -> bool {
    host == "localhost" || host == "[::1]" || host.starts_with("127.")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_host_is_found_past_user_names_and_before_ports() {
        let p = Page::parse("https://tracker.example:8443/sign-in?flow=abc").unwrap();
        assert_eq!(p.host(), "tracker.example");
        assert!(p.warnings().is_empty());
        let p = Page::parse("https://bank.example@evil.example/x").unwrap();
        assert_eq!(p.host(), "evil.example");
        assert!(p.warnings()[0].contains("user name before the host"));
        let p = Page::parse("http://[::1]:8000/").unwrap();
        assert_eq!(p.host(), "[::1]");
        assert_eq!(p.highlighted(|h| format!("<{h}>")), "http://<[::1]>:8000/");
        assert!(Page::parse("not a url").is_none());
        assert!(Page::parse("https:///path").is_none());
    }

    #[test]
    fn punycode_plain_http_and_other_schemes_are_warned_about() {
        let p = Page::parse("https://xn--pypal-4ve.com/login").unwrap();
        assert_eq!(
            p.warnings(),
            ["punycode host: it reads pаypal.com, letters that may imitate a name you know"]
        );
        assert_eq!(unicode_host("xn--shp-tna.example").as_deref(), Some("shöp.example"));
        assert_eq!(unicode_host("www.xn--mnchen-3ya.de").as_deref(), Some("www.münchen.de"));
        assert_eq!(unicode_host("xn--bcher-kva.example").as_deref(), Some("bücher.example"));
        assert_eq!(unicode_host("xn--!!.example"), None);
        let p = Page::parse("http://tracker.example/").unwrap();
        assert!(p.warnings().iter().any(|w| w.contains("unencrypted and may be read")));
        let p = Page::parse("http://127.0.0.1:8700/sign-in").unwrap();
        assert!(p.warnings().iter().any(|w| w.contains("this machine")));
        let p = Page::parse("file://host/etc/passwd").unwrap();
        assert!(!p.openable());
        assert!(p.warnings().iter().any(|w| w.contains("no web page")));
    }
}
