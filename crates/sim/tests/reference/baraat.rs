//! `baraat`, Baraat's Smart Priority Classes, written plainly from the
//! module doc of `coflowkit_sched::baraat`. Its reference keeps the paper's
//! counters between rounds literally: task ids from plain counters, and at
//! every multiple of the RTT (an exact instant of the loop; no round is
//! skipped, unlike the engine's scheduler, which sleeps through rounds that
//! change nothing) the FINs of finished flows, Algorithm 2 at every sender,
//! then per link the classifier from the task's bytes before the round
//! and Algorithm 1 flow by flow in (task id, flow) order, with per-(link,
//! task) demand sums and flow counts and a per-link allocation sum updated
//! in place (lines 1 and 12). Rates stay fixed between rounds.

use crate::case::Case;
use crate::policy::{p50_of_coflow_sizes, ReferencePolicy};
use crate::sim::{same_instant, RefSim, SAME_INSTANT_NS};
use std::collections::HashMap;

/// `baraat`'s parameters as the reference reads them from a spec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaraatParams {
    /// Heavy at these bytes sent (infinite: never).
    pub threshold: f64,
    /// ns.
    rtt: f64,
    /// bits/s.
    delta: f64,
    counters: u64,
    background: Option<u64>,
    /// `share=fill`: NR is the larger of the equal share and what the
    /// class leaves.
    fill: bool,
    /// Virtual capacity gain (0: none) and bound (multiple of C).
    vc: f64,
    vc_max: f64,
    /// `task_size=granted`: a task's bytes at a link are the ARs granted
    /// there times the RTT; else what its flows sent through it.
    granted: bool,
}

impl BaraatParams {
    /// Reads `baraat:..` or `fifo-lm:..;counters=..` (the threshold must
    /// be given; `p50` is read from `case`).
    pub fn parse(spec: &str, case: &Case) -> BaraatParams {
        let mut p = BaraatParams {
            threshold: f64::INFINITY,
            rtt: 100_000.0,
            delta: 10e6,
            counters: 1,
            background: None,
            fill: false,
            vc: 0.0,
            vc_max: 10.0,
            granted: false,
        };
        let mut threshold_given = false;
        for kv in spec.split_once(':').map_or("", |x| x.1).split(';') {
            let Some((k, v)) = kv.split_once('=') else {
                continue;
            };
            match k {
                "threshold" => {
                    threshold_given = true;
                    p.threshold = match v {
                        "inf" => f64::INFINITY,
                        "p50" => p50_of_coflow_sizes(case),
                        _ => v.parse().expect("threshold in bytes"),
                    }
                }
                "rtt" => {
                    p.rtt = v
                        .strip_suffix("us")
                        .expect("rtt in us")
                        .parse::<f64>()
                        .unwrap()
                        * 1e3
                }
                "delta" => {
                    p.delta = v
                        .strip_suffix("Mbps")
                        .expect("delta in Mbps")
                        .parse::<f64>()
                        .unwrap()
                        * 1e6
                }
                "counters" => p.counters = v.parse().unwrap(),
                "background" => p.background = Some(v.parse().unwrap()),
                "share" => p.fill = v == "fill",
                "vc" => p.vc = v.parse().unwrap(),
                "vc_max" => p.vc_max = v.parse().unwrap(),
                "task_size" => p.granted = v == "granted",
                other => panic!("the reference does not read baraat's '{other}'"),
            }
        }
        assert!(
            threshold_given,
            "give baraat's threshold in the reference's specs"
        );
        p
    }
}

/// Task ids from Baraat's counters, kept as plain numbers: a coflow from
/// the background id on takes the next background id (from 2^62), any
/// other the next id of counter `id % counters`; given in (arrival, id)
/// order as coflows are released.
#[derive(Debug, Clone)]
pub struct TaskIds {
    task: Vec<Option<u64>>,
    next_id: Vec<u64>,
    next_background: u64,
    counters: u64,
    background: Option<u64>,
}

impl TaskIds {
    /// No ids yet, for `n_coflows` coflows.
    pub fn new(p: &BaraatParams, n_coflows: usize) -> TaskIds {
        TaskIds {
            task: vec![None; n_coflows],
            next_id: (1..=p.counters).collect(),
            next_background: 1 << 62,
            counters: p.counters,
            background: p.background,
        }
    }

    /// Coflow `c`'s task id, once released.
    pub fn of(&self, c: usize) -> Option<u64> {
        self.task[c]
    }

    /// Task ids for the coflows released now, in (arrival, id) order.
    pub fn assign(&mut self, sim: &RefSim) {
        let mut fresh: Vec<usize> = (0..sim.coflows.len())
            .filter(|&c| sim.coflows[c].released && self.task[c].is_none())
            .collect();
        fresh.sort_by_key(|&c| (sim.coflows[c].arrival, sim.coflows[c].id));
        for c in fresh {
            let id = sim.coflows[c].id;
            self.task[c] = Some(if self.background.is_some_and(|bg| id >= bg) {
                self.next_background += 1;
                self.next_background - 1
            } else {
                let k = (id % self.counters) as usize;
                self.next_id[k] += self.counters;
                self.next_id[k] - self.counters
            });
        }
    }
}

/// Baraat's state, kept literally as the paper's counters: per link and
/// task the demand sum, the flow count and the bytes reserved; per link the
/// sum of allocations; per flow its demand, least NR and the AR of every
/// link of its path.
#[derive(Debug, Clone)]
pub struct Baraat {
    p: BaraatParams,
    ids: TaskIds,
    setup: Vec<bool>,
    /// Whether a set-up flow's FIN has been handled.
    gone: Vec<bool>,
    demand: Vec<f64>,
    min_nr: Vec<f64>,
    ar: HashMap<(usize, u32), f64>,
    d: HashMap<(u32, u64), f64>,
    n: HashMap<(u32, u64), u32>,
    a: HashMap<u32, f64>,
    reserved: HashMap<(u32, u64), f64>,
    /// Virtual capacity of the links that carried flows in the last round.
    vcap: HashMap<u32, f64>,
}

/// `baraat:threshold=..;rtt=..us;delta=..Mbps;counters=..;background=..;share=..;vc=..;vc_max=..;task_size=..`.
pub fn policy(spec: &str, case: &Case) -> Box<dyn ReferencePolicy> {
    let p = BaraatParams::parse(spec, case);
    let n_flows = case.n_flows();
    Box::new(Baraat {
        p,
        ids: TaskIds::new(&p, case.coflows.len()),
        setup: vec![false; n_flows],
        gone: vec![false; n_flows],
        demand: vec![0.0; n_flows],
        min_nr: vec![f64::INFINITY; n_flows],
        ar: HashMap::new(),
        d: HashMap::new(),
        n: HashMap::new(),
        a: HashMap::new(),
        reserved: HashMap::new(),
        vcap: HashMap::new(),
    })
}

impl Baraat {
    /// One round at the current instant; the rates until the next.
    fn round(&mut self, sim: &RefSim) -> Vec<f64> {
        let b = self;
        let p = b.p;
        // Heavy at the threshold within 1e-6 relative (never if infinite).
        let thr = if p.threshold.is_finite() {
            p.threshold - 1e-6 * p.threshold.max(1.0)
        } else {
            f64::INFINITY
        };
        let task_of = |f: usize| b.ids.of(sim.flows[f].coflow).expect("released");
        // FIN of the flows that finished since the last round: their demand,
        // count and allocation leave the counters.
        for f in 0..sim.flows.len() {
            if b.setup[f] && sim.flows[f].done && !b.gone[f] {
                b.gone[f] = true;
                let t = task_of(f);
                for &l in &sim.flows[f].path {
                    *b.d.get_mut(&(l, t)).unwrap() -= b.demand[f];
                    *b.n.get_mut(&(l, t)).unwrap() -= 1;
                    *b.a.get_mut(&l).unwrap() -= b.ar[&(f, l)];
                }
            }
        }
        let active = sim.active_flows();
        // Algorithm 2 at every sender.
        let mut new_demand = vec![0.0; sim.flows.len()];
        for &f in &active {
            let nic = sim.caps[sim.flows[f].path[0] as usize];
            let mut d = nic.min(sim.flows[f].rem * 8.0 / (p.rtt * 1e-9));
            // Rates within 1e-9 relative are equal (the module doc).
            if b.setup[f] && b.min_nr[f] < b.demand[f] - 1e-9 * b.demand[f].max(1.0) {
                d = d.min(b.min_nr[f] + p.delta);
            }
            new_demand[f] = d;
        }
        // Algorithm 1 at every link, flows in (task id, flow) order.
        let mut new_min_nr = vec![f64::INFINITY; sim.flows.len()];
        let mut links: Vec<u32> = active
            .iter()
            .flat_map(|&f| sim.flows[f].path.clone())
            .collect();
        links.sort_unstable();
        links.dedup();
        // A link without flows in a round starts again from its capacity.
        b.vcap.retain(|l, _| links.contains(l));
        for &l in &links {
            let c = *b.vcap.entry(l).or_insert(sim.caps[l as usize]);
            let mut here: Vec<usize> = active
                .iter()
                .copied()
                .filter(|&f| sim.flows[f].path.contains(&l))
                .collect();
            here.sort_by_key(|&f| (task_of(f), f));
            let mut tasks: Vec<u64> = here.iter().map(|&f| task_of(f)).collect();
            tasks.dedup();
            // Classifier: runs of tasks where all but the last are heavy.
            let mut class_of: HashMap<u64, usize> = HashMap::new();
            let mut k = 0;
            for &t in &tasks {
                class_of.insert(t, k);
                let reserved = b.reserved.get(&(l, t)).copied().unwrap_or(0.0);
                if reserved < thr {
                    k += 1;
                }
            }
            for &f in &here {
                let t = task_of(f);
                let kf = class_of[&t];
                if b.setup[f] {
                    // Line 1: return the previous demand and allocation.
                    *b.d.get_mut(&(l, t)).unwrap() -= b.demand[f];
                    *b.a.get_mut(&l).unwrap() -= b.ar[&(f, l)];
                } else {
                    *b.n.entry((l, t)).or_insert(0) += 1;
                    b.d.entry((l, t)).or_insert(0.0);
                    b.a.entry(l).or_insert(0.0);
                }
                let sum = |want: &dyn Fn(usize) -> bool| -> f64 {
                    tasks
                        .iter()
                        .filter(|t| want(class_of[t]))
                        .map(|t| b.d.get(&(l, *t)).copied().unwrap_or(0.0))
                        .sum()
                };
                let higher = sum(&|k| k < kf);
                let class_demand = sum(&|k| k == kf);
                let flows_in_class: u32 = tasks
                    .iter()
                    .filter(|t| class_of[t] == kf)
                    .map(|t| b.n.get(&(l, *t)).copied().unwrap_or(0))
                    .sum();
                let dem = new_demand[f];
                let class_avl = (c - higher).max(0.0);
                let avail_share = (class_avl - class_demand).max(0.0);
                // Within 1e-9 relative to the larger of D and C (the
                // module doc): AvailShare's noise is on C's scale.
                let nr = if avail_share - dem > 1e-9 * dem.max(c).max(1.0) {
                    dem
                } else if p.fill {
                    (class_avl / flows_in_class as f64).max(avail_share)
                } else {
                    class_avl / flows_in_class as f64
                };
                let ar = nr.min((c - b.a[&l]).max(0.0));
                // Line 12.
                *b.d.get_mut(&(l, t)).unwrap() += dem;
                *b.a.get_mut(&l).unwrap() += ar;
                b.ar.insert((f, l), ar);
                new_min_nr[f] = new_min_nr[f].min(nr);
                if p.granted {
                    *b.reserved.entry((l, t)).or_insert(0.0) += ar * p.rtt * 1e-9 / 8.0;
                }
            }
        }
        let mut rate = vec![0.0; sim.flows.len()];
        for &f in &active {
            b.setup[f] = true;
            b.demand[f] = new_demand[f];
            b.min_nr[f] = new_min_nr[f];
            rate[f] = sim.flows[f]
                .path
                .iter()
                .map(|&l| b.ar[&(f, l)])
                .fold(f64::INFINITY, f64::min);
        }
        if p.vc > 0.0 {
            // Virtual capacity: moves by vc * (C - y), y the offered rate
            // (|C - y| within 1e-9 relative counts as 0), kept in
            // [C, vc_max * C]. A flow sends its last bytes this round if
            // its rate carries all it has left in one RTT (within 1e-9
            // relative). A link offered y > C passes those in full and
            // scales the others to what is left (if they alone exceed C:
            // C / their sum, the others 0); a flow gets the least factor
            // of its path.
            let rtt_s = p.rtt * 1e-9;
            let last: Vec<bool> = (0..sim.flows.len())
                .map(|f| {
                    let buffered = sim.flows[f].rem.max(0.0) * 8.0 / rtt_s;
                    rate[f] > 0.0 && rate[f] >= buffered - 1e-9 * buffered.max(1.0)
                })
                .collect();
            let mut factor: HashMap<(u32, bool), f64> = HashMap::new();
            for &l in &links {
                let c = sim.caps[l as usize];
                let on_l = |f: &&usize| sim.flows[**f].path.contains(&l);
                let y: f64 = active.iter().filter(on_l).map(|&f| rate[f]).sum();
                let y_last: f64 = active
                    .iter()
                    .filter(on_l)
                    .filter(|&&f| last[f])
                    .map(|&f| rate[f])
                    .sum();
                let err = if (c - y).abs() > 1e-9 * c { c - y } else { 0.0 };
                let v = b.vcap[&l];
                b.vcap.insert(l, (v + p.vc * err).clamp(c, c * p.vc_max));
                let (f_last, f_rest) = if y <= c {
                    (1.0, 1.0)
                } else if y_last <= c {
                    (1.0, (c - y_last) / (y - y_last))
                } else {
                    (c / y_last, 0.0)
                };
                factor.insert((l, true), f_last);
                factor.insert((l, false), f_rest);
            }
            for &f in &active {
                rate[f] *= sim.flows[f]
                    .path
                    .iter()
                    .map(|&l| factor[&(l, last[f])])
                    .fold(1.0, f64::min);
            }
        }
        if !p.granted {
            // What each flow sends this round (at most what it has left)
            // counts toward its task's bytes at every link of its path.
            for &f in &active {
                let bytes = (rate[f] * p.rtt * 1e-9 / 8.0).min(sim.flows[f].rem.max(0.0));
                for &l in &sim.flows[f].path {
                    *b.reserved.entry((l, task_of(f))).or_insert(0.0) += bytes;
                }
            }
        }
        rate
    }
}

impl ReferencePolicy for Baraat {
    fn prepare(&mut self, sim: &mut RefSim, _t: f64) {
        self.ids.assign(sim);
    }

    fn reallocates(&self, t: f64, _coflow_event: bool) -> bool {
        // Rates change only at rounds (a flow that started since keeps 0,
        // one that finished dropped out). An instant one with a round is
        // that round (`same_instant`: fuzz seed 2292003661202104745, a flow
        // released by a Starts-After parent's completion stood 4e-9 ns
        // after its round and would have waited one more RTT).
        same_instant((t / self.p.rtt).round() * self.p.rtt, t)
    }

    fn allocate(&mut self, sim: &RefSim) -> Vec<f64> {
        self.round(sim)
    }

    fn next_instant(&self, _sim: &RefSim, t: f64, _active: &[usize]) -> f64 {
        // The round after the one `t` is (or is one instant with).
        (((t + SAME_INSTANT_NS) / self.p.rtt).floor() + 1.0) * self.p.rtt
    }
}
