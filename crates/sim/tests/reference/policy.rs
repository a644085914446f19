//! What the reference simulator asks a scheduler's reference policy, and
//! the list of every registry scheduler's reference.
//!
//! A policy is written plainly from its scheduler's module doc in
//! `coflowkit_sched`, one file per scheduler. It owns whatever it keeps
//! between events (queues' books, protocol messages, task ids); the
//! simulator ([`RefSim`]) owns flows, coflows and the clock. At every event
//! the simulator calls, in this order: [`ReferencePolicy::before_releases`],
//! the release rules, [`ReferencePolicy::after_releases`],
//! [`ReferencePolicy::prepare`], [`ReferencePolicy::allocate`] (if
//! [`ReferencePolicy::reallocates`]), [`ReferencePolicy::served`]; then it
//! moves on to the earliest of the arrivals, starts and deadlines, the
//! policy's [`ReferencePolicy::next_instant`], the completions at these
//! rates, the policy's [`ReferencePolicy::next_crossing`] and its
//! [`ReferencePolicy::protocol_instant`].

use crate::case::Case;
use crate::sim::RefSim;
use crate::{
    aalo, baraat, d2tcp, dcas, fair, fair_ends, fifo_lm, karuna, ordered, srpt, tafe, varys,
};

/// A scheduler's reference: what the reference simulator asks it at every
/// event. Only [`ReferencePolicy::allocate`] is required; the other hooks
/// are for policies that keep state or act at instants of their own.
pub trait ReferencePolicy {
    /// Before the release rules at `t` (Aalo's refreshes).
    fn before_releases(&mut self, _sim: &mut RefSim, _t: f64) {}

    /// After the release rules at `t`, before the simulator stops if every
    /// coflow is complete.
    fn after_releases(&mut self, _sim: &mut RefSim, _t: f64) {}

    /// After the release rules at `t`, with coflows left: keeps the
    /// policy's state up to date (D-CAS's subcoflows and messages, task
    /// ids).
    fn prepare(&mut self, _sim: &mut RefSim, _t: f64) {}

    /// Whether the policy chooses rates at `t`, `coflow_event` saying
    /// whether a coflow was released or completed, a flow with bytes
    /// started, or a coflow sent its last started byte since the last
    /// event; otherwise the rates stay (finished flows at 0).
    fn reallocates(&self, _t: f64, _coflow_event: bool) -> bool {
        true
    }

    /// Every flow's rate (bits/s) from `sim.now` on.
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64>;

    /// After the rates chosen at `t` are `rate` (D-CAS's service).
    fn served(&mut self, _sim: &mut RefSim, _t: f64, _rate: &[f64]) {}

    /// The earliest exact instant after `t` the policy acts at (a refresh,
    /// a round, a re-evaluation); infinite if none. `active`: the active
    /// flows.
    fn next_instant(&self, _sim: &RefSim, _t: f64, _active: &[usize]) -> f64 {
        f64::INFINITY
    }

    /// How long (ns) until bytes sent at `rate` cross a threshold the
    /// policy reacts to; infinite if none.
    fn next_crossing(&self, _sim: &RefSim, _rate: &[f64], _active: &[usize]) -> f64 {
        f64::INFINITY
    }

    /// An exact instant after `t` the policy acts at that goes ahead of a
    /// completion or crossing only if strictly earlier (D-CAS's protocol
    /// events).
    fn protocol_instant(
        &mut self,
        _sim: &mut RefSim,
        _t: f64,
        _rate: &[f64],
        _active: &[usize],
    ) -> Option<f64> {
        None
    }
}

/// How a spec of one scheduler becomes its reference policy on a case
/// (which the policy may read: percentiles of coflow sizes, counts).
pub type ReadSpec = fn(&str, &Case) -> Box<dyn ReferencePolicy>;

/// Every registry scheduler and how its reference reads a spec of it
/// (checked against `coflowkit_sched::NAMES` by
/// `every_registry_name_has_a_reference`).
pub const REFERENCES: &[(&str, ReadSpec)] = &[
    ("fair", fair::policy),
    ("fair-ends", fair_ends::policy),
    ("srpt", srpt::policy),
    ("fifo", ordered::policy),
    ("fifo-lm", fifo_lm::policy),
    ("baraat", baraat::policy),
    ("scf", ordered::policy),
    ("ncf", ordered::policy),
    ("lcf", ordered::policy),
    ("stf", ordered::policy),
    ("varys", varys::policy),
    ("aalo", aalo::policy),
    ("aalo-local", aalo::policy),
    ("dcas", dcas::policy),
    ("tafe", tafe::policy),
    ("d2tcp", d2tcp::policy),
    ("karuna", karuna::policy),
    ("pias", karuna::policy),
    ("pfabric-edf", karuna::policy),
    ("edf-sjf", karuna::policy),
];

/// The reference policy of `spec` (without a `|drop` suffix) on `case`.
pub fn policy_of(spec: &str, case: &Case) -> Box<dyn ReferencePolicy> {
    let name = spec.split(':').next().unwrap_or_default();
    match REFERENCES.iter().find(|(n, _)| *n == name) {
        Some((_, read)) => read(spec, case),
        None => panic!("no reference policy for '{spec}'"),
    }
}

/// The nearest-rank 50th percentile of the coflows' total bytes, written out.
pub fn p50_of_coflow_sizes(case: &Case) -> f64 {
    let mut v: Vec<u64> = case
        .coflows
        .iter()
        .map(|c| c.flows.iter().map(|f| f.bytes.0).sum())
        .collect();
    v.sort_unstable();
    // Smallest value with at least half of the values at or below it.
    let rank = v.len().div_ceil(2);
    v[rank.max(1) - 1] as f64
}
