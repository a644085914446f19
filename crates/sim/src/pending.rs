//! The engine's pending completions of solo flows, ordered by (instant,
//! flow). (Rate groups keep their own next completion in the state, found by
//! a scan: when they change, they change all at once.)
//!
//! Cancellation is lazy: each flow remembers the instant of its live entry,
//! and an entry that does not match is stale. When stale entries far
//! outnumber live ones the queue is rebuilt from the live ones. The queue is
//! a radix heap ([`RadixQueue`]): with a rate change per flow at every
//! event (`fifo` on a large tree) a binary heap of millions of mostly stale
//! entries paid a cache miss per level to pop each.
//!
//! A finish that moves later pushes nothing: each flow keeps its finish
//! (`at`) apart from the instant of its one live entry (`queued`, at or
//! before `at`), and an entry found early, when it comes up, is pushed
//! again at the flow's finish. Half of `dcas`'s re-rates move a finish
//! later; their pushes were a cache miss each, and the stale entries they
//! left were the rebuilds' work. A flow's finish moved earlier pushes a new
//! entry, as before.
//!
//! [`Pending::peek`] looks at the least live entry without popping it; only
//! an entry found early is popped and pushed again at its flow's finish.
//! The least live entry's instant is the least finish: every flow's live
//! entry is at or before its finish.
//!
//! The slots are read and written at random, one per re-rate: they sit in
//! huge pages ([`reserve_huge`]).
//!
//! Debug builds (only) check each next completion found against a scan of
//! every flow's finish, O(flows) per peek.

use coflowkit_model::Time;
use coflowkit_sched::{prefetch, reserve_huge, FlowIdx, RadixQueue};

/// One flow's finish and the instant of its live entry (`NEVER`: none),
/// side by side: a re-rate reads and writes both.
#[derive(Debug, Clone, Copy)]
struct Slot {
    at: Time,
    queued: Time,
}

/// Pending completions; see the module doc.
pub(crate) struct Pending {
    heap: RadixQueue,
    slots: Vec<Slot>,
    n_live: usize,
}

impl Pending {
    pub(crate) fn new(n_flows: usize) -> Pending {
        // Read and written at random per re-rate: in huge pages.
        let mut slots = vec![];
        reserve_huge(&mut slots, n_flows);
        slots.resize(
            n_flows,
            Slot {
                at: Time::NEVER,
                queued: Time::NEVER,
            },
        );
        Pending {
            heap: RadixQueue::default(),
            slots,
            n_live: 0,
        }
    }

    /// The earliest live completion instant, left in the queue. Entries
    /// found early on the way (their flow's finish moved later) go to
    /// their flow's finish.
    pub(crate) fn peek(&mut self) -> Time {
        let t = loop {
            let slots = &self.slots;
            let live = |t: u64, f: u32| slots[f as usize].queued.0 == t;
            let Some((t, f)) = self.heap.peek_min_entry(live) else {
                break Time::NEVER;
            };
            if slots[f as usize].at.0 == t {
                // Every finish is at or after its flow's live entry, and
                // this entry is the least: its finish is the least finish.
                break Time(t);
            }
            let popped = self.heap.pop_min(t, live);
            debug_assert_eq!(popped, Some((t, f)), "pop_min returns the entry peeked");
            let s = &mut self.slots[f as usize];
            s.queued = s.at;
            self.heap.push(s.at.0, f);
        };
        #[cfg(debug_assertions)]
        {
            let least = self.slots.iter().map(|s| s.at).min();
            debug_assert_eq!(t, least.unwrap_or(Time::NEVER), "pending's next completion");
        }
        t
    }

    /// Fetches `f`'s slot into cache: it is set a few steps on.
    #[inline(always)]
    pub(crate) fn prefetch(&self, f: FlowIdx) {
        prefetch(&self.slots[f as usize]);
    }

    /// Sets the completion instant of solo flow `f` (NEVER to cancel).
    #[inline]
    pub(crate) fn set_flow(&mut self, f: FlowIdx, t: Time) {
        let s = &mut self.slots[f as usize];
        if s.at == t {
            return;
        }
        if s.at != Time::NEVER {
            self.n_live -= 1;
        }
        s.at = t;
        if t == Time::NEVER {
            s.queued = Time::NEVER;
            return;
        }
        self.n_live += 1;
        // A live entry at or before `t` stands for it (see the module doc).
        if t < s.queued {
            s.queued = t;
            self.heap.push(t.0, f);
            // Rebuild when stale entries outnumber live ones by far.
            if self.heap.len() > 4 * self.n_live + 1024 {
                self.rebuild();
            }
        }
    }

    #[cold]
    fn rebuild(&mut self) {
        let slots = &self.slots;
        self.heap.retain(|t, f| slots[f as usize].queued.0 == t);
    }

    /// Moves to `due` every solo flow that completes at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Time, due: &mut Vec<FlowIdx>) {
        loop {
            let slots = &self.slots;
            let live = |t: u64, f: u32| slots[f as usize].queued.0 == t;
            let Some((t, f)) = self.heap.pop_min(now.0, live) else {
                break;
            };
            let s = &mut self.slots[f as usize];
            if s.at.0 == t {
                self.n_live -= 1;
                *s = Slot {
                    at: Time::NEVER,
                    queued: Time::NEVER,
                };
                due.push(f);
            } else {
                // Early: its finish moved later since it was pushed.
                s.queued = s.at;
                self.heap.push(s.at.0, f);
            }
        }
    }
}
