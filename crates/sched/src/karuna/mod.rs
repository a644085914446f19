//! `karuna`: deadline and non-deadline flows together (Chen, Chen, Mao,
//! Hu, Zhang and Chen, "Scheduling Mix-flows in Commodity Datacenters with
//! Karuna", SIGCOMM 2016), with its baselines `pias` (Bai et al., NSDI
//! 2015), `pfabric-edf` (pFabric's mix-flow rule, SIGCOMM 2013, 4.1) and
//! `edf-sjf`.
//!
//! Flow types (Karuna 2.1; [`coflowkit_model::FlowSpec::karuna_type`]):
//! type 1 has a deadline (and a known size), type 2 a known size and no
//! deadline, type 3 neither. Eight strict-priority queues, served in order,
//! each max-min fair among its flows on what the queues before it left
//! (DCTCP's ideal):
//!
//! * Type 1 in queue 1, each at most its MCP rate: the minimal rate that
//!   meets its deadline, remaining bytes over time left, re-evaluated every
//!   RTT (`rtt=100us`) on the grid `start + k * rtt` of the flow's own start
//!   and held in between, never below a floor of two 1,460-byte segments
//!   per RTT (the authors' prototype); a flow past its deadline drops to the
//!   floor and keeps sending (the miss is counted by the metrics).
//! * Type 2 in queues 2..8 by total size through 6 split thresholds: a flow
//!   of size `s` goes to queue `2 + #{t : s > t}`.
//! * Type 3 starts in queue 2 and is demoted by bytes sent through 6 sieve
//!   thresholds (PIAS): queue `2 + #{t : sent >= t}`. The scheduler asks to
//!   be woken at the instant a flow's bytes sent reach its next threshold at
//!   its current rate (rounded up to the nanosecond), so demotion happens
//!   exactly then, as `fifo-lm` does for its heavy threshold.
//! * Starvation (`starvation=DUR`, off by default): a type-2 or type-3 flow
//!   given rate 0 for `DUR` is promoted one queue (type 2; never above
//!   queue 2) or has its bytes-sent count reset to 0 (type 3), as the
//!   prototype did after three consecutive timeouts; the clock starts again.
//!   Rates are constant between events, so "no progress since `t0`" is exact
//!   and the promotion is a timer at `t0 + DUR`.
//!
//! Thresholds: PIAS's published defaults are 7 thresholds for 8 queues
//! (web search, in 1,460-byte segments: 46, 1084, 1717, 1943, 1989, 1999,
//! 2001; data mining at load 0.9: 750, 1083, 1416, 13705, 14952, 21125,
//! 28253). The Karuna issue text lists these 7 numbers for Karuna's 6
//! (Karuna keeps queue 1 for type 1 and has 7 queues for types 2 and 3;
//! the seed's text stops before the thresholds). `pias` uses all 7 over 8
//! queues; `karuna` takes the first 6 of a preset (the 7th would split the
//! last queue, which has no queue below it). `split=` and `sieve=` take
//! `web`, `mining`, `auto@LOAD` (derived from the workload's flow sizes at
//! that load, [`crate::karuna_thresholds`]) or 6 sizes `B1/B2/../B6` (ascending; bytes or with a
//! unit).
//!
//! On the big switch, without starvation and while no flow has a deadline,
//! `karuna` and `pias` keep each queue's flows grouped by path from one
//! event to the next and re-read a flow's queue only when it started or
//! its demand's clock says it may have reached its threshold
//! (`QueueDemands`). A queue whose demands and residual (on its links) did
//! not change keeps its last solve; the last queue, where FB2010's long
//! flows all end up, is a port-count matrix solved as `fair` solves the big
//! switch, its members in the rate group of their bottleneck port, so that
//! a level that moves is one group rate, not a rate per member
//! (`LastQueue`; the demands whose bottleneck port flipped are found from
//! the ports sorted by level, not by a walk of every demand at a port whose
//! level moved). The upper queues are the full walk's, bit for bit; the
//! last queue's rates are the same max-min rates up to float rounding, and
//! its members' progress is the engine's group clocks instead of per-flow
//! sums (debug builds check each solve against `MaxMin`; the reference
//! suite checks the whole, and FB2010's per-coflow CCTs move by a few
//! nanoseconds, docs/lab/benchmarks-history.md).
//!
//! `pias` is this scheduler with every flow type 3 and 8 queues for them
//! (`Knows = KnowsSent`: it never reads a size). `pfabric-edf` and
//! `edf-sjf` are in [`EdfFirst`].

pub mod host;
pub mod pias;

use crate::descriptor::{Kind, Needs, Param, Params, Parts, SchedulerDescriptor};
use crate::greedy::SortedFlows;
use crate::grid::grid_ends;
use crate::karuna_thresholds::{derive_thresholds, empirical_points, ThresholdKind};
use crate::spec::{parse_bytes, Hint, SchedulerError, WorkloadHints};
use crate::AnyScheduler;
use crate::{
    Allocation, Changes, Clairvoyant, FlowIdx, KnowsSent, KnowsSizes, Observed, PathIdx, Scheduler,
};
use coflowkit_alloc::{BipartiteMaxMin, MaxMin};
use coflowkit_model::stats::BYTES_TIE;
#[cfg(debug_assertions)]
use coflowkit_model::SNAP_NS;
use coflowkit_model::{ceil_ns_time, Dur, LinkId, Time};
use std::collections::BTreeSet;

/// The `starvation` parameter of `karuna` and `pias`.
const STARVATION_PARAM: Param = Param {
    key: "starvation",
    kind: Kind::Duration,
    default: "none",
    unit: "",
    help: "promote a flow without progress for this long (none: never)",
};

/// `karuna`: mix-flows over 8 strict queues.
pub const KARUNA: SchedulerDescriptor = SchedulerDescriptor {
    cost: 3.0,
    parts: Parts {
        host: Some(crate::karuna::host::build),
        ..Parts::NONE
    },
    name: "karuna",
    description:
        "mix-flows (Karuna): deadline flows at their minimal rate in queue 1, known sizes \
                  split and unknown sizes sieved through queues 2-8",
    paper: "Chen et al., SIGCOMM 2016, 2.1-3; thresholds from PIAS (NSDI 2015)",
    params: &[
        Param {
            key: "split",
            kind: Kind::List,
            default: "web",
            unit: "",
            help: "type-2 thresholds: web, mining, auto@LOAD (flow sizes, a hint) or B1/../B6",
        },
        Param {
            key: "sieve",
            kind: Kind::List,
            default: "web",
            unit: "",
            help: "type-3 thresholds: web, mining, auto@LOAD (flow sizes, a hint) or B1/../B6",
        },
        Param {
            key: "rtt",
            kind: Kind::Duration,
            default: "100us",
            unit: "",
            help: "how often a deadline flow's minimal rate is re-evaluated",
        },
        STARVATION_PARAM,
        crate::karuna::host::REPACE_PARAM,
        crate::karuna::host::LEAD_PARAM,
    ],
    needs: Needs {
        hints: &[Hint::FlowSizes],
        deadlines: true,
        ..Needs::SIZES
    },
    build: |p, hints| {
        Ok(AnyScheduler::Clairvoyant(Box::new(Karuna::new(
            karuna_config(p, hints, false)?,
        ))))
    },
};

/// `pias`: every flow demoted through 8 strict queues by bytes sent.
pub const PIAS: SchedulerDescriptor = SchedulerDescriptor {
    cost: 6.0,
    parts: Parts {
        host: Some(crate::karuna::pias::build),
        ..Parts::NONE
    },
    name: "pias",
    description: "every flow demoted through 8 strict queues by bytes sent (PIAS)",
    paper: "Bai et al., NSDI 2015, 3.1; Karuna's baseline",
    params: &[
        Param {
            key: "thresholds",
            kind: Kind::List,
            default: "web",
            unit: "",
            help: "web, mining, auto@LOAD (flow sizes, a hint) or B1/../B7",
        },
        STARVATION_PARAM,
    ],
    needs: Needs {
        hints: &[Hint::FlowSizes],
        ..Needs::NOTHING
    },
    build: |p, hints| {
        let config = karuna_config(p, hints, true)?;
        Ok(AnyScheduler::NonClairvoyant(Box::new(Pias::new(
            config.sieve,
            config.starvation,
        ))))
    },
};

/// `pfabric-edf`: deadline flows by earliest deadline, then shortest remaining.
pub const PFABRIC_EDF: SchedulerDescriptor = SchedulerDescriptor {
    cost: 20.0,
    parts: Parts::NONE,
    name: "pfabric-edf",
    description: "per flow, strict: deadline flows by earliest deadline, then shortest remaining \
                  (pFabric)",
    paper: "pFabric (SIGCOMM 2013) 4.1; Karuna's baseline",
    params: &[],
    needs: Needs {
        deadlines: true,
        ..Needs::SIZES
    },
    build: |_, _| {
        Ok(AnyScheduler::Clairvoyant(Box::new(EdfFirst::new(
            Rest::Remaining,
        ))))
    },
};

/// `edf-sjf`: deadline flows by earliest deadline, then shortest total size.
pub const EDF_SJF: SchedulerDescriptor = SchedulerDescriptor {
    cost: 4.6,
    parts: Parts::NONE,
    name: "edf-sjf",
    description: "per flow, strict: deadline flows by earliest deadline, then shortest total size",
    paper: "Karuna 2.2 (Figs. 1-2)",
    params: &[],
    needs: Needs {
        deadlines: true,
        ..Needs::SIZES
    },
    build: |_, _| {
        Ok(AnyScheduler::Clairvoyant(Box::new(EdfFirst::new(
            Rest::Size,
        ))))
    },
};

/// Karuna's (or, with `pias`, PIAS's) configuration from a spec's
/// parameters, checked.
pub(crate) fn karuna_config(
    p: &Params<'_>,
    hints: &WorkloadHints,
    pias: bool,
) -> Result<KarunaConfig, SchedulerError> {
    let mut config = if pias {
        KarunaConfig::pias()
    } else {
        KarunaConfig::karuna()
    };
    if !pias {
        if let Some(rtt) = p.dur("rtt")? {
            config.rtt = rtt;
        }
    }
    if let Some(v) = p.given("starvation") {
        config.starvation = match v {
            "none" => None,
            _ => Some(
                p.positive_dur("starvation", "must be above 0 (or none)")?
                    .unwrap_or_default(),
            ),
        };
    }
    // Last: `auto@LOAD` needs the workload, and every other key is checked
    // without it.
    let keep = if pias { 7 } else { 6 };
    let lists: &[(&str, ThresholdKind)] = if pias {
        &[("thresholds", ThresholdKind::Sieve)]
    } else {
        &[
            ("split", ThresholdKind::Split),
            ("sieve", ThresholdKind::Sieve),
        ]
    };
    for &(key, kind) in lists {
        if let Some(v) = p.given(key) {
            let t = thresholds(p, key, v, keep, hints, kind)?;
            match kind {
                ThresholdKind::Split => config.split = t,
                ThresholdKind::Sieve => config.sieve = t,
            }
        }
    }
    config.validate().map_err(|(key, message)| {
        p.bad(
            if pias && key == "sieve" {
                "thresholds"
            } else {
                key
            },
            message,
        )
    })?;
    Ok(config)
}

/// Karuna's or PIAS's thresholds (bytes) of `key`: a preset (`web`,
/// `mining`; its first `keep`), `auto@LOAD` (`keep` derived from the
/// workload's flow sizes at that load, [`derive_thresholds`]) or `keep`
/// sizes `B1/B2/..` (PIAS: 1 to 7; checked by [`KarunaConfig::validate`]).
fn thresholds(
    p: &Params<'_>,
    key: &str,
    v: &str,
    keep: usize,
    hints: &WorkloadHints,
    kind: ThresholdKind,
) -> Result<Vec<f64>, SchedulerError> {
    if let Some(mut t) = preset(v) {
        t.truncate(keep);
        return Ok(t);
    }
    if let Some(load) = v.strip_prefix("auto@") {
        let load: f64 = load
            .parse()
            .ok()
            .filter(|l| *l > 0.0 && *l < 1.0)
            .ok_or_else(|| {
                p.bad(
                    key,
                    format!("'{v}': auto@LOAD takes a load in (0, 1), e.g. auto@0.8"),
                )
            })?;
        if hints.flow_sizes.is_empty() {
            return Err(p.needs(
                key,
                Hint::FlowSizes,
                format!("'{v}': the workload has no flow sizes to derive from"),
            ));
        }
        return derive_thresholds(&empirical_points(&hints.flow_sizes), load, keep, kind)
            .map_err(|m| p.bad(key, format!("'{v}': {m}")));
    }
    let t = v
        .split('/')
        .map(|x| parse_bytes(x.trim()).ok_or_else(|| p.bad(key, format!("'{x}' is not a size"))))
        .collect::<Result<Vec<f64>, _>>()?;
    // Karuna's split and sieve fill its 6 queues; PIAS may use fewer of its
    // 8 (the testbed's `--thresholds`): 1 to 7.
    let min = if kind == ThresholdKind::Sieve && keep == 7 {
        1
    } else {
        keep
    };
    if !(min..=keep).contains(&t.len()) {
        let expected = if min == keep {
            keep.to_string()
        } else {
            format!("{min} to {keep}")
        };
        return Err(p.bad(
            key,
            format!(
                "'{v}': {} thresholds, expected {expected} (or web, mining, auto@LOAD)",
                t.len()
            ),
        ));
    }
    Ok(t)
}

/// One TCP segment, bytes (the unit of PIAS's thresholds).
pub const SEGMENT: f64 = 1460.0;
/// Queues per port.
pub const QUEUES: usize = 8;
/// PIAS's thresholds for the web-search workload, in segments.
pub const WEB_SEARCH: [u64; 7] = [46, 1084, 1717, 1943, 1989, 1999, 2001];
/// PIAS's thresholds for the data-mining workload at load 0.9, in segments.
pub const DATA_MINING: [u64; 7] = [750, 1083, 1416, 13705, 14952, 21125, 28253];

/// A preset by name (`web`, `mining`), in bytes, all 7 thresholds.
pub fn preset(name: &str) -> Option<Vec<f64>> {
    let units: &[u64] = match name {
        "web" | "web-search" => &WEB_SEARCH,
        "mining" | "data-mining" => &DATA_MINING,
        _ => return None,
    };
    Some(units.iter().map(|&u| u as f64 * SEGMENT).collect())
}

/// How Karuna (or PIAS) is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct KarunaConfig {
    /// How often a type-1 flow's MCP rate is re-evaluated.
    pub rtt: Dur,
    /// Split thresholds for type 2, bytes, ascending.
    pub split: Vec<f64>,
    /// Sieve thresholds for type 3, bytes, ascending.
    pub sieve: Vec<f64>,
    /// How long a flow may go without progress before it is promoted.
    pub starvation: Option<Dur>,
    /// PIAS: every flow type 3, its queues starting at queue 1.
    pub all_type3: bool,
}

impl KarunaConfig {
    /// Karuna with the web-search presets (first 6), RTT 100 us.
    pub fn karuna() -> KarunaConfig {
        let mut web = preset("web").unwrap_or_default();
        web.truncate(6);
        KarunaConfig {
            rtt: Dur(100_000),
            split: web.clone(),
            sieve: web,
            starvation: None,
            all_type3: false,
        }
    }

    /// PIAS with the web-search preset (all 7 thresholds).
    pub fn pias() -> KarunaConfig {
        KarunaConfig {
            split: vec![],
            sieve: preset("web").unwrap_or_default(),
            all_type3: true,
            ..KarunaConfig::karuna()
        }
    }

    /// The queue types 2 and 3 start from (0-based).
    fn base(&self) -> usize {
        usize::from(!self.all_type3)
    }

    /// Checks thresholds: positive, ascending, few enough for 8 queues.
    /// The error names the key (`split`, `sieve`, `rtt`) and what is wrong.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.rtt.0 == 0 {
            return Err(("rtt", "an RTT must be above 0".into()));
        }
        let room = QUEUES - 1 - self.base();
        for (key, t) in [("split", &self.split), ("sieve", &self.sieve)] {
            if t.len() > room {
                return Err((key, format!("{} thresholds, at most {room}", t.len())));
            }
            if t.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
                return Err((key, "thresholds must be positive sizes".into()));
            }
            if t.windows(2).any(|w| w[0] >= w[1]) {
                return Err((key, "thresholds must be strictly ascending".into()));
            }
        }
        Ok(())
    }

    /// The floor rate of a type-1 flow: two segments per RTT, bits/s.
    pub fn floor_bps(&self) -> f64 {
        2.0 * SEGMENT * 8.0 * 1e9 / self.rtt.0 as f64
    }
}

/// Whether `sent` bytes reach threshold `t` (within float noise).
fn reaches(sent: f64, t: f64) -> bool {
    sent >= t - 1e-6 * t.max(1.0)
}

/// The state and the rule shared by `karuna` and `pias`.
#[derive(Debug)]
struct Core {
    config: KarunaConfig,
    // Per flow: bytes sent at the last reset (type 3), promotions (type 2),
    // since when it has had rate 0 (NEVER: it has a rate), its MCP rate
    // (bits/s) and when that is next re-evaluated (NEVER: not yet).
    offset: Vec<f64>,
    promoted: Vec<u8>,
    zero_since: Vec<Time>,
    mcp: Vec<f64>,
    next_eval: Vec<Time>,
    order: Vec<(u8, FlowIdx)>,
    solver: MaxMin,
    residual: Vec<f64>,
    fast: QueueDemands,
    // Whether a deadline flow was seen (then every call walks every flow).
    general: bool,
}

impl Core {
    fn new(config: KarunaConfig) -> Core {
        Core {
            config,
            offset: vec![],
            promoted: vec![],
            zero_since: vec![],
            mcp: vec![],
            next_eval: vec![],
            order: vec![],
            solver: MaxMin::default(),
            residual: vec![],
            fast: QueueDemands::default(),
            general: false,
        }
    }

    /// The flow's type (1, 2, 3) as this scheduler sees it.
    fn kind(&self, obs: &Observed<'_>, sizes: Option<&Clairvoyant<'_>>, f: FlowIdx) -> u8 {
        match sizes {
            None => 3,
            Some(_) if obs.deadline(f).is_some() => 1,
            Some(_) if obs.size_known(f) => 2,
            Some(_) => 3,
        }
    }

    /// The queue (0-based) of a type-2 or type-3 flow: by size through the
    /// split thresholds (less its promotions), or by bytes sent since its
    /// last reset through the sieve thresholds.
    fn queue(
        &self,
        kind: u8,
        obs: &Observed<'_>,
        sizes: Option<&Clairvoyant<'_>>,
        f: FlowIdx,
    ) -> usize {
        let fi = f as usize;
        if kind == 2 {
            let size = sizes.map_or(0.0, |v| v.size(f));
            let by_size = self.config.split.iter().filter(|&&t| size > t).count();
            let promoted = self.promoted.get(fi).copied().unwrap_or(0);
            self.config.base() + by_size.saturating_sub(usize::from(promoted))
        } else {
            let sent = obs.sent(f) - self.offset.get(fi).copied().unwrap_or(0.0);
            let reached = self.config.sieve.iter().filter(|&&t| reaches(sent, t));
            self.config.base() + reached.count()
        }
    }

    fn decide(
        &mut self,
        now: Time,
        obs: Observed<'_>,
        sizes: Option<Clairvoyant<'_>>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        let fast = self.config.starvation.is_none();
        if fast && !self.general && obs.fabric().is_big_switch() {
            if let Some(wake) = self.decide_fast(now, obs, sizes, changes, out) {
                return wake;
            }
        }
        let n = obs.n_flows();
        if self.offset.len() < n {
            self.offset.resize(n, 0.0);
            self.promoted.resize(n, 0);
            self.zero_since.resize(n, Time::NEVER);
            self.mcp.resize(n, 0.0);
            self.next_eval.resize(n, Time::NEVER);
        }
        let base = self.config.base();
        let rtt = self.config.rtt.0;
        let floor = self.config.floor_bps();
        self.order.clear();
        for &f in obs.active_flows() {
            let fi = f as usize;
            let kind = self.kind(&obs, sizes.as_ref(), f);
            // Starvation: promote (type 2) or reset (type 3).
            if let Some(t) = self.config.starvation {
                let z = self.zero_since[fi];
                if kind != 1 && z != Time::NEVER && now >= z + t {
                    if kind == 2 {
                        self.promoted[fi] = self.promoted[fi].saturating_add(1);
                    } else {
                        self.offset[fi] = obs.sent(f);
                    }
                    self.zero_since[fi] = now;
                }
            }
            let q = match kind {
                1 => {
                    if self.next_eval[fi] == Time::NEVER || now >= self.next_eval[fi] {
                        let deadline = obs.deadline(f).unwrap_or(Time::NEVER);
                        let rem = sizes.as_ref().map_or(0.0, |v| v.remaining(f));
                        self.mcp[fi] = if deadline > now {
                            (rem * 8e9 / (deadline.0 - now.0) as f64).max(floor)
                        } else {
                            floor
                        };
                        let start = obs.start(f).0;
                        let k = (now.0 - start) / rtt + 1;
                        self.next_eval[fi] = Time(start + k * rtt);
                    }
                    0
                }
                _ => self.queue(kind, &obs, sizes.as_ref(), f),
            };
            self.order.push((q as u8, f));
        }
        self.order.sort_unstable();
        self.residual.clear();
        self.residual.extend_from_slice(obs.capacities());
        let mut i = 0;
        while i < self.order.len() {
            let q = self.order[i].0;
            let j = i + self.order[i..].iter().take_while(|x| x.0 == q).count();
            self.solver.clear();
            for &(_, f) in &self.order[i..j] {
                let cap = if q == 0 && !self.config.all_type3 {
                    self.mcp[f as usize]
                } else {
                    f64::INFINITY
                };
                self.solver.push(obs.path(f).iter().copied(), 1.0, 1, cap);
            }
            let rates = self.solver.solve(&mut self.residual);
            for (&(_, f), &r) in self.order[i..j].iter().zip(rates) {
                out.set_rate(f, r);
                out.set_class(f, u32::from(q));
            }
            i = j;
        }
        // Timers: MCP re-evaluation, starvation, the next sieve threshold.
        let mut wake = Time::NEVER;
        for &(q, f) in &self.order {
            let fi = f as usize;
            let kind = self.kind(&obs, sizes.as_ref(), f);
            let r = out.rate(f);
            if kind == 1 {
                wake = wake.min(self.next_eval[fi]);
                continue;
            }
            if r > 0.0 {
                self.zero_since[fi] = Time::NEVER;
            } else if self.zero_since[fi] == Time::NEVER {
                self.zero_since[fi] = now;
            }
            if let Some(t) = self.config.starvation {
                if self.zero_since[fi] != Time::NEVER {
                    wake = wake.min(self.zero_since[fi] + t);
                }
            }
            if kind == 3 {
                if let Some(&t) = self.config.sieve.get(q as usize - base) {
                    let left = self.offset[fi] + t - obs.sent(f);
                    if let Some(at) = ceil_ns_time(now, left, r / 8e9) {
                        wake = wake.min(at);
                    }
                }
            }
        }
        (wake != Time::NEVER).then_some(wake)
    }
}

/// One queue's flows on one path: a demand of the queue's max-min.
#[derive(Debug, Default)]
struct Demand {
    queue: u8,
    path: PathIdx,
    members: Vec<FlowIdx>,
    // The per-flow rate of the last solve (NaN: none yet).
    rate: f64,
    // Members demoted by bytes sent (type 3).
    n_sieved: u32,
    // Position in `QueueDemands::by_queue[queue]`.
    at: u32,
    // The (ingress, egress) ports of its path, if it is one of those two,
    // and its places in `LastQueue::by_up` and `by_down` (last queue only).
    ends: Option<(u32, u32)>,
    up_at: u32,
    down_at: u32,
    // Last queue, solved by port levels: the port whose rate group its
    // members are in (`UP`: ingress, `DOWN`: egress, `UNSET`: none yet).
    side: u8,
    // Bytes each member has sent since the demand was made, as of `v_time`
    // (every member sends at `rate`): the demand's clock.
    v: f64,
    v_time: Time,
    // The sieved members below the last queue by the clock's reading at
    // which they reach the queue's threshold (bits of a non-negative f64):
    // the first in `least`, the others in `due`. A one-member demand (most
    // of FB2010's, one per flow of a wide coflow) then never makes a node
    // of the set, nor searches or frees one as its member comes and goes.
    due: BTreeSet<(u64, FlowIdx)>,
    least: Option<(u64, FlowIdx)>,
    // Its key in `QueueDemands::soon` (NO_KEY: not there), and whether that
    // key may be stale (it is then in `QueueDemands::stale`).
    soon: u64,
    stale: bool,
}

impl Demand {
    /// Gives the demand rate `r` from `now` (unless it has it to the bit):
    /// its clock carried to `now`, each member's rate set in `out`. True if
    /// the rate changed.
    fn rerate(&mut self, r: f64, now: Time, out: &mut Allocation) -> bool {
        if self.rate.to_bits() == r.to_bits() {
            return false;
        }
        self.v = self.clock(now);
        self.v_time = now;
        self.rate = r;
        for &f in &self.members {
            out.set_rate(f, r);
        }
        true
    }

    /// A lower bound (ns) on the instant the clock, at its rate, comes
    /// within a look's slack of reading `least` (a member's reading; the
    /// queue's threshold `t`), and on the instant any member near `least`
    /// reaches `t` by its bytes sent: a few bytes of clock and 16 ns plus
    /// 1e-8 of the interval early, far beyond the float noise of either.
    fn soon(&self, least: f64, t: f64) -> u64 {
        let margin = 3.0 * CLOCK_SLACK + 1e-6 * (t.max(1.0) + least.abs());
        let x = (least - margin - self.v) / (self.rate / 8e9);
        let at = self.v_time.0 as f64 + x - 16.0 - 1e-8 * x.abs();
        if at.is_nan() || at <= 0.0 {
            0
        } else if at >= 1.8e19 {
            u64::MAX - 1
        } else {
            at as u64
        }
    }

    /// The demand's clock at `now`.
    fn clock(&self, now: Time) -> f64 {
        if sends(self.rate) {
            self.v + self.rate / 8e9 * (now.0 - self.v_time.0) as f64
        } else {
            self.v
        }
    }

    /// The sieved members whose threshold the clock may have reached (read
    /// at `at`), up to `slack` bytes of clock early: a superset of those
    /// that did, whatever the float noise between the clock and each
    /// member's bytes sent.
    fn due_by(&self, at: f64, slack: f64) -> impl Iterator<Item = FlowIdx> + '_ {
        let bound = (at + slack + 1e-9 * at.abs()).max(0.0).to_bits();
        debug_assert!(
            self.least.is_some() || self.due.is_empty(),
            "due without a least"
        );
        debug_assert!(
            self.least.zip(self.due.first()).is_none_or(|(a, &b)| a < b),
            "a least above the rest"
        );
        let one = self.least.filter(|&(key, _)| key <= bound);
        // The rest only past the least (the set is empty for one member).
        let many = one
            .filter(|_| !self.due.is_empty())
            .map(|_| self.due.range(..=(bound, FlowIdx::MAX)));
        one.map(|(_, f)| f)
            .into_iter()
            .chain(many.into_iter().flatten().map(|&(_, f)| f))
    }

    /// Lists sieved member `f` as due at clock reading `key`.
    fn due_insert(&mut self, key: u64, f: FlowIdx) {
        match self.least {
            None => self.least = Some((key, f)),
            Some(least) if (key, f) < least => {
                self.due.insert(least);
                self.least = Some((key, f));
            }
            Some(_) => {
                self.due.insert((key, f));
            }
        }
    }

    /// Takes sieved member `f`, due at `key`, off the list.
    fn due_remove(&mut self, key: u64, f: FlowIdx) {
        if self.least == Some((key, f)) {
            self.least = self.due.pop_first();
        } else {
            self.due.remove(&(key, f));
        }
    }
}

/// Bytes of float noise allowed between a demand's clock and a member's
/// bytes sent (they add the same rates over the same intervals, in another
/// order); candidates within it are read exactly.
const CLOCK_SLACK: f64 = 1.0;

/// `karuna` and `pias` on the big switch without starvation and without
/// deadline flows, kept from one event to the next: each queue's flows
/// grouped by path (a demand with a count), a flow's queue read again only
/// when it may have moved (it started, or it is demoted by bytes sent and
/// its demand's clock says it may have reached its threshold), and a rate
/// written only where its demand's rate moved.
///
/// Demotions are found as events rather than by a scan: the members of a
/// demand all send at its rate, so each keeps, while it stays, the reading
/// of the demand's clock (bytes per member since the demand was made) at
/// which it reaches its queue's threshold; an event reads the bytes sent
/// only of the members whose reading the clock has passed (less a byte of
/// slack), and the earliest threshold crossing of a demand only of its
/// members within a byte or two of its least reading. Nor are the demands
/// scanned for either: they are kept in order of a lower bound on the
/// instant their clock comes within a few bytes of their least reading
/// ([`Demand::soon`]; a sorted list into which each event's re-keyed
/// demands are merged, [`QueueDemands::refresh_soon`]), so an event looks
/// only at those whose bound has come (in the scan's order), and the next
/// crossing is searched from the front of that order until the bound passes
/// the earliest found, a demand's crossing found at an earlier call read
/// back while the demand is not re-keyed (`next_at`: the same instant, up
/// to the rounding to the nanosecond; FB2010's per-coflow CCTs are the
/// same to the bit). Debug builds check both against the scan (the kept
/// crossings within [`SNAP_NS`] of those found afresh), and that the list
/// stays sorted. What they read is
/// what the full walk reads, so the queues and timer are its own. The
/// queues but the last are solved as [`Core::decide`] solves them, bit
/// for bit (or replayed, [`KeptSolve`]): no demand has a cap here, and
/// [`MaxMin::set_one_by_one`] takes a demand's use flow by flow, so a
/// path's flows pushed as one demand get what they get pushed apart. The
/// last queue is [`LastQueue`].
#[derive(Debug, Default)]
struct QueueDemands {
    // Per flow: its demand (NONE: not in one) and its place in its members.
    demand_of: Vec<u32>,
    slot: Vec<u32>,
    // Per flow: whether bytes sent demote it (type 3), its reading in its
    // demand's `due` (NONE as bits: none), and its bytes sent as read in
    // call `epoch`.
    sieved: Vec<bool>,
    due_key: Vec<u64>,
    sent: Vec<(u32, f64)>,
    epoch: u32,
    // Per (queue, path): the demand (NONE: none).
    index: Vec<u32>,
    demands: Vec<Demand>,
    free: Vec<u32>,
    by_queue: [Vec<u32>; QUEUES],
    // Flows that joined a demand in this call (their rate is written anew).
    joined: Vec<FlowIdx>,
    moved: Vec<FlowIdx>,
    solver: MaxMin,
    residual: Vec<f64>,
    // Per queue: its last solve, kept while its demands and the residual
    // on its links stay the same to the bit.
    kept: [KeptSolve; QUEUES],
    // Per link: the call of `KeptSolve::record` that last listed it.
    link_stamp: Vec<u32>,
    stamp: u32,
    last: LastQueue,
    // The demands that send and have a sieved member below a threshold, by
    // [`Demand::soon`] (a sorted list: [`QueueDemands::refresh_soon`]): an
    // event looks only at those whose bound it has reached, and the next
    // threshold crossing is searched among the first ones, not across
    // every demand.
    soon: Vec<(u64, u32)>,
    stale: Vec<u32>,
    // Scratch of `refresh_soon`: the stale demands' old and new entries,
    // and the merged list.
    soon_gone: Vec<(u64, u32)>,
    soon_new: Vec<(u64, u32)>,
    soon_merged: Vec<(u64, u32)>,
    // Per demand: whether its entry in `soon` is among those going out
    // (set only during a merge of `refresh_soon`).
    soon_out: Vec<bool>,
    looks: Vec<u64>,
    // Per demand: its next threshold crossing as found at the call that
    // found it (0: none found since it was last re-keyed). The instant a
    // member reaches its threshold does not move while its demand keeps
    // its rate and members (and so its key in `soon`): found again at a
    // later call, it is the same instant up to the rounding to the
    // nanosecond. FB2010's wide coflows put hundreds of one-flow demands
    // at the same crossing, each read at every call until they cross (16.6
    // M reads over the trace, each a member's bytes sent and a division).
    next_at: Vec<u64>,
    ready: bool,
}

/// The last queue as a count matrix of the big switch's ports: nothing is
/// served after it, so only its rates matter, and those are the levels of
/// [`BipartiteMaxMin`] (the solver `fair` uses), kept as its demands come
/// and go, instead of a [`MaxMin`] solve of every demand at every event.
/// The same max-min rates up to float rounding (not bit for bit: a port's
/// residual is taken as one product, not member by member); debug builds
/// hold each solve against [`MaxMin`]'s.
///
/// A demand's rate is the lower of its two ports' levels, so its members
/// are, as in `fair`, members of the rate group of its bottleneck port
/// (ingress `s` is group `s`, egress `t` group `n + t`; the ingress when the
/// two tie), whose rate is that port's level. A solve then sets the rate of
/// each port whose level moved, and moves to the other port's group only
/// the members of the demands at such a port whose bottleneck side flipped:
/// no member's rate is written when only levels move, and the engine
/// carries the members' progress by group clocks. Which demands flipped is
/// read off the ports sorted by level, not by walking every demand at each
/// port whose level moved (FB2010's ports each have demands to most others;
/// [`QueueDemands::flips_by_levels`], which debug builds hold against the
/// walk, [`QueueDemands::flips_by_walk`]). It reads a pair's last side from
/// a copy kept in the grid beside the pair's demand (debug builds check
/// the copy against the demand's), so a look along a port's row of pairs
/// touches no demand that did not flip.
#[derive(Debug, Default)]
struct LastQueue {
    solver: Option<BipartiteMaxMin>,
    // Members of the last queue whose path is not (ingress, egress).
    off_grid: u32,
    up: Vec<f64>,
    down: Vec<f64>,
    up_level: Vec<f64>,
    down_level: Vec<f64>,
    // The levels of the last solve, and whether every demand's rate is
    // their min (false: rate every demand at the next solve).
    prev_up: Vec<f64>,
    prev_down: Vec<f64>,
    rated: bool,
    // The queue's demands on the grid by ingress and by egress port, and
    // those made since the last solve.
    by_up: Vec<Vec<Listed>>,
    by_down: Vec<Vec<Listed>>,
    made: Vec<u32>,
    // The queue's demand of each (ingress, egress) pair (NONE: none), a
    // copy of its `side` beside it (read by `flips_by_levels` along a row,
    // not from the demand), and whether two ever shared a pair (then flips
    // are found by the walk).
    grid: Vec<u32>,
    grid_side: Vec<u8>,
    grid_shared: bool,
    // Scratch of `flips_by_levels`: each side's ports by level (the solve's
    // freeze order, then the ports it did not freeze), which ports' levels
    // moved (and the egress ones listed), and the flips found.
    sorted_up: Vec<(f64, u32)>,
    sorted_down: Vec<(f64, u32)>,
    moved_up: Vec<bool>,
    moved_down: Vec<bool>,
    down_moved: Vec<u32>,
    flips: Vec<Flip>,
}

/// A last-queue demand whose bottleneck side a solve flipped, keyed by
/// where the walk of the moved ports' lists meets it first: (0, its
/// ingress port, its place there) if that port's level moved, else (1, its
/// egress port, its place there); then the demand.
type Flip = (u8, u32, u32, u32);

/// A last-queue demand as a port lists it: the demand, the port at its
/// other end and a copy of its `side`, so that the look for flipped
/// bottlenecks at a port whose level moved reads one list end to end.
#[derive(Debug, Clone, Copy)]
struct Listed {
    demand: u32,
    other: u32,
    side: u8,
}

/// A last-queue demand's members are in its ingress port's group.
const UP: u8 = 0;
/// A last-queue demand's members are in its egress port's group.
const DOWN: u8 = 1;
/// A demand whose members are in no port group (yet).
const UNSET: u8 = 2;

/// A port group's rate: the port's level, or 0 for a port that is nobody's
/// bottleneck (infinite level; no member is in its group then).
fn group_rate(level: f64) -> f64 {
    if level.is_finite() {
        level
    } else {
        0.0
    }
}

impl LastQueue {
    /// Counts one more (`add`) or one fewer member of a demand with `ends`.
    fn count(&mut self, ends: Option<(u32, u32)>, add: bool) {
        match (ends, self.solver.as_mut()) {
            (Some((s, d)), Some(m)) if add => m.add(s as usize, d as usize),
            (Some((s, d)), Some(m)) => m.remove(s as usize, d as usize),
            _ if add => self.off_grid += 1,
            _ => self.off_grid -= 1,
        }
    }
}

/// One queue's last solve: the links its demands cross, the residual on
/// them before and after it. A queue's rates and what it leaves are a
/// function of its demands (paths, counts, push order) and the residual on
/// those links alone, so while its demands are unchanged (`dirty` false)
/// and the residual before it is the same to the bit on its links, solving
/// it again gives its demands' last rates and its last residual after.
#[derive(Debug, Default)]
struct KeptSolve {
    dirty: bool,
    links: Vec<u32>,
    before: Vec<f64>,
    after: Vec<f64>,
}

impl KeptSolve {
    /// Applies the last solve to `residual` if it still holds; false (and
    /// `residual` untouched) if the queue must be solved.
    fn replay(&self, residual: &mut [f64]) -> bool {
        if self.dirty {
            return false;
        }
        let same = self
            .links
            .iter()
            .zip(&self.before)
            .all(|(&l, b)| residual[l as usize].to_bits() == b.to_bits());
        if same {
            for (&l, &a) in self.links.iter().zip(&self.after) {
                residual[l as usize] = a;
            }
        }
        same
    }
}

const NONE: u32 = u32::MAX;
const NO_KEY: u64 = u64::MAX;
/// Up to this many entries out of and into `soon` in one refresh are
/// shifted in place; more are merged in one pass.
const SOON_SHIFTS: usize = 8;

/// What sieved members are demoted by: the thresholds, each flow's bytes
/// sent before its count was last reset (starvation; none on the fast
/// path), and the first queue the thresholds sort into.
#[derive(Debug, Clone, Copy)]
struct Sieve<'a> {
    thresholds: &'a [f64],
    offset: &'a [f64],
    base: usize,
}

impl Sieve<'_> {
    /// Queue `qu`'s threshold (none for the queues before the sieve's
    /// first and for its last).
    fn of_queue(&self, qu: usize) -> Option<f64> {
        qu.checked_sub(self.base)
            .and_then(|i| self.thresholds.get(i))
            .copied()
    }

    /// Flow `f`'s bytes sent before its count was last reset.
    fn offset(&self, f: FlowIdx) -> f64 {
        self.offset.get(f as usize).copied().unwrap_or(0.0)
    }
}

/// Whether a demand's last rate is positive (not before its first solve).
fn sends(rate: f64) -> bool {
    rate > 0.0
}

impl QueueDemands {
    fn grow(&mut self, n_flows: usize, n_paths: usize) {
        if self.demand_of.len() < n_flows {
            self.demand_of.resize(n_flows, NONE);
            self.slot.resize(n_flows, 0);
            self.sieved.resize(n_flows, false);
            self.due_key.resize(n_flows, NO_KEY);
            self.sent.resize(n_flows, (0, 0.0));
        }
        if self.index.len() < n_paths * QUEUES {
            self.index.resize(n_paths * QUEUES, NONE);
        }
    }

    fn leave(&mut self, f: FlowIdx) {
        let d = self.demand_of[f as usize];
        if d == NONE {
            return;
        }
        self.demand_of[f as usize] = NONE;
        let dm = &mut self.demands[d as usize];
        dm.n_sieved -= u32::from(self.sieved[f as usize]);
        let key = std::mem::replace(&mut self.due_key[f as usize], NO_KEY);
        if key != NO_KEY {
            dm.due_remove(key, f);
        }
        self.kept[dm.queue as usize].dirty = true;
        if dm.queue as usize == QUEUES - 1 {
            self.last.count(dm.ends, false);
        }
        let i = self.slot[f as usize] as usize;
        dm.members.swap_remove(i);
        if let Some(&g) = dm.members.get(i) {
            self.slot[g as usize] = i as u32;
        }
        if dm.members.is_empty() {
            if dm.queue as usize == QUEUES - 1 {
                if let Some((s, t)) = dm.ends {
                    let (ua, da) = (dm.up_at as usize, dm.down_at as usize);
                    let last = &mut self.last;
                    let cell = &mut last.grid[s as usize * last.by_up.len() + t as usize];
                    if *cell == d {
                        *cell = NONE;
                    }
                    last.by_up[s as usize].swap_remove(ua);
                    if let Some(e) = last.by_up[s as usize].get(ua) {
                        self.demands[e.demand as usize].up_at = ua as u32;
                    }
                    last.by_down[t as usize].swap_remove(da);
                    if let Some(e) = last.by_down[t as usize].get(da) {
                        self.demands[e.demand as usize].down_at = da as u32;
                    }
                }
            }
            let dm = &self.demands[d as usize];
            let (q, at) = (dm.queue as usize, dm.at as usize);
            self.index[dm.path as usize * QUEUES + q] = NONE;
            self.by_queue[q].swap_remove(at);
            if let Some(&e) = self.by_queue[q].get(at) {
                self.demands[e as usize].at = at as u32;
            }
            self.free.push(d);
        }
        self.touch(d);
    }

    /// Puts `f` in the demand of (`queue`, `path`) at `now` (`path` with
    /// its [`grid_ends`]); a sieved flow that has a threshold `left` bytes
    /// ahead (after its bytes sent) is due when the demand's clock has run
    /// those bytes.
    fn join(
        &mut self,
        now: Time,
        f: FlowIdx,
        queue: u8,
        (path, ends): (PathIdx, Option<(u32, u32)>),
        sieved: bool,
        left: Option<f64>,
    ) {
        let key = path as usize * QUEUES + queue as usize;
        let mut d = self.index[key];
        if d == NONE {
            d = self.free.pop().unwrap_or_else(|| {
                self.demands.push(Demand {
                    soon: NO_KEY,
                    ..Demand::default()
                });
                (self.demands.len() - 1) as u32
            });
            self.index[key] = d;
            let q = &mut self.by_queue[queue as usize];
            let dm = &mut self.demands[d as usize];
            dm.queue = queue;
            dm.path = path;
            dm.ends = ends;
            if let (Some((s, t)), true) = (ends, queue as usize == QUEUES - 1) {
                let last = &mut self.last;
                let cell = &mut last.grid[s as usize * last.by_up.len() + t as usize];
                if *cell == NONE {
                    *cell = d;
                    last.grid_side[s as usize * last.by_up.len() + t as usize] = UNSET;
                } else {
                    last.grid_shared = true;
                }
                dm.up_at = last.by_up[s as usize].len() as u32;
                dm.down_at = last.by_down[t as usize].len() as u32;
                last.by_up[s as usize].push(Listed {
                    demand: d,
                    other: t,
                    side: UNSET,
                });
                last.by_down[t as usize].push(Listed {
                    demand: d,
                    other: s,
                    side: UNSET,
                });
                last.made.push(d);
            }
            dm.side = UNSET;
            dm.rate = f64::NAN;
            dm.at = q.len() as u32;
            dm.v = 0.0;
            dm.v_time = now;
            q.push(d);
        }
        self.kept[queue as usize].dirty = true;
        if queue as usize == QUEUES - 1 {
            self.last.count(ends, true);
        }
        let dm = &mut self.demands[d as usize];
        self.sieved[f as usize] = sieved;
        dm.n_sieved += u32::from(sieved);
        self.demand_of[f as usize] = d;
        self.slot[f as usize] = dm.members.len() as u32;
        dm.members.push(f);
        if let Some(left) = left.filter(|_| sieved) {
            let key = (dm.clock(now) + left).max(0.0).to_bits();
            dm.due_insert(key, f);
            self.due_key[f as usize] = key;
        }
        self.touch(d);
        self.joined.push(f);
    }

    /// Says that demand `d`'s key in `soon` may be stale.
    fn touch(&mut self, d: u32) {
        let dm = &mut self.demands[d as usize];
        if !dm.stale {
            dm.stale = true;
            self.stale.push(d);
        }
    }

    /// Gives every stale demand its key in `soon` anew (none if it does not
    /// send, has no sieved member or its queue no threshold). `soon` is a
    /// sorted list, not a B-tree: an upper queue's solve re-keys thousands
    /// of demands at once (FB2010's 21,168-flow coflow is as many one-flow
    /// demands), and a few ordinary events re-key a handful of a list of
    /// about 150, so the old entries are taken out and the new ones merged
    /// in one pass over the list (a few of them by binary search and a
    /// shift) instead of a tree remove and insert per demand. The list is
    /// the B-tree's in the same order, `(key, demand)`, so every reader
    /// walks what it walked.
    fn refresh_soon(&mut self, sieve: Sieve<'_>) {
        self.soon_gone.clear();
        self.soon_new.clear();
        if self.next_at.len() < self.demands.len() {
            self.next_at.resize(self.demands.len(), 0);
        }
        for &d in &self.stale {
            self.next_at[d as usize] = 0;
            let dm = &mut self.demands[d as usize];
            dm.stale = false;
            if dm.soon != NO_KEY {
                self.soon_gone.push((dm.soon, d));
                dm.soon = NO_KEY;
            }
            if let (Some(t), Some((least, _))) = (sieve.of_queue(dm.queue as usize), dm.least) {
                if sends(dm.rate) && !dm.members.is_empty() {
                    dm.soon = dm.soon(f64::from_bits(least), t);
                    self.soon_new.push((dm.soon, d));
                }
            }
        }
        self.stale.clear();
        let (gone, new) = (&mut self.soon_gone, &mut self.soon_new);
        if gone.len() + new.len() <= SOON_SHIFTS {
            for x in gone.iter() {
                let at = self.soon.binary_search(x).expect("listed in soon");
                self.soon.remove(at);
            }
            for &x in new.iter() {
                let at = self.soon.binary_search(&x).unwrap_err();
                self.soon.insert(at, x);
            }
        } else {
            // The old entries are found by a mark on their demand (a
            // demand has one entry at most), not by sorting them.
            if self.soon_out.len() < self.demands.len() {
                self.soon_out.resize(self.demands.len(), false);
            }
            for &(_, d) in gone.iter() {
                self.soon_out[d as usize] = true;
            }
            new.sort_unstable();
            let merged = &mut self.soon_merged;
            merged.clear();
            merged.reserve(self.soon.len() + new.len());
            let (mut g, mut k) = (0, 0);
            for &x in &self.soon {
                let out = &mut self.soon_out[x.1 as usize];
                if *out {
                    *out = false;
                    g += 1;
                    continue;
                }
                while let Some(&y) = new.get(k).filter(|&&y| y < x) {
                    merged.push(y);
                    k += 1;
                }
                merged.push(x);
            }
            debug_assert_eq!(g, gone.len(), "a stale entry not in soon");
            merged.extend_from_slice(&new[k..]);
            std::mem::swap(&mut self.soon, merged);
        }
        debug_assert!(
            self.soon.windows(2).all(|w| w[0] < w[1]),
            "soon out of order"
        );
    }

    /// Pushes queue `qu`'s demands into the solver and records the links
    /// they cross and the residual on them before the solve.
    fn record(&mut self, qu: usize, obs: &Observed<'_>) {
        if self.link_stamp.len() < self.residual.len() {
            self.link_stamp.resize(self.residual.len(), 0);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.link_stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.stamp = 1;
        }
        let kept = &mut self.kept[qu];
        kept.links.clear();
        self.solver.clear();
        for &d in &self.by_queue[qu] {
            let dm = &self.demands[d as usize];
            let path = obs.path_links(dm.path);
            for &LinkId(l) in path {
                let s = &mut self.link_stamp[l as usize];
                if *s != self.stamp {
                    *s = self.stamp;
                    kept.links.push(l);
                }
            }
            self.solver.push(
                path.iter().copied(),
                1.0,
                dm.members.len() as u32,
                f64::INFINITY,
            );
        }
        kept.before.clear();
        kept.before
            .extend(kept.links.iter().map(|&l| self.residual[l as usize]));
    }

    /// [`MaxMin`] one by one on queue `qu`'s demands: the slow reference
    /// the debug checks below solve.
    #[cfg(debug_assertions)]
    fn reference_solver(&self, qu: usize, obs: &Observed<'_>) -> MaxMin {
        let mut solver = MaxMin::default();
        solver.set_one_by_one(true);
        for &d in &self.by_queue[qu] {
            let dm = &self.demands[d as usize];
            let path = obs.path_links(dm.path).iter().copied();
            solver.push(path, 1.0, dm.members.len() as u32, f64::INFINITY);
        }
        solver
    }

    /// The slow reference for a replayed queue: solving it afresh from the
    /// residual it saw (`before`) gives its demands' kept rates and the
    /// residual the replay left, to the bit.
    #[cfg(debug_assertions)]
    fn check_kept(&mut self, qu: usize, obs: &Observed<'_>, mut before: Vec<f64>) {
        let mut solver = self.reference_solver(qu, obs);
        let rates = solver.solve(&mut before);
        for (&d, &r) in self.by_queue[qu].iter().zip(rates) {
            let kept = self.demands[d as usize].rate;
            assert_eq!(kept.to_bits(), r.to_bits(), "queue {qu}: kept rate");
        }
        let same = before
            .iter()
            .zip(&self.residual)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "queue {qu}: kept residual");
    }

    /// The last queue's rates from the port levels over the residual the
    /// queues before it left (`residual` is left as it was: nothing
    /// follows), handed to `out` as port group rates ([`LastQueue`]). The
    /// members that joined a demand of it in this call join its group in
    /// [`Core::decide_fast`].
    fn solve_last(&mut self, obs: &Observed<'_>, out: &mut Allocation) {
        let last = &mut self.last;
        let m = last.solver.as_mut().expect("made at the first call");
        let n = obs.fabric().n_hosts() as usize;
        last.up.clear();
        last.up
            .extend((0..n).map(|h| self.residual[2 * h].max(0.0)));
        last.down.clear();
        last.down
            .extend((0..n).map(|h| self.residual[2 * h + 1].max(0.0)));
        m.solve(
            &last.up,
            &last.down,
            &mut last.up_level,
            &mut last.down_level,
        );
        let qu = QUEUES - 1;
        let rated = last.rated;
        for p in 0..n {
            let (a, b) = (last.up_level[p], last.down_level[p]);
            if !rated || a.to_bits() != last.prev_up[p].to_bits() {
                out.set_group_rate(p as u32, group_rate(a));
            }
            if !rated || b.to_bits() != last.prev_down[p].to_bits() {
                out.set_group_rate((n + p) as u32, group_rate(b));
            }
        }
        if rated {
            // Only a demand at a port whose level moved, or a new one, can
            // have another bottleneck.
            let mut flips = std::mem::take(&mut self.last.flips);
            flips.clear();
            if self.last.grid_shared {
                self.flips_by_walk(n, &mut flips);
            } else {
                self.flips_by_levels(n, &mut flips);
                #[cfg(debug_assertions)]
                {
                    let mut walk = vec![];
                    self.flips_by_walk(n, &mut walk);
                    assert_eq!(flips, walk, "last queue: the flipped bottlenecks");
                }
            }
            for &(_, _, _, d) in &flips {
                let side = self.bottleneck(d);
                self.move_to(d, side, out);
            }
            self.last.flips = flips;
            for k in 0..self.last.made.len() {
                let d = self.last.made[k];
                let dm = &self.demands[d as usize];
                if dm.queue as usize != qu || dm.members.is_empty() {
                    continue; // freed (or made again elsewhere) since it was listed
                }
                let side = self.bottleneck(d);
                if side != dm.side {
                    self.move_to(d, side, out);
                }
            }
        } else {
            // Every member into its group afresh; a rate of NaN makes a
            // later `MaxMin` solve of the queue (a member off the grid)
            // write every member's rate.
            for k in 0..self.by_queue[qu].len() {
                let d = self.by_queue[qu][k];
                self.demands[d as usize].rate = f64::NAN;
                let side = self.bottleneck(d);
                self.move_to(d, side, out);
            }
        }
        let last = &mut self.last;
        last.made.clear();
        last.rated = true;
        last.prev_up.clone_from(&last.up_level);
        last.prev_down.clone_from(&last.down_level);
    }

    /// The side of last-queue demand `d`'s bottleneck port at the last
    /// solve's levels (its ingress when the two tie).
    fn bottleneck(&self, d: u32) -> u8 {
        let (s, t) = self.demands[d as usize].ends.expect("on the grid");
        if self.last.up_level[s as usize] <= self.last.down_level[t as usize] {
            UP
        } else {
            DOWN
        }
    }

    /// The rate group of last-queue demand `d`'s members: its `side` port's.
    fn port_group(&self, d: u32) -> u32 {
        let dm = &self.demands[d as usize];
        let (s, t) = dm.ends.expect("on the grid");
        match dm.side {
            UP => s,
            _ => self.last.by_up.len() as u32 + t,
        }
    }

    /// The last-queue demands whose bottleneck side flipped in this solve,
    /// in the order of a walk of the lists of every ingress port whose
    /// level moved, then of every egress port whose level moved (a
    /// demand's members are in its ingress port's group while that port's
    /// level is at most its egress port's): the slow reference, and the
    /// way when two demands share a pair of ports.
    fn flips_by_walk(&self, n: usize, flips: &mut Vec<Flip>) {
        let last = &self.last;
        let moved = |level: &[f64], prev: &[f64], p: usize| level[p].to_bits() != prev[p].to_bits();
        for (pass, from_up) in [(0, true), (1, false)] {
            for p in 0..n {
                let (list, level, prev) = if from_up {
                    (&last.by_up[p], &last.up_level, &last.prev_up)
                } else {
                    (&last.by_down[p], &last.down_level, &last.prev_down)
                };
                if !moved(level, prev, p) {
                    continue;
                }
                for (k, e) in list.iter().enumerate() {
                    let (s, t) = if from_up {
                        (p, e.other as usize)
                    } else {
                        (e.other as usize, p)
                    };
                    if !from_up && moved(&last.up_level, &last.prev_up, s) {
                        continue; // met in the first pass
                    }
                    let side = if last.up_level[s] <= last.down_level[t] {
                        UP
                    } else {
                        DOWN
                    };
                    if side != e.side {
                        flips.push((pass, p as u32, k as u32, e.demand));
                    }
                }
            }
        }
    }

    /// [`QueueDemands::flips_by_walk`]'s list without the walk. A pair's
    /// side is a comparison of its ports' levels, and before this solve it
    /// was that comparison at the last solve's levels (or unset: a demand
    /// made since). So a demand with a side flips only if one of its ports
    /// moved: an ingress port `s` moved from `a` to `b`, with its egress
    /// port's level `c` unmoved, flips exactly when `min(a, b) <= c <
    /// max(a, b)`; an egress port moved from `a` to `b`, with its ingress
    /// port's level `u` unmoved, when `min(a, b) < u <= max(a, b)`. Those
    /// ranges are read off each side's ports sorted by level (the solve's
    /// freeze order, where levels only rise, then the unfrozen ports), the
    /// pairs of two moved ports are looked at directly, and the demands
    /// made since the last solve are listed at their moved ports. Debug
    /// builds hold the list against the walk.
    fn flips_by_levels(&mut self, n: usize, flips: &mut Vec<Flip>) {
        let last = &mut self.last;
        let m = last.solver.as_ref().expect("made at the first call");
        last.sorted_up.clear();
        last.sorted_down.clear();
        for (p, level) in m.frozen() {
            if p < n {
                last.sorted_up.push((level, p as u32));
            } else {
                last.sorted_down.push((level, (p - n) as u32));
            }
        }
        for p in 0..n {
            if last.up_level[p] == f64::INFINITY {
                last.sorted_up.push((f64::INFINITY, p as u32));
            }
            if last.down_level[p] == f64::INFINITY {
                last.sorted_down.push((f64::INFINITY, p as u32));
            }
        }
        debug_assert!(last.sorted_up.windows(2).all(|w| w[0].0 <= w[1].0));
        debug_assert!(last.sorted_down.windows(2).all(|w| w[0].0 <= w[1].0));
        last.moved_up.clear();
        last.moved_up.extend(
            last.up_level
                .iter()
                .zip(&last.prev_up)
                .map(|(a, b)| a.to_bits() != b.to_bits()),
        );
        last.moved_down.clear();
        last.moved_down.extend(
            last.down_level
                .iter()
                .zip(&last.prev_down)
                .map(|(a, b)| a.to_bits() != b.to_bits()),
        );
        last.down_moved.clear();
        last.down_moved
            .extend((0..n as u32).filter(|&t| last.moved_down[t as usize]));
        let last = &self.last;
        let flipped = |s: usize, t: usize| {
            let d = last.grid[s * n + t];
            if d == NONE {
                return None;
            }
            let side = if last.up_level[s] <= last.down_level[t] {
                UP
            } else {
                DOWN
            };
            debug_assert_eq!(last.grid_side[s * n + t], self.demands[d as usize].side);
            (side != last.grid_side[s * n + t]).then(|| &self.demands[d as usize])
        };
        for s in (0..n).filter(|&s| last.moved_up[s]) {
            let (a, b) = (last.prev_up[s], last.up_level[s]);
            let (lo, hi) = (a.min(b), a.max(b));
            let sorted = &last.sorted_down;
            let from = sorted.partition_point(|x| x.0 < lo);
            let to = sorted.partition_point(|x| x.0 < hi);
            let unmoved = sorted[from..to]
                .iter()
                .map(|x| x.1 as usize)
                .filter(|&t| !last.moved_down[t]);
            let moved = last.down_moved.iter().map(|&t| t as usize);
            for t in unmoved.chain(moved) {
                if let Some(dm) = flipped(s, t) {
                    flips.push((0, s as u32, dm.up_at, last.grid[s * n + t]));
                }
            }
        }
        for &t in &last.down_moved {
            let t = t as usize;
            let (a, b) = (last.prev_down[t], last.down_level[t]);
            let (lo, hi) = (a.min(b), a.max(b));
            let sorted = &last.sorted_up;
            let from = sorted.partition_point(|x| x.0 <= lo);
            let to = sorted.partition_point(|x| x.0 <= hi);
            for s in sorted[from..to].iter().map(|x| x.1 as usize) {
                if last.moved_up[s] {
                    continue;
                }
                if let Some(dm) = flipped(s, t) {
                    flips.push((1, t as u32, dm.down_at, last.grid[s * n + t]));
                }
            }
        }
        for &d in &last.made {
            let dm = &self.demands[d as usize];
            if dm.queue as usize != QUEUES - 1 || dm.members.is_empty() || dm.side != UNSET {
                continue;
            }
            let (s, t) = dm.ends.expect("on the grid");
            if last.moved_up[s as usize] {
                flips.push((0, s, dm.up_at, d));
            } else if last.moved_down[t as usize] {
                flips.push((1, t, dm.down_at, d));
            }
        }
        flips.sort_unstable();
        flips.dedup();
    }

    /// Puts the members of last-queue demand `d` in the group of its
    /// `side` port, and says so in its ports' lists.
    fn move_to(&mut self, d: u32, side: u8, out: &mut Allocation) {
        let dm = &mut self.demands[d as usize];
        let (s, t) = dm.ends.expect("on the grid");
        dm.side = side;
        let cell = s as usize * self.last.by_up.len() + t as usize;
        if self.last.grid[cell] == d {
            self.last.grid_side[cell] = side;
        }
        self.last.by_up[s as usize][dm.up_at as usize].side = side;
        self.last.by_down[t as usize][dm.down_at as usize].side = side;
        let g = self.port_group(d);
        for &f in &self.demands[d as usize].members {
            out.join_group(f, g);
        }
    }

    /// The slow reference for the last queue: [`MaxMin`] on its demands
    /// gives the same rates to 1e-9 relative (and 1e-3 bit/s absolute), and
    /// each member is in the group of its demand's bottleneck port, whose
    /// rate is that port's level (as if every port and demand were rated
    /// afresh).
    #[cfg(debug_assertions)]
    fn check_last(&self, obs: &Observed<'_>, out: &Allocation) {
        let qu = QUEUES - 1;
        let mut solver = self.reference_solver(qu, obs);
        let mut residual = self.residual.clone();
        let rates = solver.solve(&mut residual);
        let last = &self.last;
        for (&d, &want) in self.by_queue[qu].iter().zip(rates) {
            let dm = &self.demands[d as usize];
            assert_eq!(dm.side, self.bottleneck(d), "last queue: a stale side");
            let g = self.port_group(d);
            for &f in &dm.members {
                assert_eq!(out.group(f), g, "last queue: a member out of its group");
            }
            let (s, t) = dm.ends.expect("on the grid");
            let all = last.up_level[s as usize].min(last.down_level[t as usize]);
            let got = out.group_rate(g);
            assert_eq!(got.to_bits(), all.to_bits(), "last queue: a stale rate");
            let tol = 1e-3 + 1e-9 * want.abs();
            assert!(
                (got - want).abs() <= tol,
                "last queue: {got} against {want}"
            );
        }
    }
    /// Looks at the sieved members of demand `d` whose threshold its clock
    /// may have reached, each by its bytes sent (kept for this call), and
    /// lists those whose queue is no longer `d`'s in `moved`.
    fn look(&mut self, d: u32, now: Time, obs: &Observed<'_>, sieve: Sieve<'_>) {
        let dm = &self.demands[d as usize];
        let qu = dm.queue as usize;
        let Some(t) = sieve.of_queue(qu) else {
            return;
        };
        if !sends(dm.rate) || dm.least.is_none() {
            return;
        }
        let slack = CLOCK_SLACK + 1e-6 * t.max(1.0);
        for f in dm.due_by(dm.clock(now), slack) {
            let fi = f as usize;
            let sent = obs.sent(f);
            self.sent[fi] = (self.epoch, sent);
            let off = sieve.offset(f);
            let reached = sieve.thresholds.iter().filter(|&&t| reaches(sent - off, t));
            if sieve.base + reached.count() != qu {
                self.moved.push(f);
            }
        }
    }

    /// The slow reference for `soon`'s looks: looking at every demand, in
    /// queue order, lists the same flows as moved.
    #[cfg(debug_assertions)]
    fn check_looks(&mut self, now: Time, obs: &Observed<'_>, sieve: Sieve<'_>) {
        let fast = std::mem::take(&mut self.moved);
        let all: Vec<u32> = self.by_queue.iter().flatten().copied().collect();
        for d in all {
            self.look(d, now, obs, sieve);
        }
        assert_eq!(fast, self.moved, "the flows demoted by bytes sent");
    }

    /// The first instant a member of demand `d` near its least reading
    /// reaches its queue's threshold by its bytes sent, at its rate in
    /// `out` (`Time::NEVER`: none).
    fn next_threshold(
        &self,
        d: u32,
        now: Time,
        obs: &Observed<'_>,
        sieve: Sieve<'_>,
        out: &Allocation,
    ) -> Time {
        let dm = &self.demands[d as usize];
        let Some(t) = sieve.of_queue(dm.queue as usize) else {
            return Time::NEVER;
        };
        let Some((least, _)) = dm.least.filter(|_| sends(dm.rate)) else {
            return Time::NEVER;
        };
        let mut wake = Time::NEVER;
        for f in dm.due_by(f64::from_bits(least), 2.0 * CLOCK_SLACK) {
            let fi = f as usize;
            let sent = match self.sent[fi] {
                (e, sent) if e == self.epoch => sent,
                _ => obs.sent(f),
            };
            let off = sieve.offset(f);
            if let Some(at) = ceil_ns_time(now, off + t - sent, out.rate(f) / 8e9) {
                wake = wake.min(at);
            }
        }
        wake
    }

    /// The slow reference for the walk's `wake`: every demand's crossing
    /// found afresh now, a kept one within [`SNAP_NS`] of it (the same
    /// instant, read at another call: the rounding to the nanosecond may
    /// fall the other way), and `wake` the least of the crossings the walk
    /// would read (kept where kept).
    #[cfg(debug_assertions)]
    fn check_next_at(
        &self,
        wake: Time,
        now: Time,
        obs: &Observed<'_>,
        sieve: Sieve<'_>,
        out: &Allocation,
    ) {
        let mut by_scan = Time::NEVER;
        for &d in self.by_queue.iter().flatten() {
            let fresh = self.next_threshold(d, now, obs, sieve, out);
            let kept = self.next_at[d as usize];
            let listed = self.demands[d as usize].soon != NO_KEY;
            let at = if listed && kept > now.0 {
                assert!(
                    kept.abs_diff(fresh.0) <= SNAP_NS,
                    "demand {d}: kept crossing {kept} ns, found afresh {} ns",
                    fresh.0
                );
                Time(kept)
            } else {
                fresh
            };
            by_scan = by_scan.min(at);
        }
        assert_eq!(wake, by_scan, "the next sieve threshold");
    }

    fn queue_of(&self, f: FlowIdx) -> Option<u8> {
        let d = self.demand_of[f as usize];
        (d != NONE).then(|| self.demands[d as usize].queue)
    }
}

impl Core {
    /// [`Core::decide`] from what changed, on the big switch without
    /// starvation; `None` (and no state kept) once a deadline flow shows
    /// up, so the caller falls back to the general walk from then on.
    fn decide_fast(
        &mut self,
        now: Time,
        obs: Observed<'_>,
        sizes: Option<Clairvoyant<'_>>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Option<Time>> {
        let mut q = std::mem::take(&mut self.fast);
        q.grow(obs.n_flows(), obs.n_paths());
        let base = self.config.base();
        let fresh = !q.ready || changes.resynced;
        if q.last.solver.is_none() {
            let n = obs.fabric().n_hosts() as usize;
            q.last.solver = Some(BipartiteMaxMin::new(n, n));
            q.last.by_up = vec![vec![]; n];
            q.last.grid = vec![NONE; n * n];
            q.last.grid_side = vec![UNSET; n * n];
            q.last.by_down = vec![vec![]; n];
        }
        if fresh {
            q.last.rated = false;
        }
        let started: &[FlowIdx] = if fresh {
            for &f in obs.active_flows() {
                q.leave(f);
            }
            obs.active_flows()
        } else {
            &changes.started
        };
        if started
            .iter()
            .any(|&f| self.kind(&obs, sizes.as_ref(), f) == 1)
        {
            self.general = true;
            return None;
        }
        q.ready = true;
        for &f in &changes.finished {
            q.leave(f);
        }
        // Flows demoted by bytes sent may have moved if their demand's clock
        // passed their threshold.
        q.joined.clear();
        q.moved.clear();
        q.epoch = q.epoch.wrapping_add(1);
        let sieve = Sieve {
            thresholds: &self.config.sieve,
            offset: &self.offset,
            base,
        };
        q.refresh_soon(sieve);
        // Those whose bound has come, in the order of the full scan (by
        // queue, then by place in it).
        // A demand's (queue, place) is one whole number (`at` is below
        // 2^32), sorted as numbers, not by a key read through each demand.
        let mut looks = std::mem::take(&mut q.looks);
        looks.clear();
        let come = q.soon.partition_point(|&(soon, _)| soon <= now.0);
        looks.extend(q.soon[..come].iter().map(|&(_, d)| {
            let dm = &q.demands[d as usize];
            (u64::from(dm.queue) << 32) | u64::from(dm.at)
        }));
        looks.sort_unstable();
        for &k in &looks {
            let d = q.by_queue[(k >> 32) as usize][(k & u64::from(u32::MAX)) as usize];
            q.look(d, now, &obs, sieve);
        }
        q.looks = looks;
        #[cfg(debug_assertions)]
        q.check_looks(now, &obs, sieve);
        let moved = std::mem::take(&mut q.moved);
        for &f in moved.iter().chain(started) {
            let kind = self.kind(&obs, sizes.as_ref(), f);
            let qu = self.queue(kind, &obs, sizes.as_ref(), f) as u8;
            if q.queue_of(f) != Some(qu) {
                q.leave(f);
                let left = sieve
                    .of_queue(qu as usize)
                    .map(|t| sieve.offset(f) + t - obs.sent(f));
                let p = obs.path_idx(f);
                let ends = grid_ends(obs.path_links(p), obs.fabric().n_hosts());
                q.join(now, f, qu, (p, ends), kind == 3, left);
                out.set_class(f, u32::from(qu));
            }
        }
        q.moved = moved;
        // The queues in order, each max-min on what the ones before left.
        q.residual.clear();
        q.residual.extend_from_slice(obs.capacities());
        q.solver.set_one_by_one(true);
        if fresh {
            q.kept.iter_mut().for_each(|k| k.dirty = true);
        }
        let mut by_levels = false;
        for qu in 0..QUEUES {
            if q.by_queue[qu].is_empty() {
                continue;
            }
            if qu == QUEUES - 1 && q.last.off_grid == 0 {
                q.solve_last(&obs, out);
                by_levels = true;
                continue;
            }
            if qu == QUEUES - 1 {
                q.last.rated = false;
                q.last.made.clear();
            }
            #[cfg(debug_assertions)]
            let before = q.residual.clone();
            if q.kept[qu].replay(&mut q.residual) {
                #[cfg(debug_assertions)]
                q.check_kept(qu, &obs, before);
                continue;
            }
            q.record(qu, &obs);
            let rates = q.solver.solve(&mut q.residual);
            let kept = &mut q.kept[qu];
            kept.after.clear();
            kept.after
                .extend(kept.links.iter().map(|&l| q.residual[l as usize]));
            kept.dirty = false;
            for (k, &r) in rates.iter().enumerate() {
                let d = q.by_queue[qu][k];
                let dm = &mut q.demands[d as usize];
                if dm.rerate(r, now, out) && !dm.stale {
                    dm.stale = true;
                    q.stale.push(d);
                }
            }
        }
        for &f in &q.joined {
            let d = q.demand_of[f as usize];
            let dm = &q.demands[d as usize];
            if by_levels && dm.queue as usize == QUEUES - 1 {
                out.join_group(f, q.port_group(d));
            } else {
                out.set_rate(f, dm.rate);
            }
        }
        #[cfg(debug_assertions)]
        if by_levels {
            q.check_last(&obs, out);
        }
        // The next sieve threshold of every flow that sends: the demands in
        // order of their bound, until the bound is past the earliest found.
        // A demand's crossing found at an earlier call stands while the
        // demand is not re-keyed and the crossing is still ahead
        // ([`QueueDemands::next_at`]).
        q.refresh_soon(sieve);
        let mut wake = Time::NEVER;
        for &(soon, d) in &q.soon {
            if soon >= wake.0 {
                break;
            }
            let kept = q.next_at[d as usize];
            let at = if kept > now.0 {
                Time(kept)
            } else {
                let at = q.next_threshold(d, now, &obs, sieve, out);
                q.next_at[d as usize] = at.0;
                at
            };
            wake = wake.min(at);
        }
        #[cfg(debug_assertions)]
        q.check_next_at(wake, now, &obs, sieve, out);
        self.fast = q;
        Some((wake != Time::NEVER).then_some(wake))
    }
}

/// Karuna; see the module doc.
#[derive(Debug)]
pub struct Karuna {
    core: Core,
}

impl Karuna {
    /// A Karuna scheduler (`config.all_type3` false).
    pub fn new(config: KarunaConfig) -> Karuna {
        Karuna {
            core: Core::new(config),
        }
    }
}

impl Scheduler for Karuna {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        "karuna"
    }
    fn schedule(
        &mut self,
        now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        self.core
            .decide(now, view.observed(), Some(view), changes, out)
    }
}

/// PIAS: every flow type 3, demoted through 8 queues by bytes sent.
#[derive(Debug)]
pub struct Pias {
    core: Core,
}

impl Pias {
    /// A PIAS scheduler with `thresholds` (bytes, ascending, at most 7) and
    /// the starvation rule of [`KarunaConfig::starvation`].
    pub fn new(thresholds: Vec<f64>, starvation: Option<Dur>) -> Pias {
        Pias {
            core: Core::new(KarunaConfig {
                sieve: thresholds,
                starvation,
                ..KarunaConfig::pias()
            }),
        }
    }
}

impl Scheduler for Pias {
    type Knows = KnowsSent;
    fn name(&self) -> &str {
        "pias"
    }
    fn schedule(
        &mut self,
        now: Time,
        view: Observed<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        self.core.decide(now, view, None, changes, out)
    }
}

/// How [`EdfFirst`] orders the flows without a deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// Shortest remaining size first (`pfabric-edf`).
    Remaining,
    /// Shortest total size first (`edf-sjf`).
    Size,
}

/// Strict priority per flow: flows with a deadline first by earliest
/// deadline (ties by flow index), then the rest by remaining size
/// (`pfabric-edf`, pFabric 4.1) or total size (`edf-sjf`, the combination
/// Karuna 2.2 argues against), sizes within `BYTES_TIE` counting as equal
/// (ties by flow index); greedily, each flow the least residual capacity
/// along its path, as `srpt`. Sizes of type-3 flows are read too: both
/// baselines assume every size is known. While no active flow has a
/// deadline (FB2010), the order is the rest's alone and a flow's key is
/// read without looking up its deadline, so `pfabric-edf` costs what
/// `srpt` does (debug builds check that no active flow has one then).
#[derive(Debug)]
pub struct EdfFirst {
    rest: Rest,
    // Flows with a deadline by (deadline, index), kept from call to call.
    edf: BTreeSet<(u64, FlowIdx)>,
    edf_order: Vec<FlowIdx>,
    others: SortedFlows,
    residual: Vec<f64>,
    ready: bool,
}

impl EdfFirst {
    /// The scheduler with the given rule for flows without a deadline.
    pub fn new(rest: Rest) -> EdfFirst {
        EdfFirst {
            rest,
            edf: BTreeSet::new(),
            edf_order: vec![],
            others: match rest {
                Rest::Remaining => SortedFlows::default(),
                Rest::Size => SortedFlows::with_fixed_keys(),
            },
            residual: vec![],
            ready: false,
        }
    }
}

impl Scheduler for EdfFirst {
    type Knows = KnowsSizes;
    fn name(&self) -> &str {
        match self.rest {
            Rest::Remaining => "pfabric-edf",
            Rest::Size => "edf-sjf",
        }
    }
    fn schedule(
        &mut self,
        _now: Time,
        view: Clairvoyant<'_>,
        changes: &Changes,
        out: &mut Allocation,
    ) -> Option<Time> {
        let started: &[FlowIdx] = if self.ready && !changes.resynced {
            &changes.started
        } else {
            self.edf.clear();
            view.active_flows()
        };
        self.ready = true;
        for &f in &changes.finished {
            if let Some(d) = view.deadline(f) {
                self.edf.remove(&(d.0, f));
            }
        }
        for &f in started {
            if let Some(d) = view.deadline(f) {
                self.edf.insert((d.0, f));
            }
        }
        // `edf` holds every active flow with a deadline: while it is empty
        // (FB2010 has no deadlines) the order is the rest's alone, keyed
        // without a deadline look-up per flow, as `srpt`'s.
        let any_edf = !self.edf.is_empty();
        debug_assert!(
            any_edf
                || view
                    .active_flows()
                    .iter()
                    .all(|&f| view.deadline(f).is_none()),
            "an active deadline flow outside the EDF set"
        );
        self.edf_order.clear();
        self.edf_order.extend(self.edf.iter().map(|x| x.1));
        let rest = self.rest;
        let key = |f| {
            if any_edf && view.deadline(f).is_some() {
                return None;
            }
            Some(match rest {
                Rest::Remaining => view.remaining(f),
                Rest::Size => view.size(f),
            })
        };
        self.others.update(&view, changes, BYTES_TIE, key);
        self.others
            .fill(&view, &self.edf_order, &mut self.residual, out);
        None
    }
}
