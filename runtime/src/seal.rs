//! Sealing of `requestState`: AES-256-GCM under a key derived for each token, bound to the
//! request it belongs to, with an expiry and a key ring for rotation.
//!
//! A token is `v2.` + base64url(kid ‖ salt ‖ ciphertext ‖ tag): a 4-byte key id, a 32-byte random
//! salt, the sealed claims and the 16-byte GCM tag. The plaintext holds the claims: issue and
//! expiry times, the method, the tool, a SHA-256 digest of the arguments, the audience, a tag of
//! the principal when there is one, and the engine's own state. Any failure — a bad seal, another
//! request, an expired token, another audience or principal, a token of another format version
//! (`v1.`) — is one error on the wire; the reason goes to the log only.
//!
//! # The nonce scheme
//!
//! AES-GCM's 96-bit nonce must never repeat under one key, and random nonces cap a key at about
//! 2^32 seals. Instead, every token gets its own AES key: each secret's HKDF-SHA256 PRK is
//! extracted once, when the key ring is built, and a token's key is
//! `HKDF-Expand(PRK, "mcp-resolve/state/v2" ‖ salt, 32)` for a fresh 32-byte random salt carried
//! in the token. Each such key seals exactly one plaintext, so the nonce is fixed (all zero): a
//! nonce could only repeat under one key if two salts were equal, a chance of about n²/2^257 after
//! n tokens (below 2^-128 after 2^64 tokens), so one secret may seal without a practical limit.
//! HKDF-Expand is a PRF keyed by the PRK, so keys for distinct salts are independent; taking the
//! salt into Expand's info (rather than into Extract's salt) keeps the per-token cost at one
//! HMAC-SHA256 from precomputed states, plus an AES key schedule. AES-GCM-SIV would also bear
//! nonce reuse, but needs a second AEAD and still leaks equal plaintexts under a repeated nonce;
//! this scheme keeps the AES-GCM already used and its speed. The salt is also in the associated
//! data, with the format version and the key id.
//!
//! (Over 500 lines with its tests, on purpose: the keys, the token format, expiry and the
//! canonical digests a token binds are one piece of security code, read and reviewed together.)

use crate::secret::{self, DecodeError};
use aes_gcm::aead::{AeadInOut, KeyInit};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The format version, first in every token (and in the associated data).
const PREFIX: &str = "v2.";
/// HKDF-Extract's salt for every secret: PRKs of this format are of this format only.
const EXTRACT_SALT: &[u8] = b"mcp-resolve/state/v2";
/// HKDF-Expand's info for a token's key, before the token's salt. Short enough that info, salt and
/// HKDF's counter byte fit one SHA-256 block.
const TOKEN_INFO: &[u8] = b"mcp-resolve/state/v2";
/// HKDF-Expand's info for a key's id (a length no token info has).
const KID_INFO: &[u8] = b"mcp-resolve/state/v2/kid";
/// The default clock leeway, at both ends of a token's life: an `iat` up to this far in the future
/// is taken, and a token stays valid this long past its expiry, for clock skew between replicas.
pub(crate) const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

/// A secret shorter than 32 bytes was given.
///
/// ```
/// use mcp_resolve_runtime::seal::StateKeys;
/// assert!(StateKeys::new(b"short").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTooShort(pub usize);

impl fmt::Display for KeyTooShort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a requestState secret needs at least 32 bytes, got {}", self.0)
    }
}

impl std::error::Error for KeyTooShort {}

/// The operating system's random source failed, so no secret value (key, nonce, session id) could
/// be made. The operation that needed it stops; nothing weaker is used instead.
///
/// ```
/// use mcp_resolve_runtime::seal::RandomUnavailable;
/// let e = RandomUnavailable::new("getrandom: unavailable");
/// assert!(e.to_string().contains("random source"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RandomUnavailable(String);

impl RandomUnavailable {
    /// The error, with the source's own reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Self(reason.into())
    }
}

impl fmt::Display for RandomUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the operating system's random source failed: {}", self.0)
    }
}

impl std::error::Error for RandomUnavailable {}

/// Fills `buf` from the operating system's random source.
pub(crate) fn random(buf: &mut [u8]) -> Result<(), RandomUnavailable> {
    #[cfg(test)]
    if tests::RANDOM_FAILS.with(std::cell::Cell::get) {
        return Err(RandomUnavailable::new("simulated failure"));
    }
    getrandom::fill(buf).map_err(|e| RandomUnavailable(e.to_string()))
}

/// The length of a token's salt.
const SALT: usize = 32;

/// One secret of the ring: its key id and its HKDF PRK, extracted once (the HMAC states are kept,
/// so a token's key costs one HMAC-SHA256 evaluation).
#[derive(Clone)]
struct SealingKey {
    kid: [u8; 4],
    prk: hkdf::Hkdf<Sha256>,
}

impl SealingKey {
    fn derive(secret: &[u8]) -> Result<Self, KeyTooShort> {
        if secret.len() < secret::MIN_BYTES {
            return Err(KeyTooShort(secret.len()));
        }
        let prk = hkdf::Hkdf::<Sha256>::new(Some(EXTRACT_SALT), secret);
        let mut kid = [0u8; 4];
        // 4 bytes is far below HKDF-SHA256's limit, so expand cannot fail.
        if prk.expand(KID_INFO, &mut kid).is_err() {
            return Err(KeyTooShort(secret.len()));
        }
        Ok(Self { kid, prk })
    }

    /// The cipher for the token with this salt: a key of its own, used for that token only.
    fn cipher(&self, salt: &[u8; SALT]) -> Option<Aes256Gcm> {
        let mut key = [0u8; 32];
        self.prk.expand_multi_info(&[TOKEN_INFO, salt], &mut key).ok()?;
        Some(Aes256Gcm::new(&Key::<Aes256Gcm>::from(key)))
    }
}

/// A state key that is not 32 or more random bytes written in hex or base64. Its message says how
/// to make one, so it reads well as a start-up error.
///
/// ```
/// use mcp_resolve_runtime::seal::{StateKeyError, StateKeys};
/// let e = StateKeys::from_encoded("correct horse battery staple").unwrap_err();
/// assert_eq!(e, StateKeyError::NotEncoded);
/// assert!(e.to_string().contains("openssl rand -base64 32"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateKeyError {
    /// No key was given (an empty value, or only commas).
    Empty,
    /// The text is neither hex nor base64: a passphrase, say. Passphrases are refused because a
    /// weak one could be guessed offline from a single sealed state.
    NotEncoded,
    /// The key decodes to this many bytes, fewer than 32.
    TooShort(usize),
}

impl fmt::Display for StateKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = match *self {
            Self::Empty => DecodeError::Empty,
            Self::NotEncoded => DecodeError::NotEncoded,
            Self::TooShort(n) => DecodeError::TooShort(n),
        };
        e.describe("requestState key", f)
    }
}

impl std::error::Error for StateKeyError {}

impl From<KeyTooShort> for StateKeyError {
    fn from(e: KeyTooShort) -> Self {
        Self::TooShort(e.0)
    }
}

impl From<DecodeError> for StateKeyError {
    fn from(e: DecodeError) -> Self {
        match e {
            DecodeError::Empty => Self::Empty,
            DecodeError::NotEncoded => Self::NotEncoded,
            DecodeError::TooShort(n) => Self::TooShort(n),
        }
    }
}

/// The keys that seal `requestState`: the first seals, every one unseals (for rotation). Share the
/// same secrets between replicas so a retry may land on any of them.
///
/// Secrets are random bytes (32 or more), not passphrases: HKDF is not a password hash, so a weak
/// secret could be guessed offline from one sealed state. Configuration gives them in hex or base64
/// ([`StateKeys::from_encoded`], [`StateKeys::from_env`]).
///
/// ```
/// use mcp_resolve_runtime::seal::StateKeys;
/// let keys = StateKeys::new(&[7u8; 32]).unwrap().with_previous(&[9u8; 32]).unwrap();
/// assert_eq!(keys.len(), 2);
/// let ephemeral = StateKeys::generate().unwrap();
/// assert_eq!(ephemeral.len(), 1);
/// ```
#[derive(Clone)]
pub struct StateKeys {
    keys: Arc<Vec<SealingKey>>,
}

impl fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateKeys")
            .field("keys", &self.keys.len())
            .finish_non_exhaustive()
    }
}

impl StateKeys {
    /// Keys from a secret of at least 32 random bytes (raw bytes, e.g. from a secret store; text
    /// from configuration goes through [`StateKeys::from_encoded`]).
    ///
    /// ```
    /// use mcp_resolve_runtime::seal::StateKeys;
    /// assert!(StateKeys::new(&[1u8; 32]).is_ok());
    /// assert!(StateKeys::new(&[1u8; 31]).is_err());
    /// ```
    pub fn new(secret: &[u8]) -> Result<Self, KeyTooShort> {
        Ok(Self {
            keys: Arc::new(vec![SealingKey::derive(secret)?]),
        })
    }
    /// Adds an older secret that still unseals (but never seals).
    ///
    /// ```
    /// use mcp_resolve_runtime::seal::StateKeys;
    /// let keys = StateKeys::new(&[2u8; 32]).unwrap().with_previous(&[1u8; 32]).unwrap();
    /// assert_eq!(keys.len(), 2);
    /// ```
    pub fn with_previous(self, secret: &[u8]) -> Result<Self, KeyTooShort> {
        let mut keys = (*self.keys).clone();
        keys.push(SealingKey::derive(secret)?);
        Ok(Self { keys: Arc::new(keys) })
    }
    /// A random key for this process only: state does not survive a restart or another replica.
    ///
    /// Fails when the operating system's random source does: a key guessed from anything else
    /// would not be secret.
    ///
    /// ```
    /// use mcp_resolve_runtime::seal::StateKeys;
    /// assert_eq!(StateKeys::generate().unwrap().len(), 1);
    /// ```
    pub fn generate() -> Result<Self, RandomUnavailable> {
        let mut secret = [0u8; 32];
        random(&mut secret)?;
        let key = SealingKey::derive(&secret).map_err(|e| RandomUnavailable(e.to_string()))?;
        Ok(Self {
            keys: Arc::new(vec![key]),
        })
    }
    /// Keys from text: one key, or several separated by commas (the first seals, the others only
    /// unseal, for rotation). Each is 32 or more random bytes written in hex (64+ hex digits: an even
    /// number of hex digits is always read as hex) or
    /// base64 (standard or URL-safe alphabet, padded or not), as `openssl rand -base64 32` or
    /// `head -c32 /dev/urandom | base64` make them. Anything else — a passphrase, a shorter key —
    /// is a [`StateKeyError`] whose message says how to make a key.
    ///
    /// ```
    /// use mcp_resolve_runtime::seal::{StateKeyError, StateKeys};
    /// let b64 = "q83vASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4k=";
    /// let hex = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789";
    /// assert_eq!(StateKeys::from_encoded(b64).unwrap().len(), 1);
    /// assert_eq!(StateKeys::from_encoded(&format!("{hex}, {b64}")).unwrap().len(), 2);
    /// assert_eq!(StateKeys::from_encoded("c2hvcnQ=").unwrap_err(), StateKeyError::TooShort(5));
    /// assert_eq!(StateKeys::from_encoded("my long passphrase!").unwrap_err(), StateKeyError::NotEncoded);
    /// ```
    pub fn from_encoded(text: &str) -> Result<Self, StateKeyError> {
        let mut secrets = text.split(',').map(str::trim).filter(|s| !s.is_empty());
        let first = secrets.next().ok_or(StateKeyError::Empty)?;
        let mut keys = Self::new(&secret::decode(first)?)?;
        for older in secrets {
            keys = keys.with_previous(&secret::decode(older)?)?;
        }
        Ok(keys)
    }
    /// Keys from the environment variable `var`, written as [`StateKeys::from_encoded`] reads them
    /// (a key in hex or base64; previous keys may follow after commas). `Ok(None)` when the
    /// variable is not set; an error (meant for a start-up message) when it is set to anything
    /// else than keys.
    ///
    /// ```
    /// use mcp_resolve_runtime::seal::StateKeys;
    /// assert!(StateKeys::from_env("MCP_RESOLVE_DOCTEST_UNSET_VARIABLE").unwrap().is_none());
    /// ```
    pub fn from_env(var: &str) -> Result<Option<Self>, StateKeyError> {
        match std::env::var(var) {
            Ok(value) => Self::from_encoded(&value).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(StateKeyError::NotEncoded),
        }
    }
    /// How many keys the ring holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    /// Whether the ring is empty (never, for a constructed ring).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// What a sealed state is bound to.
#[derive(Debug, Clone)]
pub(crate) struct Binding<'a> {
    pub(crate) method: &'a str,
    pub(crate) target: &'a str,
    pub(crate) arguments: &'a Map<String, Value>,
    pub(crate) audience: &'a str,
    pub(crate) principal: Option<&'a crate::principal::Principal>,
}

/// Why a state was refused (log only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    Malformed,
    Seal,
    Binding,
    Expired,
    Audience,
    Principal,
    /// A single-use call's state opened before (not found by the seal: by the store).
    Replayed,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Malformed => "malformed",
            Self::Seal => "seal",
            Self::Binding => "request binding",
            Self::Expired => "expired",
            Self::Audience => "audience",
            Self::Principal => "principal",
            Self::Replayed => "replayed",
        })
    }
}

/// Canonical JSON: object keys sorted at every level, no spaces.
fn canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => canonical_map(m, out),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(x, out);
            }
            out.push(b']');
        }
        // Scalars and strings as serde_json writes them (writing to a Vec cannot fail).
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

fn canonical_map(m: &Map<String, Value>, out: &mut Vec<u8>) {
    out.push(b'{');
    // serde_json's map is ordered by key unless `preserve_order` is on somewhere in the build.
    let entry = |i: usize, k: &String, v: &Value, out: &mut Vec<u8>| {
        if i > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut *out, k);
        out.push(b':');
        canonical(v, out);
    };
    if m.keys().zip(m.keys().skip(1)).all(|(a, b)| a < b) {
        for (i, (k, v)) in m.iter().enumerate() {
            entry(i, k, v, out);
        }
    } else {
        let mut entries: Vec<(&String, &Value)> = m.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        for (i, (k, v)) in entries.into_iter().enumerate() {
            entry(i, k, v, out);
        }
    }
    out.push(b'}');
}

/// base64url of the full SHA-256 (256 bits) of `bytes`.
fn sha_tag(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(bytes))
}

/// base64url of SHA-256 over canonical JSON (all 256 bits): pins a question's content.
#[cfg(test)]
pub(crate) fn digest(v: &Value) -> String {
    let mut s = Vec::new();
    canonical(v, &mut s);
    sha_tag(&s)
}

/// [`digest`] of `{"message": message, "requestedSchema": schema}`, without building that object.
pub(crate) fn question_digest(message: &str, schema: &Map<String, Value>) -> String {
    let mut s = Vec::with_capacity(256);
    s.extend_from_slice(b"{\"message\":");
    let _ = serde_json::to_writer(&mut s, message);
    s.extend_from_slice(b",\"requestedSchema\":");
    canonical_map(schema, &mut s);
    s.push(b'}');
    sha_tag(&s)
}

/// The digest pinning a request of another kind than a form: `{"method": …, "params": …}`
/// (`sampling/createMessage`, `roots/list`).
pub(crate) fn request_digest(method: &str, params: &Value) -> String {
    let mut s = Vec::with_capacity(256);
    s.extend_from_slice(b"{\"method\":");
    let _ = serde_json::to_writer(&mut s, method);
    s.extend_from_slice(b",\"params\":");
    canonical(params, &mut s);
    s.push(b'}');
    sha_tag(&s)
}

/// The full SHA-256 of a token as the client sent it: its name in the store of used single-use
/// states. A token has one spelling (strict base64url, and the tag covers every byte), so it
/// cannot be respelled to look unused.
pub(crate) fn token_digest(token: &str) -> String {
    sha_tag(token.as_bytes())
}

/// The full SHA-256 of the arguments' canonical JSON.
fn args_digest(arguments: &Map<String, Value>) -> String {
    let mut s = Vec::with_capacity(64);
    canonical_map(arguments, &mut s);
    sha_tag(&s)
}

/// The full SHA-256 of the principal's fields, each length-prefixed (u64 big-endian) and the
/// issuer behind a presence byte, so no two principals share an encoding: issuer `a\0b` and
/// subject `c` differ from issuer `a` and subject `b\0c`, and no issuer from an empty one.
fn principal_tag(p: &crate::principal::Principal) -> String {
    let field = |h: &mut Sha256, v: &str| {
        h.update((v.len() as u64).to_be_bytes());
        h.update(v.as_bytes());
    };
    let mut h = Sha256::new();
    h.update(b"mcp-resolve/principal/v2");
    match p.issuer.as_deref() {
        None => h.update([0u8]),
        Some(issuer) => {
            h.update([1u8]);
            field(&mut h, issuer);
        }
    }
    field(&mut h, &p.subject);
    URL_SAFE_NO_PAD.encode(h.finalize())
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Why a state could not be sealed; the call stops with an internal error.
#[derive(Debug)]
pub(crate) enum SealError {
    Random(RandomUnavailable),
    Serialize(serde_json::Error),
    Cipher,
    /// The state (answers included) is over [`MAX_STATE_BYTES`].
    TooLarge(usize),
}

impl fmt::Display for SealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Random(e) => e.fmt(f),
            Self::Serialize(e) => write!(f, "the state could not be serialized: {e}"),
            Self::Cipher => f.write_str("the cipher refused to seal"),
            Self::TooLarge(n) => write!(
                f,
                "the state to seal has {n} bytes, over the limit of {MAX_STATE_BYTES}: keep fewer or smaller answers"
            ),
        }
    }
}

/// Seals and unseals states for one server.
#[derive(Debug, Clone)]
pub(crate) struct Sealer {
    /// The keys given, or a random key made at the first use (so building a server cannot fail).
    keys: Arc<OnceLock<StateKeys>>,
    pub(crate) ttl: Duration,
    /// Clock leeway at both ends of a token's life (see [`DEFAULT_LEEWAY`]).
    pub(crate) leeway: Duration,
}

impl Sealer {
    pub(crate) fn new(keys: Option<StateKeys>, ttl: Duration) -> Self {
        let cell = OnceLock::new();
        if let Some(k) = keys {
            let _ = cell.set(k);
        }
        Self {
            keys: Arc::new(cell),
            ttl,
            leeway: DEFAULT_LEEWAY,
        }
    }

    fn keys(&self) -> Result<&StateKeys, RandomUnavailable> {
        if let Some(k) = self.keys.get() {
            return Ok(k);
        }
        let made = StateKeys::generate()?;
        Ok(self.keys.get_or_init(|| made))
    }

    pub(crate) fn seal<S: Serialize + ?Sized>(&self, state: &S, b: &Binding<'_>) -> Result<String, SealError> {
        self.seal_at(state, b, now_secs())
    }

    /// [`Sealer::seal`] as if the clock read `iat`.
    fn seal_at<S: Serialize + ?Sized>(&self, state: &S, b: &Binding<'_>, iat: f64) -> Result<String, SealError> {
        let claims = ClaimsOut {
            v: 2,
            iat,
            exp: iat + self.ttl.as_secs_f64(),
            m: b.method,
            t: b.target,
            a: args_digest(b.arguments),
            aud: b.audience,
            p: b.principal.map(principal_tag),
            s: state,
        };
        let key = self
            .keys()
            .map_err(SealError::Random)?
            .keys
            .first()
            .ok_or(SealError::Cipher)?;
        // The salt makes this token's key: without randomness, nothing is sealed (a repeated
        // salt would repeat a key and its fixed nonce).
        let mut salt = [0u8; SALT];
        random(&mut salt).map_err(SealError::Random)?;
        let cipher = key.cipher(&salt).ok_or(SealError::Cipher)?;
        // kid ‖ salt ‖ plaintext, encrypted in place, then the tag: one buffer, no copies.
        let mut raw = Vec::with_capacity(512);
        raw.extend_from_slice(&key.kid);
        raw.extend_from_slice(&salt);
        serde_json::to_writer(&mut raw, &claims).map_err(SealError::Serialize)?;
        if raw.len() - HEADER > MAX_STATE_BYTES {
            return Err(SealError::TooLarge(raw.len() - HEADER));
        }
        let tag = cipher
            .encrypt_inout_detached(&Nonce::from(NONCE), &aad(&key.kid, &salt), (&mut raw[HEADER..]).into())
            .map_err(|_| SealError::Cipher)?;
        raw.extend_from_slice(&tag);
        let mut token = String::with_capacity(PREFIX.len() + raw.len().div_ceil(3) * 4);
        token.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(raw, &mut token);
        Ok(token)
    }

    /// The state sealed in `token`, read as `T`, when the token is ours, fresh and bound to `b`.
    pub(crate) fn unseal<T: DeserializeOwned>(&self, token: &str, b: &Binding<'_>) -> Result<T, Refusal> {
        self.unseal_at(token, b, now_secs()).map(|(state, _)| state)
    }

    /// [`Sealer::unseal`], and how much longer this clock would still take the token (its expiry
    /// plus the leeway, from now): how long a single-use token must be remembered as used.
    pub(crate) fn unseal_for<T: DeserializeOwned>(
        &self,
        token: &str,
        b: &Binding<'_>,
    ) -> Result<(T, Duration), Refusal> {
        self.unseal_at(token, b, now_secs())
    }

    /// [`Sealer::unseal_for`] as if the clock read `now`.
    fn unseal_at<T: DeserializeOwned>(&self, token: &str, b: &Binding<'_>, now: f64) -> Result<(T, Duration), Refusal> {
        // Another version (`v1.` included) is refused like any bad token.
        let body = token.strip_prefix(PREFIX).ok_or(Refusal::Malformed)?;
        // Nothing larger than a state we could have sealed is decoded or decrypted.
        if body.len() > MAX_TOKEN_CHARS {
            return Err(Refusal::Malformed);
        }
        let mut raw = URL_SAFE_NO_PAD.decode(body).map_err(|_| Refusal::Malformed)?;
        if raw.len() < HEADER + TAG {
            return Err(Refusal::Malformed);
        }
        let (header, rest) = raw.split_at_mut(HEADER);
        let (ct, tag) = rest.split_at_mut(rest.len() - TAG);
        let (kid, salt) = header.split_at(4);
        let keys = self.keys().map_err(|_| Refusal::Seal)?;
        let key = keys.keys.iter().find(|k| k.kid == kid).ok_or(Refusal::Seal)?;
        let salt: [u8; SALT] = salt.try_into().map_err(|_| Refusal::Malformed)?;
        let tag: [u8; TAG] = (&*tag).try_into().map_err(|_| Refusal::Malformed)?;
        let cipher = key.cipher(&salt).ok_or(Refusal::Seal)?;
        cipher
            .decrypt_inout_detached(
                &Nonce::from(NONCE),
                &aad(&key.kid, &salt),
                (&mut *ct).into(),
                &tag.into(),
            )
            .map_err(|_| Refusal::Seal)?;
        // Authenticated: the plaintext is ours, so the state is read with the claims, in one pass.
        let claims: ClaimsIn<'_, T> = serde_json::from_slice(ct).map_err(|_| Refusal::Malformed)?;
        // Expired by the token's own `exp` or by the TTL configured now, whichever comes first,
        // give or take the clock leeway at both ends (replicas' clocks differ a little).
        let leeway = self.leeway.as_secs_f64();
        let expires = claims.exp.min(claims.iat + self.ttl.as_secs_f64());
        if now >= expires + leeway || claims.iat > now + leeway {
            return Err(Refusal::Expired);
        }
        if claims.m != b.method || claims.t != b.target || claims.a != args_digest(b.arguments) {
            return Err(Refusal::Binding);
        }
        if claims.aud != b.audience {
            return Err(Refusal::Audience);
        }
        if claims.p.as_deref() != b.principal.map(principal_tag).as_deref() {
            return Err(Refusal::Principal);
        }
        // Positive and finite: `now` is before `expires + leeway`, checked above.
        let takeable = Duration::try_from_secs_f64(expires + leeway - now).unwrap_or(Duration::ZERO);
        Ok((claims.s, takeable))
    }
}

/// The largest sealed plaintext (claims and state, answers included), in bytes.
pub(crate) const MAX_STATE_BYTES: usize = 256 * 1024;
/// The longest token body (unpadded base64url of kid ‖ salt ‖ ciphertext ‖ tag) a sealed state
/// can have: exactly the length of the largest state's token.
const MAX_TOKEN_CHARS: usize = ((HEADER + MAX_STATE_BYTES + TAG) * 4).div_ceil(3);

/// The bytes before the ciphertext (kid, salt) and after it (the tag).
const HEADER: usize = 4 + SALT;
const TAG: usize = 16;
/// GCM's nonce: fixed, as every token's key seals that token only (see the module's notes).
const NONCE: [u8; 12] = [0; 12];

/// The associated data: the format version, the key id and the salt.
fn aad(kid: &[u8; 4], salt: &[u8; SALT]) -> [u8; PREFIX.len() + 4 + SALT] {
    let mut aad = [0u8; PREFIX.len() + 4 + SALT];
    aad[..PREFIX.len()].copy_from_slice(PREFIX.as_bytes());
    aad[PREFIX.len()..PREFIX.len() + 4].copy_from_slice(kid);
    aad[PREFIX.len() + 4..].copy_from_slice(salt);
    aad
}

/// The plaintext of a token, as sealed.
#[derive(Serialize)]
struct ClaimsOut<'a, S: ?Sized> {
    v: u8,
    iat: f64,
    exp: f64,
    m: &'a str,
    t: &'a str,
    a: String,
    aud: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    p: Option<String>,
    s: &'a S,
}

/// The plaintext of a token, as read back: strings borrowed where they have no escapes.
#[derive(Deserialize)]
struct ClaimsIn<'a, T> {
    iat: f64,
    exp: f64,
    #[serde(borrow)]
    m: Cow<'a, str>,
    #[serde(borrow)]
    t: Cow<'a, str>,
    #[serde(borrow)]
    a: Cow<'a, str>,
    #[serde(borrow)]
    aud: Cow<'a, str>,
    #[serde(default, borrow)]
    p: Option<Cow<'a, str>>,
    s: T,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    thread_local! {
        /// Makes this thread's random source fail, to test that nothing weaker is used.
        pub(crate) static RANDOM_FAILS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Runs `f` with this thread's random source failing.
    pub(crate) fn without_randomness<T>(f: impl FnOnce() -> T) -> T {
        RANDOM_FAILS.with(|r| r.set(true));
        let out = f();
        RANDOM_FAILS.with(|r| r.set(false));
        out
    }

    #[test]
    fn no_randomness_means_no_key_and_no_seal() {
        assert!(without_randomness(StateKeys::generate).is_err());
        let a = args(json!({}));
        let s = sealer(1, 600);
        assert!(matches!(
            without_randomness(|| s.seal(&json!(1), &binding(&a, None))),
            Err(SealError::Random(_))
        ));
        // Default keys are made at first use: without randomness there are none, and nothing
        // is sealed with a weaker key.
        let lazy = Sealer::new(None, Duration::from_secs(60));
        assert!(matches!(
            without_randomness(|| lazy.seal(&json!(1), &binding(&a, None))),
            Err(SealError::Random(_))
        ));
        assert!(lazy.seal(&json!(1), &binding(&a, None)).is_ok(), "and it recovers");
    }

    fn sealer(secret: u8, ttl: u64) -> Sealer {
        Sealer::new(Some(StateKeys::new(&[secret; 32]).unwrap()), Duration::from_secs(ttl))
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn binding<'a>(a: &'a Map<String, Value>, p: Option<&'a crate::principal::Principal>) -> Binding<'a> {
        Binding {
            method: "tools/call",
            target: "delete_folder",
            arguments: a,
            audience: "notes",
            principal: p,
        }
    }

    #[test]
    fn a_state_that_cannot_be_serialized_is_an_error_not_an_empty_token() {
        struct Refuses;
        impl Serialize for Refuses {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let a = args(json!({}));
        assert!(matches!(
            sealer(1, 600).seal(&Refuses, &binding(&a, None)),
            Err(SealError::Serialize(_))
        ));
    }

    #[test]
    fn default_keys_are_made_once_at_first_use() {
        let s = Sealer::new(None, Duration::from_secs(60));
        let a = args(json!({}));
        let token = s.seal(&json!(1), &binding(&a, None)).unwrap();
        let again = s.clone();
        assert_eq!(again.unseal::<Value>(&token, &binding(&a, None)), Ok(json!(1)));
        let other = Sealer::new(None, Duration::from_secs(60));
        assert_eq!(other.unseal::<Value>(&token, &binding(&a, None)), Err(Refusal::Seal));
    }

    #[test]
    fn round_trip() {
        let s = sealer(1, 600);
        let a = args(json!({"path": "/x", "n": [1, {"b": 2, "a": 1}]}));
        let token = s.seal(&json!({"k": 1}), &binding(&a, None)).unwrap();
        assert!(token.starts_with("v2."));
        assert_eq!(s.unseal(&token, &binding(&a, None)), Ok(json!({"k": 1})));
        // Key order does not matter to the digest.
        let reordered = args(json!({"n": [1, {"a": 1, "b": 2}], "path": "/x"}));
        assert_eq!(s.unseal(&token, &binding(&reordered, None)), Ok(json!({"k": 1})));
    }

    #[test]
    fn the_plaintext_is_not_readable() {
        let s = sealer(1, 600);
        let a = args(json!({}));
        let token = s
            .seal(&json!({"secret-answer": "hunter2"}), &binding(&a, None))
            .unwrap();
        let raw = URL_SAFE_NO_PAD.decode(&token[3..]).unwrap();
        assert!(!String::from_utf8_lossy(&raw).contains("hunter2"));
    }

    #[test]
    fn every_failure_is_refused() {
        let s = sealer(1, 600);
        let a = args(json!({"path": "/x"}));
        let token = s.seal(&json!(1), &binding(&a, None)).unwrap();
        let mut tampered = token.clone();
        tampered.push_str("-TAMPERED");
        assert!(s.unseal::<Value>(&tampered, &binding(&a, None)).is_err());
        let last = token.len() - 2;
        let flipped = format!(
            "{}{}",
            &token[..last],
            if &token[last..last + 1] == "A" { "B" } else { "A" }
        );
        assert_eq!(
            s.unseal::<Value>(&format!("{flipped}{}", &token[last + 1..]), &binding(&a, None)),
            Err(Refusal::Seal)
        );
        assert_eq!(
            s.unseal::<Value>("garbage", &binding(&a, None)),
            Err(Refusal::Malformed)
        );
        let other = args(json!({"path": "/y"}));
        assert_eq!(s.unseal::<Value>(&token, &binding(&other, None)), Err(Refusal::Binding));
        let mut b = binding(&a, None);
        b.target = "add";
        assert_eq!(s.unseal::<Value>(&token, &b), Err(Refusal::Binding));
        let mut b = binding(&a, None);
        b.audience = "other";
        assert_eq!(s.unseal::<Value>(&token, &b), Err(Refusal::Audience));
        let p = crate::principal::Principal {
            subject: "alice".into(),
            issuer: None,
            scopes: vec![],
        };
        assert_eq!(
            s.unseal::<Value>(&token, &binding(&a, Some(&p))),
            Err(Refusal::Principal)
        );
        assert_eq!(
            sealer(2, 600).unseal::<Value>(&token, &binding(&a, None)),
            Err(Refusal::Seal)
        );
    }

    #[test]
    fn principals_are_bound() {
        let s = sealer(1, 600);
        let a = args(json!({}));
        let alice = crate::principal::Principal {
            subject: "alice".into(),
            issuer: Some("i".into()),
            scopes: vec![],
        };
        let bob = crate::principal::Principal {
            subject: "bob".into(),
            issuer: Some("i".into()),
            scopes: vec![],
        };
        let token = s.seal(&json!(1), &binding(&a, Some(&alice))).unwrap();
        assert!(s.unseal::<Value>(&token, &binding(&a, Some(&alice))).is_ok());
        assert_eq!(
            s.unseal::<Value>(&token, &binding(&a, Some(&bob))),
            Err(Refusal::Principal)
        );
        assert_eq!(s.unseal::<Value>(&token, &binding(&a, None)), Err(Refusal::Principal));
    }

    #[test]
    fn oversized_tokens_are_refused_before_decoding_and_oversized_states_are_not_sealed() {
        let s = sealer(1, 600);
        let args = serde_json::Map::new();
        let b = binding(&args, None);
        // A body of valid base64 with a real key id, longer than any state we seal.
        let token = s.seal(&serde_json::json!({"x": 1}), &b).unwrap();
        let big = format!("{token}{}", "A".repeat(MAX_TOKEN_CHARS));
        assert!(matches!(
            s.unseal::<serde_json::Value>(&big, &b),
            Err(Refusal::Malformed)
        ));
        let huge = serde_json::json!({"x": "y".repeat(MAX_STATE_BYTES)});
        let e = s.seal(&huge, &b).unwrap_err();
        assert!(matches!(e, SealError::TooLarge(_)), "{e}");
        assert!(e.to_string().contains("over the limit"), "{e}");
    }

    #[test]
    fn a_shorter_ttl_now_expires_tokens_sealed_under_a_longer_one() {
        let long = sealer(1, 600);
        let args = serde_json::Map::new();
        let b = binding(&args, None);
        let t0 = 1_000_000.0;
        let token = long.seal_at(&serde_json::json!({"x": 1}), &b, t0).unwrap();
        assert!(long.unseal_at::<serde_json::Value>(&token, &b, t0 + 100.0).is_ok());
        let short = sealer(1, 30);
        let past = t0 + 30.0 + DEFAULT_LEEWAY.as_secs_f64();
        assert!(matches!(
            short.unseal_at::<serde_json::Value>(&token, &b, past),
            Err(Refusal::Expired)
        ));
    }

    #[test]
    fn expired_tokens_are_refused_past_the_leeway_and_taken_within_it() {
        let s = sealer(1, 600);
        let a = args(json!({}));
        let t0 = 1_000_000.0;
        let leeway = DEFAULT_LEEWAY.as_secs_f64();
        assert!(leeway > 0.0 && leeway <= 60.0, "the leeway stays small");
        let token = s.seal_at(&json!(1), &binding(&a, None), t0).unwrap();
        let at = |now: f64| s.unseal_at::<Value>(&token, &binding(&a, None), now).map(|(v, _)| v);
        assert_eq!(at(t0 + 599.0), Ok(json!(1)));
        // How long a single-use token is remembered: until no clock within the leeway takes it.
        let takeable = |now: f64| s.unseal_at::<Value>(&token, &binding(&a, None), now).map(|(_, d)| d);
        assert_eq!(takeable(t0), Ok(Duration::from_secs(600) + DEFAULT_LEEWAY));
        assert_eq!(takeable(t0 + 599.0), Ok(Duration::from_secs(1) + DEFAULT_LEEWAY));
        // Past `exp`, within the leeway (another replica's clock a little behind): taken.
        assert_eq!(at(t0 + 600.0), Ok(json!(1)));
        assert_eq!(at(t0 + 600.0 + leeway - 1.0), Ok(json!(1)));
        // Past `exp` + leeway: refused.
        assert_eq!(at(t0 + 600.0 + leeway), Err(Refusal::Expired));
        assert_eq!(at(t0 + 600.0 + leeway + 1.0), Err(Refusal::Expired));
        // The other end: issued in the future, within the leeway taken, past it refused.
        assert_eq!(at(t0 - leeway), Ok(json!(1)));
        assert_eq!(at(t0 - leeway - 1.0), Err(Refusal::Expired));
        // A zero TTL with no leeway expires at once.
        let mut strict = sealer(1, 0);
        strict.leeway = Duration::ZERO;
        let token = strict.seal(&json!(1), &binding(&a, None)).unwrap();
        assert_eq!(
            strict.unseal::<Value>(&token, &binding(&a, None)),
            Err(Refusal::Expired)
        );
    }

    #[test]
    fn rotation_keeps_old_tokens_valid() {
        let old = sealer(1, 600);
        let a = args(json!({}));
        let token = old.seal(&json!(1), &binding(&a, None)).unwrap();
        let rotated = Sealer::new(
            Some(StateKeys::new(&[2; 32]).unwrap().with_previous(&[1; 32]).unwrap()),
            Duration::from_secs(600),
        );
        assert!(rotated.unseal::<Value>(&token, &binding(&a, None)).is_ok());
        let fresh = rotated.seal(&json!(2), &binding(&a, None)).unwrap();
        assert_eq!(old.unseal::<Value>(&fresh, &binding(&a, None)), Err(Refusal::Seal));
    }

    #[test]
    fn the_question_digest_is_the_digest_of_the_question_object() {
        let schema = args(json!({"type": "object", "properties": {"ok": {"type": "boolean", "title": "Ök \"q\""}}}));
        assert_eq!(
            question_digest("Delete /x?", &schema),
            digest(&json!({"message": "Delete /x?", "requestedSchema": schema}))
        );
    }

    /// A token in the first format (`v1.` + base64url(kid ‖ 12-byte nonce ‖ ciphertext ‖ tag),
    /// one AES key per secret, 128-bit digests), sealed as that version did.
    fn seal_v1(secret: &[u8], claims: &Value) -> String {
        let hk = hkdf::Hkdf::<Sha256>::new(None, secret);
        let mut okm = [0u8; 32];
        hk.expand(b"mcp-resolve/request-state/v1/aes-256-gcm", &mut okm)
            .unwrap();
        let mut h = Sha256::new();
        h.update(b"mcp-resolve/request-state/v1/kid:");
        h.update(okm);
        let kid: [u8; 4] = h.finalize()[..4].try_into().unwrap();
        let nonce = [3u8; 12];
        let mut raw = kid.to_vec();
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&serde_json::to_vec(claims).unwrap());
        let aad = [b"v1.".as_slice(), &kid].concat();
        let tag = Aes256Gcm::new(&Key::<Aes256Gcm>::from(okm))
            .encrypt_inout_detached(&Nonce::from(nonce), &aad, (&mut raw[16..]).into())
            .unwrap();
        raw.extend_from_slice(&tag);
        format!("v1.{}", URL_SAFE_NO_PAD.encode(raw))
    }

    #[test]
    fn old_format_tokens_are_refused() {
        let s = sealer(1, 600);
        let a = args(json!({}));
        let now = now_secs();
        let digest128 = |b: &[u8]| URL_SAFE_NO_PAD.encode(&Sha256::digest(b)[..16]);
        let claims = json!({
            "v": 1, "iat": now, "exp": now + 600.0, "m": "tools/call", "t": "delete_folder",
            "a": digest128(b"{}"), "aud": "notes", "s": 1
        });
        let v1 = seal_v1(&[1; 32], &claims);
        assert_eq!(s.unseal::<Value>(&v1, &binding(&a, None)), Err(Refusal::Malformed));
        // Its bytes under the new prefix do not open either (another layout, another key).
        let relabelled = format!("v2.{}", &v1[3..]);
        assert!(s.unseal::<Value>(&relabelled, &binding(&a, None)).is_err());
        // On the wire every refusal is the same -32602 "invalid state" (`resolve::state`).
        let fresh = s.seal(&json!(1), &binding(&a, None)).unwrap();
        assert!(fresh.starts_with("v2."));
        assert_eq!(s.unseal::<Value>(&fresh, &binding(&a, None)), Ok(json!(1)));
    }

    #[test]
    fn principal_fields_are_length_prefixed() {
        let p = |issuer: Option<&str>, subject: &str| crate::principal::Principal {
            subject: subject.into(),
            issuer: issuer.map(Into::into),
            scopes: vec![],
        };
        // Joined with a NUL byte, these two would be the same bytes.
        let one = p(Some("a\0b"), "c");
        let two = p(Some("a"), "b\0c");
        assert_ne!(principal_tag(&one), principal_tag(&two));
        // No issuer is not an empty issuer.
        assert_ne!(principal_tag(&p(None, "x")), principal_tag(&p(Some(""), "x")));
        assert_ne!(principal_tag(&p(Some(""), "")), principal_tag(&p(None, "")));
        let s = sealer(1, 600);
        let a = args(json!({}));
        let token = s.seal(&json!(1), &binding(&a, Some(&one))).unwrap();
        assert_eq!(s.unseal::<Value>(&token, &binding(&a, Some(&one))), Ok(json!(1)));
        assert_eq!(
            s.unseal::<Value>(&token, &binding(&a, Some(&two))),
            Err(Refusal::Principal)
        );
    }

    #[test]
    fn digests_are_full_sha256() {
        let full = |tag: &str| URL_SAFE_NO_PAD.decode(tag).unwrap().len();
        assert_eq!(full(&args_digest(&args(json!({"path": "/x"})))), 32);
        let p = crate::principal::Principal {
            subject: "alice".into(),
            issuer: None,
            scopes: vec![],
        };
        assert_eq!(full(&principal_tag(&p)), 32);
        assert_eq!(full(&question_digest("Delete?", &args(json!({})))), 32);
        assert_eq!(
            args_digest(&args(json!({"b": 1, "a": 2}))),
            URL_SAFE_NO_PAD.encode(Sha256::digest(br#"{"a":2,"b":1}"#))
        );
    }

    #[test]
    fn every_token_has_a_salt_of_its_own() {
        let s = sealer(1, 600);
        let a = args(json!({}));
        let mut salts = std::collections::HashSet::new();
        let mut kids = std::collections::HashSet::new();
        for _ in 0..2000 {
            let token = s.seal(&json!(1), &binding(&a, None)).unwrap();
            let raw = URL_SAFE_NO_PAD.decode(&token[PREFIX.len()..]).unwrap();
            kids.insert(raw[..4].to_vec());
            assert!(salts.insert(raw[4..HEADER].to_vec()), "a salt repeated");
        }
        assert_eq!(kids.len(), 1, "one key id for one key");
        // The same state sealed twice gives two unrelated ciphertexts.
        let t1 = s.seal(&json!(1), &binding(&a, None)).unwrap();
        let t2 = s.seal(&json!(1), &binding(&a, None)).unwrap();
        let (r1, r2) = (
            URL_SAFE_NO_PAD.decode(&t1[PREFIX.len()..]).unwrap(),
            URL_SAFE_NO_PAD.decode(&t2[PREFIX.len()..]).unwrap(),
        );
        assert_ne!(r1[HEADER..], r2[HEADER..]);
    }

    #[test]
    fn keys_are_hex_or_base64_of_32_random_bytes() {
        let bytes: Vec<u8> = (0u8..32).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let forms = [
            hex.clone(),
            hex.to_uppercase(),
            base64::engine::general_purpose::STANDARD.encode(&bytes),
            base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes),
            base64::engine::general_purpose::URL_SAFE.encode(&bytes),
            URL_SAFE_NO_PAD.encode(&bytes),
            format!("  {hex}\n"),
        ];
        let raw = StateKeys::new(&bytes).unwrap();
        for form in &forms {
            let keys = StateKeys::from_encoded(form).unwrap_or_else(|e| panic!("{form:?}: {e}"));
            assert_eq!(keys.keys[0].kid, raw.keys[0].kid, "{form:?} is the same key");
        }
        // A state sealed under the hex spelling opens under the base64 one.
        let a = args(json!({}));
        let by_hex = Sealer::new(
            Some(StateKeys::from_encoded(&forms[0]).unwrap()),
            Duration::from_secs(60),
        );
        let by_b64 = Sealer::new(
            Some(StateKeys::from_encoded(&forms[2]).unwrap()),
            Duration::from_secs(60),
        );
        let token = by_hex.seal(&json!(1), &binding(&a, None)).unwrap();
        assert_eq!(by_b64.unseal::<Value>(&token, &binding(&a, None)), Ok(json!(1)));
        // Rotation: the first seals, the rest unseal.
        let other = URL_SAFE_NO_PAD.encode([9u8; 32]);
        assert_eq!(StateKeys::from_encoded(&format!("{other},{hex}")).unwrap().len(), 2);

        let short = &bytes[..31];
        let refused = [
            ("correct horse battery staple", StateKeyError::NotEncoded),
            ("my-very-long-and-memorable-passphrase!", StateKeyError::NotEncoded),
            ("", StateKeyError::Empty),
            (" , ", StateKeyError::Empty),
        ];
        for (text, want) in refused {
            assert_eq!(StateKeys::from_encoded(text).unwrap_err(), want, "{text:?}");
        }
        let short_hex: String = short.iter().map(|b| format!("{b:02x}")).collect();
        for text in [
            base64::engine::general_purpose::STANDARD.encode(short),
            URL_SAFE_NO_PAD.encode(short),
        ] {
            assert_eq!(StateKeys::from_encoded(&text).unwrap_err(), StateKeyError::TooShort(31));
        }
        // 62 hex digits are a 31-byte key in hex, not 46 bytes of base64.
        assert_eq!(
            StateKeys::from_encoded(&short_hex).unwrap_err(),
            StateKeyError::TooShort(31)
        );
        assert_eq!(
            StateKeys::from_encoded("12345678").unwrap_err(),
            StateKeyError::TooShort(4)
        );
        // A bad previous key is refused too.
        assert_eq!(
            StateKeys::from_encoded(&format!("{hex},passphrase two")).unwrap_err(),
            StateKeyError::NotEncoded
        );
        let message = StateKeys::from_encoded("hunter2 hunter2").unwrap_err().to_string();
        assert!(message.contains("openssl rand -base64 32"), "{message}");
        assert!(message.contains("head -c32 /dev/urandom | base64"), "{message}");
        assert!(
            StateKeys::from_encoded(&URL_SAFE_NO_PAD.encode(short))
                .unwrap_err()
                .to_string()
                .contains("31 bytes")
        );
        assert!(
            StateKeys::from_env("MCP_RESOLVE_TEST_STATE_KEY_NEVER_SET")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_secret_needs_32_bytes_and_the_errors_say_so() {
        assert_eq!(StateKeys::new(&[7u8; 31]).unwrap_err(), KeyTooShort(31));
        assert_eq!(StateKeys::new(b"").unwrap_err(), KeyTooShort(0));
        assert_eq!(StateKeys::new(&[7u8; 32]).map(|k| k.len()), Ok(1));
        assert_eq!(StateKeys::new(&[7u8; 64]).map(|k| k.len()), Ok(1));
        assert!(StateKeys::new(&[7u8; 32]).unwrap().with_previous(&[9u8; 31]).is_err());
        assert!(!StateKeys::new(&[7u8; 32]).unwrap().is_empty());
        assert_eq!(
            KeyTooShort(5).to_string(),
            "a requestState secret needs at least 32 bytes, got 5"
        );
        assert_eq!(
            RandomUnavailable::new("no entropy").to_string(),
            "the operating system's random source failed: no entropy"
        );
    }

    #[test]
    fn a_key_ring_never_prints_its_keys() {
        let keys = StateKeys::new(&[0xAB; 32]).unwrap().with_previous(&[0xCD; 32]).unwrap();
        let shown = format!("{keys:?}");
        assert_eq!(shown, "StateKeys { keys: 2, .. }");
    }

    #[test]
    fn a_variable_that_is_set_is_read_as_keys_and_refused_when_it_is_not_one() {
        // PATH is set in every test process and is no key: read, then refused (not taken as
        // unset, which would leave the server on a key of its own without a word).
        assert!(std::env::var_os("PATH").is_some());
        assert!(matches!(
            StateKeys::from_env("PATH"),
            Err(StateKeyError::NotEncoded | StateKeyError::TooShort(_) | StateKeyError::Empty)
        ));
        assert!(
            StateKeys::from_env("MCP_RESOLVE_SEAL_TEST_UNSET_VARIABLE")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_refusal_is_logged_by_name() {
        let names = [
            (Refusal::Malformed, "malformed"),
            (Refusal::Seal, "seal"),
            (Refusal::Binding, "request binding"),
            (Refusal::Expired, "expired"),
            (Refusal::Audience, "audience"),
            (Refusal::Principal, "principal"),
            (Refusal::Replayed, "replayed"),
        ];
        for (refusal, name) in names {
            assert_eq!(refusal.to_string(), name);
        }
    }

    /// What a question's digest covers is written one way: keys sorted at every depth, arrays in
    /// order with one comma between elements, no spaces.
    #[test]
    fn canonical_json_sorts_keys_at_every_depth_and_separates_elements_once() {
        let mut out = Vec::new();
        canonical(
            &json!({"b": [1, [2, 3], {"d": null, "c": "x"}], "a": {"z": true, "y": 1.5}}),
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":{"y":1.5,"z":true},"b":[1,[2,3],{"c":"x","d":null}]}"#
        );
        assert_ne!(digest(&json!([1, 2])), digest(&json!([12])));
        assert_ne!(digest(&json!([])), digest(&json!([[]])));
    }

    /// A used single-use token is recorded under its SHA-256, so two tokens never share a record.
    #[test]
    fn a_token_is_recorded_under_its_full_sha256() {
        // SHA-256("abc"), the FIPS 180-2 example, in unpadded base64url.
        assert_eq!(token_digest("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
        assert_ne!(token_digest("v2.a"), token_digest("v2.b"));
    }

    /// `seal` and `unseal` read the system clock: a state sealed now opens now and not after its
    /// life and the leeway; a state sealed that long ago does not open now.
    #[test]
    fn seal_and_unseal_read_the_system_clock() {
        let wall = || SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
        let s = sealer(1, 600);
        let a = args(json!({}));
        let b = binding(&a, None);
        let life = 600.0 + s.leeway.as_secs_f64();
        let token = s.seal(&json!(1), &b).unwrap();
        assert_eq!(s.unseal_at::<Value>(&token, &b, wall()).map(|(v, _)| v), Ok(json!(1)));
        assert_eq!(
            s.unseal_at::<Value>(&token, &b, wall() + life + 5.0).map(|(v, _)| v),
            Err(Refusal::Expired)
        );
        let old = s.seal_at(&json!(1), &b, wall() - life - 5.0).unwrap();
        assert_eq!(s.unseal::<Value>(&old, &b), Err(Refusal::Expired));
        assert_eq!(s.unseal_for::<Value>(&old, &b).map(|(v, _)| v), Err(Refusal::Expired));
        let fresh = s.seal_at(&json!(1), &b, wall()).unwrap();
        assert_eq!(s.unseal::<Value>(&fresh, &b), Ok(json!(1)));
    }

    /// A token keeps the expiry it was sealed with, even when the server's configured TTL has
    /// grown since (the shorter of the two wins).
    #[test]
    fn a_token_keeps_its_own_expiry_when_the_configured_ttl_grows() {
        let a = args(json!({}));
        let b = binding(&a, None);
        let t0 = 1_000_000.0;
        let token = sealer(1, 600).seal_at(&json!(1), &b, t0).unwrap();
        let longer = sealer(1, 3600);
        let leeway = longer.leeway.as_secs_f64();
        let at = |now: f64| longer.unseal_at::<Value>(&token, &b, now).map(|(v, _)| v);
        assert_eq!(at(t0 + 600.0 + leeway - 1.0), Ok(json!(1)));
        assert_eq!(at(t0 + 600.0 + leeway), Err(Refusal::Expired));
    }

    /// The largest state seals and opens (its token exactly as long as a token may be); one byte
    /// more is refused, naming its size.
    #[test]
    fn the_largest_state_seals_and_opens_and_one_byte_more_is_refused() {
        // The bound docs/SECURITY.md states.
        assert_eq!(MAX_STATE_BYTES, 262_144);
        let s = sealer(1, 600);
        let a = args(json!({}));
        let b = binding(&a, None);
        let t0 = 1_000_000.0;
        let plaintext = |token: &str| URL_SAFE_NO_PAD.decode(&token[PREFIX.len()..]).unwrap().len() - HEADER - TAG;
        let base = plaintext(&s.seal_at(&json!(""), &b, t0).unwrap());
        let largest = "x".repeat(MAX_STATE_BYTES - base);
        let token = s.seal_at(&json!(largest), &b, t0).unwrap();
        assert_eq!(plaintext(&token), MAX_STATE_BYTES);
        assert_eq!(token.len() - PREFIX.len(), MAX_TOKEN_CHARS);
        assert_eq!(s.unseal_at::<Value>(&token, &b, t0).map(|(v, _)| v), Ok(json!(largest)));
        let over = format!("{largest}y");
        assert!(matches!(
            s.seal_at(&json!(over), &b, t0),
            Err(SealError::TooLarge(n)) if n == MAX_STATE_BYTES + 1
        ));
    }

    /// A token shorter than a key id, a salt and a tag is malformed, whatever its bytes; one of
    /// exactly that length (nothing sealed in it) is read, and fails its seal.
    #[test]
    fn a_token_too_short_to_hold_a_seal_is_malformed() {
        let s = sealer(1, 600);
        let a = args(json!({}));
        let b = binding(&a, None);
        let kid = s.keys().unwrap().keys[0].kid;
        for len in 0..HEADER + TAG {
            let mut raw = kid.to_vec();
            raw.resize(len, 0);
            let token = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&raw));
            assert_eq!(s.unseal::<Value>(&token, &b), Err(Refusal::Malformed), "{len} bytes");
        }
        let mut raw = kid.to_vec();
        raw.resize(HEADER + TAG, 0);
        let token = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&raw));
        assert_eq!(s.unseal::<Value>(&token, &b), Err(Refusal::Seal));
    }

    /// The tag covers the format's prefix, the key id and the salt (the associated data, built
    /// here by hand from the format's description): a token decrypts with exactly that.
    #[test]
    fn a_tokens_tag_covers_its_version_key_id_and_salt() {
        let s = sealer(1, 600);
        let a = args(json!({}));
        let b = binding(&a, None);
        let token = s.seal(&json!("x"), &b).unwrap();
        let raw = URL_SAFE_NO_PAD.decode(&token[PREFIX.len()..]).unwrap();
        let (kid, rest) = raw.split_at(4);
        let (salt, rest) = rest.split_at(SALT);
        let (ct, tag) = rest.split_at(rest.len() - TAG);
        let salt: [u8; SALT] = salt.try_into().unwrap();
        let key = &s.keys().unwrap().keys[0];
        assert_eq!(kid, key.kid);
        let open = |aad: &[u8]| {
            let mut ct = ct.to_vec();
            let tag: [u8; TAG] = tag.try_into().unwrap();
            key.cipher(&salt)
                .unwrap()
                .decrypt_inout_detached(&Nonce::from(NONCE), aad, ct.as_mut_slice().into(), &tag.into())
                .map(|()| ct)
        };
        let aad = [b"v2.".as_slice(), kid, &salt].concat();
        let plain = open(&aad).expect("opens with v2. ‖ kid ‖ salt as associated data");
        assert_eq!(serde_json::from_slice::<Value>(&plain).unwrap()["s"], "x");
        assert!(open(&[b"v1.".as_slice(), kid, &salt].concat()).is_err());
        assert!(open(b"").is_err());
    }
}
