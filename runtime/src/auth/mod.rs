//! Bearer-token identity for the HTTP transport: a pluggable verifier yields the caller's
//! [`Principal`], which tools and resolvers see through the context and which is bound into every
//! sealed `requestState`.

use crate::principal::Principal;
use std::fmt;

#[cfg(feature = "http")]
pub mod env;
#[cfg(feature = "jwt")]
mod fetch;
#[cfg(feature = "jwt")]
mod hs256;
#[cfg(feature = "jwt")]
mod jwks;
#[cfg(feature = "jwt")]
mod jwt;

#[cfg(feature = "jwt")]
pub use hs256::Hs256Verifier;
#[cfg(feature = "jwt")]
pub use jwks::JwksVerifier;

/// The future a [`TokenVerifier`] returns: boxed, so verifiers can be stored as trait objects.
pub use futures_util::future::BoxFuture;

/// Why a bearer token was refused. The reason goes to the log; the client gets 401.
///
/// ```
/// use mcp_resolve_runtime::auth::AuthError;
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
/// endpoint, mapping `sub`/`iss` of an active token) or any other scheme. With the feature `jwt`,
/// [`JwksVerifier`] covers JWTs signed with the authorization server's published keys (RS256,
/// ES256, EdDSA) and [`Hs256Verifier`] shared-secret JWTs.
///
/// ```
/// use mcp_resolve_runtime::auth::BoxFuture;
/// use mcp_resolve_runtime::{Principal, auth::{AuthError, TokenVerifier}};
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

    /// The authorization server whose tokens this verifier takes (its issuer URL), when it knows
    /// one: the Protected Resource Metadata names it unless
    /// [`HttpOptions::authorization_server`](crate::HttpOptions::authorization_server) does.
    /// `None` by default; the JWT verifiers return the issuer they require.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::BoxFuture;
    /// use mcp_resolve_runtime::{Principal, auth::{AuthError, TokenVerifier}};
    /// struct Introspection;
    /// impl TokenVerifier for Introspection {
    ///     fn verify<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
    ///         Box::pin(async { Err(AuthError::new("not active")) })
    ///     }
    ///     fn authorization_server(&self) -> Option<&str> {
    ///         Some("https://auth.example.com")
    ///     }
    /// }
    /// assert_eq!(Introspection.authorization_server(), Some("https://auth.example.com"));
    /// ```
    fn authorization_server(&self) -> Option<&str> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verifier that names no authorization server leaves the metadata document's list to
    /// `HttpOptions` (none is made up).
    #[test]
    fn a_verifier_names_no_authorization_server_unless_it_says_so() {
        struct Anyone;
        impl TokenVerifier for Anyone {
            fn verify<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
                Box::pin(async { Err(AuthError::new("no")) })
            }
        }
        assert_eq!(Anyone.authorization_server(), None);
    }
}
