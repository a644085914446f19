//! Strict-priority coflow classes re-served only from where they changed:
//! the big-switch path of `fifo`, `scf`, `ncf`, `lcf` and `stf`.
//!
//! Under strict priority (Varys, SIGCOMM 2014, 5.1; Orchestra's FIFO) each
//! coflow, in order, is served max-min on the capacity the coflows before
//! it left ([`ClassServer`]). What a coflow gets depends on two things
//! only: its active flows (their paths) and the residual capacity of the
//! links those paths cross when its turn comes. So at every event the
//! coflows are walked in order as before, but a coflow whose flows did not
//! change and whose links show, bit for bit, the residual they showed at
//! its last turn gets what it got then: its rates stand (the allocation
//! keeps them) and the residual it left on its links is written back from
//! a copy, without a solve. An event then costs a solve for each coflow it
//! reaches (its own, and those after it on the links whose share moved) and
//! a comparison of residuals for the others.
//!
//! The result is the same as re-serving every coflow, to the bit: a
//! coflow's solve reads nothing else (the solver's order of demands comes
//! from its flows; whether it is skipped as blocked reads its paths' end
//! links, which are among the links compared), and a coflow given the same
//! inputs gives the same rates, which the allocation would have seen as no
//! change. A coflow served before and blocked now has its flows set to 0,
//! as [`ClassServer::end`] would; classes (the order's positions) are
//! rewritten where a served coflow moved.
//!
//! Correctness properties: after [`ClassCache::serve`] every active flow's
//! rate and class are those a full re-serve would give (checked by the
//! reference suites, `crates/sim/tests/reference`, which hold `fifo`, `scf`,
//! `ncf`, `lcf` and `stf` against slow references, and by FB2010's
//! per-coflow CCTs, identical to the full walk's to the nanosecond); a slot
//! is reused only while its coflow's flows are unchanged (`note` marks
//! them) and its links' residuals are equal (`turn`).

use crate::ordered::ClassServer;
use crate::{Allocation, Changes, CoflowIdx, Observed};

/// What a coflow's last turn did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Turn {
    /// No turn since it was released or its flows changed.
    #[default]
    None,
    /// Skipped: every flow met a full link.
    Blocked,
    /// Served in class `class`.
    Served { class: u32 },
}

/// One coflow's last turn: the links it reads (its active flows' links and
/// its paths' end links, sorted) with their residual before and after it.
#[derive(Debug, Clone, Default)]
struct Slot {
    turn: Turn,
    links: Vec<u32>,
    before: Vec<f64>,
    after: Vec<f64>,
}

/// Strict-priority classes of one coflow each, re-served from where they
/// changed; see the module doc.
#[derive(Debug, Default)]
pub struct ClassCache {
    server: ClassServer,
    slots: Vec<Slot>,
    // Per coflow: whether its flows changed since its last turn, and
    // whether some started (so that its links must be listed again).
    changed: Vec<bool>,
    grown: Vec<bool>,
    zero: Vec<CoflowIdx>,
}

impl ClassCache {
    /// Takes note of what changed (call at every schedule, before serving):
    /// coflows whose flows started or finished are served afresh.
    pub fn note(&mut self, changes: &Changes, view: &Observed<'_>) {
        self.server.note(changes, view);
        let finished = changes.finished.iter().map(|&f| view.coflow_of(f));
        for c in finished.chain(changes.finished_coflows.iter().copied()) {
            self.mark(c, false);
        }
        let started = changes.started.iter().map(|&f| view.coflow_of(f));
        for c in started.chain(changes.arrived.iter().copied()) {
            self.mark(c, true);
        }
    }

    /// Marks coflow `c`'s flows changed (`grown`: some started).
    fn mark(&mut self, c: CoflowIdx, grown: bool) {
        let ci = c as usize;
        if self.changed.len() <= ci {
            self.changed.resize(ci + 1, false);
            self.grown.resize(ci + 1, false);
            self.slots.resize_with(ci + 1, Slot::default);
        }
        self.changed[ci] = true;
        self.grown[ci] |= grown;
    }

    /// Serves `order` (one coflow per class, highest priority first),
    /// writing the rates and classes that changed into `out`.
    pub fn serve(
        &mut self,
        view: &Observed<'_>,
        order: impl IntoIterator<Item = CoflowIdx>,
        out: &mut Allocation,
    ) {
        self.server.begin(view);
        for (i, c) in order.into_iter().enumerate() {
            self.turn(view, c, i as u32, out);
        }
        for &c in &self.zero {
            view.active_flows_of(c).for_each(|f| out.set_rate(f, 0.0));
        }
        self.zero.clear();
    }

    /// Coflow `c`'s turn in class `class`.
    fn turn(&mut self, view: &Observed<'_>, c: CoflowIdx, class: u32, out: &mut Allocation) {
        let ci = c as usize;
        if self.changed.len() <= ci {
            self.mark(c, true);
        }
        let fresh = std::mem::replace(&mut self.changed[ci], false);
        let slot = &mut self.slots[ci];
        if !fresh && slot.turn != Turn::None && self.server.residual_is(&slot.links, &slot.before) {
            if let Turn::Served { class: was } = slot.turn {
                self.server.set_residual(&slot.links, &slot.after);
                if was != class {
                    view.active_flows_of(c)
                        .for_each(|f| out.set_class(f, class));
                    slot.turn = Turn::Served { class };
                }
            }
            return;
        }
        let blocked = self.server.blocked(view, c);
        let slot = &mut self.slots[ci];
        // Links of flows that finished stay listed: comparing more links
        // than the coflow reads only skips it less often.
        if std::mem::replace(&mut self.grown[ci], false) || slot.turn == Turn::None {
            slot.links.clear();
            for f in view.active_flows_of(c) {
                slot.links.extend(view.path(f).iter().map(|l| l.0));
            }
            slot.links.extend(self.server.end_links(c));
            slot.links.sort_unstable();
            slot.links.dedup();
        }
        self.server.residual_of(&slot.links, &mut slot.before);
        if blocked {
            if matches!(slot.turn, Turn::Served { .. }) {
                self.zero.push(c);
            }
            slot.turn = Turn::Blocked;
            return;
        }
        self.server
            .serve_flows(view, view.active_flows_of(c), class, out);
        let slot = &mut self.slots[ci];
        self.server.residual_of(&slot.links, &mut slot.after);
        slot.turn = Turn::Served { class };
    }
}
