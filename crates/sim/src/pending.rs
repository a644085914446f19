//! The engine's pending completions of solo flows, ordered by (instant,
//! flow). (Rate groups keep their own next completion in the state, found by
//! a scan: when they change, they change all at once.)
//!
//! Cancellation is lazy: each flow remembers the instant of its live entry,
//! and a popped entry that does not match is stale. When stale entries far
//! outnumber live ones the heap is rebuilt from the live ones.

use coflowkit_model::Time;
use coflowkit_sched::FlowIdx;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Pending completions; see the module doc.
pub(crate) struct Pending {
    heap: BinaryHeap<Reverse<(Time, FlowIdx)>>,
    flow_at: Vec<Time>,
    n_live: usize,
}

impl Pending {
    pub(crate) fn new(n_flows: usize) -> Pending {
        Pending {
            heap: BinaryHeap::new(),
            flow_at: vec![Time::NEVER; n_flows],
            n_live: 0,
        }
    }

    /// The earliest live completion instant.
    pub(crate) fn peek(&mut self) -> Time {
        while let Some(&Reverse((t, f))) = self.heap.peek() {
            if self.is_live(t, f) {
                return t;
            }
            self.heap.pop();
        }
        Time::NEVER
    }

    fn is_live(&self, t: Time, f: FlowIdx) -> bool {
        self.flow_at[f as usize] == t
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
            self.heap.push(Reverse((t, f)));
        }
        // Rebuild when stale entries outnumber live ones by far.
        if self.heap.len() > 4 * self.n_live + 1024 {
            self.rebuild();
        }
    }

    fn rebuild(&mut self) {
        let mut v: Vec<Reverse<(Time, FlowIdx)>> = std::mem::take(&mut self.heap).into_vec();
        v.retain(|&Reverse((t, f))| self.flow_at[f as usize] == t);
        v.sort_unstable();
        v.dedup();
        self.heap = BinaryHeap::from(v);
    }

    /// Moves to `due` every solo flow that completes at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Time, due: &mut Vec<FlowIdx>) {
        while let Some(&Reverse((t, f))) = self.heap.peek() {
            if t > now {
                break;
            }
            self.heap.pop();
            if !self.is_live(t, f) {
                continue;
            }
            self.n_live -= 1;
            self.flow_at[f as usize] = Time::NEVER;
            due.push(f);
        }
    }
}
