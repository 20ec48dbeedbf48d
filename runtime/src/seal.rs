//! Sealing of `requestState`: AES-256-GCM with an HKDF-derived key, bound to the request it
//! belongs to, with an expiry and a key ring for rotation.
//!
//! A token is `v1.` + base64url(kid ‖ nonce ‖ ciphertext). The plaintext holds the claims: issue
//! and expiry times, the method, the tool, a digest of the arguments, the audience, a tag of the
//! principal when there is one, and the engine's own state. Any failure — a bad seal, another
//! request, an expired token, another audience or principal — is one error on the wire; the reason
//! goes to the log only.
//!
//! (Over 500 lines with its tests, on purpose: the keys, the token format, expiry and the
//! canonical digests a token binds are one piece of security code, read and reviewed together.)

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

const PREFIX: &str = "v1.";
const HKDF_INFO: &[u8] = b"mcp-resolve/request-state/v1/aes-256-gcm";
const KID_LABEL: &[u8] = b"mcp-resolve/request-state/v1/kid:";
const MAX_SKEW_SECS: f64 = 60.0;

/// A secret shorter than 32 bytes was given.
///
/// ```
/// use mcp_resolve_runtime::StateKeys;
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
/// use mcp_resolve_runtime::RandomUnavailable;
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

#[derive(Clone)]
struct SealingKey {
    kid: [u8; 4],
    cipher: Aes256Gcm,
}

impl SealingKey {
    fn derive(secret: &[u8]) -> Result<Self, KeyTooShort> {
        if secret.len() < 32 {
            return Err(KeyTooShort(secret.len()));
        }
        let hk = hkdf::Hkdf::<Sha256>::new(None, secret);
        let mut okm = [0u8; 32];
        // 32 bytes is far below HKDF-SHA256's limit, so expand cannot fail.
        if hk.expand(HKDF_INFO, &mut okm).is_err() {
            return Err(KeyTooShort(secret.len()));
        }
        let mut h = Sha256::new();
        h.update(KID_LABEL);
        h.update(okm);
        let digest = h.finalize();
        let kid = [digest[0], digest[1], digest[2], digest[3]];
        let cipher = Aes256Gcm::new(&Key::<Aes256Gcm>::from(okm));
        Ok(Self { kid, cipher })
    }
}

/// The keys that seal `requestState`: the first seals, every one unseals (for rotation). Share the
/// same secrets between replicas so a retry may land on any of them.
///
/// ```
/// use mcp_resolve_runtime::StateKeys;
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
    /// Keys from a secret of at least 32 bytes (e.g. 32 random bytes, or a long passphrase).
    pub fn new(secret: &[u8]) -> Result<Self, KeyTooShort> {
        Ok(Self {
            keys: Arc::new(vec![SealingKey::derive(secret)?]),
        })
    }
    /// Adds an older secret that still unseals (but never seals).
    pub fn with_previous(self, secret: &[u8]) -> Result<Self, KeyTooShort> {
        let mut keys = (*self.keys).clone();
        keys.push(SealingKey::derive(secret)?);
        Ok(Self { keys: Arc::new(keys) })
    }
    /// A random key for this process only: state does not survive a restart or another replica.
    ///
    /// Fails when the operating system's random source does: a key guessed from anything else
    /// would not be secret.
    pub fn generate() -> Result<Self, RandomUnavailable> {
        let mut secret = [0u8; 32];
        random(&mut secret)?;
        let key = SealingKey::derive(&secret).map_err(|e| RandomUnavailable(e.to_string()))?;
        Ok(Self {
            keys: Arc::new(vec![key]),
        })
    }
    /// Keys from the environment variable `var`: its value is the secret (at least 32 bytes; a
    /// previous secret may follow after a comma, for rotation). `Ok(None)` when the variable is
    /// not set.
    ///
    /// ```
    /// use mcp_resolve_runtime::StateKeys;
    /// assert!(StateKeys::from_env("MCP_RESOLVE_DOCTEST_UNSET_VARIABLE").unwrap().is_none());
    /// ```
    pub fn from_env(var: &str) -> Result<Option<Self>, KeyTooShort> {
        let Ok(value) = std::env::var(var) else { return Ok(None) };
        let mut secrets = value.split(',').map(str::trim).filter(|s| !s.is_empty());
        let Some(first) = secrets.next() else {
            return Err(KeyTooShort(0));
        };
        let mut keys = Self::new(first.as_bytes())?;
        for older in secrets {
            keys = keys.with_previous(older.as_bytes())?;
        }
        Ok(Some(keys))
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
    pub(crate) principal: Option<&'a crate::Principal>,
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

fn sha_tag(canonical_json: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(&Sha256::digest(canonical_json)[..16])
}

/// base64url of the first 16 bytes of SHA-256 over canonical JSON: pins a question's content.
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

fn args_digest(arguments: &Map<String, Value>) -> String {
    let mut s = Vec::with_capacity(64);
    canonical_map(arguments, &mut s);
    sha_tag(&s)
}

fn principal_tag(p: &crate::Principal) -> String {
    let mut h = Sha256::new();
    h.update(b"mcp-resolve/principal/v1:");
    h.update(p.issuer.as_deref().unwrap_or("").as_bytes());
    h.update([0u8]);
    h.update(p.subject.as_bytes());
    URL_SAFE_NO_PAD.encode(&h.finalize()[..16])
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
        let iat = now_secs();
        let claims = ClaimsOut {
            v: 1,
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
        // A repeated nonce under one key would break GCM: without randomness, nothing is sealed.
        let mut nonce = [0u8; 12];
        random(&mut nonce).map_err(SealError::Random)?;
        // kid ‖ nonce ‖ plaintext, encrypted in place, then the tag: one buffer, no copies.
        let mut raw = Vec::with_capacity(512);
        raw.extend_from_slice(&key.kid);
        raw.extend_from_slice(&nonce);
        serde_json::to_writer(&mut raw, &claims).map_err(SealError::Serialize)?;
        if raw.len() - HEADER > MAX_STATE_BYTES {
            return Err(SealError::TooLarge(raw.len() - HEADER));
        }
        let tag = key
            .cipher
            .encrypt_inout_detached(&Nonce::from(nonce), &aad(&key.kid), (&mut raw[HEADER..]).into())
            .map_err(|_| SealError::Cipher)?;
        raw.extend_from_slice(&tag);
        let mut token = String::with_capacity(PREFIX.len() + raw.len().div_ceil(3) * 4);
        token.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(raw, &mut token);
        Ok(token)
    }

    /// The state sealed in `token`, read as `T`, when the token is ours, fresh and bound to `b`.
    pub(crate) fn unseal<T: DeserializeOwned>(&self, token: &str, b: &Binding<'_>) -> Result<T, Refusal> {
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
        let (kid, nonce) = header.split_at(4);
        let keys = self.keys().map_err(|_| Refusal::Seal)?;
        let key = keys.keys.iter().find(|k| k.kid == kid).ok_or(Refusal::Seal)?;
        let nonce: [u8; 12] = nonce.try_into().map_err(|_| Refusal::Malformed)?;
        let tag: [u8; TAG] = (&*tag).try_into().map_err(|_| Refusal::Malformed)?;
        key.cipher
            .decrypt_inout_detached(&Nonce::from(nonce), &aad(&key.kid), (&mut *ct).into(), &tag.into())
            .map_err(|_| Refusal::Seal)?;
        // Authenticated: the plaintext is ours, so the state is read with the claims, in one pass.
        let claims: ClaimsIn<'_, T> = serde_json::from_slice(ct).map_err(|_| Refusal::Malformed)?;
        let now = now_secs();
        // Expired by the token's own `exp` or by the TTL configured now, whichever comes first.
        let expires = claims.exp.min(claims.iat + self.ttl.as_secs_f64());
        if now >= expires || claims.iat > now + MAX_SKEW_SECS {
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
        Ok(claims.s)
    }
}

/// The largest sealed plaintext (claims and state, answers included), in bytes.
pub(crate) const MAX_STATE_BYTES: usize = 256 * 1024;
/// The longest token body (base64url of kid ‖ nonce ‖ ciphertext ‖ tag) a sealed state can have.
const MAX_TOKEN_CHARS: usize = (HEADER + MAX_STATE_BYTES + TAG).div_ceil(3) * 4;

/// The bytes before the ciphertext (kid, nonce) and after it (the tag).
const HEADER: usize = 4 + 12;
const TAG: usize = 16;

/// The associated data: the format version and the key id.
fn aad(kid: &[u8; 4]) -> [u8; PREFIX.len() + 4] {
    let mut aad = [0u8; PREFIX.len() + 4];
    aad[..PREFIX.len()].copy_from_slice(PREFIX.as_bytes());
    aad[PREFIX.len()..].copy_from_slice(kid);
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

    fn binding<'a>(a: &'a Map<String, Value>, p: Option<&'a crate::Principal>) -> Binding<'a> {
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
        assert!(token.starts_with("v1."));
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
        let p = crate::Principal {
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
        let alice = crate::Principal {
            subject: "alice".into(),
            issuer: Some("i".into()),
            scopes: vec![],
        };
        let bob = crate::Principal {
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
        let token = long.seal(&serde_json::json!({"x": 1}), &b).unwrap();
        assert!(long.unseal::<serde_json::Value>(&token, &b).is_ok());
        let short = sealer(1, 0);
        assert!(matches!(
            short.unseal::<serde_json::Value>(&token, &b),
            Err(Refusal::Expired)
        ));
    }

    #[test]
    fn expired_tokens_are_refused() {
        let s = sealer(1, 0);
        let a = args(json!({}));
        let token = s.seal(&json!(1), &binding(&a, None)).unwrap();
        assert_eq!(s.unseal::<Value>(&token, &binding(&a, None)), Err(Refusal::Expired));
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
}
