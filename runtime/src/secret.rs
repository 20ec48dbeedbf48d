//! Secrets written as text — in configuration, in an environment variable: 32 or more random
//! bytes in hex or base64, never a passphrase. One set of rules and one error text for every such
//! secret: the `requestState` keys (`StateKeys::from_encoded`) and the HS256 secret
//! (`Hs256Verifier::from_encoded`, feature `jwt`).
//!
//! Passphrases are refused because these secrets are used as keys as they are (HKDF, HMAC), not
//! through a password hash: a weak one could be guessed offline from one captured state or token.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_PAD_INDIFFERENT, URL_SAFE_PAD_INDIFFERENT};
use std::fmt;

/// The fewest random bytes a secret may have.
pub(crate) const MIN_BYTES: usize = 32;

/// Why a text is not a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// Nothing given (an empty value).
    Empty,
    /// Neither hex nor base64: a passphrase, say.
    NotEncoded,
    /// It decodes to this many bytes, fewer than [`MIN_BYTES`].
    TooShort(usize),
}

impl DecodeError {
    /// The message for this error about a secret called `what` ("requestState key", "HS256
    /// secret"): what is wrong, then how to make a good one.
    pub(crate) fn describe(self, what: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "no {what} given"),
            Self::NotEncoded => write!(f, "the {what} is neither hex nor base64 (passphrases are not taken)"),
            Self::TooShort(n) => write!(f, "the {what} decodes to {n} bytes, fewer than {MIN_BYTES}"),
        }?;
        f.write_str(HOW_TO_MAKE_ONE)
    }
}

/// The end of every message about a bad secret: how to make one.
pub(crate) const HOW_TO_MAKE_ONE: &str = "; a key is 32 or more random bytes in hex or base64: make one with \
     `openssl rand -base64 32` (or `head -c32 /dev/urandom | base64`)";

/// The bytes (32 or more) of one secret written in hex or base64 (standard or URL-safe alphabet,
/// padded or not), surrounding whitespace ignored.
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, DecodeError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DecodeError::Empty);
    }
    // Hex first: an even number of hex digits is hex (so a short hex key is refused as short, not
    // read as base64). Base64 of 32 bytes is never taken for hex (43 characters, or 44 with `=`),
    // and base64 of more random bytes is only hex digits by a chance below 2^-90.
    let bytes = if text.len().is_multiple_of(2) && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        let nibble = |b: u8| match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => b - b'A' + 10,
        };
        text.as_bytes()
            .chunks_exact(2)
            .map(|p| (nibble(p[0]) << 4) | nibble(p[1]))
            .collect()
    } else if text.contains(['-', '_']) {
        URL_SAFE_PAD_INDIFFERENT
            .decode(text)
            .map_err(|_| DecodeError::NotEncoded)?
    } else {
        STANDARD_PAD_INDIFFERENT
            .decode(text)
            .map_err(|_| DecodeError::NotEncoded)?
    };
    if bytes.len() < MIN_BYTES {
        return Err(DecodeError::TooShort(bytes.len()));
    }
    Ok(bytes)
}
