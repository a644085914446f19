//! `tafe`, as the module doc of `coflowkit_sched::tafe` defines it: a
//! coflow's queue is how many thresholds its bytes sent reach (within 1e-6
//! relative); coflows by (queue, release, arrival, id), strict; inside a
//! coflow flows by (remaining bytes within `BYTES_TIE`, index), each the
//! least residual on its path, or max-min among the coflow's flows
//! (`flows=fair`), or weighted max-min with weight 1 / remaining bytes
//! (`flows=weighted`). The reference's events include the instants a
//! coflow's bytes sent reach its queue's threshold.

use crate::case::Case;
use crate::policy::ReferencePolicy;
use crate::sim::{order_by, RefSim};
use coflowkit_alloc::reference::max_min;
use coflowkit_model::stats::BYTES_TIE;

/// TAFE's flow rule inside a task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TafeFlows {
    /// Shortest remaining first, each the least residual on its path.
    Srpt,
    /// Max-min.
    Fair,
    /// Weighted max-min, weight 1 / remaining bytes.
    Weighted,
}

/// TAFE's thresholds (bytes, up to 7: 8 queues) and flow rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tafe {
    n: usize,
    thresholds: [f64; 7],
    flows: TafeFlows,
}

/// `tafe` (thresholds at 0.5 and 0.75 of the largest coflow),
/// `tafe:queues=1[;flows=fair]`, `tafe:thresholds=B1/B2/..[;flows=fair|weighted]`.
pub fn policy(spec: &str, case: &Case) -> Box<dyn ReferencePolicy> {
    Box::new(match spec {
        "tafe:queues=1" => Tafe::new(&[], TafeFlows::Srpt),
        "tafe:queues=1;flows=fair" => Tafe::new(&[], TafeFlows::Fair),
        other if other.starts_with("tafe:thresholds=") => {
            // Thresholds in bytes, then perhaps `;flows=fair`.
            let rest = &other["tafe:thresholds=".len()..];
            let (list, flows) = if let Some(list) = rest.strip_suffix(";flows=fair") {
                (list, TafeFlows::Fair)
            } else if let Some(list) = rest.strip_suffix(";flows=weighted") {
                (list, TafeFlows::Weighted)
            } else {
                (rest, TafeFlows::Srpt)
            };
            let list: Vec<f64> = list
                .split('/')
                .map(|x| x.parse::<u64>().expect("thresholds in bytes") as f64)
                .collect();
            Tafe::new(&list, flows)
        }
        "tafe" => {
            // 0.5 and 0.75 of the largest coflow (all its bytes).
            let max = case
                .coflows
                .iter()
                .map(|c| c.flows.iter().map(|f| f.bytes.0).sum::<u64>())
                .max()
                .unwrap_or(0) as f64;
            Tafe::new(&[0.5 * max, 0.75 * max], TafeFlows::Srpt)
        }
        other => panic!("no reference policy for '{other}'"),
    })
}

impl Tafe {
    fn new(list: &[f64], flows: TafeFlows) -> Tafe {
        let mut thresholds = [0.0; 7];
        thresholds[..list.len()].copy_from_slice(list);
        Tafe {
            n: list.len(),
            thresholds,
            flows,
        }
    }

    /// The queue (0 = Q1) of a coflow that has sent `sent` bytes.
    fn queue(&self, sent: f64) -> usize {
        self.thresholds[..self.n]
            .iter()
            .filter(|&&u| reaches(sent, u))
            .count()
    }
}

/// Whether `sent` reaches threshold `u`: within 1e-6 relative, as the
/// module docs of `coflowkit_sched::tafe` and `coflowkit_sched::karuna`
/// say.
pub fn reaches(sent: f64, u: f64) -> bool {
    sent >= u - 1e-6 * u.max(1.0)
}

impl ReferencePolicy for Tafe {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        let mut order = sim.active_coflows();
        // Stable: coflows of one queue stay in (release, arrival, id) order.
        order.sort_by_key(|&c| self.queue(sim.sent(c)));
        let mut residual = sim.caps.clone();
        for c in order {
            let flows = sim.active_flows_of(c);
            if self.flows != TafeFlows::Srpt {
                let weight = |f: usize| match self.flows {
                    TafeFlows::Weighted => 1.0 / sim.flows[f].rem,
                    _ => 1.0,
                };
                let demands: Vec<(Vec<u32>, f64, f64)> = flows
                    .iter()
                    .map(|&f| (sim.flows[f].path.clone(), weight(f), f64::INFINITY))
                    .collect();
                let r = max_min(&demands, &mut residual);
                for (&f, &x) in flows.iter().zip(&r) {
                    rate[f] = x;
                }
                continue;
            }
            let flows = order_by(flows, |f| sim.flows[f].rem, BYTES_TIE);
            sim.note_ties("flows", &flows, |f| (f as u64, sim.flows[f].rem));
            sim.greedy(flows, &mut residual, &mut rate);
        }
        rate
    }

    fn next_crossing(&self, sim: &RefSim, rate: &[f64], _active: &[usize]) -> f64 {
        // A coflow's bytes sent reaching its queue's threshold.
        let mut dt = f64::INFINITY;
        for c in sim.active_coflows() {
            let sent = sim.sent(c);
            let q = self.queue(sent);
            if q < self.n {
                let r: f64 = sim.active_flows_of(c).iter().map(|&f| rate[f]).sum();
                if r > 0.0 {
                    let d = (self.thresholds[q] - sent) / (r / 8e9);
                    if d < dt {
                        dt = d;
                    }
                }
            }
        }
        dt
    }
}
