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

mod common;
mod config;
mod demands;
pub mod host;
pub mod pias;
mod queue_demands;

use common::*;
pub use config::*;
use demands::*;

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
    cost: 2.4,
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
    cost: 5.8,
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
    cost: 3.9,
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
    cost: 2.0,
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
