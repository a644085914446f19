//! The events to come, taken in (instant, sequence) order: a four-ary
//! heap of small keys over a slab that holds the events themselves.
//!
//! A heap of whole events (64 bytes each, a packet among them) moves 64
//! bytes per level of every push and pop, and on a large fabric, with
//! thousands of packets on the links at once, its lower levels leave the
//! core's first-level cache: the heap's cost per event grew with the
//! fabric (issue 69). Here a key is 24 bytes and each node has four
//! children, so a pop's walk down the heap goes through half the levels
//! of a binary heap (the four children sit in two cache lines); the
//! event is written once into a slot of the slab and read once when its
//! key comes out. Freed slots are reused last-in first-out, so the slab
//! stays as small as the number of pending events and its recent slots
//! stay in cache. The slot of the event due next (the new root's) is
//! fetched into cache as soon as a pop leaves it at the root: the work of
//! the event just popped hides the fetch, where reading the slot cold at
//! the next pop stalled for it.
//!
//! Correctness properties: keys are unique (the engine's sequence number
//! grows with every push), so the order is total and pops come out
//! exactly as from a heap of whole events ordered by (instant, sequence):
//! checked against `std::collections::BinaryHeap` of whole events on
//! random pushes and pops in `pops_as_a_heap_of_whole_events`.

/// A pending event's key: when, its sequence number (ties), its slot.
#[derive(Debug, Clone, Copy)]
struct Key {
    at: u64,
    seq: u64,
    slot: u32,
}

impl Key {
    /// Whether it comes before `o`: (instant, sequence) order.
    #[inline(always)]
    fn before(&self, o: &Key) -> bool {
        (self.at, self.seq) < (o.at, o.seq)
    }
}

/// Children per node of the heap.
const ARITY: usize = 4;

/// Pending events of type `T` (the engine's `Ev`).
#[derive(Debug)]
pub(super) struct Events<T> {
    /// A four-ary min-heap: node `i`'s children are `4i + 1 ..= 4i + 4`.
    heap: Vec<Key>,
    /// Each pending event, in the slot its key names; free slots hold a
    /// spent event.
    slab: Vec<T>,
    /// Free slots, the most recently freed last.
    free: Vec<u32>,
}

impl<T: Copy> Events<T> {
    /// No events.
    pub(super) fn new() -> Events<T> {
        Events {
            heap: Vec::new(),
            slab: vec![],
            free: vec![],
        }
    }

    /// Schedules `ev` at `at` with sequence number `seq`, which must be
    /// greater than that of every event scheduled before.
    #[inline]
    pub(super) fn push(&mut self, at: u64, seq: u64, ev: T) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = ev;
                s
            }
            None => {
                self.slab.push(ev);
                u32::try_from(self.slab.len() - 1).expect("fewer than 2^32 pending events")
            }
        };
        self.sift_up(Key { at, seq, slot });
    }

    /// The earliest event (the first scheduled among those at one instant)
    /// and its instant, taken out.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(u64, T)> {
        let last = self.heap.pop()?;
        let k = if self.heap.is_empty() {
            last
        } else {
            let k = self.heap[0];
            self.sift_down(last);
            coflowkit_sched::prefetch(&self.slab[self.heap[0].slot as usize]);
            k
        };
        self.free.push(k.slot);
        Some((k.at, self.slab[k.slot as usize]))
    }

    /// Puts `k` in a new leaf and moves it up past every parent it comes
    /// before.
    #[inline]
    fn sift_up(&mut self, k: Key) {
        let mut i = self.heap.len();
        self.heap.push(k);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !k.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = k;
    }

    /// Fills the emptied root with `k` (the last leaf, taken out): moves
    /// the earliest child up while it comes before `k`.
    #[inline]
    fn sift_down(&mut self, k: Key) {
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let mut best = first;
            for c in first + 1..(first + ARITY).min(n) {
                if self.heap[c].before(&self.heap[best]) {
                    best = c;
                }
            }
            if !self.heap[best].before(&k) {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = k;
    }

    /// Whether no event is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
        /// so that many events share an instant).
        Push(u64),
        Pop,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (0u64..6).prop_map(Step::Push),
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
                        fast.push(now + d, seq, ev);
                        slow.push(Whole { at: now + d, seq, ev });
                    }
                    Step::Pop => {
                        let want = slow.pop().map(|w| (w.at, w.ev));
                        prop_assert_eq!(fast.pop(), want);
                        if let Some((at, _)) = want {
                            now = at;
                        }
                    }
                }
                prop_assert_eq!(fast.is_empty(), slow.is_empty());
                prop_assert_eq!(fast.slab.len() - fast.free.len(), slow.len());
            }
            while let Some(w) = slow.pop() {
                prop_assert_eq!(fast.pop(), Some((w.at, w.ev)));
            }
            prop_assert_eq!(fast.pop(), None);
        }
    }
}
