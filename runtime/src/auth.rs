//! Bearer-token identity for the HTTP transport: a pluggable verifier yields the caller's
//! [`Principal`], which tools and resolvers see through the context and which is bound into every
//! sealed `requestState`.

use crate::context::Principal;
use std::fmt;

/// The future a [`TokenVerifier`] returns: boxed, so verifiers can be stored as trait objects.
pub use futures_util::future::BoxFuture;

/// Why a bearer token was refused. The reason goes to the log; the client gets 401.
///
/// ```
/// use mcp_resolve_runtime::AuthError;
/// assert_eq!(AuthError::new("expired").to_string(), "expired");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthError(String);

impl AuthError {
    /// An error with this reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Self(reason.into())
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AuthError {}

/// Checks a bearer token and names its holder.
///
/// Implement it for OAuth token introspection (a POST to the authorization server's introspection
/// endpoint, mapping `sub`/`iss` of an active token) or for JWTs signed with keys from a JWKS
/// document (fetch and cache the keys, pick one by `kid`, verify); [`Hs256Verifier`] (feature
/// `jwt`) covers shared-secret JWTs.
///
/// ```
/// use mcp_resolve_runtime::auth::BoxFuture;
/// use mcp_resolve_runtime::{AuthError, Principal, TokenVerifier};
///
/// /// A fixed token table, e.g. for tests.
/// struct Static;
/// impl TokenVerifier for Static {
///     fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
///         Box::pin(async move {
///             match token {
///                 "alice-token" => Ok(Principal { subject: "alice".into(), issuer: None, scopes: vec![] }),
///                 _ => Err(AuthError::new("unknown token")),
///             }
///         })
///     }
/// }
/// # let _ = Static;
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (without the `Bearer ` prefix).
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>>;
}

/// Verifies HS256-signed JWTs: the signature, `exp` and `nbf` (with a leeway, 60 s by
/// default), an `iat` not in the future, and `iss` / `aud` when configured, which are then
/// required: a token without them is refused. `sub` becomes the principal's subject, `iss` its
/// issuer. The secret must have at least 32 bytes (RFC 7518 §3.2).
///
/// ```
/// use mcp_resolve_runtime::Hs256Verifier;
/// let verifier = Hs256Verifier::new(b"a shared secret of at least 32 bytes!!")
///     .unwrap()
///     .issuer("https://auth.example")
///     .audience("notes");
/// assert!(Hs256Verifier::new(b"short").is_err());
/// # let _ = verifier;
/// ```
#[cfg(feature = "jwt")]
#[derive(Clone)]
pub struct Hs256Verifier {
    key: jsonwebtoken::DecodingKey,
    validation: jsonwebtoken::Validation,
}

#[cfg(feature = "jwt")]
impl fmt::Debug for Hs256Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hs256Verifier").finish_non_exhaustive()
    }
}

#[cfg(feature = "jwt")]
impl Hs256Verifier {
    /// The shortest secret accepted, in bytes.
    pub const MIN_SECRET_BYTES: usize = 32;

    /// A verifier for tokens signed with `secret`, which must have at least
    /// [`Hs256Verifier::MIN_SECRET_BYTES`] bytes.
    pub fn new(secret: &[u8]) -> Result<Self, AuthError> {
        if secret.len() < Self::MIN_SECRET_BYTES {
            return Err(AuthError::new(format!(
                "an HS256 secret needs at least {} bytes (RFC 7518 §3.2); this one has {}",
                Self::MIN_SECRET_BYTES,
                secret.len()
            )));
        }
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.validate_aud = false;
        validation.validate_nbf = true;
        validation.leeway = 60;
        validation.set_required_spec_claims(&["exp", "sub"]);
        let key = jsonwebtoken::DecodingKey::from_secret(secret).map_err(|e| AuthError::new(e.to_string()))?;
        Ok(Self { key, validation })
    }
    /// Requires this issuer (`iss`): a token without one, or with another, is refused.
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.validation.set_issuer(&[issuer]);
        self.validation.required_spec_claims.insert("iss".into());
        self
    }
    /// Requires this audience (`aud`): a token without one, or for another, is refused.
    pub fn audience(mut self, audience: &str) -> Self {
        self.validation.set_audience(&[audience]);
        self.validation.validate_aud = true;
        self.validation.required_spec_claims.insert("aud".into());
        self
    }
    /// The clock leeway for `exp`, `nbf` and `iat` (default 60 s).
    pub fn leeway(mut self, leeway: std::time::Duration) -> Self {
        self.validation.leeway = leeway.as_secs();
        self
    }
}

#[cfg(feature = "jwt")]
#[derive(serde::Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    iat: Option<f64>,
    /// OAuth scopes, space-separated (RFC 8693 §4.2, RFC 9068 §2.2.3).
    #[serde(default)]
    scope: Option<String>,
    /// Scopes as an array, as some authorization servers send them.
    #[serde(default)]
    scp: Option<Vec<String>>,
}

#[cfg(feature = "jwt")]
impl Claims {
    fn scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self
            .scope
            .as_deref()
            .unwrap_or("")
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect();
        scopes.extend(self.scp.iter().flatten().cloned());
        scopes
    }
}

#[cfg(feature = "jwt")]
impl TokenVerifier for Hs256Verifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move {
            let data = jsonwebtoken::decode::<Claims>(token, &self.key, &self.validation)
                .map_err(|e| AuthError::new(e.to_string()))?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_err(|_| AuthError::new("the system clock is before 1970"))?
                .as_secs_f64();
            if data
                .claims
                .iat
                .is_some_and(|iat| iat > now + self.validation.leeway as f64)
            {
                return Err(AuthError::new("token issued in the future (`iat`)"));
            }
            let scopes = data.claims.scopes();
            Ok(Principal {
                subject: data.claims.sub,
                issuer: data.claims.iss,
                scopes,
            })
        })
    }
}
