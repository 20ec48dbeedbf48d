//! JWTs signed with a secret shared with the authorization server (HS256).

use super::jwt::ClaimChecks;
use super::{AuthError, BoxFuture, TokenVerifier};
use crate::context::Principal;
use jsonwebtoken::{Algorithm, DecodingKey};
use std::fmt;

/// Verifies HS256-signed JWTs: the signature, the audience given when it is built (the server's
/// canonical resource URI: a token without `aud`, or for another audience, is refused), `exp`
/// and `nbf` (with a leeway, 60 s by default), an `iat` not in the future, and `iss` when
/// configured, which is then required. `sub` becomes the principal's subject, `iss` its issuer,
/// `scope` (space-separated) or `scp` (an array) its scopes. The secret must have at least 32
/// bytes (RFC 7518 §3.2).
///
/// ```
/// use mcp_resolve_runtime::Hs256Verifier;
/// let verifier = Hs256Verifier::new(b"a shared secret of at least 32 bytes!!", "https://notes.example/mcp")
///     .unwrap()
///     .issuer("https://auth.example")
///     .leeway(std::time::Duration::from_secs(30));
/// assert!(Hs256Verifier::new(b"short", "https://notes.example/mcp").is_err());
/// assert!(Hs256Verifier::new(b"a shared secret of at least 32 bytes!!", "").is_err());
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

impl Hs256Verifier {
    /// The shortest secret accepted, in bytes.
    ///
    /// ```
    /// use mcp_resolve_runtime::Hs256Verifier;
    /// assert!(Hs256Verifier::new(&[7; Hs256Verifier::MIN_SECRET_BYTES], "notes").is_ok());
    /// assert!(Hs256Verifier::new(&[7; Hs256Verifier::MIN_SECRET_BYTES - 1], "notes").is_err());
    /// ```
    pub const MIN_SECRET_BYTES: usize = 32;

    /// A verifier for tokens signed with `secret` (at least [`Hs256Verifier::MIN_SECRET_BYTES`]
    /// bytes) and issued for `audience`, which must not be empty.
    ///
    /// ```
    /// use mcp_resolve_runtime::Hs256Verifier;
    /// let e = Hs256Verifier::new(b"x", "https://notes.example/mcp").unwrap_err();
    /// assert!(e.to_string().contains("at least 32 bytes"));
    /// ```
    pub fn new(secret: &[u8], audience: &str) -> Result<Self, AuthError> {
        if secret.len() < Self::MIN_SECRET_BYTES {
            return Err(AuthError::new(format!(
                "an HS256 secret needs at least {} bytes (RFC 7518 §3.2); this one has {}",
                Self::MIN_SECRET_BYTES,
                secret.len()
            )));
        }
        let checks = ClaimChecks::new(audience, &[Algorithm::HS256])?;
        let key = DecodingKey::from_secret(secret).map_err(|e| AuthError::new(e.to_string()))?;
        Ok(Self { key, checks })
    }

    /// Requires this issuer (`iss`): a token without one, or with another, is refused.
    ///
    /// ```
    /// use mcp_resolve_runtime::Hs256Verifier;
    /// let v = Hs256Verifier::new(&[7; 32], "notes").unwrap().issuer("https://auth.example");
    /// # let _ = v;
    /// ```
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.checks.require_issuer(issuer);
        self
    }

    /// The clock leeway for `exp`, `nbf` and `iat` (default 60 s).
    ///
    /// ```
    /// use mcp_resolve_runtime::Hs256Verifier;
    /// let v = Hs256Verifier::new(&[7; 32], "notes").unwrap().leeway(std::time::Duration::from_secs(5));
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
}
