//! `fifo-lm`, FIFO with limited multiplexing, as the module doc of
//! `coflowkit_sched::fifo_lm` defines it: coflows in release order (or
//! task-id order, with Baraat's counters); a coflow is heavy once its bytes
//! sent reach the threshold (within 1e-9 relative), and a heavy coflow
//! shares its class with the coflows after it up to the first light one;
//! strict priority between classes, per-flow max-min inside one. With
//! `mux=last`, light coflows one class each in release order and every
//! heavy flow in one last class, heaviness per (coflow, sender) with
//! `per=sender`. The reference's events include the instants a light
//! coflow's bytes sent reach the threshold.

use crate::baraat::{BaraatParams, TaskIds};
use crate::case::Case;
use crate::policy::{p50_of_coflow_sizes, ReferencePolicy};
use crate::sim::RefSim;

/// `fifo-lm`'s default multiplexing (`mux=next`), heavy at `threshold`
/// bytes, coflows in release order or, with `ids`, task-id order.
pub struct FifoLm {
    threshold: f64,
    ids: Option<TaskIds>,
}

/// `fifo-lm:mux=last`: light coflows in release order, one class each,
/// every heavy flow in one last class; heaviness per (coflow, sender) with
/// `per_sender`.
pub struct FifoLmLast {
    threshold: f64,
    per_sender: bool,
}

/// `fifo-lm:mux=link`: at each link, the coflows with an active flow there
/// in release order form classes (a class a maximal run in which every
/// member but the last is heavy by all it has sent); a flow rises only while
/// no unfrozen flow of a strictly higher class at any of its links is left;
/// all rising flows rise together and a link that fills freezes every
/// unfrozen flow on it (priority progressive filling, step by step).
pub struct FifoLmLink {
    next: FifoLm,
}

/// `fifo-lm:threshold=0|p50|inf|BYTES`, perhaps with `;solver=incremental`
/// (the same allocation), with task-id counters, or with `mux=last`.
pub fn policy(spec: &str, case: &Case) -> Box<dyn ReferencePolicy> {
    let by_release = |threshold| {
        Box::new(FifoLm {
            threshold,
            ids: None,
        })
    };
    match spec {
        "fifo-lm:threshold=p50" | "fifo-lm:threshold=p50;solver=incremental" => {
            by_release(p50_of_coflow_sizes(case))
        }
        "fifo-lm:threshold=inf" => by_release(f64::INFINITY),
        "fifo-lm:threshold=300000;solver=incremental" => by_release(300_000.0),
        "fifo-lm:threshold=300000;mux=link" | "fifo-lm:threshold=p50;mux=link" => {
            let threshold = match spec {
                "fifo-lm:threshold=p50;mux=link" => p50_of_coflow_sizes(case),
                _ => 300_000.0,
            };
            Box::new(FifoLmLink {
                next: FifoLm {
                    threshold,
                    ids: None,
                },
            })
        }
        "fifo-lm:threshold=300000;mux=last" => Box::new(FifoLmLast {
            threshold: 300000.0,
            per_sender: false,
        }),
        "fifo-lm:threshold=150000;mux=last;per=sender" => Box::new(FifoLmLast {
            threshold: 150000.0,
            per_sender: true,
        }),
        other if other.contains("counters") => {
            let p = BaraatParams::parse(other, case);
            Box::new(FifoLm {
                threshold: p.threshold,
                ids: Some(TaskIds::new(&p, case.coflows.len())),
            })
        }
        other => match other
            .strip_prefix("fifo-lm:threshold=")
            .and_then(|b| b.parse::<u64>().ok())
        {
            Some(bytes) => by_release(bytes as f64),
            None => panic!("no reference policy for '{other}'"),
        },
    }
}

impl FifoLm {
    fn is_heavy(&self, sim: &RefSim, c: usize) -> bool {
        self.threshold.is_finite() && sim.sent(c) >= self.threshold * (1.0 - 1e-9)
    }
}

impl ReferencePolicy for FifoLm {
    fn prepare(&mut self, sim: &mut RefSim, _t: f64) {
        if let Some(ids) = &mut self.ids {
            ids.assign(sim);
        }
    }

    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        let mut order = sim.active_coflows();
        if let Some(ids) = &self.ids {
            order.sort_by_key(|&c| ids.of(c));
        }
        let mut classes = vec![];
        let mut class = vec![];
        for (i, &c) in order.iter().enumerate() {
            class.push(c);
            if !self.is_heavy(sim, c) || i + 1 == order.len() {
                classes.push(std::mem::take(&mut class));
            }
        }
        sim.serve_classes(&classes, &mut rate);
        rate
    }

    fn next_crossing(&self, sim: &RefSim, rate: &[f64], _active: &[usize]) -> f64 {
        // A light coflow's bytes sent reaching the threshold.
        let mut dt = f64::INFINITY;
        for c in sim.active_coflows() {
            if self.threshold.is_finite() && !self.is_heavy(sim, c) {
                let r: f64 = sim.active_flows_of(c).iter().map(|&f| rate[f]).sum();
                if r > 0.0 {
                    let d = (self.threshold - sim.sent(c)) / (r / 8e9);
                    if d < dt {
                        dt = d;
                    }
                }
            }
        }
        dt
    }
}

impl ReferencePolicy for FifoLmLink {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        // (flow, its coflow's position in release order).
        let order = sim.active_coflows();
        let flows: Vec<(usize, usize)> = order
            .iter()
            .enumerate()
            .flat_map(|(p, &c)| sim.active_flows_of(c).into_iter().map(move |f| (f, p)))
            .collect();
        let at = |l: u32, p: usize| {
            flows
                .iter()
                .any(|&(f, q)| q == p && sim.flows[f].path.contains(&l))
        };
        // The position of the first coflow of the class of position `p` at `l`.
        let key = |l: u32, p: usize| {
            let mut k = p;
            loop {
                match (0..k).rev().find(|&q| at(l, q)) {
                    Some(q) if self.next.is_heavy(sim, order[q]) => k = q,
                    _ => return k,
                }
            }
        };
        let mut frozen = vec![false; flows.len()];
        let mut res = sim.caps.clone();
        while frozen.iter().any(|&x| !x) {
            let rises: Vec<bool> = (0..flows.len())
                .map(|i| {
                    let (f, p) = flows[i];
                    !frozen[i]
                        && sim.flows[f].path.iter().all(|&l| {
                            (0..flows.len()).all(|j| {
                                let (g, q) = flows[j];
                                frozen[j]
                                    || !sim.flows[g].path.contains(&l)
                                    || key(l, q) >= key(l, p)
                            })
                        })
                })
                .collect();
            let mut count = vec![0usize; res.len()];
            for (i, &(f, _)) in flows.iter().enumerate() {
                if rises[i] {
                    for &l in &sim.flows[f].path {
                        count[l as usize] += 1;
                    }
                }
            }
            let (mut dt, mut argmin) = (f64::INFINITY, usize::MAX);
            for l in 0..res.len() {
                if count[l] > 0 && res[l] / (count[l] as f64) < dt {
                    dt = res[l] / count[l] as f64;
                    argmin = l;
                }
            }
            assert!(argmin != usize::MAX, "an unfrozen flow that cannot rise");
            for (i, &(f, _)) in flows.iter().enumerate() {
                if rises[i] {
                    rate[f] += dt;
                }
            }
            for l in 0..res.len() {
                res[l] -= dt * count[l] as f64;
                if l == argmin || (count[l] > 0 && res[l] <= 1e-12 * sim.caps[l]) {
                    res[l] = 0.0;
                    for (i, &(f, _)) in flows.iter().enumerate() {
                        if sim.flows[f].path.contains(&(l as u32)) {
                            frozen[i] = true;
                        }
                    }
                }
            }
        }
        rate
    }

    fn next_crossing(&self, sim: &RefSim, rate: &[f64], active: &[usize]) -> f64 {
        self.next.next_crossing(sim, rate, active)
    }
}

impl FifoLmLast {
    /// Whether coflow `c` has sent the threshold (from `src`; from every
    /// host: `None`).
    fn is_heavy(&self, sim: &RefSim, c: usize, src: Option<u32>) -> bool {
        sim.sent_by(c, src) >= self.threshold * (1.0 - 1e-9)
    }
}

impl ReferencePolicy for FifoLmLast {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        let mut classes = vec![];
        let mut heavy = vec![];
        for c in sim.active_coflows() {
            let (h, l): (Vec<usize>, Vec<usize>) = sim
                .active_flows_of(c)
                .into_iter()
                .partition(|&f| self.is_heavy(sim, c, self.per_sender.then_some(sim.flows[f].src)));
            heavy.extend(h);
            if !l.is_empty() {
                classes.push(l);
            }
        }
        classes.push(heavy);
        sim.serve_flow_classes(&classes, &mut rate);
        rate
    }

    fn next_crossing(&self, sim: &RefSim, rate: &[f64], _active: &[usize]) -> f64 {
        // A light coflow (or one host's part of it) reaching the threshold.
        let mut dt = f64::INFINITY;
        for c in sim.active_coflows() {
            let mut units: Vec<Option<u32>> = vec![None];
            if self.per_sender {
                units = sim
                    .active_flows_of(c)
                    .iter()
                    .map(|&f| Some(sim.flows[f].src))
                    .collect();
                units.sort_unstable();
                units.dedup();
            }
            for u in units {
                if self.is_heavy(sim, c, u) {
                    continue;
                }
                let sent = sim.sent_by(c, u);
                let r: f64 = sim
                    .active_flows_of(c)
                    .iter()
                    .filter(|&&f| u.is_none_or(|s| sim.flows[f].src == s))
                    .map(|&f| rate[f])
                    .sum();
                if r > 0.0 {
                    let d = (self.threshold - sent) / (r / 8e9);
                    if d < dt {
                        dt = d;
                    }
                }
            }
        }
        dt
    }
}
