//! `karuna`, `pias`, `pfabric-edf` and `edf-sjf`, as the module doc of
//! `coflowkit_sched::karuna` defines them.
//!
//! Karuna: 8 strict queues, max-min inside each; deadline flows in queue 1
//! capped at their MCP rate (remaining / time left, at least two
//! 1,460-byte segments per RTT, the floor once the deadline passed),
//! evaluated at their start and at every `start + k * rtt`; known sizes in
//! queue `2 + #{t : size > t}` of `split`; unknown sizes in queue
//! `2 + #{t : sent reaches t}` of `sieve`. PIAS (`pias`): every flow by
//! `sieve` from queue 1. No starvation rule (off by default; `karuna.rs`
//! tests it by hand). The reference's events include the MCP
//! re-evaluations and the instants a sieved flow's bytes sent reach its
//! next threshold.
//!
//! `pfabric-edf` and `edf-sjf`: per flow, strict, greedy as `srpt`:
//! deadline flows by (absolute deadline, index), then the rest by
//! remaining bytes (`pfabric-edf`) or size (`edf-sjf`) within `BYTES_TIE`,
//! ties by index.

use crate::case::Case;
use crate::policy::ReferencePolicy;
use crate::sim::{order_by, RefSim, SAME_INSTANT_NS};
use crate::tafe::reaches;
use coflowkit_alloc::reference::max_min;
use coflowkit_model::stats::BYTES_TIE;

/// Karuna's or PIAS's parameters as the reference reads them from a spec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pias: bool,
    split: [f64; 6],
    n_sieve: usize,
    sieve: [f64; 7],
    rtt: f64,
}

impl Params {
    /// PIAS's web-search thresholds, in 1,460-byte segments.
    const WEB: [f64; 7] = [46.0, 1084.0, 1717.0, 1943.0, 1989.0, 1999.0, 2001.0];

    /// `karuna`, `karuna:split=..;sieve=..;rtt=Nus`, `pias`,
    /// `pias:thresholds=..` (thresholds as `/`-separated bytes).
    fn parse(spec: &str) -> Params {
        let pias = spec.starts_with("pias");
        let web: Vec<f64> = Params::WEB.iter().map(|u| u * 1460.0).collect();
        let mut split = [0.0; 6];
        split.copy_from_slice(&web[..6]);
        let mut sieve = [0.0; 7];
        sieve.copy_from_slice(&web);
        let mut k = Params {
            pias,
            split,
            n_sieve: if pias { 7 } else { 6 },
            sieve,
            rtt: 100_000.0,
        };
        let list = |v: &str| -> Vec<f64> {
            v.split('/')
                .map(|x| x.parse::<u64>().expect("bytes") as f64)
                .collect()
        };
        for kv in spec.split(':').nth(1).unwrap_or("").split(';') {
            if let Some(v) = kv.strip_prefix("split=") {
                k.split.copy_from_slice(&list(v));
            } else if let Some(v) = kv.strip_prefix("sieve=") {
                k.sieve[..6].copy_from_slice(&list(v));
            } else if let Some(v) = kv.strip_prefix("thresholds=") {
                k.sieve.copy_from_slice(&list(v));
            } else if let Some(v) = kv.strip_prefix("rtt=") {
                let us: f64 = v.strip_suffix("us").expect("rtt in us").parse().unwrap();
                k.rtt = us * 1e3;
            } else {
                assert!(kv.is_empty(), "karuna reference: unknown '{kv}'");
            }
        }
        k
    }

    /// The floor of a deadline flow: two segments per RTT, bits/s.
    fn floor(&self) -> f64 {
        2.0 * 1460.0 * 8.0 * 1e9 / self.rtt
    }

    /// The queue (0 = queue 1) of a flow of `size` bytes with `sent` sent.
    fn queue(&self, deadline: bool, known: bool, size: f64, sent: f64) -> usize {
        let base = usize::from(!self.pias);
        if self.pias || !known {
            base + self.sieve[..self.n_sieve]
                .iter()
                .filter(|&&t| reaches(sent, t))
                .count()
        } else if deadline {
            0
        } else {
            base + self.split.iter().filter(|&&t| size > t).count()
        }
    }
}

/// Karuna or PIAS, with every flow's MCP rate (bits/s) and when it is next
/// evaluated (NaN: not yet).
pub struct Karuna {
    k: Params,
    mcp: Vec<(f64, f64)>,
}

/// Deadline flows first, then the rest by remaining bytes or (`by_size`)
/// size.
pub struct EdfFirst {
    by_size: bool,
}

/// `karuna[:split=..;sieve=..;rtt=Nus]`, `pias[:thresholds=..]`,
/// `pfabric-edf`, `edf-sjf`.
pub fn policy(spec: &str, case: &Case) -> Box<dyn ReferencePolicy> {
    match spec {
        "pfabric-edf" => Box::new(EdfFirst { by_size: false }),
        "edf-sjf" => Box::new(EdfFirst { by_size: true }),
        other if other.starts_with("karuna") || other.starts_with("pias") => Box::new(Karuna {
            k: Params::parse(other),
            mcp: vec![(0.0, f64::NAN); case.n_flows()],
        }),
        other => panic!("no reference policy for '{other}'"),
    }
}

impl Karuna {
    /// Re-evaluates the MCP rate of every active deadline flow due at `t`.
    fn update_mcp(&mut self, sim: &RefSim, t: f64) {
        let k = self.k;
        for f in 0..sim.flows.len() {
            if !sim.is_active(f) || k.pias {
                continue;
            }
            let fl = &sim.flows[f];
            let (Some(d), true) = (fl.deadline, fl.known) else {
                continue;
            };
            let mcp = &mut self.mcp[f];
            if mcp.1.is_nan() || t >= mcp.1 - SAME_INSTANT_NS {
                let due = fl.start_at + d;
                // `t` is summed from steps and may sit a rounding error
                // below a grid instant that is also the deadline: that is
                // the deadline (`same_instant`; the engine's instants are
                // integers, so a deadline and a grid instant are equal or
                // 1 ns apart).
                mcp.0 = if due - t > SAME_INSTANT_NS {
                    (fl.rem * 8e9 / (due - t)).max(k.floor())
                } else {
                    k.floor()
                };
                // The next grid instant after `t` (`t` itself may be a grid
                // instant a rounding error below).
                let k_now = ((t - fl.start_at) / k.rtt + 1e-6).floor();
                mcp.1 = fl.start_at + (k_now + 1.0) * k.rtt;
            }
        }
    }

    /// The queue of active flow `f`.
    fn queue_of(&self, sim: &RefSim, f: usize) -> usize {
        let fl = &sim.flows[f];
        self.k
            .queue(fl.deadline.is_some(), fl.known, fl.size, fl.size - fl.rem)
    }
}

impl ReferencePolicy for Karuna {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        self.update_mcp(sim, sim.now);
        let k = self.k;
        let mut rate = vec![0.0; sim.flows.len()];
        let mut residual = sim.caps.clone();
        for q in 0..8 {
            let class: Vec<usize> = (0..sim.flows.len())
                .filter(|&f| sim.is_active(f) && self.queue_of(sim, f) == q)
                .collect();
            let demands: Vec<(Vec<u32>, f64, f64)> = class
                .iter()
                .map(|&f| {
                    let cap = if q == 0 && !k.pias {
                        self.mcp[f].0
                    } else {
                        f64::INFINITY
                    };
                    (sim.flows[f].path.clone(), 1.0, cap)
                })
                .collect();
            let r = max_min(&demands, &mut residual);
            for (&f, &x) in class.iter().zip(&r) {
                rate[f] = x;
            }
        }
        rate
    }

    fn next_instant(&self, _sim: &RefSim, _t: f64, active: &[usize]) -> f64 {
        // MCP re-evaluations.
        let mut at = f64::INFINITY;
        for &f in active {
            if !self.mcp[f].1.is_nan() {
                at = at.min(self.mcp[f].1);
            }
        }
        at
    }

    fn next_crossing(&self, sim: &RefSim, rate: &[f64], active: &[usize]) -> f64 {
        // A type-3 flow's bytes sent reaching its next sieve threshold.
        let k = self.k;
        let mut dt = f64::INFINITY;
        for &f in active {
            let fl = &sim.flows[f];
            let sieved = k.pias || !fl.known;
            if !sieved || rate[f] <= 0.0 {
                continue;
            }
            let q = self.queue_of(sim, f) - usize::from(!k.pias);
            if q < k.n_sieve {
                let d = (k.sieve[q] - (fl.size - fl.rem)) / (rate[f] / 8e9);
                if d < dt {
                    dt = d;
                }
            }
        }
        dt
    }
}

impl ReferencePolicy for EdfFirst {
    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        let mut rate = vec![0.0; sim.flows.len()];
        let active = sim.active_flows();
        let mut edf: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&f| sim.flows[f].deadline.is_some())
            .collect();
        let due = |f: usize| sim.flows[f].start_at + sim.flows[f].deadline.unwrap_or(0.0);
        edf.sort_by(|&a, &b| due(a).total_cmp(&due(b)).then(a.cmp(&b)));
        let rest: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&f| sim.flows[f].deadline.is_none())
            .collect();
        let key = |f: usize| {
            if self.by_size {
                sim.flows[f].size
            } else {
                sim.flows[f].rem
            }
        };
        let rest = order_by(rest, key, BYTES_TIE);
        sim.note_ties("flows", &rest, |f| (f as u64, key(f)));
        let mut residual = sim.caps.clone();
        sim.greedy(edf.into_iter().chain(rest), &mut residual, &mut rate);
        rate
    }
}
