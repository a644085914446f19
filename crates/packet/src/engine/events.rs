//! The events to come, taken in (instant, sequence) order: a radix heap
//! of small keys over a slab that holds the events themselves.
//!
//! The engine never schedules an event before the one it is handling, so
//! the instants popped never go back: a monotone queue suffices, and a
//! radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) is one whose work
//! per event does not grow with how many are pending. Its radix is 16:
//! an instant is read as 16 digits of 4 bits, and a key whose instant
//! first differs from the last popped instant in digit `L` is kept in the
//! bucket of (`L`, its own digit `L`), so every key in a lower bucket (by
//! level, then digit) comes before every key in a higher one; bucket 0
//! holds the keys at the last popped instant, in sequence order. A push
//! appends to its bucket; a pop takes bucket 0's next key, or, when
//! bucket 0 is spent, moves the lowest nonempty bucket's keys down into
//! the buckets their smallest instant gives them. A key moves down at most
//! once per digit, a level each time: with one bucket per bit (radix 2) a
//! key moved about once per bit by which it was ahead of the current
//! instant, and those moves were a fifth of the engine's time on a
//! 1,024-host fat-tree. Pushes and moves are appends, sequential in
//! memory. A comparison heap walks log n levels of scattered keys per
//! pop, with a branch per level that the processor cannot predict: on a
//! 1,024-host fabric, with many thousands of packets pending, a four-ary
//! heap's walk was a third of the engine's time.
//!
//! A key is 24 bytes; the event is written once into a slot of the slab
//! and read once when its key comes out. Freed slots are reused last-in
//! first-out, so the slab stays as small as the number of pending events
//! and its recent slots stay in cache. The slot of the next event in
//! bucket 0 is fetched into cache as a pop takes the one before it, and
//! the pop hands back the next key's hint (the caller's, in the key's
//! padding: for the engine, the port the event's handling reads first),
//! so that the caller can fetch that too while it handles this event.
//!
//! Correctness properties: keys are unique (the engine's sequence number
//! grows with every push), so the order is total and pops come out
//! exactly as from a heap of whole events ordered by (instant, sequence):
//! checked against `std::collections::BinaryHeap` of whole events on
//! random pushes (near the current instant and far from it) and pops in
//! `pops_as_a_heap_of_whole_events`.

/// A pending event's key: when, its sequence number (ties), its slot,
/// and the caller's hint of what handling it will read first (in what
/// would be the key's padding).
#[derive(Debug, Clone, Copy)]
struct Key {
    at: u64,
    seq: u64,
    slot: u32,
    hint: u32,
}

/// The hint of no event.
pub(super) const NO_HINT: u32 = u32::MAX;

/// Bits per digit of an instant.
const RADIX_BITS: u32 = 4;
/// Values of a digit.
const DIGITS: usize = 1 << RADIX_BITS;
/// Digits of an instant.
const LEVELS: usize = (u64::BITS / RADIX_BITS) as usize;
/// Buckets: one for the last popped instant, one per level and digit.
const BUCKETS: usize = 1 + LEVELS * DIGITS;
/// Words of the mask of nonempty buckets (bucket `b > 0` is bit `b - 1`).
const WORDS: usize = (BUCKETS - 1) / 64;

/// The bucket of instant `at` against the last popped instant `last`:
/// 0 when they are equal, else by the highest digit where they differ,
/// and `at`'s value there.
#[inline(always)]
fn bucket(at: u64, last: u64) -> usize {
    let diff = at ^ last;
    if diff == 0 {
        return 0;
    }
    let level = (u64::BITS - 1 - diff.leading_zeros()) / RADIX_BITS;
    let digit = (at >> (level * RADIX_BITS)) as usize & (DIGITS - 1);
    1 + level as usize * DIGITS + digit
}

/// Pending events of type `T` (the engine's `Ev`).
#[derive(Debug)]
pub(super) struct Events<T> {
    /// The keys by bucket (module docs); bucket 0's from `head` on are
    /// pending, in sequence order.
    buckets: Vec<Vec<Key>>,
    /// Bucket 0's next key.
    head: usize,
    /// Bit `b - 1` set when bucket `b > 0` holds keys.
    full: [u64; WORDS],
    /// The last popped instant (0 before the first pop): no key is before it.
    last: u64,
    /// Each pending event, in the slot its key names; free slots hold a
    /// spent event.
    slab: crate::slots::Slots<T>,
}

impl<T: Copy> Events<T> {
    /// No events.
    pub(super) fn new() -> Events<T> {
        Events {
            buckets: vec![Vec::new(); BUCKETS],
            head: 0,
            full: [0; WORDS],
            last: 0,
            slab: Default::default(),
        }
    }

    /// Schedules `ev` at `at` with sequence number `seq`, which must be
    /// greater than that of every event scheduled before; `at` must not
    /// be before the last popped event's instant. `hint` comes back with
    /// the event before it ([`Events::pop`]).
    #[inline]
    pub(super) fn push(&mut self, at: u64, seq: u64, ev: T, hint: u32) {
        assert!(
            at >= self.last,
            "an event scheduled at {at} ps, before the current instant {} ps",
            self.last
        );
        let slot = self.slab.insert(ev);
        let b = bucket(at, self.last);
        if b > 0 {
            self.mark(b);
        }
        self.buckets[b].push(Key {
            at,
            seq,
            slot,
            hint,
        });
    }

    /// Notes that bucket `b > 0` holds keys.
    #[inline(always)]
    fn mark(&mut self, b: usize) {
        self.full[(b - 1) / 64] |= 1 << ((b - 1) % 64);
    }

    /// The lowest nonempty bucket above 0.
    #[inline(always)]
    fn lowest(&self) -> Option<usize> {
        self.full
            .iter()
            .position(|&w| w != 0)
            .map(|i| i * 64 + self.full[i].trailing_zeros() as usize + 1)
    }

    /// The earliest event (the first scheduled among those at one instant)
    /// and its instant, taken out, with the hint of the event that is
    /// likely next ([`NO_HINT`] if none is known), so that the caller can
    /// fetch what that one reads while it handles this one.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(u64, T, u32)> {
        if self.head == self.buckets[0].len() && !self.refill() {
            return None;
        }
        let first = &self.buckets[0];
        let k = first[self.head];
        self.head += 1;
        let next = match first.get(self.head) {
            Some(next) => Some(next),
            // The lowest bucket's first key: the next event when that
            // bucket holds one key and no earlier one is pushed meanwhile.
            None => self.lowest().and_then(|b| self.buckets[b].first()),
        };
        let hint = match next {
            Some(next) => {
                coflowkit_sched::prefetch(self.slab.get(next.slot));
                next.hint
            }
            None => NO_HINT,
        };
        Some((k.at, self.slab.remove(k.slot), hint))
    }

    /// Bucket 0 is spent: moves the lowest nonempty bucket's keys down
    /// around its earliest instant, which becomes the last popped one.
    /// False when no key is pending.
    #[cold]
    fn refill(&mut self) -> bool {
        self.buckets[0].clear();
        self.head = 0;
        let Some(b) = self.lowest() else {
            return false;
        };
        self.full[(b - 1) / 64] &= !(1 << ((b - 1) % 64));
        if let [k] = self.buckets[b][..] {
            // One key (the common case: most instants hold one event).
            self.buckets[b].clear();
            self.last = k.at;
            self.buckets[0].push(k);
            return true;
        }
        let mut keys = std::mem::take(&mut self.buckets[b]);
        self.last = keys
            .iter()
            .map(|k| k.at)
            .min()
            .expect("a full bucket has keys");
        for k in &keys {
            // Every key of bucket `b` shares the digits from its level up
            // with the new instant, so it lands on a lower level.
            let to = bucket(k.at, self.last);
            if to > 0 {
                self.mark(to);
            }
            self.buckets[to].push(*k);
        }
        keys.clear();
        self.buckets[b] = keys;
        // The moved keys came by pushes and earlier moves, in any order.
        if self.buckets[0].len() > 1 {
            self.buckets[0].sort_unstable_by_key(|k| k.seq);
        }
        true
    }

    /// Whether no event is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.head == self.buckets[0].len() && self.full.iter().all(|&w| w == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;

    /// The slow reference: a heap of whole events, as the engine had.
    struct Whole {
        at: u64,
        seq: u64,
        ev: u64,
    }
    impl PartialEq for Whole {
        fn eq(&self, o: &Self) -> bool {
            (self.at, self.seq) == (o.at, o.seq)
        }
    }
    impl Eq for Whole {}
    impl PartialOrd for Whole {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Whole {
        fn cmp(&self, o: &Self) -> Ordering {
            (o.at, o.seq).cmp(&(self.at, self.seq))
        }
    }

    #[derive(Debug, Clone)]
    enum Step {
        /// An event this far after the last popped instant (few values,
        /// so that many events share an instant; any up to 2^12 or 2^40,
        /// so that keys cross digits and levels; or 2^50 ps ahead).
        Push(u64),
        Pop,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (0u64..6).prop_map(Step::Push),
            1 => (0u64..1 << 12).prop_map(Step::Push),
            1 => (0u64..1 << 40).prop_map(Step::Push),
            1 => Just(1u64 << 50).prop_map(Step::Push),
            2 => Just(Step::Pop),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Random pushes (at or after the current instant, as the engine
        /// schedules, with ties) and pops, then draining: the same events
        /// in the same order as the heap of whole events.
        #[test]
        fn pops_as_a_heap_of_whole_events(steps in proptest::collection::vec(step(), 1..400)) {
            let (mut fast, mut slow) = (Events::new(), BinaryHeap::new());
            let (mut seq, mut now) = (0u64, 0u64);
            for s in &steps {
                match *s {
                    Step::Push(d) => {
                        seq += 1;
                        // The payload tells events apart.
                        let ev = seq * 7919;
                        fast.push(now + d, seq, ev, NO_HINT);
                        slow.push(Whole { at: now + d, seq, ev });
                    }
                    Step::Pop => {
                        let want = slow.pop().map(|w| (w.at, w.ev));
                        prop_assert_eq!(fast.pop().map(|(at, ev, _)| (at, ev)), want);
                        if let Some((at, _)) = want {
                            now = at;
                        }
                    }
                }
                prop_assert_eq!(fast.is_empty(), slow.is_empty());
                prop_assert_eq!(fast.slab.in_use(), slow.len());
            }
            while let Some(w) = slow.pop() {
                prop_assert_eq!(fast.pop().map(|(at, ev, _)| (at, ev)), Some((w.at, w.ev)));
            }
            prop_assert!(fast.pop().is_none());
        }
    }
}
