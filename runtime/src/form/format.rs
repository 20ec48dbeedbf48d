//! The string formats a form field may declare, checked on the server.

use super::Format;

impl Format {
    /// Whether `s` is a valid value of this format.
    pub(crate) fn check(self, s: &str) -> bool {
        match self {
            Self::Email => valid_email(s),
            Self::Uri => valid_uri(s),
            Self::Date => valid_date(s),
            Self::DateTime => valid_date_time(s),
        }
    }
}

fn valid_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.chars().any(char::is_whitespace)
}

fn valid_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn valid_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&s[0..4]), digits(&s[5..7]), digits(&s[8..10])) else {
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
    (1..=days).contains(&d)
}

fn valid_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (digits(&s[0..2]), digits(&s[3..5]), digits(&s[6..8])) else {
        return false;
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    let mut rest = &s[8..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest {
        "Z" | "z" => true,
        off if off.len() == 6 && (off.starts_with('+') || off.starts_with('-')) && off.as_bytes()[3] == b':' => {
            matches!((digits(&off[1..3]), digits(&off[4..6])), (Some(oh), Some(om)) if oh <= 23 && om <= 59)
        }
        _ => false,
    }
}

fn valid_date_time(s: &str) -> bool {
    match s.split_once(['T', 't']) {
        Some((d, t)) => valid_date(d) && valid_time(t),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
