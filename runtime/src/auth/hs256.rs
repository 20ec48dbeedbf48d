//! JWTs signed with a secret shared with the authorization server (HS256).

use super::jwt::{ClaimChecks, Issuer};
use super::{AuthError, BoxFuture, TokenVerifier};
use crate::principal::Principal;
use crate::secret;
use jsonwebtoken::{Algorithm, DecodingKey};
use std::fmt;

/// Verifies HS256-signed JWTs: the signature, the audience given when it is built (the server's
/// canonical resource URI: a token without `aud`, or for another audience, is refused), `exp`
/// and `nbf` (with a leeway, 60 s by default), an `iat` not in the future, `iss` when configured
/// (then required), and the header's `typ` when [`Hs256Verifier::require_typ`] asks for one.
/// `sub` becomes the principal's subject, `iss` its issuer, `scope` (space-separated) or `scp`
/// (an array) its scopes.
///
/// **The secret** is 32 or more random bytes (RFC 7518 §3.2), never a passphrase: HMAC is not a
/// password hash, so one captured token would let a weak secret be guessed offline. Text — from
/// configuration, an environment variable — goes through [`Hs256Verifier::from_encoded`], which
/// reads hex or base64 exactly as [`StateKeys::from_encoded`](crate::seal::StateKeys::from_encoded)
/// reads state keys; make one with `openssl rand -base64 32`. [`Hs256Verifier::new`] takes the raw
/// bytes, e.g. from a secret store.
///
/// ```
/// use mcp_resolve_runtime::auth::Hs256Verifier;
/// // Made with `openssl rand -base64 32`.
/// let secret = "q83vASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4k=";
/// let verifier = Hs256Verifier::from_encoded(secret, "https://notes.example/mcp")
///     .unwrap()
///     .issuer("https://auth.example")
///     .require_typ("at+jwt")
///     .leeway(std::time::Duration::from_secs(30));
/// // A passphrase is refused, with how to make a secret instead.
/// let e = Hs256Verifier::from_encoded("a shared secret of at least 32 bytes!!", "https://notes.example/mcp")
///     .unwrap_err();
/// assert!(e.to_string().contains("openssl rand -base64 32"), "{e}");
/// assert!(Hs256Verifier::from_encoded(secret, "").is_err());
/// # let _ = verifier;
/// ```
#[derive(Clone)]
pub struct Hs256Verifier {
    key: DecodingKey,
    checks: ClaimChecks,
}

impl fmt::Debug for Hs256Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hs256Verifier").finish_non_exhaustive()
    }
}

/// Why a text is not an HS256 secret, for an [`AuthError`].
struct NotASecret(secret::DecodeError);

impl fmt::Display for NotASecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.describe("HS256 secret", f)
    }
}

impl Hs256Verifier {
    /// The shortest secret accepted, in bytes.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::Hs256Verifier;
    /// assert!(Hs256Verifier::new(&[7; Hs256Verifier::MIN_SECRET_BYTES], "notes").is_ok());
    /// assert!(Hs256Verifier::new(&[7; Hs256Verifier::MIN_SECRET_BYTES - 1], "notes").is_err());
    /// ```
    pub const MIN_SECRET_BYTES: usize = secret::MIN_BYTES;

    /// A verifier for tokens signed with `secret`, the raw bytes of a random key (at least
    /// [`Hs256Verifier::MIN_SECRET_BYTES`]), and issued for `audience`, which must not be empty.
    ///
    /// Text is refused here: a secret whose bytes are all printable ASCII is a passphrase, or a
    /// key still in hex or base64 (32 random bytes are all printable by a chance below 10⁻¹³) —
    /// give text to [`Hs256Verifier::from_encoded`].
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::Hs256Verifier;
    /// let random: [u8; 32] = [0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec,
    ///     0x2c, 0xc4, 0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60];
    /// assert!(Hs256Verifier::new(&random, "https://notes.example/mcp").is_ok());
    /// let e = Hs256Verifier::new(b"x", "https://notes.example/mcp").unwrap_err();
    /// assert!(e.to_string().contains("at least 32 bytes"));
    /// let e = Hs256Verifier::new(b"a passphrase of more than thirty-two bytes", "https://notes.example/mcp").unwrap_err();
    /// assert!(e.to_string().contains("from_encoded"), "{e}");
    /// ```
    pub fn new(secret: &[u8], audience: &str) -> Result<Self, AuthError> {
        if secret.len() < Self::MIN_SECRET_BYTES {
            return Err(AuthError::new(format!(
                "an HS256 secret needs at least {} bytes (RFC 7518 §3.2); this one has {}",
                Self::MIN_SECRET_BYTES,
                secret.len()
            )));
        }
        if secret.iter().all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()) {
            return Err(AuthError::new(format!(
                "this HS256 secret is printable text, which random bytes almost never are: a passphrase \
                 (refused: one captured token would let it be guessed offline), or a key still written \
                 in hex or base64 (give that to `Hs256Verifier::from_encoded`){}",
                secret::HOW_TO_MAKE_ONE
            )));
        }
        Self::with_key(secret, audience)
    }

    /// A verifier for tokens signed with the secret `encoded` writes in hex or base64 (standard
    /// or URL-safe, padded or not; surrounding whitespace ignored), as `openssl rand -base64 32`
    /// makes one, and issued for `audience`, which must not be empty. A passphrase, or a key
    /// under 32 bytes, is refused with a message saying how to make one.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::Hs256Verifier;
    /// let hex = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789";
    /// assert!(Hs256Verifier::from_encoded(hex, "notes").is_ok());
    /// let e = Hs256Verifier::from_encoded("c2hvcnQ=", "notes").unwrap_err();
    /// assert!(e.to_string().contains("5 bytes, fewer than 32"), "{e}");
    /// ```
    pub fn from_encoded(encoded: &str, audience: &str) -> Result<Self, AuthError> {
        let secret = secret::decode(encoded).map_err(|e| AuthError::new(NotASecret(e).to_string()))?;
        Self::with_key(&secret, audience)
    }

    /// A verifier for `secret`, whose length is checked already.
    fn with_key(secret: &[u8], audience: &str) -> Result<Self, AuthError> {
        let checks = ClaimChecks::new(audience, &[Algorithm::HS256], Issuer::Optional)?;
        let key = DecodingKey::from_secret(secret).map_err(|e| AuthError::new(e.to_string()))?;
        Ok(Self { key, checks })
    }

    /// Requires this issuer (`iss`): a token without one, or with another, is refused.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::Hs256Verifier;
    /// let v = Hs256Verifier::new(&[0x80; 32], "notes").unwrap().issuer("https://auth.example");
    /// # let _ = v;
    /// ```
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.checks.require_issuer(issuer);
        self
    }

    /// Requires the token's header to name this `typ`, e.g. `at+jwt` for OAuth access tokens
    /// (RFC 9068): a token of another type, or naming none, is refused. Compared as media types
    /// are: ignoring case, and `at+jwt` is `application/at+jwt`.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::Hs256Verifier;
    /// let v = Hs256Verifier::new(&[0x80; 32], "notes").unwrap().require_typ("at+jwt");
    /// # let _ = v;
    /// ```
    pub fn require_typ(mut self, typ: &str) -> Self {
        self.checks.require_typ(typ);
        self
    }

    /// The clock leeway for `exp`, `nbf` and `iat` (default 60 s).
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::Hs256Verifier;
    /// let v = Hs256Verifier::new(&[0x80; 32], "notes").unwrap().leeway(std::time::Duration::from_secs(5));
    /// # let _ = v;
    /// ```
    pub fn leeway(mut self, leeway: std::time::Duration) -> Self {
        self.checks.set_leeway(leeway);
        self
    }
}

impl TokenVerifier for Hs256Verifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move { self.checks.verify(token, &self.key, Algorithm::HS256) })
    }
    fn authorization_server(&self) -> Option<&str> {
        self.checks.issuer_url()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verifier_names_its_issuer_as_the_authorization_server_and_never_prints_its_key() {
        let secret = [7u8; 32];
        let plain = Hs256Verifier::new(&secret, "https://notes.example/mcp").unwrap();
        assert_eq!(plain.authorization_server(), None);
        let issued = plain.clone().issuer("https://auth.example.com");
        assert_eq!(issued.authorization_server(), Some("https://auth.example.com"));
        assert_eq!(format!("{issued:?}"), "Hs256Verifier { .. }");
    }

    const SECRET: [u8; 32] = [7u8; 32];
    const AUDIENCE: &str = "https://notes.example/mcp";

    fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    }

    /// An HS256 token with this `typ` and these claims besides `sub` and `aud`.
    fn token(typ: Option<&str>, claims: serde_json::Value) -> String {
        let mut header = jsonwebtoken::Header::new(Algorithm::HS256);
        header.typ = typ.map(str::to_owned);
        let mut all = serde_json::json!({"sub": "alice", "aud": AUDIENCE});
        all.as_object_mut().unwrap().extend(claims.as_object().unwrap().clone());
        jsonwebtoken::encode(&header, &all, &jsonwebtoken::EncodingKey::from_secret(&SECRET).unwrap()).unwrap()
    }

    fn verify(v: &Hs256Verifier, token: &str) -> Result<String, String> {
        futures_util::FutureExt::now_or_never(v.verify(token))
            .unwrap()
            .map(|p| p.subject)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_required_typ_is_compared_as_a_media_type_and_a_missing_one_is_refused() {
        let v = Hs256Verifier::new(&SECRET, AUDIENCE).unwrap().require_typ("at+jwt");
        let exp = serde_json::json!({"exp": now() + 300});
        for typ in ["at+jwt", "application/at+jwt", "AT+JWT"] {
            assert_eq!(verify(&v, &token(Some(typ), exp.clone())), Ok("alice".into()), "{typ}");
        }
        let other = verify(&v, &token(Some("JWT"), exp.clone())).unwrap_err();
        assert!(other.contains("the token's `typ` is \"JWT\", not `at+jwt`"), "{other}");
        let none = verify(&v, &token(None, exp.clone())).unwrap_err();
        assert!(none.contains("names no `typ`"), "{none}");
        // Without the requirement, any typ is taken.
        let any = Hs256Verifier::new(&SECRET, AUDIENCE).unwrap();
        assert_eq!(verify(&any, &token(Some("JWT"), exp)), Ok("alice".into()));
    }

    #[test]
    fn the_leeway_applies_to_exp_and_iat() {
        let lenient = Hs256Verifier::new(&SECRET, AUDIENCE)
            .unwrap()
            .leeway(std::time::Duration::from_secs(120));
        let strict = lenient.clone().leeway(std::time::Duration::ZERO);
        let expired = token(None, serde_json::json!({"exp": now() - 60}));
        assert_eq!(verify(&lenient, &expired), Ok("alice".into()));
        assert!(verify(&strict, &expired).is_err());
        let soon = token(None, serde_json::json!({"exp": now() + 600, "iat": now() + 60}));
        assert_eq!(verify(&lenient, &soon), Ok("alice".into()));
        let e = verify(&strict, &soon).unwrap_err();
        assert!(e.contains("issued in the future"), "{e}");
        let now_token = token(None, serde_json::json!({"exp": now() + 600, "iat": now() - 1}));
        assert_eq!(verify(&strict, &now_token), Ok("alice".into()));
    }

    #[test]
    fn a_required_issuer_must_be_the_tokens() {
        let v = Hs256Verifier::new(&SECRET, AUDIENCE)
            .unwrap()
            .issuer("https://auth.example.com");
        let ours = token(
            None,
            serde_json::json!({"exp": now() + 300, "iss": "https://auth.example.com"}),
        );
        assert_eq!(verify(&v, &ours), Ok("alice".into()));
        let theirs = token(
            None,
            serde_json::json!({"exp": now() + 300, "iss": "https://evil.example"}),
        );
        assert!(verify(&v, &theirs).is_err());
        let none = token(None, serde_json::json!({"exp": now() + 300}));
        assert!(verify(&v, &none).is_err());
    }

    #[test]
    fn scopes_come_from_scope_and_scp() {
        let v = Hs256Verifier::new(&SECRET, AUDIENCE).unwrap();
        let t = token(
            None,
            serde_json::json!({"exp": now() + 300, "scope": " notes:read  notes:write", "scp": ["admin"]}),
        );
        let p = futures_util::FutureExt::now_or_never(v.verify(&t)).unwrap().unwrap();
        assert_eq!(p.scopes, ["notes:read", "notes:write", "admin"]);
        let t = token(None, serde_json::json!({"exp": now() + 300}));
        let p = futures_util::FutureExt::now_or_never(v.verify(&t)).unwrap().unwrap();
        assert!(p.scopes.is_empty());
    }
}
