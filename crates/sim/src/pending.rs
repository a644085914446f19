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

use coflowkit_model::Time;
use coflowkit_sched::{FlowIdx, RadixQueue};

/// Pending completions; see the module doc.
pub(crate) struct Pending {
    heap: RadixQueue,
    flow_at: Vec<Time>,
    n_live: usize,
}

impl Pending {
    pub(crate) fn new(n_flows: usize) -> Pending {
        Pending {
            heap: RadixQueue::default(),
            flow_at: vec![Time::NEVER; n_flows],
            n_live: 0,
        }
    }

    /// The earliest live completion instant.
    pub(crate) fn peek(&mut self) -> Time {
        let at = &self.flow_at;
        self.heap
            .peek_min(|t, f| at[f as usize].0 == t)
            .map_or(Time::NEVER, Time)
    }

    /// Sets the completion instant of solo flow `f` (NEVER to cancel).
    pub(crate) fn set_flow(&mut self, f: FlowIdx, t: Time) {
        let slot = &mut self.flow_at[f as usize];
        if *slot == t {
            return;
        }
        if *slot != Time::NEVER {
            self.n_live -= 1;
        }
        *slot = t;
        if t != Time::NEVER {
            self.n_live += 1;
            self.heap.push(t.0, f);
        }
        // Rebuild when stale entries outnumber live ones by far.
        if self.heap.len() > 4 * self.n_live + 1024 {
            self.rebuild();
        }
    }

    fn rebuild(&mut self) {
        let at = &self.flow_at;
        self.heap.retain(|t, f| at[f as usize].0 == t);
    }

    /// Moves to `due` every solo flow that completes at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Time, due: &mut Vec<FlowIdx>) {
        loop {
            let at = &self.flow_at;
            let Some((_, f)) = self.heap.pop_min(now.0, |t, f| at[f as usize].0 == t) else {
                break;
            };
            self.n_live -= 1;
            self.flow_at[f as usize] = Time::NEVER;
            due.push(f);
        }
    }
}
