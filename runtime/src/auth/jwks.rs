//! JWTs signed with the authorization server's own keys (RS256, ES256, EdDSA), which it publishes
//! as a JWKS document: fetched, cached, refreshed when a token names a key not yet seen (at a
//! bounded rate) and when the set held is old, each fetch replacing the set; a set that could not
//! be refreshed for too long is no longer trusted.
//!
//! (Over 500 lines with its tests, on purpose: the key set's lifecycle and the checks of a token
//! against it are one piece of security code, read and reviewed together.)

use super::fetch::JwksSource;
use super::jwt::{ClaimChecks, Issuer};
use super::{AuthError, BoxFuture, TokenVerifier};
use crate::principal::Principal;
use base64::Engine as _;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::time::Instant;

/// The algorithms a [`JwksVerifier`] accepts: asymmetric only. `none` and the HMAC family are
/// never accepted — a public key taken for an HMAC secret would let anyone sign.
const ALGORITHMS: [Algorithm; 3] = [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA];

/// The smallest RSA modulus accepted, in bits.
const MIN_RSA_BITS: usize = 2048;

/// Verifies JWTs signed with the keys an authorization server publishes at its JWKS URL (its
/// metadata's `jwks_uri`): RS256, ES256 (P-256) and EdDSA (Ed25519). The claims are checked as
/// [`Hs256Verifier`](super::Hs256Verifier) checks them: the audience given when it is built is
/// required (a token without `aud`, or for another audience, is refused), `exp` and `nbf` with a
/// leeway (60 s by default), no `iat` in the future, and the header's `typ` when
/// [`JwksVerifier::require_typ`] asks for one. `sub` becomes the principal's subject, `iss` its
/// issuer, `scope` or `scp` its scopes.
///
/// **The issuer must be configured.** One authorization server's keys often sign the tokens of
/// several issuers (its tenants, or realms), so a token another tenant was issued for this
/// audience would verify. Call [`JwksVerifier::issuer`] with the `iss` your tokens carry — or, to
/// take every issuer on purpose, [`JwksVerifier::any_issuer`]. A verifier told neither refuses
/// every token, and [`JwksVerifier::fetch`] fails, with a message saying so.
///
/// **Keys.** The token's `alg` must be one of the three above and match the key: an RSA key
/// (`kty` `RSA`, at least 2048 bits) for RS256, a P-256 key (`kty` `EC`) for ES256, an Ed25519
/// key (`kty` `OKP`) for EdDSA; a key whose `alg` names another algorithm, whose `use` is not
/// `sig` or whose `key_ops` lack `verify` is ignored, and symmetric (`oct`) keys are never used.
/// The key is chosen by the token's `kid`; a token without `kid` is accepted only when the set
/// holds exactly one key for its algorithm.
///
/// **Fetching.** The set is fetched on first use (or up front with [`JwksVerifier::fetch`]),
/// again once it is older than [`JwksVerifier::max_key_age`] (5 min by default), and when a token
/// names a key it does not hold (a rotated key) — at most once per
/// [`JwksVerifier::min_refresh_interval`] (60 s by default), so tokens with made-up `kid`s cannot
/// make it hammer the authorization server; concurrent verifications share one fetch. Each
/// successful fetch replaces the set: a key the authorization server removed is no longer
/// trusted once the next fetch has succeeded, at most `max_key_age` after its removal. A fetch
/// is one GET of at most [`JwksVerifier::MAX_JWKS_BYTES`] within
/// [`JwksVerifier::fetch_timeout`] (10 s by default), redirects not followed; when it fails, the
/// keys held are kept and a token needing another is refused — but only until the set is older
/// than [`JwksVerifier::max_stale`] (4 h by default): then every token is refused, with the
/// reason logged, until a fetch succeeds. The URL must be `https://` (checked against the Mozilla
/// root certificates compiled in); `http://` is refused except to a loopback host.
///
/// ```
/// use mcp_resolve_runtime::auth::JwksVerifier;
/// use std::time::Duration;
/// let verifier = JwksVerifier::new("https://auth.example/.well-known/jwks.json", "https://notes.example/mcp")
///     .unwrap()
///     .issuer("https://auth.example")
///     .require_typ("at+jwt")
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
    source: Source,
    checks: ClaimChecks,
    min_refresh_interval: Duration,
    max_key_age: Duration,
    max_stale: Duration,
    fetch_timeout: Duration,
    /// The keys held; `None` before the first successful fetch.
    keys: RwLock<Option<Arc<KeySet>>>,
    /// Held while fetching; remembers when the last fetch was started.
    refresh: tokio::sync::Mutex<Option<Instant>>,
}

/// Where the set is fetched from.
enum Source {
    /// The authorization server's JWKS URL.
    Url(JwksSource),
    /// Unit tests: a document held in memory, which the test swaps or makes fail.
    #[cfg(test)]
    Held(Arc<tests::Held>),
}

impl Source {
    /// The URL, for messages.
    fn url(&self) -> &str {
        match self {
            Self::Url(source) => source.url(),
            #[cfg(test)]
            Self::Held(_) => "memory:jwks",
        }
    }

    /// The document, within `timeout` and `max_bytes`.
    async fn get(&self, timeout: Duration, max_bytes: usize) -> Result<bytes::Bytes, AuthError> {
        match self {
            Self::Url(source) => source.get(timeout, max_bytes).await,
            #[cfg(test)]
            Self::Held(held) => held.get().await,
        }
    }
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
    /// The set is older than the maximum age: fetch if nobody is, and go on with the old keys
    /// (while they are younger than `max_stale`).
    Stale,
}

impl fmt::Debug for JwksVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwksVerifier")
            .field("url", &self.source.url())
            .field("min_refresh_interval", &self.min_refresh_interval)
            .field("max_key_age", &self.max_key_age)
            .field("max_stale", &self.max_stale)
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
    /// assert_eq!(mcp_resolve_runtime::auth::JwksVerifier::MAX_JWKS_BYTES, 1 << 20);
    /// ```
    pub const MAX_JWKS_BYTES: usize = 1 << 20;

    /// The default of [`JwksVerifier::min_refresh_interval`]: 60 s.
    ///
    /// ```
    /// assert_eq!(mcp_resolve_runtime::auth::JwksVerifier::DEFAULT_MIN_REFRESH_INTERVAL.as_secs(), 60);
    /// ```
    pub const DEFAULT_MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

    /// The default of [`JwksVerifier::max_key_age`]: 5 min. This is how long a key the
    /// authorization server removed (rotated out, or withdrawn because it leaked) may still be
    /// trusted while its JWKS answers; a fetch every 5 min per server costs it next to nothing.
    ///
    /// ```
    /// assert_eq!(mcp_resolve_runtime::auth::JwksVerifier::DEFAULT_MAX_KEY_AGE.as_secs(), 5 * 60);
    /// ```
    pub const DEFAULT_MAX_KEY_AGE: Duration = Duration::from_secs(5 * 60);

    /// The default of [`JwksVerifier::max_stale`]: 4 h. Long enough to ride out an outage of the
    /// JWKS endpoint alone (the authorization server still issuing tokens signed with the keys
    /// held) for several lifetimes of a usual access token (one hour or less); short enough that
    /// whoever can block this server's fetches cannot keep a removed key trusted for longer.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// assert_eq!(JwksVerifier::DEFAULT_MAX_STALE.as_secs(), 4 * 3600);
    /// assert!(JwksVerifier::DEFAULT_MAX_STALE > JwksVerifier::DEFAULT_MAX_KEY_AGE);
    /// ```
    pub const DEFAULT_MAX_STALE: Duration = Duration::from_secs(4 * 3600);

    /// A verifier for tokens issued for `audience` (the server's canonical resource URI; not
    /// empty) and signed with the keys published at `jwks_url`. Nothing is fetched yet. Tell it
    /// the issuer next ([`JwksVerifier::issuer`], or [`JwksVerifier::any_issuer`]): until then it
    /// refuses every token.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp");
    /// assert!(v.is_ok());
    /// let e = JwksVerifier::new("ftp://auth.example/jwks.json", "https://notes.example/mcp").unwrap_err();
    /// assert!(e.to_string().contains("https"), "{e}");
    /// ```
    pub fn new(jwks_url: &str, audience: &str) -> Result<Self, AuthError> {
        Self::with_source(Source::Url(JwksSource::parse(jwks_url)?), audience)
    }

    fn with_source(source: Source, audience: &str) -> Result<Self, AuthError> {
        let checks = ClaimChecks::new(audience, &ALGORITHMS, Issuer::Needed)?;
        Ok(Self {
            source,
            checks,
            min_refresh_interval: Self::DEFAULT_MIN_REFRESH_INTERVAL,
            max_key_age: Self::DEFAULT_MAX_KEY_AGE,
            max_stale: Self::DEFAULT_MAX_STALE,
            fetch_timeout: Duration::from_secs(10),
            keys: RwLock::new(None),
            refresh: tokio::sync::Mutex::new(None),
        })
    }

    /// Requires this issuer (`iss`): a token without one, or with another, is refused. This, or
    /// [`JwksVerifier::any_issuer`], is needed before the verifier takes any token.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .issuer("https://auth.example");
    /// # let _ = v;
    /// ```
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.checks.require_issuer(issuer);
        self
    }

    /// Takes tokens of any issuer the keys sign for, `iss` or none — on purpose: with an
    /// authorization server that serves several tenants, a token issued to another tenant for
    /// this audience is then accepted. Prefer [`JwksVerifier::issuer`]; use this only when the
    /// keys are this deployment's alone, or every issuer they sign for is trusted.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .any_issuer();
    /// # let _ = v;
    /// ```
    pub fn any_issuer(mut self) -> Self {
        self.checks.any_issuer();
        self
    }

    /// Requires the token's header to name this `typ`, e.g. `at+jwt` for OAuth access tokens
    /// (RFC 9068), so an ID token or another JWT the same keys signed is not taken for one: a
    /// token of another type, or naming none, is refused. Compared as media types are: ignoring
    /// case, and `at+jwt` is `application/at+jwt`.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .issuer("https://auth.example")
    ///     .require_typ("at+jwt");
    /// # let _ = v;
    /// ```
    pub fn require_typ(mut self, typ: &str) -> Self {
        self.checks.require_typ(typ);
        self
    }

    /// The clock leeway for `exp`, `nbf` and `iat` (default 60 s).
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .leeway(std::time::Duration::from_secs(10));
    /// # let _ = v;
    /// ```
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.checks.set_leeway(leeway);
        self
    }

    /// The shortest time between two fetches ([`JwksVerifier::DEFAULT_MIN_REFRESH_INTERVAL`],
    /// 60 s): a token naming a key not held triggers a fetch only when the last one started
    /// longer ago, else it is refused.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .min_refresh_interval(std::time::Duration::from_secs(300));
    /// # let _ = v;
    /// ```
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.min_refresh_interval = interval;
        self
    }

    /// How long a fetched set is used before it is fetched again
    /// ([`JwksVerifier::DEFAULT_MAX_KEY_AGE`], 5 min); the fetched set replaces it, so this is
    /// also how long a key the authorization server removed may still be trusted. When that fetch
    /// fails, the old keys are kept, up to [`JwksVerifier::max_stale`].
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .max_key_age(std::time::Duration::from_secs(15 * 60));
    /// # let _ = v;
    /// ```
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.max_key_age = age;
        self
    }

    /// How old the set held may grow while fetches fail ([`JwksVerifier::DEFAULT_MAX_STALE`],
    /// 4 h): past it, every token is refused — fail closed, with the reason in the log — until a
    /// fetch succeeds (tried at most once per [`JwksVerifier::min_refresh_interval`]). Set it
    /// above [`JwksVerifier::max_key_age`]: a smaller value refuses tokens as soon as one refresh
    /// of an old set fails.
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// let v = JwksVerifier::new("https://auth.example/jwks.json", "https://notes.example/mcp")
    ///     .unwrap()
    ///     .max_stale(std::time::Duration::from_secs(3600));
    /// # let _ = v;
    /// ```
    pub fn max_stale(mut self, age: Duration) -> Self {
        self.max_stale = age;
        self
    }

    /// How long one fetch may take, from connecting to the last byte (default 10 s).
    ///
    /// ```
    /// use mcp_resolve_runtime::auth::JwksVerifier;
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
    /// than on the first request: it also fails, without fetching, when the verifier was told
    /// no issuer ([`JwksVerifier::issuer`] or [`JwksVerifier::any_issuer`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_resolve_runtime::auth::JwksVerifier;
    /// // Nothing listens on port 1: the fetch fails, and says where.
    /// let verifier = JwksVerifier::new("http://127.0.0.1:1/jwks.json", "https://notes.example/mcp").unwrap();
    /// let e = verifier.fetch().await.unwrap_err();
    /// assert!(e.to_string().contains(".issuer("), "{e}");
    /// let e = verifier.issuer("https://auth.example").fetch().await.unwrap_err();
    /// assert!(e.to_string().contains("http://127.0.0.1:1/jwks.json"), "{e}");
    /// # }
    /// ```
    pub async fn fetch(&self) -> Result<usize, AuthError> {
        self.configured()?;
        let mut last = self.refresh.lock().await;
        let set = self.fetch_locked(&mut last).await?;
        Ok(set.keys.len())
    }

    /// Refuses a verifier told no issuer, saying so in the log too (at most once a second).
    fn configured(&self) -> Result<(), AuthError> {
        self.checks.configured().inspect_err(|e| {
            static UNCONFIGURED: crate::throttle::Throttle = crate::throttle::Throttle::new();
            if let Some(left_out) = UNCONFIGURED.admit() {
                tracing::error!(reason = %e, left_out, "JwksVerifier refuses every token");
            }
        })
    }

    /// Refuses a set older than `max_stale`: every refresh since it was fetched failed, and the
    /// keys it holds may have been removed since. Logged (at most once a second).
    fn fresh_enough(&self, set: &KeySet) -> Result<(), AuthError> {
        let age = set.fetched_at.elapsed();
        if age <= self.max_stale {
            return Ok(());
        }
        let e = AuthError::new(format!(
            "the JWKS from {} was last fetched {} s ago and could not be refreshed since; past max_stale \
             ({} s) its keys are no longer trusted, so every token is refused until a fetch succeeds",
            self.source.url(),
            age.as_secs(),
            self.max_stale.as_secs()
        ));
        static STALE: crate::throttle::Throttle = crate::throttle::Throttle::new();
        if let Some(left_out) = STALE.admit() {
            tracing::error!(reason = %e, left_out, "JWKS too old: tokens refused");
        }
        Err(e)
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
                    tracing::warn!(error = %e, left_out, "JWKS fetch failed; the keys held are kept (up to max_stale)");
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
        self.configured()?;
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
            // Too old to be used: wait for a fetch (if the rate allows one).
            Some(set) if set.fetched_at.elapsed() > self.max_stale => {
                self.refresh(Want::Missing, Some(set.generation)).await?
            }
            Some(set) if set.fetched_at.elapsed() >= self.max_key_age => {
                self.refresh(Want::Stale, Some(set.generation)).await?
            }
            Some(set) => set,
        };
        if set.find(kid, header.alg).is_none() {
            // A key not held: perhaps a rotation. Fetch again, if the rate allows.
            set = self.refresh(Want::Missing, Some(set.generation)).await?;
        }
        self.fresh_enough(&set)?;
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
    fn authorization_server(&self) -> Option<&str> {
        self.checks.issuer_url()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::{Value, json};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A JWKS document held in memory, which a test swaps or makes fail; its fetches counted.
    pub(super) struct Held {
        answer: std::sync::Mutex<Result<String, String>>,
        fetches: AtomicUsize,
        /// A fetch waits while a test holds this: a fetch in flight, for as long as it likes.
        gate: tokio::sync::Mutex<()>,
    }

    impl Held {
        fn new(document: String) -> Arc<Self> {
            Arc::new(Self {
                answer: std::sync::Mutex::new(Ok(document)),
                fetches: AtomicUsize::new(0),
                gate: tokio::sync::Mutex::new(()),
            })
        }

        pub(super) async fn get(&self) -> Result<bytes::Bytes, AuthError> {
            self.fetches.fetch_add(1, Ordering::SeqCst);
            drop(self.gate.lock().await);
            match &*self.answer.lock().unwrap() {
                Ok(document) => Ok(bytes::Bytes::from(document.clone())),
                Err(why) => Err(AuthError::new(why.clone())),
            }
        }

        fn publish(&self, document: String) {
            *self.answer.lock().unwrap() = Ok(document);
        }

        fn fail(&self) {
            *self.answer.lock().unwrap() = Err("answered 503 Service Unavailable".into());
        }

        fn fetches(&self) -> usize {
            self.fetches.load(Ordering::SeqCst)
        }
    }

    /// An Ed25519 key of RFC 8032 §7.1 (seed, public key in base64url), its `kid` `ed-{n}`.
    struct TestKey {
        kid: &'static str,
        seed: [u8; 32],
        x: &'static str,
    }

    const ONE: TestKey = TestKey {
        kid: "ed-1",
        seed: [
            0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4, 0x44, 0x49,
            0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60,
        ],
        x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
    };

    const TWO: TestKey = TestKey {
        kid: "ed-2",
        seed: [
            0x4c, 0xcd, 0x08, 0x9b, 0x28, 0xff, 0x96, 0xda, 0x9d, 0xb6, 0xc3, 0x46, 0xec, 0x11, 0x4e, 0x0f, 0x5b, 0x8a,
            0x31, 0x9f, 0x35, 0xab, 0xa6, 0x24, 0xda, 0x8c, 0xf6, 0xed, 0x4f, 0xb8, 0xa6, 0xfb,
        ],
        x: "PUAXw-hDiVqStwqnTRt-vJyYLM8uxJaMwM1V8Sr0Zgw",
    };

    const AUDIENCE: &str = "https://notes.test/mcp";
    const ISSUER: &str = "https://auth.test";

    impl TestKey {
        fn jwk(&self) -> Value {
            json!({"kty": "OKP", "crv": "Ed25519", "x": self.x, "alg": "EdDSA", "use": "sig", "kid": self.kid})
        }

        /// A valid token for this verifier's audience and issuer, signed with this key.
        fn token(&self) -> String {
            // PKCS #8 v1 around the seed (RFC 8410).
            let mut der = vec![
                0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
            ];
            der.extend_from_slice(&self.seed);
            let mut header = Header::new(Algorithm::EdDSA);
            header.kid = Some(self.kid.into());
            let exp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
                + 300;
            let claims = json!({"sub": "alice", "iss": ISSUER, "aud": AUDIENCE, "exp": exp});
            jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ed_der(&der)).unwrap()
        }
    }

    fn set_of(keys: &[&TestKey]) -> String {
        json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()}).to_string()
    }

    /// A verifier of the set `held` holds, with the default intervals.
    fn verifier(held: &Arc<Held>) -> JwksVerifier {
        JwksVerifier::with_source(Source::Held(held.clone()), AUDIENCE)
            .unwrap()
            .issuer(ISSUER)
    }

    async fn accepts(verifier: &JwksVerifier, key: &TestKey) -> Result<(), AuthError> {
        verifier
            .verify(&key.token())
            .await
            .map(|p| assert_eq!(p.subject, "alice"))
    }

    #[tokio::test(start_paused = true)]
    async fn a_removed_key_stops_working_after_the_refresh_that_drops_it() {
        let held = Held::new(set_of(&[&ONE, &TWO]));
        let v = verifier(&held);
        accepts(&v, &ONE).await.unwrap();
        accepts(&v, &TWO).await.unwrap();
        assert_eq!(held.fetches(), 1);
        // The authorization server removes key one. Until the set held is `max_key_age` old (by
        // default 5 min, the documented bound), it is used as it is.
        let max_key_age = Duration::from_secs(5 * 60);
        held.publish(set_of(&[&TWO]));
        tokio::time::advance(max_key_age - Duration::from_secs(1)).await;
        accepts(&v, &ONE).await.unwrap();
        assert_eq!(held.fetches(), 1);
        // Then it is fetched again, and the new set replaces it: key one is gone.
        tokio::time::advance(Duration::from_secs(1)).await;
        let e = accepts(&v, &ONE).await.unwrap_err();
        assert!(e.to_string().contains("ed-1"), "{e}");
        assert_eq!(held.fetches(), 2);
        accepts(&v, &TWO).await.unwrap();
        // A refresh for a key not held (a rotation back to key one) replaces the set too, never
        // adds to it: key two, now removed, stops working.
        held.publish(set_of(&[&ONE]));
        tokio::time::advance(JwksVerifier::DEFAULT_MIN_REFRESH_INTERVAL).await;
        accepts(&v, &ONE).await.unwrap();
        assert_eq!(held.fetches(), 3);
        assert!(accepts(&v, &TWO).await.is_err());
        assert_eq!(held.fetches(), 3, "no fetch within the interval");
    }

    #[tokio::test(start_paused = true)]
    async fn a_jwks_unreachable_past_max_stale_fails_closed_until_a_fetch_succeeds() {
        let held = Held::new(set_of(&[&ONE]));
        let v = verifier(&held);
        accepts(&v, &ONE).await.unwrap();
        held.fail();
        // Old, and its refresh fails: the keys held are kept...
        tokio::time::advance(JwksVerifier::DEFAULT_MAX_KEY_AGE).await;
        accepts(&v, &ONE).await.unwrap();
        assert_eq!(held.fetches(), 2);
        // ... up to max_stale ...
        tokio::time::advance(JwksVerifier::DEFAULT_MAX_STALE - JwksVerifier::DEFAULT_MAX_KEY_AGE).await;
        accepts(&v, &ONE).await.unwrap();
        assert_eq!(held.fetches(), 3);
        // ... and no longer: every token is refused, saying why.
        tokio::time::advance(Duration::from_secs(1)).await;
        let e = accepts(&v, &ONE).await.unwrap_err().to_string();
        assert!(e.contains("max_stale") && e.contains("until a fetch succeeds"), "{e}");
        assert_eq!(held.fetches(), 3, "at most one fetch per min_refresh_interval");
        tokio::time::advance(JwksVerifier::DEFAULT_MIN_REFRESH_INTERVAL).await;
        assert!(accepts(&v, &ONE).await.is_err());
        assert_eq!(held.fetches(), 4);
        // The authorization server answers again: the next fetch allowed restores the keys.
        held.publish(set_of(&[&ONE]));
        assert!(accepts(&v, &ONE).await.is_err(), "not before the interval has passed");
        tokio::time::advance(JwksVerifier::DEFAULT_MIN_REFRESH_INTERVAL).await;
        accepts(&v, &ONE).await.unwrap();
        assert_eq!(held.fetches(), 5);
        // A shorter bound is kept to as well.
        let held = Held::new(set_of(&[&ONE]));
        let v = verifier(&held).max_stale(Duration::from_secs(600));
        accepts(&v, &ONE).await.unwrap();
        held.fail();
        tokio::time::advance(Duration::from_secs(601)).await;
        assert!(accepts(&v, &ONE).await.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn unknown_kids_fetch_at_most_once_per_interval() {
        let held = Held::new(set_of(&[&ONE]));
        let v = verifier(&held);
        accepts(&v, &ONE).await.unwrap();
        assert!(accepts(&v, &TWO).await.is_err());
        assert_eq!(held.fetches(), 1, "within the interval of the first fetch");
        tokio::time::advance(JwksVerifier::DEFAULT_MIN_REFRESH_INTERVAL).await;
        for _ in 0..10 {
            assert!(accepts(&v, &TWO).await.is_err());
        }
        assert_eq!(held.fetches(), 2);
        tokio::time::advance(JwksVerifier::DEFAULT_MIN_REFRESH_INTERVAL - Duration::from_secs(1)).await;
        assert!(accepts(&v, &TWO).await.is_err());
        assert_eq!(held.fetches(), 2);
        accepts(&v, &ONE).await.unwrap();
        assert_eq!(held.fetches(), 2);
    }

    #[tokio::test]
    async fn a_verifier_told_no_issuer_refuses_every_token_and_its_fetch() {
        let held = Held::new(set_of(&[&ONE]));
        let v = JwksVerifier::with_source(Source::Held(held.clone()), AUDIENCE).unwrap();
        let e = accepts(&v, &ONE).await.unwrap_err().to_string();
        assert!(e.contains(".issuer(") && e.contains(".any_issuer()"), "{e}");
        let e = v.fetch().await.unwrap_err().to_string();
        assert!(e.contains(".issuer("), "{e}");
        assert_eq!(held.fetches(), 0, "nothing fetched for a verifier that cannot be used");
        let v = v.any_issuer();
        accepts(&v, &ONE).await.unwrap();
        // `.issuer` after `.any_issuer` (or the other way round): the last one counts.
        let v = v.issuer("https://other.test");
        assert!(accepts(&v, &ONE).await.is_err());
        accepts(&v.any_issuer(), &ONE).await.unwrap();
    }

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

    #[test]
    fn rsa_keys_of_2048_bits_and_more_verify_rs256_and_shorter_ones_are_left_out() {
        let rsa = |n: Vec<u8>| -> Jwk {
            let n = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(n);
            serde_json::from_value(json!({"kty": "RSA", "n": n, "e": "AQAB", "use": "sig"})).unwrap()
        };
        let modulus = |bytes: usize| {
            let mut n = vec![0xC5; bytes];
            n[0] = 0x80;
            n
        };
        assert_eq!(usable_for(&rsa(modulus(MIN_RSA_BITS / 8))).ok(), Some(Algorithm::RS256));
        assert_eq!(usable_for(&rsa(modulus(512))).ok(), Some(Algorithm::RS256));
        // Leading zero bytes add no bits.
        let mut padded = vec![0, 0];
        padded.extend(modulus(MIN_RSA_BITS / 8 - 1));
        let short = usable_for(&rsa(padded)).unwrap_err();
        assert!(short.contains("RSA keys under 2048 bits are refused"), "{short}");
    }

    #[test]
    fn a_verifier_shows_where_its_keys_come_from_and_its_intervals() {
        let v = JwksVerifier::new("https://auth.example/jwks.json", "aud").unwrap();
        let shown = format!("{v:?}");
        assert!(
            shown.starts_with("JwksVerifier { url: \"https://auth.example/jwks.json\", "),
            "{shown}"
        );
        assert!(shown.contains("max_stale"), "{shown}");
    }

    #[test]
    fn each_key_type_verifies_its_one_algorithm_and_the_rest_are_left_out_saying_why() {
        let jwk = |v: Value| -> Jwk { serde_json::from_value(v).unwrap() };
        let xy = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
        let p256 = jwk(json!({"kty": "EC", "crv": "P-256", "x": xy, "y": xy}));
        assert_eq!(usable_for(&p256), Ok(Algorithm::ES256));
        let p384 = jwk(json!({"kty": "EC", "crv": "P-384", "x": xy, "y": xy}));
        assert!(
            usable_for(&p384)
                .unwrap_err()
                .contains("key type or curve is not supported")
        );
        assert_eq!(usable_for(&jwk(ONE.jwk())), Ok(Algorithm::EdDSA));
        // An octet key pair on another curve than Ed25519 (this JWK library reads no X25519 OKP).
        let okp_p256 = jwk(json!({"kty": "OKP", "crv": "P-256", "x": ONE.x}));
        assert!(
            usable_for(&okp_p256)
                .unwrap_err()
                .contains("key type or curve is not supported")
        );
        let oct = jwk(json!({"kty": "oct", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA"}));
        assert_eq!(
            usable_for(&oct),
            Err("symmetric keys are never taken from a JWKS".into())
        );
    }

    #[test]
    fn the_documented_bounds_and_the_issuer_named_as_authorization_server() {
        assert_eq!(JwksVerifier::MAX_JWKS_BYTES, 1 << 20);
        assert_eq!(JwksVerifier::DEFAULT_MIN_REFRESH_INTERVAL, Duration::from_secs(60));
        assert_eq!(JwksVerifier::DEFAULT_MAX_KEY_AGE, Duration::from_secs(300));
        assert_eq!(JwksVerifier::DEFAULT_MAX_STALE, Duration::from_secs(4 * 3600));
        let held = Held::new(set_of(&[&ONE]));
        assert_eq!(verifier(&held).authorization_server(), Some(ISSUER));
        assert_eq!(verifier(&held).any_issuer().authorization_server(), None);
    }

    /// Lets the tasks spawned so far run until each waits (on the gated fetch, or on the lock of
    /// the fetch in flight).
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    /// Two verifications of `key`'s token, the second started while the first one's fetch is
    /// held in flight; the fetch is let go once both wait.
    async fn two_during_one_fetch(
        held: &Held,
        v: &Arc<JwksVerifier>,
        key: &'static TestKey,
    ) -> (Result<(), AuthError>, Result<(), AuthError>) {
        let gate = held.gate.lock().await;
        let start = || {
            let v = v.clone();
            tokio::spawn(async move { accepts(&v, key).await })
        };
        let first = start();
        settle().await;
        let second = start();
        settle().await;
        drop(gate);
        (first.await.unwrap(), second.await.unwrap())
    }

    /// A verification that needs a fetch while another one's fetch is in flight waits for it and
    /// uses what it fetched: one fetch for both, whether the key was unknown or the set past
    /// `max_stale`.
    #[tokio::test(start_paused = true)]
    async fn a_verification_waits_for_the_fetch_in_flight_and_uses_its_keys() {
        // An unknown key, with no rate limit on fetches: the second waiter sees the set has
        // changed while it waited (its generation) and fetches nothing.
        let held = Held::new(set_of(&[&ONE]));
        let v = Arc::new(verifier(&held).min_refresh_interval(Duration::ZERO));
        accepts(&v, &ONE).await.unwrap();
        assert_eq!(held.fetches(), 1);
        held.publish(set_of(&[&ONE, &TWO]));
        let (first, second) = two_during_one_fetch(&held, &v, &TWO).await;
        first.unwrap();
        second.unwrap();
        assert_eq!(held.fetches(), 2, "one fetch for both");

        // Past max_stale: the second waits for the fetch in flight instead of failing at once.
        let held = Held::new(set_of(&[&ONE]));
        let v = Arc::new(verifier(&held));
        accepts(&v, &ONE).await.unwrap();
        tokio::time::advance(JwksVerifier::DEFAULT_MAX_STALE + Duration::from_secs(1)).await;
        let (first, second) = two_during_one_fetch(&held, &v, &ONE).await;
        first.unwrap();
        second.expect("waited for the fetch in flight");
        assert_eq!(held.fetches(), 2);
    }
}
