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
///                 "alice-token" => Ok(Principal { subject: "alice".into(), issuer: None }),
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

/// Verifies HS256-signed JWTs: signature, `exp` (and `nbf`), and `iss` / `aud` when configured.
/// `sub` becomes the principal's subject, `iss` its issuer.
///
/// ```
/// use mcp_resolve_runtime::Hs256Verifier;
/// let verifier = Hs256Verifier::new(b"a shared secret of at least 32 bytes!!")
///     .unwrap()
///     .issuer("https://auth.example")
///     .audience("notes");
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
    /// A verifier for tokens signed with `secret` (an unusable secret, e.g. empty, is refused).
    pub fn new(secret: &[u8]) -> Result<Self, AuthError> {
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.validate_aud = false;
        validation.set_required_spec_claims(&["exp", "sub"]);
        let key = jsonwebtoken::DecodingKey::from_secret(secret).map_err(|e| AuthError::new(e.to_string()))?;
        Ok(Self { key, validation })
    }
    /// Requires this issuer (`iss`).
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.validation.set_issuer(&[issuer]);
        self
    }
    /// Requires this audience (`aud`).
    pub fn audience(mut self, audience: &str) -> Self {
        self.validation.set_audience(&[audience]);
        self.validation.validate_aud = true;
        self
    }
}

#[cfg(feature = "jwt")]
#[derive(serde::Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    iss: Option<String>,
}

#[cfg(feature = "jwt")]
impl TokenVerifier for Hs256Verifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move {
            let data = jsonwebtoken::decode::<Claims>(token, &self.key, &self.validation)
                .map_err(|e| AuthError::new(e.to_string()))?;
            Ok(Principal {
                subject: data.claims.sub,
                issuer: data.claims.iss,
            })
        })
    }
}
