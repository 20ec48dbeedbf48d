//! Memory a client can make the server hold, bounded by what a request *is*, not by its shape.
//!
//! Two budgets are drawn from: the bytes of HTTP request bodies being read or held
//! ([`crate::HttpOptions::max_buffered_bytes`]), and the memory of the JSON trees made from the
//! client's `arguments` and `inputResponses` ([`crate::Server::max_json_memory`]). A JSON tree can
//! take a hundred times its text (`[{"":0},…]`: one B-tree node per 7 bytes), so its cost is
//! estimated from the text in one pass, before anything is built, by [`tree_cost`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A number of bytes shared by everything that holds part of it.
///
/// A count, not a semaphore: nothing ever waits for a budget (a request that does not fit is
/// refused at once), so taking and giving back are one atomic operation each, with no lock.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    used: Arc<AtomicUsize>,
    limit: usize,
}

/// Part of a [`Budget`], given back when dropped.
#[derive(Debug, Default)]
pub(crate) struct Hold {
    from: Option<Arc<AtomicUsize>>,
    bytes: usize,
}

/// Why a [`Budget`] could not give what was asked.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Short {
    /// More than the whole budget: never possible.
    TooLarge,
    /// Not now: others hold too much of it.
    Busy,
}

impl Budget {
    /// A budget of `limit` bytes (at most 4 GiB: larger limits are cut to that).
    pub(crate) fn new(limit: usize) -> Self {
        let limit = limit.clamp(1, u32::MAX as usize);
        Self {
            used: Arc::new(AtomicUsize::new(0)),
            limit,
        }
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Takes `bytes` of the budget, or says why not; never waits.
    pub(crate) fn take(&self, bytes: usize) -> Result<Hold, Short> {
        if bytes > self.limit {
            return Err(Short::TooLarge);
        }
        if bytes == 0 {
            return Ok(Hold::default());
        }
        let limit = self.limit;
        match self.used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            used.checked_add(bytes).filter(|&after| after <= limit)
        }) {
            Ok(_) => Ok(Hold {
                from: Some(self.used.clone()),
                bytes,
            }),
            Err(_) => Err(Short::Busy),
        }
    }

    /// Adds `bytes` to what `hold` already has.
    pub(crate) fn grow(&self, hold: &mut Hold, bytes: usize) -> Result<(), Short> {
        let have = hold.bytes();
        if have.saturating_add(bytes) > self.limit {
            return Err(Short::TooLarge);
        }
        let mut more = self.take(bytes)?;
        if more.bytes > 0 {
            // Only a hold of this budget is grown (each caller draws a hold from one budget):
            // given back to another, the bytes would be lost to this one for good.
            debug_assert!(
                hold.from.as_ref().is_none_or(|from| Arc::ptr_eq(from, &self.used)),
                "a hold grown from a budget it was not taken from"
            );
            hold.bytes += std::mem::take(&mut more.bytes);
            if hold.from.is_none() {
                hold.from = more.from.take();
            }
        }
        Ok(())
    }
}

impl Hold {
    /// How many bytes it holds.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some(used) = &self.from {
            used.fetch_sub(self.bytes, Ordering::AcqRel);
        }
    }
}

/// How many times its text a JSON tree of the client's may take in memory (estimated), above
/// [`EXPANSION_FLOOR`]: so that what a request costs follows its size, not its shape.
pub(crate) const EXPANSION: usize = 16;
/// Trees of up to this many bytes are taken whatever their text's size.
const EXPANSION_FLOOR: usize = 16 << 20;
/// The most memory the tree of a client's result (an answer to our request) may take.
pub(crate) const MAX_RESULT_MEMORY: usize = 16 << 20;

/// The largest estimated tree allowed for a text of `text_len` bytes.
pub(crate) fn max_tree_cost(text_len: usize) -> usize {
    text_len.saturating_mul(EXPANSION).max(EXPANSION_FLOOR)
}

/// The estimated bytes a `serde_json::Value` tree parsed from `text` takes, rounded up: an object
/// is a B-tree leaf (about 640 bytes) however few its members, every member or element a slot
/// (64 bytes, with its key's header), every string its length plus its header. Linear in the
/// text, no recursion, nothing allocated.
pub(crate) fn tree_cost(text: &str) -> usize {
    const OBJECT: usize = 640;
    const ARRAY: usize = 64;
    const SLOT: usize = 64;
    const STRING: usize = 32;
    let b = text.as_bytes();
    let mut cost = SLOT;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                cost = cost.saturating_add(STRING + (i - start));
            }
            b'{' => cost = cost.saturating_add(OBJECT),
            b'[' => cost = cost.saturating_add(ARRAY),
            b',' | b':' => cost = cost.saturating_add(SLOT),
            _ => {}
        }
        i += 1;
    }
    cost
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimate is never below what the tree really takes, for the shapes that cost most.
    #[test]
    fn the_estimate_bounds_the_real_tree() {
        fn real(text: &str) -> usize {
            // Bytes allocated while parsing and holding the tree, from the allocator's view is
            // not portable; instead a conservative model of serde_json's layout (64-bit):
            // Value 32 B; BTreeMap leaf with 11 × (String 24 B + Value 32 B) + header.
            let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
            fn walk(v: &serde_json::Value) -> usize {
                match v {
                    serde_json::Value::Object(m) => {
                        let nodes = m.len().div_ceil(11).max(1);
                        nodes * (11 * 56 + 16) + m.iter().map(|(k, v)| k.len() + walk(v)).sum::<usize>()
                    }
                    serde_json::Value::Array(a) => a.len().next_power_of_two() * 32 + a.iter().map(walk).sum::<usize>(),
                    serde_json::Value::String(s) => s.len(),
                    _ => 0,
                }
            }
            32 + walk(&v)
        }
        let many = |unit: &str| format!("[{}]", vec![unit; 1000].join(","));
        for text in [
            many(r#"{"":0}"#),
            many("[]"),
            many("0"),
            many(r#""""#),
            many(r#"{"a":[1,2,{"b":"c"}]}"#),
            r#"{"path":"/tmp/x","force":true}"#.to_string(),
        ] {
            assert!(
                tree_cost(&text) >= real(&text),
                "{} < {} for {}",
                tree_cost(&text),
                real(&text),
                &text[..20]
            );
            // …and not wildly above it for text that is mostly strings.
        }
        let strings = format!("[{}]", vec![format!("\"{}\"", "x".repeat(1000)); 100].join(","));
        assert!(tree_cost(&strings) < 2 * strings.len());
    }

    #[test]
    fn escaped_quotes_do_not_end_a_string() {
        assert_eq!(tree_cost(r#""a\"{{{{""#), tree_cost(r#""a\"xxxx""#));
    }

    #[test]
    fn a_budget_is_shared_and_given_back() {
        let b = Budget::new(100);
        let h = b.take(60).unwrap();
        assert_eq!(b.take(50).unwrap_err(), Short::Busy);
        assert_eq!(b.take(101).unwrap_err(), Short::TooLarge);
        drop(h);
        let mut h = b.take(50).unwrap();
        b.grow(&mut h, 50).unwrap();
        assert_eq!(h.bytes(), 100);
        assert_eq!(b.grow(&mut h, 1).unwrap_err(), Short::TooLarge);
        drop(h);
        // A hold grown from nothing gives back all it grew to.
        let mut h = Hold::default();
        b.grow(&mut h, 30).unwrap();
        b.grow(&mut h, 70).unwrap();
        assert_eq!(b.take(1).unwrap_err(), Short::Busy);
        drop(h);
        assert_eq!(b.take(100).unwrap().bytes(), 100);
    }
}
