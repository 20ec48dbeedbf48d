//! The string formats a form field may declare, checked on the server.

use super::Format;

impl Format {
    /// Whether `s` is a valid value of this format. A `const fn`, so `#[derive(FormSchema)]`
    /// checks a field's `default` against its `format` at compile time with the same rules the
    /// server applies to answers.
    ///
    /// ```
    /// use mcp_resolve_runtime::form::Format;
    /// const OK: bool = Format::Date.check("2024-02-29");
    /// assert!(OK);
    /// assert!(!Format::Date.check("yesterday"));
    /// ```
    pub const fn check(self, s: &str) -> bool {
        let b = s.as_bytes();
        match self {
            Self::Email => valid_email(b),
            Self::Uri => valid_uri(b),
            Self::Date => valid_date(b, b.len()),
            Self::DateTime => valid_date_time(b),
        }
    }
}

/// The char at byte `i` of UTF-8 `b` and the index after it (`b` comes from a `str`).
const fn next_char(b: &[u8], i: usize) -> (u32, usize) {
    let x = b[i] as u32;
    if x < 0x80 {
        (x, i + 1)
    } else if x < 0xE0 {
        (((x & 0x1F) << 6) | (b[i + 1] as u32 & 0x3F), i + 2)
    } else if x < 0xF0 {
        (
            ((x & 0x0F) << 12) | ((b[i + 1] as u32 & 0x3F) << 6) | (b[i + 2] as u32 & 0x3F),
            i + 3,
        )
    } else {
        (
            ((x & 0x07) << 18)
                | ((b[i + 1] as u32 & 0x3F) << 12)
                | ((b[i + 2] as u32 & 0x3F) << 6)
                | (b[i + 3] as u32 & 0x3F),
            i + 4,
        )
    }
}

/// `char::is_whitespace`, as a `const fn` over code points.
const fn is_whitespace(c: u32) -> bool {
    matches!(
        c,
        0x09..=0x0D | 0x20 | 0x85 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000
    )
}

/// `char::is_control`.
const fn is_control(c: u32) -> bool {
    matches!(c, 0x00..=0x1F | 0x7F..=0x9F)
}

/// Whether any char of `b` is whitespace (or, with `controls`, a control character).
const fn has_space(b: &[u8], controls: bool) -> bool {
    let mut i = 0;
    while i < b.len() {
        let (c, next) = next_char(b, i);
        if is_whitespace(c) || (controls && is_control(c)) {
            return true;
        }
        i = next;
    }
    false
}

/// The index of the first `x` in `b[from..]`, or `b.len()`.
const fn find(b: &[u8], from: usize, x: u8) -> usize {
    let mut i = from;
    while i < b.len() && b[i] != x {
        i += 1;
    }
    i
}

const fn valid_email(b: &[u8]) -> bool {
    let at = find(b, 0, b'@');
    if at == 0 || at + 1 >= b.len() {
        return false;
    }
    let domain_start = at + 1;
    if find(b, domain_start, b'@') != b.len() {
        return false;
    }
    b[domain_start] != b'.' && b[b.len() - 1] != b'.' && find(b, domain_start, b'.') != b.len() && !has_space(b, false)
}

const fn valid_uri(b: &[u8]) -> bool {
    let colon = find(b, 0, b':');
    if colon == 0 || colon + 1 >= b.len() || !b[0].is_ascii_alphabetic() {
        return false;
    }
    let mut i = 1;
    while i < colon {
        if !(b[i].is_ascii_alphanumeric() || matches!(b[i], b'+' | b'-' | b'.')) {
            return false;
        }
        i += 1;
    }
    !has_space(b, true)
}

/// The number written by the ASCII digits `b[from..to]` (none: `None`).
const fn digits(b: &[u8], from: usize, to: usize) -> Option<u32> {
    if from >= to {
        return None;
    }
    let mut n: u32 = 0;
    let mut i = from;
    while i < to {
        if !b[i].is_ascii_digit() {
            return None;
        }
        // Too many digits for a u32: not a number of a date or time.
        n = match n.checked_mul(10) {
            Some(tens) => match tens.checked_add((b[i] - b'0') as u32) {
                Some(n) => n,
                None => return None,
            },
            None => return None,
        };
        i += 1;
    }
    Some(n)
}

/// `b[..to]` is `YYYY-MM-DD`, a real day.
const fn valid_date(b: &[u8], to: usize) -> bool {
    if to != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(b, 0, 4), digits(b, 5, 7), digits(b, 8, 10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    d >= 1 && d <= days
}

/// `b[from..]` is `HH:MM:SS[.frac](Z|±HH:MM)`.
const fn valid_time(b: &[u8], from: usize) -> bool {
    // The shortest is `HH:MM:SSZ`.
    if b.len() - from < 9 || b[from + 2] != b':' || b[from + 5] != b':' {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (
        digits(b, from, from + 2),
        digits(b, from + 3, from + 5),
        digits(b, from + 6, from + 8),
    ) else {
        return false;
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    let mut rest = from + 8;
    if rest < b.len() && b[rest] == b'.' {
        let mut n = rest + 1;
        while n < b.len() && b[n].is_ascii_digit() {
            n += 1;
        }
        if n == rest + 1 {
            return false;
        }
        rest = n;
    }
    let left = b.len() - rest;
    if left == 1 {
        return b[rest] == b'Z' || b[rest] == b'z';
    }
    if left == 6 && (b[rest] == b'+' || b[rest] == b'-') && b[rest + 3] == b':' {
        return match (digits(b, rest + 1, rest + 3), digits(b, rest + 4, rest + 6)) {
            (Some(oh), Some(om)) => oh <= 23 && om <= 59,
            _ => false,
        };
    }
    false
}

const fn valid_date_time(b: &[u8]) -> bool {
    let mut t = 0;
    while t < b.len() && b[t] != b'T' && b[t] != b't' {
        t += 1;
    }
    t < b.len() && valid_date(b, t) && valid_time(b, t + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid_email(s: &str) -> bool {
        Format::Email.check(s)
    }
    fn valid_uri(s: &str) -> bool {
        Format::Uri.check(s)
    }
    fn valid_date(s: &str) -> bool {
        Format::Date.check(s)
    }
    fn valid_date_time(s: &str) -> bool {
        Format::DateTime.check(s)
    }

    #[test]
    fn formats() {
        assert!(valid_email("a@b.co"));
        assert!(!valid_email("a@b"));
        assert!(!valid_email("@b.co"));
        assert!(!valid_email("a b@c.de"));
        assert!(valid_uri("https://example.com/x"));
        assert!(valid_uri("mailto:a@b.co"));
        assert!(!valid_uri("example.com"));
        assert!(!valid_uri("1http://x"));
        assert!(valid_date("2024-02-29"));
        assert!(!valid_date("2023-02-29"));
        assert!(!valid_date("2024-13-01"));
        assert!(!valid_date("24-01-01"));
        assert!(valid_date_time("2026-09-01T10:00:00Z"));
        assert!(valid_date_time("2026-09-01T10:00:00.123+09:00"));
        assert!(!valid_date_time("2026-09-01 10:00:00"));
        assert!(!valid_date_time("2026-09-01T25:00:00Z"));
        assert!(!valid_date_time("2026-09-01T10:00:00"));
        assert!(!valid_email("a\u{a0}b@c.de"), "non-ASCII whitespace");
        assert!(!valid_uri("x:a\u{85}b"), "a control character");
        assert!(valid_email("ü@bücher.de"));
        assert!(!valid_date("2024-02-3x"));
        assert!(!valid_date_time("2026-09-01T10:00:00+0900"));
    }

    /// Every char, in the local part of an address and in the path of a URI, two bytes after a
    /// two-byte char: whitespace (and, in a URI, control characters) found exactly where the
    /// standard library finds it, so the UTF-8 decoding and the tables hold for all of Unicode.
    #[test]
    fn spaces_and_controls_are_found_in_every_char_as_the_standard_library_finds_them() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            if c == '@' {
                continue;
            }
            let email = format!("ü{c}x@c.de");
            assert_eq!(valid_email(&email), !c.is_whitespace(), "{email:?} ({:#x})", c as u32);
            let uri = format!("x:ü{c}x");
            let bad = c.is_whitespace() || c.is_control();
            assert_eq!(valid_uri(&uri), !bad, "{uri:?} ({:#x})", c as u32);
            // After any char the next one is read from where it starts: a space right after it
            // is found.
            let spaced = format!("ü{c} x@c.de");
            assert!(!valid_email(&spaced), "{spaced:?} ({:#x})", c as u32);
        }
    }

    /// The const decoder reads every char as the standard library does: its code point, and
    /// where the next one starts.
    #[test]
    fn every_char_is_decoded_as_the_standard_library_decodes_it() {
        let mut buf = [0u8; 6];
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            buf[0] = b'a';
            let n = c.encode_utf8(&mut buf[1..]).len();
            assert_eq!(next_char(&buf[..=n], 1), (c as u32, 1 + n), "{:#x}", c as u32);
            assert_eq!(next_char(&buf[..=n], 0), (u32::from(b'a'), 1));
        }
    }

    #[test]
    fn digits_read_a_number_and_refuse_anything_else() {
        assert_eq!(digits(b"2024", 0, 4), Some(2024));
        assert_eq!(digits(b"x07", 1, 3), Some(7));
        assert_eq!(digits(b"4294967295", 0, 10), Some(u32::MAX));
        assert_eq!(digits(b"4294967296", 0, 10), None);
        assert_eq!(digits(b"99999999999", 0, 11), None);
        assert_eq!(digits(b"12a4", 0, 4), None);
        assert_eq!(digits(b"12", 1, 1), None);
    }

    #[test]
    fn an_address_has_one_at_a_local_part_and_a_dotted_domain() {
        for ok in ["a@b.co", "a.b@c.d", "a@b.c.d", "x@y.z"] {
            assert!(valid_email(ok), "{ok}");
        }
        for bad in [
            "", "@", "a@", "@b.c", "a@b", "a@.b", "a@b.", "a@@b.c", "a@b@c.d", "ab.c", "ab.c@",
        ] {
            assert!(!valid_email(bad), "{bad}");
        }
    }

    #[test]
    fn a_uri_has_a_scheme_of_letters_digits_and_plus_minus_dot_then_something() {
        for ok in ["a:b", "a+b-c.d9:x", "Z:x", "mailto:a@b.co"] {
            assert!(valid_uri(ok), "{ok}");
        }
        for bad in ["", "a", ":b", "a:", "9a:b", "+a:b", "a_b:c", "a b:c", "a/b:c", "é:x"] {
            assert!(!valid_uri(bad), "{bad}");
        }
    }

    /// Days in month `m` of year `y`, counted another way than the code under test: the 1st of
    /// the next month minus one, with leap years from the Gregorian cycle of 400 years.
    fn days_in(y: u32, m: u32) -> u32 {
        const DAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        let leap = match (y % 400, y % 100, y % 4) {
            (0, _, _) => true,
            (_, 0, _) => false,
            (_, _, 0) => true,
            _ => false,
        };
        DAYS[(m - 1) as usize] + u32::from(m == 2 && leap)
    }

    #[test]
    fn a_date_is_a_real_day_of_the_gregorian_calendar() {
        for y in [
            0, 1, 4, 100, 200, 400, 1900, 1999, 2000, 2023, 2024, 2100, 2400, 9996, 9999,
        ] {
            for m in 0..=13 {
                for d in 0..=32 {
                    let s = format!("{y:04}-{m:02}-{d:02}");
                    let real = (1..=12).contains(&m) && d >= 1 && d <= days_in(y, m);
                    assert_eq!(valid_date(&s), real, "{s}");
                    let t = format!("{s}T00:00:00Z");
                    assert_eq!(valid_date_time(&t), real, "{t}");
                }
            }
        }
        for bad in [
            "2024-1-01",
            "2024-01-1",
            "2024/01/01",
            "2024-01/01",
            "2024/01-01",
            "2024-01-01x",
            "+024-01-01",
            "2024-0a-01",
            "202a-01-01",
            "2024--1-01",
            "2024-01-001",
            "",
        ] {
            assert!(!valid_date(bad), "{bad}");
        }
    }

    #[test]
    fn a_time_is_a_real_time_of_day_with_an_optional_fraction_and_a_zone() {
        for h in 0..=24 {
            for m in [0, 59, 60] {
                for sec in [0, 59, 60, 61] {
                    let s = format!("2026-09-01T{h:02}:{m:02}:{sec:02}Z");
                    assert_eq!(valid_date_time(&s), h <= 23 && m <= 59 && sec <= 60, "{s}");
                }
            }
        }
        for zh in 0..=24 {
            for zm in [0, 30, 59, 60] {
                for sign in ['+', '-'] {
                    let s = format!("2026-09-01T10:00:00{sign}{zh:02}:{zm:02}");
                    assert_eq!(valid_date_time(&s), zh <= 23 && zm <= 59, "{s}");
                }
            }
        }
        for ok in [
            "2026-09-01t10:00:00z",
            "2026-09-01T10:00:00.5Z",
            "2026-09-01T10:00:00.123456789-00:00",
        ] {
            assert!(valid_date_time(ok), "{ok}");
        }
        let bad = [
            "2026-09-01T10:00:00.Z",
            "2026-09-01T10:00:00.123",
            "2026-09-01T10:00:00.+01:00",
            "2026-09-01T10:00:00ZZ",
            "2026-09-01T10:00:00X",
            "2026-09-01T10:00:00*01:00",
            "2026-09-01T10:00:00+01-00",
            "2026-09-01T10:00:00+1:00",
            "2026-09-01T10:00:00+01:0a",
            "2026-09-01T10:00:00+a1:00",
            "2026-09-01T10:00:00+01:000",
            "2026-09-01T10-00:00Z",
            "2026-09-01T10:00-00Z",
            "2026-09-01T1:00:00Z",
            "2026-09-01T10:0a:00Z",
            "2026-09-01T10:00:0aZ",
            "2026-09-01T0a:00:00Z",
            "2026-09-01T",
            "2026-09-01",
            "T10:00:00Z",
            "2026-09-01X10:00:00Z",
        ];
        for s in bad {
            assert!(!valid_date_time(s), "{s}");
        }
    }
}
