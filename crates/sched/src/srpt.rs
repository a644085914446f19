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
//!
//! `ties=share` serves each run of tied flows (keys within [`BYTES_TIE`] of
//! the run's first, as [`sort_with_ties`] cuts runs) as one class, max-min
//! on what the runs before it left: what pFabric's switches do with packets
//! of equal priority from different senders (they interleave), where the
//! default serves them one after another in flow index order, and so the
//! flows of the earlier task first. Tied flows shared alike stay tied. A
//! run's class is its position among the runs, capped at
//! [`crate::greedy::LAST_CLASS`]. The order is sorted again at every event
//! (an adaptive sort of the last one, nearly in order).

use crate::class_server::ClassServer;
use crate::descriptor::{Kind, Needs, Param, Parts, SchedulerDescriptor};
use crate::greedy::{tie_run_end, SortedFlows, LAST_CLASS};
use crate::AnyScheduler;
use crate::{Allocation, Changes, Clairvoyant, FlowIdx, KnowsSizes, Scheduler};
#[cfg(doc)]
use coflowkit_model::stats::sort_with_ties;
use coflowkit_model::stats::BYTES_TIE;
use coflowkit_model::Time;

/// `srpt`'s `ties` parameter: how flows with tied remaining bytes share.
const TIES_PARAM: Param = Param {
    key: "ties",
    kind: Kind::Choice(&["index", "share"]),
    default: "index",
    unit: "",
    help: "flows with bytes left within 2 B: index: one after another by flow index; share: max-min among them",
};

/// `srpt`: per-flow shortest remaining first.
pub const SRPT: SchedulerDescriptor = SchedulerDescriptor {
    cost: 3.8,
    parts: Parts::NONE,
    name: "srpt",
    description: "per-flow shortest remaining first, greedy and preemptive (pFabric ideal)",
    paper: "pFabric (SIGCOMM 2013) ideal; Baraat 5.2 \"pFabric\"",
    params: &[TIES_PARAM],
    needs: Needs::SIZES,
    build: |p, _| {
        Ok(AnyScheduler::Clairvoyant(Box::new(
            match p.choice("ties")? {
                "share" => Srpt::sharing_ties(),
                _ => Srpt::new(),
            },
        )))
    },
};

/// Greedy preemptive SRPT; see the module doc.
#[derive(Debug, Default)]
pub struct Srpt {
    order: SortedFlows,
    residual: Vec<f64>,
    /// `ties=share`: the runs of tied flows are served max-min.
    share_ties: bool,
    // `ties=share`: the active flows by (bytes left, index), from the last
    // event; whether each flow is in it; the classes' server.
    keyed: Vec<(f64, FlowIdx)>,
    listed: Vec<bool>,
    server: ClassServer,
}

impl Srpt {
    /// An SRPT scheduler.
    pub fn new() -> Srpt {
        Srpt::default()
    }

    /// An SRPT scheduler whose tied flows share max-min (`ties=share`).
    pub fn sharing_ties() -> Srpt {
        Srpt {
            share_ties: true,
            ..Srpt::default()
        }
    }

    /// `ties=share`: sorts the active flows by bytes left and serves each
    /// run of near-ties as one max-min class on what the runs before left.
    fn schedule_sharing(&mut self, view: &Clairvoyant<'_>, out: &mut Allocation) {
        let observed = view.observed();
        if self.listed.len() < view.n_flows() {
            self.listed.resize(view.n_flows(), false);
        }
        let listed = &mut self.listed;
        self.keyed.retain(|&(_, f)| {
            let keep = view.is_active(f);
            listed[f as usize] = keep;
            keep
        });
        for &f in view.active_flows() {
            if !listed[f as usize] {
                listed[f as usize] = true;
                self.keyed.push((0.0, f));
            }
        }
        for e in &mut self.keyed {
            e.0 = view.remaining(e.1);
        }
        self.keyed
            .sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.server.begin(&observed);
        let (keyed, server) = (&self.keyed, &mut self.server);
        let (mut i, mut class) = (0, 0);
        while i < keyed.len() {
            // A run as `sort_with_ties` cuts it: keys within reach of its first.
            let j = tie_run_end(keyed, i, BYTES_TIE, |e| e.0);
            if j == i + 1 {
                server.serve_one(&observed, keyed[i].1, class, out);
            } else {
                server.serve_flows(&observed, keyed[i..j].iter().map(|e| e.1), class, out);
            }
            class = (class + 1).min(LAST_CLASS);
            i = j;
        }
        server.end(&observed, out);
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
        if self.share_ties {
            self.schedule_sharing(&view, out);
            return None;
        }
        self.order
            .update(&view, changes, BYTES_TIE, |f| Some(view.remaining(f)));
        self.order.fill(&view, &[], &mut self.residual, out);
        None
    }
}
