//! `srpt`: per-flow shortest-remaining-first, greedy and preemptive: the
//! ideal pFabric approximates (pFabric, SIGCOMM 2013, 2; the "ideal"
//! flow-level algorithm of its simulator).
//!
//! At every event the active flows are taken in order of remaining bytes,
//! amounts within [`BYTES_TIE`] counting as equal so that float noise cannot
//! decide an order (ties by flow index, i.e. arrival order), and each gets the least residual
//! capacity along its path, which is then taken from every link it crosses
//! ([`crate::greedy`]: the order is kept sorted from one event to the next,
//! re-reading only the keys of flows that had a rate, and the fill passes
//! over stretches of flows that a full link blocks). A flow's class is its
//! position in the order, capped at [`crate::greedy::LAST_CLASS`].

use crate::descriptor::{Needs, SchedulerDescriptor};
use crate::greedy::SortedFlows;
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, KnowsSizes, Scheduler};
use coflowkit_model::stats::BYTES_TIE;
use coflowkit_model::Time;

/// `srpt`: per-flow shortest remaining first.
pub const SRPT: SchedulerDescriptor = SchedulerDescriptor {
    name: "srpt",
    description: "per-flow shortest remaining first, greedy and preemptive (pFabric ideal)",
    paper: "pFabric (SIGCOMM 2013) ideal; Baraat 5.2 \"pFabric\"",
    params: &[],
    needs: Needs::SIZES,
    build: |_, _| Ok(AnyScheduler::Clairvoyant(Box::new(Srpt::new()))),
};

/// Greedy preemptive SRPT; see the module doc.
#[derive(Debug, Default)]
pub struct Srpt {
    order: SortedFlows,
    residual: Vec<f64>,
}

impl Srpt {
    /// An SRPT scheduler.
    pub fn new() -> Srpt {
        Srpt::default()
    }
}

impl Scheduler for Srpt {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        "srpt"
    }
    fn schedule(
        &mut self,
        _now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        self.order
            .update(&view, changes, BYTES_TIE, |f| Some(view.remaining(f)));
        self.order.fill(&view, &[], &mut self.residual, out);
        None
    }
}
