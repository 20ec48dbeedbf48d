//! JWTs signed with the authorization server's own keys (RS256, ES256, EdDSA), which it publishes
//! as a JWKS document: fetched, cached, refreshed when a token names a key not yet seen, at a
//! bounded rate.

use super::fetch::JwksSource;
use super::jwt::ClaimChecks;
use super::{AuthError, BoxFuture, TokenVerifier};
use crate::context::Principal;
use base64::Engine as _;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// The algorithms a [`JwksVerifier`] accepts: asymmetric only. `none` and the HMAC family are
/// never accepted — a public key taken for an HMAC secret would let anyone sign.
const ALGORITHMS: [Algorithm; 3] = [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA];

/// The smallest RSA modulus accepted, in bits.
const MIN_RSA_BITS: usize = 2048;

/// Verifies JWTs signed with the keys an authorization server publishes at its JWKS URL (its
/// metadata's `jwks_uri`): RS256, ES256 (P-256) and EdDSA (Ed25519). The claims are checked as
/// [`Hs256Verifier`](super::Hs256Verifier) checks them: the audience given when it is built is
/// required (a token without `aud`, or for another audience, is refused), `exp` and `nbf` with a
/// leeway (60 s by default), no `iat` in the future, and `iss` when configured. `sub` becomes the
/// principal's subject, `iss` its issuer, `scope` or `scp` its scopes.
///
/// **Keys.** The token's `alg` must be one of the three above and match the key: an RSA key
/// (`kty` `RSA`, at least 2048 bits) for RS256, a P-256 key (`kty` `EC`) for ES256, an Ed25519
/// key (`kty` `OKP`) for EdDSA; a key whose `alg` names another algorithm, whose `use` is not
/// `sig` or whose `key_ops` lack `verify` is ignored, and symmetric (`oct`) keys are never used.
/// The key is chosen by the token's `kid`; a token without `kid` is accepted only when the set
/// holds exactly one key for its algorithm.
///
/// **Fetching.** The set is fetched on first use (or up front with [`JwksVerifier::fetch`]),
/// again once it is older than [`JwksVerifier::max_key_age`] (1 h by default), and when a token
/// names a key it does not hold (a rotated key) — at most once per
/// [`JwksVerifier::min_refresh_interval`] (60 s by default), so tokens with made-up `kid`s cannot
/// make it hammer the authorization server; concurrent verifications share one fetch. A fetch
/// is one GET of at most [`JwksVerifier::MAX_JWKS_BYTES`] within
/// [`JwksVerifier::fetch_timeout`] (10 s by default), redirects not followed; when it fails, the
/// keys held are kept and a token needing another is refused. The URL must be `https://`
/// (checked against the Mozilla root certificates compiled in); `http://` is refused except to
/// a loopback host.
///
/// ```
/// use mcp_resolve_runtime::JwksVerifier;
/// use std::time::Duration;
/// let verifier = JwksVerifier::new("https://auth.example/.well-known/jwks.json", "https://notes.example/mcp")
///     .unwrap()
///     .issuer("https://auth.example")
///     .leeway(Duration::from_secs(30))
///     .min_refresh_interval(Duration::from_secs(120));
/// // Keys fetched in the clear could be swapped on the way: refused but on loopback.
/// assert!(JwksVerifier::new("http://auth.example/jwks.json", "https://notes.example/mcp").is_err());
/// assert!(JwksVerifier::new("http://127.0.0.1:8080/jwks.json", "https://notes.example/mcp").is_ok());
/// // The audience is required.
/// assert!(JwksVerifier::new("https://auth.example/jwks.json", "").is_err());
/// # let _ = verifier;
/// ```
pub struct JwksVerifier {
    source: JwksSource,
    checks: ClaimChecks,
    min_refresh_interval: Duration,
    max_key_age: Duration,
    fetch_timeout: Duration,
    /// The keys held; `None` before the first successful fetch.
    keys: RwLock<Option<Arc<KeySet>>>,
    /// Held while fetching; remembers when the last fetch was started.
    refresh: tokio::sync::Mutex<Option<Instant>>,
}

/// One fetched JWKS document, reduced to the keys this verifier can use.
struct KeySet {
    keys: Vec<Key>,
    fetched_at: Instant,
    /// Counts fetches that replaced the set, so a waiter sees another one has refreshed.
    generation: u64,
}

struct Key {
    kid: Option<String>,
    alg: Algorithm,
    key: DecodingKey,
}

impl KeySet {
    /// The key for a token with this `kid` and `alg`.
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<&DecodingKey> {
        let mut usable = self.keys.iter().filter(|k| k.alg == alg);
        match kid {
            Some(kid) => usable.find(|k| k.kid.as_deref() == Some(kid)).map(|k| &k.key),
            None => match (usable.next(), usable.next()) {
                (Some(only), None) => Some(&only.key),
                _ => None,
            },
        }
    }
}

/// Why a verification wants the set fetched.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// None held yet, or the token names a key not held: wait for the fetch.
    Missing,
    /// The set is older than the maximum age: fetch if nobody is, and go on with the old keys.
    Stale,
}

impl fmt::Debug for JwksVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwksVerifier")
            .field("url", &self.source.url())
            .field("min_refresh_interval", &self.min_refresh_interval)
            .field("max_key_age", &self.max_key_age)
            .field("fetch_timeout", &self.fetch_timeout)
            .finish_non_exhaustive()
    }
}

/// The algorithm `jwk` may verify, or why it is left out.
fn usable_for(jwk: &Jwk) -> Result<Algorithm, String> {
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return Err("its `use` is not `sig`".into());
    }
    if let Some(ops) = &jwk.common.key_operations
        && !ops.contains(&KeyOperations::Verify)
    {
        return Err("its `key_ops` lack `verify`".into());
    }
    let (alg, named) = match &jwk.algorithm {
        AlgorithmParameters::RSA(rsa) => {
            let n = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(rsa.n.trim_end_matches('='))
                .map_err(|_| "its modulus is not base64url".to_string())?;
            let significant = n.iter().skip_while(|b| **b == 0).count();
            if significant * 8 < MIN_RSA_BITS {
                return Err(format!("RSA keys under {MIN_RSA_BITS} bits are refused"));
            }
            (Algorithm::RS256, KeyAlgorithm::RS256)
        }
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => {
            (Algorithm::ES256, KeyAlgorithm::ES256)
        }
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
            (Algorithm::EdDSA, KeyAlgorithm::EdDSA)
        }
        AlgorithmParameters::OctetKey(_) => return Err("symmetric keys are never taken from a JWKS".into()),
        _ => return Err("its key type or curve is not supported (RSA, EC P-256, OKP Ed25519)".into()),
    };
    match jwk.common.key_algorithm {
        Some(a) if a != named => Err(format!(
            "its `alg` ({a:?}) is not {named:?}, the only one its key type is used for"
        )),
        _ => Ok(alg),
    }
}

/// The usable keys of a JWKS document. A key this verifier cannot use is skipped, not an error:
/// sets often carry encryption keys or newer algorithms beside the signing keys.
fn parse_key_set(document: &[u8]) -> Result<Vec<Key>, String> {
    #[derive(serde::Deserialize)]
    struct Document {
        keys: Vec<serde_json::Value>,
    }
    let document: Document =
        serde_json::from_slice(document).map_err(|e| format!("not a JWKS document (`{{\"keys\": [...]}}`): {e}"))?;
    let mut keys = Vec::new();
    for value in document.keys {
        let jwk: Jwk = match serde_json::from_value(value) {
            Ok(jwk) => jwk,
            Err(e) => {
                tracing::debug!(error = %e, "JWKS: a key that is no JWK skipped");
                continue;
            }
        };
        let kid = jwk.common.key_id.clone();
        let used = usable_for(&jwk).and_then(|alg| {
            DecodingKey::from_jwk(&jwk)
                .map(|key| (alg, key))
                .map_err(|e| e.to_string())
        });
        match used {
            Ok((alg, key)) => keys.push(Key { kid, alg, key }),
            Err(why) => tracing::debug!(?kid, %why, "JWKS: key skipped"),
        }
    }
    Ok(keys)
}

impl JwksVerifier {
    /// The longest JWKS document read (1 MiB); a longer one fails the fetch.
    ///
    /// ```
    /// assert_eq!(mcp_resolve_runtime::JwksVerifier::MAX_JWKS_BYTES, 1 << 20);
    /// ```
    pub const MAX_JWKS_BYTES: usize = 1 << 20;

    /// A verifier for tokens issued for `audience` (the server's canonical resource URI; not
    /// empty) and signed with the keys published at `jwks_url`. Nothing is fetched yet.
    ///
    /// ```
    /// use mcp_resolve_runtime::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp");
    /// assert!(v.is_ok());
    /// let e = JwksVerifier::new("ftp://auth.example/jwks.json", "https://notes.example/mcp").unwrap_err();
    /// assert!(e.to_string().contains("https"), "{e}");
    /// ```
    pub fn new(jwks_url: &str, audience: &str) -> Result<Self, AuthError> {
        let checks = ClaimChecks::new(audience, &ALGORITHMS)?;
        let source = JwksSource::parse(jwks_url)?;
        Ok(Self {
            source,
            checks,
            min_refresh_interval: Duration::from_secs(60),
            max_key_age: Duration::from_secs(3600),
            fetch_timeout: Duration::from_secs(10),
            keys: RwLock::new(None),
            refresh: tokio::sync::Mutex::new(None),
        })
    }

    /// Requires this issuer (`iss`): a token without one, or with another, is refused.
    ///
    /// ```
    /// use mcp_resolve_runtime::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .issuer("https://auth.example");
    /// # let _ = v;
    /// ```
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.checks.require_issuer(issuer);
        self
    }

    /// The clock leeway for `exp`, `nbf` and `iat` (default 60 s).
    ///
    /// ```
    /// use mcp_resolve_runtime::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .leeway(std::time::Duration::from_secs(10));
    /// # let _ = v;
    /// ```
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.checks.set_leeway(leeway);
        self
    }

    /// The shortest time between two fetches (default 60 s): a token naming a key not held
    /// triggers a fetch only when the last one started longer ago, else it is refused.
    ///
    /// ```
    /// use mcp_resolve_runtime::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .min_refresh_interval(std::time::Duration::from_secs(300));
    /// # let _ = v;
    /// ```
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.min_refresh_interval = interval;
        self
    }

    /// How long a fetched set is used before it is fetched again (default 1 h); when that fetch
    /// fails, the old keys are kept.
    ///
    /// ```
    /// use mcp_resolve_runtime::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .max_key_age(std::time::Duration::from_secs(15 * 60));
    /// # let _ = v;
    /// ```
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_key_age = age;
        self
    }

    /// How long one fetch may take, from connecting to the last byte (default 10 s).
    ///
    /// ```
    /// use mcp_resolve_runtime::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .fetch_timeout(std::time::Duration::from_secs(3));
    /// # let _ = v;
    /// ```
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = timeout;
        self
    }

    /// Fetches the set now, whatever the refresh interval, and answers how many of its keys this
    /// verifier can use. Call it at start-up to fail early (`verifier.fetch().await?`) rather
    /// than on the first request.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_resolve_runtime::JwksVerifier;
    /// // Nothing listens on port 1: the fetch fails, and says where.
    /// let verifier = JwksVerifier::new("http://127.0.0.1:1/jwks.json", "https://notes.example/mcp").unwrap();
    /// let e = verifier.fetch().await.unwrap_err();
    /// assert!(e.to_string().contains("http://127.0.0.1:1/jwks.json"), "{e}");
    /// # }
    /// ```
    pub async fn fetch(&self) -> Result<usize, AuthError> {
        let mut last = self.refresh.lock().await;
        let set = self.fetch_locked(&mut last).await?;
        Ok(set.keys.len())
    }

    /// The set held, if any.
    fn current(&self) -> Option<Arc<KeySet>> {
        self.keys
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Fetches and installs the set; the caller holds the refresh lock (`last`).
    async fn fetch_locked(&self, last: &mut Option<Instant>) -> Result<Arc<KeySet>, AuthError> {
        *last = Some(Instant::now());
        let fetched = self
            .source
            .get(self.fetch_timeout, Self::MAX_JWKS_BYTES)
            .await
            .and_then(|body| {
                parse_key_set(&body).map_err(|e| AuthError::new(format!("the JWKS at {}: {e}", self.source.url())))
            });
        let keys = match fetched {
            Ok(keys) => keys,
            Err(e) => {
                static FAILED: crate::throttle::Throttle = crate::throttle::Throttle::new();
                if let Some(left_out) = FAILED.admit() {
                    tracing::warn!(error = %e, left_out, "JWKS fetch failed; the keys held are kept");
                }
                return Err(e);
            }
        };
        let generation = self.current().map_or(0, |s| s.generation) + 1;
        tracing::debug!(url = self.source.url(), usable = keys.len(), generation, "JWKS fetched");
        let set = Arc::new(KeySet {
            keys,
            fetched_at: Instant::now(),
            generation,
        });
        *self.keys.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(set.clone());
        Ok(set)
    }

    /// Fetches the set if `want` justifies it and the rate allows it; `seen` is the generation
    /// the caller looked at (none: no set held). Answers the set to look in next.
    async fn refresh(&self, want: Want, seen: Option<u64>) -> Result<Arc<KeySet>, AuthError> {
        let mut last = match want {
            Want::Missing => self.refresh.lock().await,
            // Someone is fetching already: go on with the keys held.
            Want::Stale => match self.refresh.try_lock() {
                Ok(guard) => guard,
                Err(_) => return self.current().ok_or_else(|| AuthError::new("no JWKS fetched yet")),
            },
        };
        let current = self.current();
        if let Some(set) = &current
            && Some(set.generation) != seen
        {
            // Fetched by another verification while this one waited.
            return Ok(set.clone());
        }
        let too_soon = last.is_some_and(|t| t.elapsed() < self.min_refresh_interval);
        if too_soon {
            return current.ok_or_else(|| {
                AuthError::new(format!(
                    "no JWKS from {} yet (the last fetch failed; the next is allowed {:?} after it)",
                    self.source.url(),
                    self.min_refresh_interval
                ))
            });
        }
        match self.fetch_locked(&mut last).await {
            Ok(set) => Ok(set),
            // A failed refresh of a set held keeps it.
            Err(e) => current.ok_or(e),
        }
    }

    async fn verify_token(&self, token: &str) -> Result<Principal, AuthError> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| AuthError::new(format!("token header: {e}")))?;
        if !self.checks.accepts(header.alg) {
            return Err(AuthError::new(format!(
                "tokens signed with {:?} are not accepted (RS256, ES256 or EdDSA only)",
                header.alg
            )));
        }
        let kid = header.kid.as_deref();
        let mut set = match self.current() {
            None => self.refresh(Want::Missing, None).await?,
            Some(set) if set.fetched_at.elapsed() >= self.max_key_age => {
                self.refresh(Want::Stale, Some(set.generation)).await?
            }
            Some(set) => set,
        };
        if set.find(kid, header.alg).is_none() {
            // A key not held: perhaps a rotation. Fetch again, if the rate allows.
            set = self.refresh(Want::Missing, Some(set.generation)).await?;
        }
        let key = set.find(kid, header.alg).ok_or_else(|| match kid {
            Some(kid) => AuthError::new(format!(
                "no {:?} key with `kid` {kid:?} in the JWKS from {} (fetched again at most every {:?})",
                header.alg,
                self.source.url(),
                self.min_refresh_interval
            )),
            None => AuthError::new(format!(
                "the token names no `kid` and the JWKS from {} does not hold exactly one {:?} key",
                self.source.url(),
                header.alg
            )),
        })?;
        self.checks.verify(token, key, header.alg)
    }
}

impl TokenVerifier for JwksVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(self.verify_token(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_for_other_algorithms_or_uses_are_skipped() {
        // Ed25519 public key bytes need not be a valid point to be parsed here.
        let x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
        let okp = |extra: &str| format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}"{extra}}}"#);
        let small_rsa = r#"{"kty":"RSA","n":"AQAB","e":"AQAB"}"#.to_string();
        let oct = r#"{"kty":"oct","k":"c2VjcmV0IHNlY3JldCBzZWNyZXQgc2VjcmV0IHNlY3JldA"}"#.to_string();
        let document = format!(
            r#"{{"keys":[{},{},{},{},{},{},{},"not a key"]}}"#,
            okp(r#","kid":"ok""#),
            okp(r#","kid":"enc","use":"enc""#),
            okp(r#","kid":"hs","alg":"HS256""#),
            okp(r#","kid":"ops","key_ops":["encrypt"]"#),
            small_rsa,
            oct,
            r#"{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}"#,
        );
        let keys = parse_key_set(document.as_bytes()).unwrap_or_default();
        let kids: Vec<_> = keys.iter().map(|k| k.kid.as_deref()).collect();
        assert_eq!(kids, [Some("ok")]);
        assert!(parse_key_set(b"[]").is_err());
    }

    #[test]
    fn a_token_without_kid_needs_exactly_one_key_for_its_algorithm() {
        let key = |kid: &str, alg| Key {
            kid: Some(kid.into()),
            alg,
            key: DecodingKey::from_ed_der(&[0; 32]),
        };
        let mut set = KeySet {
            keys: vec![key("a", Algorithm::EdDSA), key("r", Algorithm::RS256)],
            fetched_at: Instant::now(),
            generation: 1,
        };
        assert!(set.find(None, Algorithm::EdDSA).is_some());
        assert!(set.find(Some("a"), Algorithm::EdDSA).is_some());
        assert!(set.find(Some("a"), Algorithm::RS256).is_none());
        set.keys.push(key("b", Algorithm::EdDSA));
        assert!(set.find(None, Algorithm::EdDSA).is_none());
        assert!(set.find(Some("b"), Algorithm::EdDSA).is_some());
    }

    #[test]
    fn urls_are_checked_when_built() {
        for ok in [
            "https://auth.example/jwks.json",
            "http://127.0.0.1:9/jwks",
            "http://localhost/jwks",
            "http://[::1]:8080/jwks",
        ] {
            assert!(JwksVerifier::new(ok, "aud").is_ok(), "{ok}");
        }
        for bad in [
            "http://auth.example/jwks.json",
            "http://10.0.0.1/jwks",
            "https://user:pw@auth.example/jwks",
            "file:///etc/jwks.json",
            "jwks.json",
            "",
        ] {
            assert!(JwksVerifier::new(bad, "aud").is_err(), "{bad}");
        }
    }
}
