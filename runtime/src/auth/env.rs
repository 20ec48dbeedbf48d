//! The environment variables that configure bearer authentication, so a deployed server is
//! configured without code. `HttpOptions::bearer_from_env` reads them and names the variable at
//! fault in its start-up error.

/// An HS256 shared secret: 32 or more random bytes in hex or base64 (`openssl rand -base64 32`),
/// read as [`Hs256Verifier::from_encoded`](crate::auth::Hs256Verifier::from_encoded) reads it.
pub const JWT_SECRET: &str = "MCP_RESOLVE_JWT_SECRET";
/// The authorization server's JWKS URL (RS256, ES256, EdDSA tokens).
pub const JWKS_URL: &str = "MCP_RESOLVE_JWKS_URL";
/// The audience tokens must be issued for: this server's canonical URI. Required with either of
/// the two above.
pub const JWT_AUDIENCE: &str = "MCP_RESOLVE_JWT_AUDIENCE";
/// The issuer tokens must come from: required with [`JWKS_URL`] (an authorization server's keys
/// may sign for several issuers), optional with [`JWT_SECRET`].
pub const JWT_ISSUER: &str = "MCP_RESOLVE_JWT_ISSUER";
/// The authorization server named in the Protected Resource Metadata (default: the issuer; one
/// of the two is required, as the metadata must name an authorization server).
pub const AUTH_SERVER: &str = "MCP_RESOLVE_AUTH_SERVER";
