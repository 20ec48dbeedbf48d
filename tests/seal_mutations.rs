//! Mutated `requestState` tokens are never accepted.
//!
//! Real states are sealed (small and large ones, under the current key and under a previous key
//! of the ring), then mutated: bit flips in the text and in the decoded bytes, truncation,
//! splicing two tokens, other base64 spellings of the same bytes (standard alphabet, padding,
//! non-zero trailing bits, a changed prefix), a changed, inserted, deleted or swapped character,
//! and appended text. Every mutant whose text differs from its original (and from every other
//! real token) must be refused.
//!
//! That is the rule, even for a mutant that decodes to the very bytes of its original: the token
//! is `v2.` + base64url without padding, decoded strictly (no `=`, trailing bits zero, URL-safe
//! alphabet only), so each byte string has exactly one accepted spelling and any textual change
//! is refused. (Were another spelling accepted, it would only open the same sealed state; the test
//! would still fail, so a laxer decoder cannot slip in unnoticed.)
//!
//! `SEAL_MUTATIONS` sets the count (20,000 by default; docs/FUZZING.md has a run of 1,000,000 in
//! release) and `SEAL_SEED` the seed of the generator, printed on failure so a run reproduces.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_resolve::bench::StateSealer;
use mcp_resolve::seal::StateKeys;
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

const TOOL: &str = "deploy";
const AUDIENCE: &str = "https://mcp.example/";
use base64::Engine as _;
use base64::engine::general_purpose::{self as b64, URL_SAFE_NO_PAD};

/// The URL-safe alphabet, for edits of a token's last character.
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// SplitMix64: a tiny deterministic generator, so a failure reproduces from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
}

/// The bytes a token carries (kid ‖ salt ‖ ciphertext ‖ tag).
fn body(token: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(token.strip_prefix("v2.").unwrap()).unwrap()
}

fn token_of(bytes: &[u8]) -> String {
    format!("v2.{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// The key id and salt before the ciphertext.
const HEADER: usize = 4 + 32;

/// One mutation of `tokens[i]`, named for the failure message.
fn mutate(rng: &mut Rng, tokens: &[String], i: usize) -> (&'static str, String) {
    let original = &tokens[i];
    let text = original.as_bytes();
    let other = &tokens[(i + 1 + rng.below(tokens.len() - 1)) % tokens.len()];
    match rng.below(12) {
        0 => {
            let mut t = text.to_vec();
            let at = rng.below(t.len());
            t[at] ^= 1 << rng.below(8);
            ("bit flip in the text", String::from_utf8_lossy(&t).into_owned())
        }
        1 => {
            let mut b = body(original);
            let at = rng.below(b.len());
            b[at] ^= 1 << rng.below(8);
            ("bit flip in the bytes", token_of(&b))
        }
        2 => ("truncation of the text", original[..rng.below(text.len())].to_owned()),
        3 => {
            let b = body(original);
            ("truncation of the bytes", token_of(&b[..rng.below(b.len())]))
        }
        4 => {
            let cut = rng.below(text.len().min(other.len()));
            ("splice of two texts", format!("{}{}", &original[..cut], &other[cut..]))
        }
        5 => {
            let (a, b) = (body(original), body(other));
            // Header (key id and salt) of one, ciphertext and tag of the other; or at any cut.
            let cut = if rng.below(2) == 0 {
                HEADER
            } else {
                rng.below(a.len().min(b.len()))
            };
            ("splice of two byte strings", token_of(&[&a[..cut], &b[cut..]].concat()))
        }
        6 => {
            let b = body(original);
            let variant = match rng.below(3) {
                0 => format!("v2.{}", b64::STANDARD_NO_PAD.encode(&b)),
                1 => format!("v2.{}", b64::URL_SAFE.encode(&b)),
                _ => format!("v2.{}", b64::STANDARD.encode(&b)),
            };
            ("another base64 spelling", variant)
        }
        7 => {
            // The last character's unused low bits set: the same bytes, spelled non-canonically.
            let b = body(original);
            let spare = match b.len() % 3 {
                1 => 4,
                2 => 2,
                _ => 0,
            };
            let mut t = token_of(&b).into_bytes();
            if spare > 0 {
                let last = t.len() - 1;
                let v = URL_SAFE.iter().position(|&a| a == t[last]).unwrap();
                t[last] = URL_SAFE[v | (1 + rng.below((1 << spare) - 1))];
            } else {
                t.push(URL_SAFE[rng.below(64)]);
            }
            ("non-zero trailing bits", String::from_utf8(t).unwrap())
        }
        8 => {
            let mut t = text.to_vec();
            let at = rng.below(t.len());
            let was = t[at];
            t[at] = loop {
                let c = URL_SAFE[rng.below(64)];
                if c != was {
                    break c;
                }
            };
            ("a changed character", String::from_utf8(t).unwrap())
        }
        9 => {
            let mut t = text.to_vec();
            let at = rng.below(t.len() + 1);
            match rng.below(3) {
                0 => {
                    t.insert(at, URL_SAFE[rng.below(64)]);
                }
                1 => {
                    t.insert(at, b" \n\t=.%"[rng.below(6)]);
                }
                _ if at < t.len() => {
                    t.remove(at);
                }
                _ => t.push(b'='),
            }
            ("an inserted or deleted character", String::from_utf8(t).unwrap())
        }
        10 => {
            let suffix = match rng.below(4) {
                0 => String::from_utf8(vec![URL_SAFE[rng.below(64)]; 1 + rng.below(4)]).unwrap(),
                1 => "=".repeat(1 + rng.below(2)),
                2 => other.clone(),
                _ => char::from(rng.byte()).to_string(),
            };
            ("appended text", format!("{original}{suffix}"))
        }
        _ => {
            let mut t = text.to_vec();
            let (a, b) = (rng.below(t.len()), rng.below(t.len()));
            t.swap(a, b);
            let prefix = ["V2.", "v1.", "v3.", "v2:", "", " v2."][rng.below(6)];
            let swapped = String::from_utf8(t).unwrap();
            if rng.below(2) == 0 {
                ("two characters swapped", swapped)
            } else {
                ("another prefix", format!("{prefix}{}", &original[3..]))
            }
        }
    }
}

#[test]
fn mutated_sealed_states_are_never_accepted() {
    let count: u64 = std::env::var("SEAL_MUTATIONS").map_or(20_000, |v| v.parse().unwrap());
    let seed: u64 = std::env::var("SEAL_SEED").map_or(0x5eed_0010, |v| v.parse().unwrap());
    let current = b"seal-mutations: the current secret, 32+ bytes";
    let previous = b"seal-mutations: the previous secret, 32+ bytes";
    let ring = StateSealer::new(
        StateKeys::new(current).unwrap().with_previous(previous).unwrap(),
        Duration::from_secs(3600),
    );
    let old = StateSealer::new(StateKeys::new(previous).unwrap(), Duration::from_secs(3600));
    let arguments: Map<String, Value> = json!({"env": "prd", "force": false}).as_object().unwrap().clone();
    let states = [
        json!({}),
        json!({"r": 1, "asked": {"confirm": "Vb7rQ0sZ1m2fV6dXyC3xZw"}}),
        json!({"r": 3, "outcomes": {
            "confirm": {"action": "accept", "content": {"ok": true}, "q": "Vb7rQ0sZ1m2fV6dXyC3xZw"},
            "notes": {"action": "accept", "content": {"text": "x".repeat(1500)}, "q": "AAAAAAAAAAAAAAAAAAAAAA"}
        }}),
    ];
    let mut tokens = Vec::new();
    for (i, state) in states.iter().enumerate() {
        let raw = serde_json::value::to_raw_value(state).unwrap();
        let sealer = if i == 1 { &old } else { &ring };
        tokens.push(sealer.seal(&raw, TOOL, &arguments, AUDIENCE).unwrap());
        // Same state, sealed again: another nonce, another token.
        tokens.push(ring.seal(&raw, TOOL, &arguments, AUDIENCE).unwrap());
    }
    for t in &tokens {
        assert!(
            ring.unseal_raw(t, TOOL, &arguments, AUDIENCE).is_some(),
            "an original was refused"
        );
        assert_eq!(
            token_of(&body(t)),
            *t,
            "the test's encoder spells tokens as the server does"
        );
    }

    let mut rng = Rng(seed);
    let started = Instant::now();
    let (mut changed, mut unchanged) = (0u64, 0u64);
    for n in 0..count {
        let i = rng.below(tokens.len());
        let (how, mutant) = mutate(&mut rng, &tokens, i);
        // A splice may give back a whole original (the other token, cut at 0): that one is real.
        if tokens.contains(&mutant) {
            unchanged += 1;
            continue;
        }
        changed += 1;
        let opened = ring.unseal_raw(&mutant, TOOL, &arguments, AUDIENCE);
        assert!(
            opened.is_none(),
            "mutation {n} ({how}) of token {i} was accepted (SEAL_SEED={seed}): {mutant}"
        );
    }
    eprintln!(
        "{count} mutations (seed {seed}): {changed} refused, {unchanged} identical to a real token and skipped, in {:.2?}",
        started.elapsed()
    );
    assert!(changed >= count * 9 / 10, "most mutations change the token");
}
