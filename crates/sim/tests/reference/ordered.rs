//! The coflow orders `fifo`, `scf`, `ncf`, `lcf` and `stf`, as the module
//! doc of `coflowkit_sched::ordered` defines them: strict priority between
//! coflows by a key, ties by (release, arrival, id), per-flow max-min
//! inside a coflow on what the coflows before it left. Keys from progress
//! (`stf`'s remaining bytes) tie within `BYTES_TIE`.

use crate::case::Case;
use crate::policy::ReferencePolicy;
use crate::sim::RefSim;
use coflowkit_model::stats::BYTES_TIE;

/// What a coflow order sorts coflows by (over their started flows).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Key {
    /// `fifo`: nothing, (release, arrival, id) alone.
    Fifo,
    /// `scf`: the largest started flow.
    Largest,
    /// `ncf`: the number of started flows.
    Width,
    /// `lcf`: the total bytes of the started flows.
    Total,
    /// `stf`: the remaining bytes of the started flows.
    Remaining,
}

/// Coflows in the order of a [`Key`], each its own strict class.
pub struct Ordered(pub Key);

/// `fifo`, `fifo:solver=incremental` (the same allocation), `scf`, `ncf`,
/// `lcf`, `stf`.
pub fn policy(spec: &str, _case: &Case) -> Box<dyn ReferencePolicy> {
    let key = match spec {
        "fifo" | "fifo:solver=incremental" => Key::Fifo,
        "scf" => Key::Largest,
        "ncf" => Key::Width,
        "lcf" => Key::Total,
        "stf" => Key::Remaining,
        other => panic!("no reference policy for '{other}'"),
    };
    Box::new(Ordered(key))
}

impl Ordered {
    /// Coflow `c`'s key.
    fn key(&self, sim: &RefSim, c: usize) -> f64 {
        let started = || sim.started_flows_of(c);
        match self.0 {
            Key::Fifo => 0.0,
            Key::Largest => started().map(|f| f.size).fold(0.0, f64::max),
            Key::Width => started().count() as f64,
            Key::Total => started().map(|f| f.size).sum(),
            Key::Remaining => started().map(|f| f.rem).sum(),
        }
    }
}

impl ReferencePolicy for Ordered {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        // Keys from progress (bytes left) tie within BYTES_TIE, as documented.
        let computed = self.0 == Key::Remaining;
        let tol = if computed { BYTES_TIE } else { 0.0 };
        let order = sim.coflows_by(|c| self.key(sim, c), computed, tol);
        let classes: Vec<Vec<usize>> = order.into_iter().map(|c| vec![c]).collect();
        sim.serve_classes(&classes, &mut rate);
        rate
    }
}
