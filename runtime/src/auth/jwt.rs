//! What every JWT verifier checks once the signing key is known, in one place: the claims
//! (`aud` and `sub` required, `iss` when configured, `exp` / `nbf` with a leeway, no `iat` in
//! the future) and the principal they name (its scopes from `scope` or `scp`).

use super::AuthError;
use crate::context::Principal;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The default clock leeway for `exp`, `nbf` and `iat`, in seconds.
const DEFAULT_LEEWAY_SECS: u64 = 60;

/// The claim rules of one verifier, prepared for each algorithm it accepts (jsonwebtoken wants
/// one key family per `Validation`).
#[derive(Clone)]
pub(crate) struct ClaimChecks {
    validations: Vec<Validation>,
}

impl ClaimChecks {
    /// Rules requiring `audience` (and `exp`, `sub`) for tokens signed with one of `algorithms`.
    pub(crate) fn new(audience: &str, algorithms: &[Algorithm]) -> Result<Self, AuthError> {
        if audience.trim().is_empty() {
            return Err(AuthError::new(
                "a token verifier needs the audience it serves (the server's canonical resource URI); \
                 an empty one would accept tokens meant for any server",
            ));
        }
        let validations = algorithms
            .iter()
            .map(|&alg| {
                let mut v = Validation::new(alg);
                v.validate_nbf = true;
                v.leeway = DEFAULT_LEEWAY_SECS;
                v.set_audience(&[audience]);
                v.set_required_spec_claims(&["exp", "sub", "aud"]);
                v
            })
            .collect();
        Ok(Self { validations })
    }

    /// Requires this issuer (`iss`): a token without one, or with another, is refused.
    pub(crate) fn require_issuer(&mut self, issuer: &str) {
        for v in &mut self.validations {
            v.set_issuer(&[issuer]);
            v.required_spec_claims.insert("iss".into());
        }
    }

    /// The clock leeway for `exp`, `nbf` and `iat`.
    pub(crate) fn set_leeway(&mut self, leeway: Duration) {
        for v in &mut self.validations {
            v.leeway = leeway.as_secs();
        }
    }

    /// Whether tokens signed with `alg` are accepted at all.
    pub(crate) fn accepts(&self, alg: Algorithm) -> bool {
        self.validations.iter().any(|v| v.algorithms.first() == Some(&alg))
    }

    /// Verifies `token`'s signature with `key` (for `alg`, which the token's header must name)
    /// and its claims, and names its holder.
    pub(crate) fn verify(&self, token: &str, key: &DecodingKey, alg: Algorithm) -> Result<Principal, AuthError> {
        let validation = self
            .validations
            .iter()
            .find(|v| v.algorithms.first() == Some(&alg))
            .ok_or_else(|| AuthError::new(format!("tokens signed with {alg:?} are not accepted")))?;
        let data = jsonwebtoken::decode::<Claims>(token, key, validation).map_err(|e| AuthError::new(e.to_string()))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|_| AuthError::new("the system clock is before 1970"))?
            .as_secs_f64();
        if data.claims.iat.is_some_and(|iat| iat > now + validation.leeway as f64) {
            return Err(AuthError::new("token issued in the future (`iat`)"));
        }
        let scopes = data.claims.scopes();
        Ok(Principal {
            subject: data.claims.sub,
            issuer: data.claims.iss,
            scopes,
        })
    }
}

/// The claims a principal is made of (the rest are checked by jsonwebtoken's `Validation`).
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
