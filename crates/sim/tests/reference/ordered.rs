//! The coflow orders `fifo`, `scf`, `ncf`, `lcf` and `stf`, as the module
//! doc of `coflowkit_sched::ordered` defines them: strict priority between
//! coflows by a key, ties by (release, arrival, id), per-flow max-min
//! inside a coflow on what the coflows before it left. Keys from progress
//! (`stf`'s remaining bytes) tie within `BYTES_TIE`. With `backfill=off` a
//! coflow is served only if no coflow ahead of it in the order has an
//! active flow on a link one of its active flows uses (decided pair by
//! pair), and is then served alone on those links' full capacity.

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

/// Coflows in the order of a [`Key`], each its own strict class; without
/// backfilling (`backfill=off`) if the flag says so.
pub struct Ordered(pub Key, pub bool);

/// `fifo`, `fifo:solver=incremental` (the same allocation), `scf`, `ncf`,
/// `lcf`, `stf`, each also with `backfill=off` (after the name or after
/// `solver=incremental;`).
pub fn policy(spec: &str, _case: &Case) -> Box<dyn ReferencePolicy> {
    let (name, params) = spec.split_once(':').unwrap_or((spec, ""));
    let mut serialized = false;
    for kv in params.split(';').filter(|kv| !kv.is_empty()) {
        match kv {
            "solver=incremental" if name == "fifo" => {}
            "backfill=off" => serialized = true,
            "backfill=on" => serialized = false,
            other => panic!("no reference policy for '{spec}' ('{other}')"),
        }
    }
    let key = match name {
        "fifo" => Key::Fifo,
        "scf" => Key::Largest,
        "ncf" => Key::Width,
        "lcf" => Key::Total,
        "stf" => Key::Remaining,
        other => panic!("no reference policy for '{other}'"),
    };
    Box::new(Ordered(key, serialized))
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
        let mut order = sim.coflows_by(|c| self.key(sim, c), computed, tol);
        if self.1 {
            // Served only if no coflow ahead of it shares a link with it.
            let links = |c: usize| -> Vec<u32> {
                let flows = sim.active_flows_of(c);
                flows
                    .iter()
                    .flat_map(|&f| sim.flows[f].path.clone())
                    .collect()
            };
            let first: Vec<bool> = (0..order.len())
                .map(|i| {
                    let mine = links(order[i]);
                    !mine.is_empty()
                        && order[..i]
                            .iter()
                            .all(|&a| links(a).iter().all(|l| !mine.contains(l)))
                })
                .collect();
            let mut keep = first.into_iter();
            order.retain(|_| keep.next().unwrap_or(false));
        }
        let classes: Vec<Vec<usize>> = order.into_iter().map(|c| vec![c]).collect();
        sim.serve_classes(&classes, &mut rate);
        rate
    }
}
