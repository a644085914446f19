//! `srpt`: per-flow shortest-remaining-first, greedy and preemptive: the
//! ideal pFabric approximates (pFabric, SIGCOMM 2013, 2; the "ideal"
//! flow-level algorithm of its simulator).
//!
//! At every event the active flows are taken in order of remaining bytes,
//! amounts within [`BYTES_TIE`] counting as equal so that float noise cannot
//! decide an order (ties by flow index, i.e. arrival order), and each gets the least residual
//! capacity along its path, which is then taken from every link it crosses.

use crate::descriptor::{Needs, SchedulerDescriptor};
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, FlowIdx, KnowsSizes, Scheduler};
use coflowkit_model::stats::{sort_with_ties, BYTES_TIE};
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
    order: Vec<(f64, FlowIdx)>,
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
        _changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        self.order.clear();
        self.order
            .extend(view.active_flows().iter().map(|&f| (view.remaining(f), f)));
        sort_with_ties(&mut self.order, |x| x.0, |x| x.1, BYTES_TIE);
        greedy_fill(
            &view,
            self.order.iter().map(|x| x.1),
            &mut self.residual,
            out,
        );
        None
    }
}

/// Gives each flow of `order` in turn the least residual capacity along its
/// path and takes it from every link it crosses (rates at or below the
/// allocation's noise floor count as 0), with class = its position in
/// `order`. Once every link is full the rest get 0 without looking at paths.
/// The fill of `srpt` and of Karuna's EDF-first baselines.
pub(crate) fn greedy_fill(
    view: &Clairvoyant<'_>,
    order: impl IntoIterator<Item = FlowIdx>,
    residual: &mut Vec<f64>,
    out: &mut Allocation,
) {
    let floor = coflowkit_alloc::EPS * 1e9;
    residual.clear();
    residual.extend_from_slice(view.capacities());
    let mut saturated = 0;
    let mut order = order.into_iter().enumerate();
    for (i, f) in order.by_ref() {
        let path = view.path(f);
        let r = path
            .iter()
            .map(|l| residual[l.0 as usize])
            .fold(f64::INFINITY, f64::min)
            .max(0.0);
        let r = if r <= floor { 0.0 } else { r };
        out.set_rate(f, r);
        out.set_class(f, i as u32);
        if r > 0.0 {
            for l in path {
                let res = &mut residual[l.0 as usize];
                *res -= r;
                if *res <= floor {
                    *res = 0.0;
                    saturated += 1;
                }
            }
        }
        if saturated == residual.len() {
            break;
        }
    }
    for (i, g) in order {
        out.set_rate(g, 0.0);
        out.set_class(g, i as u32);
    }
}
