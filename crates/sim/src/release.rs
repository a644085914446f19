//! The release rules: when a coflow and its flows may start, and when a
//! coflow is complete.
//!
//! * A coflow is *released* at max(its arrival, the completion of every
//!   Starts-After parent) (Aalo 5.1: "C_F cannot start until C_E has
//!   finished"). From its release until it is complete it is active for
//!   schedulers, whether or not any of its flows is sending.
//! * A flow is *released* when its coflow is, or, if it waits for a barrier
//!   group (`after == Some(g)`), when every flow of group `g` of its coflow
//!   has finished; it *starts* `delay` after its release. A zero-byte flow
//!   finishes at its start.
//! * A coflow is *complete* at max(its last flow's finish, the completion of
//!   every Finishes-Before parent). Our reading of Aalo 5.1 ("C_F can coexist
//!   with C_E but it cannot finish until C_E has finished"): the child runs
//!   alongside the parent, and if its flows are done first it completes the
//!   instant the parent does.
//!
//! [`Releases`] keeps the counters these rules need: per coflow, its flows
//! not yet finished and its parents not yet complete; per barrier group of a
//! coflow, its flows not yet finished and the flows that wait for it. Both
//! live in flat arrays shared by all coflows (no allocation per flow), and
//! only coflows with barriers have groups. [`StartQueue`] holds the flows
//! released with a delay, by (start instant, flow).
//!
//! Correctness properties: a coflow is released once, after it arrived and
//! all its Starts-After parents completed (`Releases::parent_done`,
//! `Releases::arrive`); a flow is released once, when its coflow is (no
//! `after`) or when its group's last flow finished (`Releases::flow_done`;
//! validation guarantees the group exists and groups form no cycle); a
//! coflow completes once (`Releases::can_complete`).

use coflowkit_model::{CoflowSpec, DepKind, Time};
use coflowkit_sched::{CoflowIdx, FlowIdx};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Where a coflow is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not arrived yet.
    Pending,
    /// Arrived, held back by Starts-After parents.
    Held,
    /// Released, not complete.
    Released,
    /// Complete.
    Complete,
}

/// Counters of the release rules; see the module doc.
pub struct Releases {
    phase: Vec<Phase>,
    n_unfinished: Vec<u32>,
    n_starts_after: Vec<u32>,
    n_finishes_before: Vec<u32>,
    release: Vec<Time>,
    completion: Vec<Time>,
    // Children of each coflow: `children[child_start[c]..child_start[c + 1]]`.
    child_start: Vec<u32>,
    children: Vec<(CoflowIdx, DepKind)>,
    // Barrier groups of each coflow: `slots_of[c] = (first slot, count)`,
    // slots sorted by group id; a slot's waiters are
    // `waiters[slot_waiters[s].0..][..slot_waiters[s].1]`.
    slots_of: Vec<(u32, u32)>,
    slot_group: Vec<u32>,
    slot_left: Vec<u32>,
    slot_waiters: Vec<(u32, u32)>,
    waiters: Vec<FlowIdx>,
    scratch: Vec<(u32, FlowIdx)>,
}

impl Releases {
    /// The counters for `coflows` (a validated workload's, in its order:
    /// coflow index = position).
    pub fn new(coflows: &[CoflowSpec]) -> Releases {
        let n = coflows.len();
        let mut r = Releases {
            phase: vec![Phase::Pending; n],
            n_unfinished: coflows.iter().map(|c| c.flows.len() as u32).collect(),
            n_starts_after: vec![0; n],
            n_finishes_before: vec![0; n],
            release: vec![Time::NEVER; n],
            completion: vec![Time::NEVER; n],
            child_start: vec![0; n + 1],
            children: vec![],
            slots_of: vec![(0, 0); n],
            slot_group: vec![],
            slot_left: vec![],
            slot_waiters: vec![],
            waiters: vec![],
            scratch: vec![],
        };
        if coflows.iter().all(|c| c.parents.is_empty()) {
            return r;
        }
        let index: HashMap<u64, CoflowIdx> = coflows
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.0, i as CoflowIdx))
            .collect();
        // Children lists in CSR form: count, prefix sums, fill.
        let mut edges: Vec<(CoflowIdx, CoflowIdx, DepKind)> = vec![];
        for (child, c) in coflows.iter().enumerate() {
            for d in &c.parents {
                let parent = index[&d.parent.0];
                edges.push((parent, child as CoflowIdx, d.kind));
                match d.kind {
                    DepKind::StartsAfter => r.n_starts_after[child] += 1,
                    DepKind::FinishesBefore => r.n_finishes_before[child] += 1,
                }
            }
        }
        edges.sort_by_key(|&(p, ch, _)| (p, ch));
        for &(p, _, _) in &edges {
            r.child_start[p as usize + 1] += 1;
        }
        for i in 0..n {
            r.child_start[i + 1] += r.child_start[i];
        }
        r.children = edges.into_iter().map(|(_, ch, k)| (ch, k)).collect();
        r
    }

    /// Coflow `c` (whose flows are `first..`) arrives: sets up its barrier
    /// groups. Returns whether it is released now (no Starts-After parent
    /// left).
    pub fn arrive(&mut self, c: CoflowIdx, spec: &CoflowSpec, first: FlowIdx) -> bool {
        let ci = c as usize;
        if spec.flows.iter().any(|f| f.after.is_some()) {
            let s0 = self.slot_group.len() as u32;
            // Every flow's group, sorted: each run is one group and its size.
            let mut groups: Vec<u32> = spec.flows.iter().map(|f| f.group).collect();
            groups.sort_unstable();
            self.scratch.clear();
            for (i, f) in spec.flows.iter().enumerate() {
                if let Some(g) = f.after {
                    self.scratch.push((g, first + i as FlowIdx));
                }
            }
            self.scratch.sort_unstable();
            let (mut w, mut i) = (0, 0);
            while i < groups.len() {
                let g = groups[i];
                let run = groups[i..].iter().take_while(|&&x| x == g).count();
                i += run;
                let start = self.waiters.len() as u32;
                while w < self.scratch.len() && self.scratch[w].0 == g {
                    self.waiters.push(self.scratch[w].1);
                    w += 1;
                }
                self.slot_group.push(g);
                self.slot_left.push(run as u32);
                self.slot_waiters
                    .push((start, self.waiters.len() as u32 - start));
            }
            let n_slots = self.slot_group.len() as u32 - s0;
            self.slots_of[ci] = (s0, n_slots);
        }
        if self.n_starts_after[ci] == 0 {
            true
        } else {
            self.phase[ci] = Phase::Held;
            false
        }
    }

    /// Whether coflow `c` has barrier groups (flows that wait for others).
    pub fn has_barriers(&self, c: CoflowIdx) -> bool {
        self.slots_of[c as usize].1 > 0
    }

    /// Marks coflow `c` released at `now`.
    pub fn mark_released(&mut self, c: CoflowIdx, now: Time) {
        debug_assert!(matches!(
            self.phase[c as usize],
            Phase::Pending | Phase::Held
        ));
        self.phase[c as usize] = Phase::Released;
        self.release[c as usize] = now;
    }

    /// A flow of coflow `c` in barrier group `group` finished (or, with zero
    /// bytes, started; `group` is not read unless `c` has barriers). Pushes
    /// to `released` the flows that waited for the group if it is now done;
    /// returns whether every flow of `c` is done.
    pub fn flow_done(&mut self, c: CoflowIdx, group: u32, released: &mut Vec<FlowIdx>) -> bool {
        let ci = c as usize;
        self.n_unfinished[ci] -= 1;
        let (s0, n) = self.slots_of[ci];
        if n > 0 {
            let slots = s0 as usize..(s0 + n) as usize;
            let at = self.slot_group[slots.clone()]
                .binary_search(&group)
                .expect("every flow's group has a slot");
            let s = slots.start + at;
            self.slot_left[s] -= 1;
            if self.slot_left[s] == 0 {
                let (w0, wn) = self.slot_waiters[s];
                released.extend_from_slice(&self.waiters[w0 as usize..(w0 + wn) as usize]);
            }
        }
        self.n_unfinished[ci] == 0
    }

    /// Whether coflow `c` is complete as of now: released, every flow done,
    /// every Finishes-Before parent complete, and not completed before.
    pub fn can_complete(&self, c: CoflowIdx) -> bool {
        let ci = c as usize;
        self.phase[ci] == Phase::Released
            && self.n_unfinished[ci] == 0
            && self.n_finishes_before[ci] == 0
    }

    /// Marks coflow `c` complete at `now`.
    pub fn mark_complete(&mut self, c: CoflowIdx, now: Time) {
        self.phase[c as usize] = Phase::Complete;
        self.completion[c as usize] = now;
    }

    /// The children of coflow `c`, as an index range for [`Releases::child`].
    pub fn children_of(&self, c: CoflowIdx) -> std::ops::Range<usize> {
        self.child_start[c as usize] as usize..self.child_start[c as usize + 1] as usize
    }

    /// The `i`-th child edge.
    pub fn child(&self, i: usize) -> (CoflowIdx, DepKind) {
        self.children[i]
    }

    /// A parent of `child` through a `kind` dependency completed. Returns
    /// whether that makes the child releasable (Starts-After: it arrived and
    /// no such parent is left) or possibly complete (Finishes-Before: no
    /// such parent is left).
    pub fn parent_done(&mut self, child: CoflowIdx, kind: DepKind) -> bool {
        let ci = child as usize;
        match kind {
            DepKind::StartsAfter => {
                self.n_starts_after[ci] -= 1;
                self.n_starts_after[ci] == 0 && self.phase[ci] == Phase::Held
            }
            DepKind::FinishesBefore => {
                self.n_finishes_before[ci] -= 1;
                self.n_finishes_before[ci] == 0
            }
        }
    }

    /// Release instant of each coflow.
    pub fn releases(&self) -> &[Time] {
        &self.release
    }

    /// Completion instant of each coflow.
    pub fn completions(&self) -> &[Time] {
        &self.completion
    }
}

/// An engine that applies the completion rule: it owns a [`Releases`], a
/// stack for [`complete_cascade`], and what it does when a coflow completes
/// or a child is released. Both engines (flow level, packet level) walk
/// completions through this one function, so they release and complete in
/// the same order.
pub trait Cascade {
    /// The engine's counters.
    fn releases_mut(&mut self) -> &mut Releases;
    /// The engine's scratch stack of coflows that may complete.
    fn completing(&mut self) -> &mut Vec<CoflowIdx>;
    /// Coflow `c` completed now (after [`Releases::mark_complete`]).
    fn on_complete(&mut self, c: CoflowIdx);
    /// A Starts-After child became releasable: release it now.
    fn release(&mut self, c: CoflowIdx);
}

/// Completes coflow `c` at `now` if it may, and whatever that completes in
/// turn: its Finishes-Before children whose last parent it was (depth
/// first, children in their listed order), releasing its Starts-After
/// children on the way.
pub fn complete_cascade<E: Cascade + ?Sized>(engine: &mut E, c: CoflowIdx, now: Time) {
    engine.completing().push(c);
    while let Some(c) = engine.completing().pop() {
        if !engine.releases_mut().can_complete(c) {
            continue;
        }
        engine.releases_mut().mark_complete(c, now);
        engine.on_complete(c);
        // Children in reverse, so that the stack visits them in order.
        for i in engine.releases_mut().children_of(c).rev() {
            let rel = engine.releases_mut();
            let (child, kind) = rel.child(i);
            if rel.parent_done(child, kind) {
                match kind {
                    DepKind::StartsAfter => engine.release(child),
                    DepKind::FinishesBefore => engine.completing().push(child),
                }
            }
        }
    }
}

/// Flows released with a delay, by (start instant, flow): one lazy
/// min-heap. Entries are never cancelled in this model; the engine checks
/// on popping that the flow still waits (a state check), so a cancelling
/// rule added later costs nothing here.
#[derive(Default)]
pub struct StartQueue {
    heap: BinaryHeap<Reverse<(Time, FlowIdx)>>,
}

impl StartQueue {
    /// Flow `f` starts at `t`.
    pub fn push(&mut self, t: Time, f: FlowIdx) {
        self.heap.push(Reverse((t, f)));
    }

    /// The earliest start instant.
    pub fn peek(&self) -> Time {
        self.heap.peek().map_or(Time::NEVER, |Reverse((t, _))| *t)
    }

    /// Moves to `due` the flows that start at or before `now` and for which
    /// `still_waits` holds.
    pub fn pop_due(
        &mut self,
        now: Time,
        due: &mut Vec<FlowIdx>,
        still_waits: impl Fn(FlowIdx) -> bool,
    ) {
        while let Some(&Reverse((t, f))) = self.heap.peek() {
            if t > now {
                break;
            }
            self.heap.pop();
            if still_waits(f) {
                due.push(f);
            }
        }
    }
}
