//! Just enough JWT for the replicas run: HS256 tokens minted with the secret the servers verify
//! with (HMAC-SHA-256 of RFC 2104 over `sha2`, base64url without padding).

use sha2::{Digest, Sha256};

/// HMAC-SHA-256 (RFC 2104).
pub(crate) fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > block.len() {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(msg);
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner);
    let mut out = [0u8; 32];
    out.copy_from_slice(&outer.finalize());
    out
}

/// base64url without padding (RFC 4648 §5).
pub(crate) fn b64url(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// The HS256 secret the replicas are given (`MCP_RESOLVE_JWT_SECRET`), as `replicas.sh` writes
/// it: 32 or more random bytes in hex. (The servers also take base64; this driver needs only
/// what the script makes.)
pub(crate) fn secret_from_hex(text: &str) -> Result<Vec<u8>, String> {
    let text = text.trim();
    let bad = || format!("--secret: give the HS256 secret as 64 or more hex digits (32+ random bytes), not {text:?}");
    if !text.len().is_multiple_of(2) || text.len() < 64 {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|_| bad()))
        .collect()
}

/// A compact HS256 JWT with these claims.
pub(crate) fn hs256(secret: &[u8], claims: &serde_json::Value) -> String {
    let header = b64url(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = b64url(claims.to_string().as_bytes());
    let signing_input = format!("{header}.{payload}");
    let signature = b64url(&hmac_sha256(secret, signing_input.as_bytes()));
    format!("{signing_input}.{signature}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn secrets_are_hex_of_32_bytes_or_more() {
        let hex64 = "00ff".repeat(16);
        assert_eq!(secret_from_hex(&hex64).unwrap(), [0x00, 0xff].repeat(16));
        assert!(secret_from_hex(&hex64[..62]).is_err());
        assert!(secret_from_hex("a passphrase that is long enough to be 64 characters, or nearly!").is_err());
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn base64url_has_no_padding() {
        assert_eq!(b64url(b""), "");
        assert_eq!(b64url(b"f"), "Zg");
        assert_eq!(b64url(b"fo"), "Zm8");
        assert_eq!(b64url(b"foo"), "Zm9v");
        assert_eq!(b64url(b"foob"), "Zm9vYg");
        assert_eq!(b64url(&[0xfb, 0xff]), "-_8");
    }
}
