//! A monotone priority queue of `(instant, key)` with lazy deletion: a radix
//! heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) for the instants at or
//! after the last minimum it found, and a small binary heap for the few
//! pushed below it.
//!
//! The engine keeps "when does each rate group (or solo flow) finish next"
//! here while millions are active. With per-flow fairness on a large tree a
//! hundred group rates change at every event, each pushing a new entry and
//! leaving the old one stale: a binary heap of millions of entries then pays
//! a cache miss per level to pop each stale entry (a sixth of the run). The
//! radix heap keeps entries in 65 unsorted buckets by the highest bit in
//! which their instant differs from `last`: a push is an append, and an
//! entry moves only to a lower bucket, in sequential passes that also drop
//! the stale entries they meet.
//!
//! Entries are `(instant, key)`; whether one is still live is the caller's
//! to say (a closure), so an entry is dropped the first time a pass finds it
//! stale. Ties: [`RadixQueue::pop_min`] returns the least live instant, and
//! among live entries at it any one (callers handle all entries of an
//! instant as one batch).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A monotone queue of `(instant, key)`; see the module doc.
#[derive(Debug, Clone)]
pub struct RadixQueue {
    // Every entry in `buckets` is at or after `last`; bucket 0 holds those
    // at `last`, bucket b > 0 those whose highest bit differing from `last`
    // is b - 1.
    last: u64,
    buckets: Vec<Vec<(u64, u32)>>,
    // Entries pushed below `last` (rare: a rate that rises at an event
    // before the earliest finish found so far).
    early: BinaryHeap<Reverse<(u64, u32)>>,
    len: usize,
}

impl Default for RadixQueue {
    fn default() -> RadixQueue {
        RadixQueue {
            last: 0,
            buckets: vec![Vec::new(); 65],
            early: BinaryHeap::new(),
            len: 0,
        }
    }
}

impl RadixQueue {
    /// Number of entries, live or stale.
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn bucket(&self, t: u64) -> usize {
        (64 - (t ^ self.last).leading_zeros()) as usize
    }

    /// Whether there are no entries, live or stale.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds entry `(t, key)`.
    #[inline]
    pub fn push(&mut self, t: u64, key: u32) {
        self.len += 1;
        if t < self.last {
            self.early.push(Reverse((t, key)));
        } else {
            let b = self.bucket(t);
            self.buckets[b].push((t, key));
        }
    }

    /// Replaces every entry by `entries`.
    pub fn rebuild(&mut self, entries: impl IntoIterator<Item = (u64, u32)>) {
        for b in &mut self.buckets {
            b.clear();
        }
        self.early.clear();
        self.len = 0;
        let all: Vec<(u64, u32)> = entries.into_iter().collect();
        self.last = all.iter().map(|e| e.0).min().unwrap_or(0);
        for (t, k) in all {
            self.push(t, k);
        }
    }

    /// Drops every stale entry (`!live(t, key)`).
    pub fn retain(&mut self, live: impl Fn(u64, u32) -> bool) {
        for b in &mut self.buckets {
            b.retain(|&(t, k)| live(t, k));
        }
        let early = std::mem::take(&mut self.early).into_vec();
        self.early = early.into_iter().filter(|e| live(e.0 .0, e.0 .1)).collect();
        self.len = self.early.len() + self.buckets.iter().map(Vec::len).sum::<usize>();
    }

    /// The least instant of a live entry (`live(t, key)`), dropping the
    /// stale entries met on the way; `None` when no entry is live.
    pub fn peek_min(&mut self, live: impl Fn(u64, u32) -> bool) -> Option<u64> {
        self.least(u64::MAX, &live)
    }

    /// A live entry at the least live instant, left in the queue (the
    /// one [`RadixQueue::pop_min`] would return), dropping the stale
    /// entries met on the way; `None` when no entry is live.
    pub fn peek_min_entry(&mut self, live: impl Fn(u64, u32) -> bool) -> Option<(u64, u32)> {
        let t = self.least(u64::MAX, &live)?;
        match self.early.peek() {
            Some(&Reverse(e)) if e.0 == t => Some(e),
            _ => self.buckets[0].last().copied(),
        }
    }

    /// The least live instant if it is at most `limit`; otherwise some
    /// instant after `limit` (the least live one, or a bound below it) or
    /// `None`. Past `limit` the buckets are left as they are: moving `last`
    /// on to an instant after the caller's would send every entry the
    /// caller then pushes below it to the binary heap (the engine pops at
    /// an event, then sets new finishes before that next instant).
    fn least(&mut self, limit: u64, live: &impl Fn(u64, u32) -> bool) -> Option<u64> {
        while let Some(&Reverse((t, k))) = self.early.peek() {
            if live(t, k) {
                break;
            }
            self.early.pop();
            self.len -= 1;
        }
        let early = self.early.peek().map(|e| e.0 .0);
        let cutoff = limit.min(early.unwrap_or(u64::MAX));
        loop {
            // Bucket 0's entries are all at `last`: dropping stale ones
            // from its end until a live one shows is enough (a scan of it
            // per pop was quadratic in the flows that end together).
            while let Some(&(t, k)) = self.buckets[0].last() {
                if live(t, k) {
                    break;
                }
                self.buckets[0].pop();
                self.len -= 1;
            }
            if !self.buckets[0].is_empty() {
                break;
            }
            let Some(b) = (1..65).find(|&b| !self.buckets[b].is_empty()) else {
                break;
            };
            // Bucket b's entries (and those above) are at or after `bound`
            // (`last`'s bits above b - 1, then bit b - 1 set).
            let bound = ((self.last >> (b - 1)) | 1) << (b - 1);
            if bound > cutoff {
                return early.or(Some(bound));
            }
            // Bucket b's least live instant becomes `last`: every entry of
            // b then differs from it below bit b - 1 and moves down, and
            // the higher buckets keep their place (their entries differ
            // from the old and new `last` first at the same bit).
            let mut v = std::mem::take(&mut self.buckets[b]);
            let before = v.len();
            v.retain(|&(t, k)| live(t, k));
            self.len -= before - v.len();
            if let Some(m) = v.iter().map(|e| e.0).min() {
                self.last = m;
                for &(t, k) in &v {
                    let nb = self.bucket(t);
                    self.buckets[nb].push((t, k));
                }
            }
            v.clear();
            self.buckets[b] = v;
        }
        let radix = (!self.buckets[0].is_empty()).then_some(self.last);
        match (radix, early) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Removes and returns a live entry at the least live instant if that
    /// instant is at most `limit`.
    pub fn pop_min(&mut self, limit: u64, live: impl Fn(u64, u32) -> bool) -> Option<(u64, u32)> {
        let t = self.least(limit, &live)?;
        if t > limit {
            return None;
        }
        self.len -= 1;
        match self.early.peek() {
            Some(&Reverse((te, _))) if te == t => self.early.pop().map(|e| e.0),
            _ => self.buckets[0].pop(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Rng;
    use proptest::test_runner::{RngAlgorithm, TestRng};
    use std::collections::HashMap;

    /// Random pushes (some below the last minimum, many superseding the
    /// key's earlier entry) and pops, against a map of each key's live
    /// instant: the queue returns the least live instant every time.
    #[test]
    fn pops_the_least_live_instant_like_a_scan() {
        let mut q = RadixQueue::default();
        let mut at: HashMap<u32, u64> = HashMap::new();
        // proptest's deterministic generator: the same instances every run.
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut rnd = |m: u64| rng.next_u64() % m;
        let mut now = 0u64;
        for _ in 0..20_000 {
            match rnd(5) {
                0 | 1 => {
                    let k = rnd(300) as u32;
                    let span = 1 << rnd(30);
                    let t = now + rnd(span);
                    at.insert(k, t);
                    q.push(t, k);
                }
                2 => {
                    let k = rnd(300) as u32;
                    at.remove(&k);
                }
                3 => {
                    // A pop with a limit, often below the least live
                    // instant (the engine's pop at an event): nothing, or
                    // an entry at that instant.
                    let want = at.values().copied().min();
                    let shift = rnd(30);
                    let limit = now + rnd(1 << shift);
                    let live = |t: u64, k: u32| at.get(&k) == Some(&t);
                    match q.pop_min(limit, live) {
                        None => assert!(want.is_none_or(|t| t > limit)),
                        Some((t, k)) => {
                            assert_eq!((Some(t), at.get(&k)), (want, Some(&t)));
                            assert!(t <= limit);
                            now = t;
                            at.remove(&k);
                        }
                    }
                }
                _ => {
                    let want = at.values().copied().min();
                    let live = |t: u64, k: u32| at.get(&k) == Some(&t);
                    assert_eq!(q.peek_min(live), want);
                    // The entry a peek shows is live, at that instant, and
                    // the one the pop below returns.
                    let seen = q.peek_min_entry(live);
                    assert_eq!(seen.map(|e| e.0), want);
                    assert!(seen.is_none_or(|(t, k)| at.get(&k) == Some(&t)));
                    assert_eq!(seen, want.and_then(|t| q.clone().pop_min(t, live)));
                    if let Some(t) = want {
                        now = t;
                        let (tp, k) = q.pop_min(t, live).expect("a live entry");
                        assert_eq!((tp, at.get(&k)), (t, Some(&t)));
                        at.remove(&k);
                    }
                }
            }
        }
        q.retain(|t, k| at.get(&k) == Some(&t));
        assert!(q.len() >= at.len());
        let live: Vec<(u64, u32)> = at.iter().map(|(&k, &t)| (t, k)).collect();
        q.rebuild(live);
        while let Some(t) = at.values().copied().min() {
            let (tp, k) = q.pop_min(u64::MAX, |t, k| at.get(&k) == Some(&t)).unwrap();
            assert_eq!(tp, t);
            at.remove(&k);
        }
        assert_eq!(q.peek_min(|_, _| true), None);
    }
}
