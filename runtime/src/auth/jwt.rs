//! What every JWT verifier checks once the signing key is known, in one place: the claims
//! (`aud` and `sub` required, `iss` when configured — and for verifiers that need one, an issuer
//! or an explicit "any issuer" configured at all —, `exp` / `nbf` with a leeway, no `iat` in the
//! future), the header's `typ` when one is required, and the principal they name (its scopes from
//! `scope` or `scp`).

use super::AuthError;
use crate::principal::Principal;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The default clock leeway for `exp`, `nbf` and `iat`, in seconds.
const DEFAULT_LEEWAY_SECS: u64 = 60;

/// The claim rules of one verifier, prepared for each algorithm it accepts (jsonwebtoken wants
/// one key family per `Validation`).
#[derive(Clone)]
pub(crate) struct ClaimChecks {
    validations: Vec<Validation>,
    issuer: Issuer,
    /// The issuer required ([`Issuer::One`]).
    issuer_url: Option<String>,
    /// The `typ` the header must name, normalized ([`media_type`]); `None`: any, or none.
    typ: Option<String>,
}

/// What a verifier was told about the issuer (`iss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Issuer {
    /// Nothing, and nothing is needed: `iss` is not checked (a shared secret belongs to one
    /// issuer already).
    Optional,
    /// Nothing yet, but the verifier needs to be told: every token is refused until it is (keys
    /// an authorization server publishes may sign for several issuers, its tenants).
    Needed,
    /// One issuer, which `iss` must name (the `Validation`s check it).
    One,
    /// Any issuer, on purpose.
    Any,
}

/// A media type as `typ` is compared (RFC 7515 §4.1.9, RFC 8725 §3.11): without its
/// `application/` prefix when no other `/` follows (`at+jwt` and `application/at+jwt` are the same
/// type), in lower case (media types are case-insensitive).
fn media_type(typ: &str) -> String {
    let lower = typ.to_ascii_lowercase();
    match lower.strip_prefix("application/") {
        Some(rest) if !rest.contains('/') => rest.to_owned(),
        _ => lower,
    }
}

impl ClaimChecks {
    /// Rules requiring `audience` (and `exp`, `sub`) for tokens signed with one of `algorithms`;
    /// `issuer` is [`Issuer::Optional`] or [`Issuer::Needed`].
    pub(crate) fn new(audience: &str, algorithms: &[Algorithm], issuer: Issuer) -> Result<Self, AuthError> {
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
        Ok(Self {
            validations,
            issuer,
            issuer_url: None,
            typ: None,
        })
    }

    /// Requires this issuer (`iss`): a token without one, or with another, is refused.
    pub(crate) fn require_issuer(&mut self, issuer: &str) {
        self.issuer = Issuer::One;
        self.issuer_url = Some(issuer.to_owned());
        for v in &mut self.validations {
            v.set_issuer(&[issuer]);
            v.required_spec_claims.insert("iss".into());
        }
    }

    /// The one issuer tokens must name, when one is required.
    pub(crate) fn issuer_url(&self) -> Option<&str> {
        self.issuer_url.as_deref()
    }

    /// Takes tokens of any issuer (undoes [`ClaimChecks::require_issuer`]).
    pub(crate) fn any_issuer(&mut self) {
        self.issuer = Issuer::Any;
        self.issuer_url = None;
        for v in &mut self.validations {
            v.iss = None;
            v.required_spec_claims.remove("iss");
        }
    }

    /// Requires the header's `typ` to name this media type (compared as [`media_type`] says).
    pub(crate) fn require_typ(&mut self, typ: &str) {
        self.typ = Some(media_type(typ));
    }

    /// Refuses a verifier that needs an issuer and was told none: every token would be refused.
    pub(crate) fn configured(&self) -> Result<(), AuthError> {
        if self.issuer == Issuer::Needed {
            return Err(AuthError::new(
                "this verifier was given no issuer, and the keys of an authorization server may sign \
                 tokens of several issuers (its tenants): call `.issuer(\"https://your-authorization-server\")` \
                 with the `iss` its tokens carry, or `.any_issuer()` to take every issuer those keys sign for",
            ));
        }
        Ok(())
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
        self.configured()?;
        let validation = self
            .validations
            .iter()
            .find(|v| v.algorithms.first() == Some(&alg))
            .ok_or_else(|| AuthError::new(format!("tokens signed with {alg:?} are not accepted")))?;
        let data = jsonwebtoken::decode::<Claims>(token, key, validation).map_err(|e| AuthError::new(e.to_string()))?;
        if let Some(want) = &self.typ {
            match data.header.typ.as_deref() {
                Some(typ) if media_type(typ) == *want => {}
                Some(typ) => {
                    return Err(AuthError::new(format!(
                        "the token's `typ` is {typ:?}, not `{want}`: another kind of JWT (an ID token, say) is not taken for an access token"
                    )));
                }
                None => {
                    return Err(AuthError::new(format!(
                        "the token's header names no `typ`; `{want}` is required"
                    )));
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typ_is_compared_as_a_media_type() {
        for same in ["at+jwt", "AT+JWT", "application/at+jwt", "Application/At+JWT"] {
            assert_eq!(media_type(same), "at+jwt", "{same}");
        }
        // Another type, or a prefix that is not `application/`, is not the same.
        for other in ["jwt", "JWT", "text/at+jwt", "application/x/at+jwt", "at+jwt ", ""] {
            assert_ne!(media_type(other), "at+jwt", "{other}");
        }
    }

    #[test]
    fn only_an_application_prefix_followed_by_no_other_slash_is_dropped() {
        assert_eq!(media_type("application/a/b"), "application/a/b");
        assert_eq!(media_type("Text/At+JWT"), "text/at+jwt");
    }

    #[test]
    fn the_checks_name_their_algorithms_and_their_issuer() {
        let mut checks = ClaimChecks::new("aud", &[Algorithm::HS256], Issuer::Optional).unwrap();
        assert!(checks.accepts(Algorithm::HS256));
        assert!(!checks.accepts(Algorithm::RS256));
        assert_eq!(checks.issuer_url(), None);
        checks.require_issuer("https://auth.example.com");
        assert_eq!(checks.issuer_url(), Some("https://auth.example.com"));
        checks.any_issuer();
        assert_eq!(checks.issuer_url(), None);
    }
}
