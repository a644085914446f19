//! The decomposed engine: a fabric's flow completion times from one
//! packet-level simulation per link, as Parsimon (Zhao, Goyal, Alizadeh,
//! Anderson, NSDI 2023) decomposes a fabric, run on this project's own
//! packet engine (its transports, queues and host policies).
//!
//! 1. Every flow is routed as the packet engine routes it ([`route`]).
//! 2. Each link that carries flows gets its own simulation ([`linksim`]):
//!    those flows only, on a small fabric that keeps each one's NIC and
//!    path delay. Links are independent, so they run in parallel.
//! 3. A flow's time in a link's simulation, less its time alone on that
//!    simulation's path ([`alone`]), is what that link's traffic cost it.
//! 4. A flow's estimate is its time alone on its own path plus what each
//!    link on it cost it (the sum over the path, Parsimon's assumption
//!    that the hops' delays are independent), written as the other
//!    engines write their tables.
//! 5. Unless asked not to ([`Options::fluid`], [`fluid`]), the whole
//!    fabric's flows run once at their max-min fair rates, and a link's
//!    simulation sends a flow held back elsewhere at its fluid rate; as
//!    options, a flow's NIC simulation holds it back too, and a flow's
//!    estimate takes its fluid sharing and its bottleneck link's cost.
//!
//! What needs a view wider than one link is refused: a scheduler run by a
//! central coordinator, coflow dependencies and barriers (a flow's start
//! would depend on other links' results), compute stages.

pub mod alone;
pub mod cluster;
pub mod fluid;
pub mod hops;
pub mod job;
pub mod linksim;
pub mod route;

use alone::{Alone, AlonePath};
use coflowkit_model::{Fabric, FlowKind, LinkId, Time, ValidWorkload};
use coflowkit_packet::PacketConfig;
use coflowkit_sched::SchedulerSpec;
use coflowkit_sim::{Outcome, SimResult};
use hops::Hop;
use job::Job;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use thiserror::Error;

/// Why a decomposed run cannot go on.
#[derive(Debug, Error)]
pub enum DecomposeError {
    /// The input asks for what a decomposition cannot run.
    #[error("{0}")]
    Input(String),
    /// A link's small fabric or workload was refused (a bug if it happens).
    #[error("link {0}: {1}")]
    Link(String, String),
    /// The packet engine refused a run.
    #[error("{0}")]
    Packet(String),
}

/// What runs on the hosts of every link's simulation.
pub enum Run<'a> {
    /// The configured transport alone.
    Transport,
    /// A scheduler's host policy on every host (one that decides locally).
    Hosts(&'a SchedulerSpec),
}

/// How a flow's costs on the links of its path make its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Their sum: each link's queues delay the flow one after another
    /// (Parsimon's assumption that the hops are independent).
    Sum,
    /// The largest: the flow is held back by its most loaded link only,
    /// as a flow limited by its share of a bottleneck is.
    Max,
    /// The largest, plus at each other link at most what a short flow
    /// (within its first window) paid there on average: beyond its
    /// bottleneck, a flow meets the other links' queues, not their sharing.
    Queues,
}

/// Which flows a link's simulation sends as gently as the fluid view of the
/// whole fabric says they arrive ([`fluid`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// None: every flow as fast as its source's hops let it.
    Off,
    /// A flow at the links after its bottleneck (where the fabric has
    /// already thinned it out).
    Up,
    /// A flow at every link that is not its bottleneck (after it, or
    /// before it, where its window is what the bottleneck lets it have).
    All,
    /// A flow at every link beyond its NIC, at its fluid rate while that
    /// link was not one of its bottlenecks ([`fluid::Fluid::rest_rate`]):
    /// as the rest of the fabric lets it arrive, so that the link's own
    /// share of holding it back is the link's simulation's to find.
    Rest,
}

/// What the fluid view of the whole fabric corrects ([`fluid`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FluidUse {
    /// Pacing in the links' simulations.
    pub pace: Pace,
    /// A flow's estimate from its fluid sharing and its bottleneck link's
    /// cost, instead of [`Combine`]'s.
    pub base: bool,
    /// With [`Pace::All`], a flow held back beyond its NIC is held back in
    /// its NIC's simulation too: nothing stands before the NIC to pace it,
    /// so its destination there is reached by a link at its pacing rate,
    /// which its transport settles to as it does at its bottleneck.
    pub nic: bool,
    /// With [`Pace::All`], a flow that is not paced at a link beyond its
    /// NIC (the link holds it back, or its fluid rate is near its NIC's)
    /// is sent there at what its NIC had left beyond its host's other
    /// flows ([`fluid::Fluid::nic_room`]), where that is below
    /// [`PACE_BELOW`] of the NIC's rate: the link's simulation leaves those
    /// flows out, and in the fabric they share the NIC with it.
    pub host: bool,
}

impl FluidUse {
    /// No fluid correction.
    pub const OFF: FluidUse = FluidUse {
        pace: Pace::Off,
        base: false,
        nic: false,
        host: false,
    };

    /// Pacing where the fabric holds a flow back ([`Pace::All`]), the
    /// default: on the validation grid it brings the median p99 error
    /// from +39% to +4% (web search) and from +36% to +7% (data mining),
    /// docs/decomposed-engine.md.
    pub const PACE: FluidUse = FluidUse {
        pace: Pace::All,
        base: false,
        nic: false,
        host: false,
    };

    /// Whether the fluid view is used at all.
    pub fn is_on(&self) -> bool {
        *self != FluidUse::OFF
    }
}

/// A flow is paced at a link only below this share of its NIC's rate.
pub const PACE_BELOW: f64 = 0.75;

/// Pacing rates are its NIC's rate over a whole power of this (half
/// octaves), so a few paths are measured alone.
pub const PACE_STEP: f64 = std::f64::consts::SQRT_2;

/// Pacing rates go down to the NIC's rate over this.
pub const PACE_FLOOR: f64 = 256.0;

/// How a decomposed run goes.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How a flow's per-link costs combine.
    pub combine: Combine,
    /// Threads that run link simulations (at least 1).
    pub threads: usize,
    /// Keep what each link cost each flow ([`DecomposedResult::costs`]).
    pub keep_costs: bool,
    /// Cluster alike links and simulate, per cluster, links until their
    /// flows reach this many ([`cluster`]); `None` simulates every link.
    pub cluster: Option<usize>,
    /// What stands for the sources' hops before a link that is not their
    /// NIC.
    pub sources: linksim::Sources,
    /// The fluid correction.
    pub fluid: FluidUse,
    /// In the links' simulations and times alone, ACKs reach their
    /// senders crossing no port (the packet engine's `acks=direct`: the
    /// way back carries nothing but the flows' ACKs), and packets cross a
    /// last hop that never holds two of them with no event of their own
    /// (`last_hop=direct`): the same times with about a third of the
    /// per-hop packets.
    pub direct: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            keep_costs: false,
            combine: Combine::Sum,
            cluster: None,
            sources: linksim::Sources::Nic,
            fluid: FluidUse::PACE,
            direct: true,
        }
    }
}

impl Options {
    /// The options' keys, each with what it takes and its default.
    pub const KEYS: &'static str = "combine=sum|max|queues (sum), cluster=off|N (off: every link \
         simulated; N: alike links clustered, each cluster simulating links until N flows), \
         sources=nic|fat (nic), fluid=off|pace|pace-up|pace-rest|base, each pace form with \
         +base, pace+nic (and +base) holding a flow at its fluid rate in its NIC's simulation \
         too, pace+host (and +nic, +base) sending a flow its bottleneck holds at what its \
         host's other flows leave of its NIC (pace), direct=on|off (on: in the links' \
         simulations ACKs, and packets at destinations' links that never queue, cross no port)";

    /// Sets the options `text` names (`key=value` items, comma-separated),
    /// leaving the others; a wrong key or value is refused naming it.
    pub fn set(&mut self, text: &str) -> Result<(), DecomposeError> {
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = |what: &str| {
                DecomposeError::Input(format!(
                    "decomposed option {item:?}: {what} (options: {})",
                    Self::KEYS
                ))
            };
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| bad("expected key=value"))?;
            match (key.trim(), value.trim()) {
                ("combine", "sum") => self.combine = Combine::Sum,
                ("combine", "max") => self.combine = Combine::Max,
                ("combine", "queues") => self.combine = Combine::Queues,
                ("cluster", "off") => self.cluster = None,
                ("cluster", n) => match n.parse::<usize>() {
                    Ok(n) if n >= 1 => self.cluster = Some(n),
                    _ => return Err(bad("cluster takes off or a whole number of flows from 1")),
                },
                ("direct", "on") => self.direct = true,
                ("direct", "off") => self.direct = false,
                ("sources", "nic") => self.sources = linksim::Sources::Nic,
                ("sources", "fat") => self.sources = linksim::Sources::Fat,
                ("fluid", v) => {
                    let mut f = FluidUse::OFF;
                    for part in v.split('+').map(str::trim) {
                        match part {
                            "off" if v == "off" => {}
                            "pace" if f.pace == Pace::Off => f.pace = Pace::All,
                            "pace-up" if f.pace == Pace::Off => f.pace = Pace::Up,
                            "pace-rest" if f.pace == Pace::Off => f.pace = Pace::Rest,
                            "base" if !f.base => f.base = true,
                            "nic" if !f.nic => f.nic = true,
                            "host" if !f.host => f.host = true,
                            "off" | "pace" | "pace-up" | "pace-rest" | "base" | "nic" | "host" => {
                                return Err(bad(&format!(
                                    "{part:?} cannot join here: off stands alone, pace, \
                                     pace-up and pace-rest exclude each other, and no part \
                                     comes twice"
                                )))
                            }
                            _ => return Err(bad(&format!("{part:?} is not a part of fluid"))),
                        }
                    }
                    if f.nic && f.pace != Pace::All {
                        return Err(bad("fluid's nic holds back what pace paces: pace+nic"));
                    }
                    if f.host && f.pace != Pace::All {
                        return Err(bad("fluid's host paces what pace leaves: pace+host"));
                    }
                    self.fluid = f;
                }
                ("combine" | "sources" | "direct", _) => return Err(bad("not one of its values")),
                _ => return Err(bad("no such option")),
            }
        }
        Ok(())
    }
}

/// A finished decomposed run.
#[derive(Debug, Clone)]
pub struct DecomposedResult {
    /// The tables every engine writes, from the estimates.
    pub sim: SimResult,
    /// Link simulations run.
    pub link_sims: usize,
    /// Links that carry flows (each simulated, or drawn from its
    /// cluster's simulated links).
    pub links_used: usize,
    /// Clusters of alike links (as many as links used when not clustering).
    pub clusters: usize,
    /// Per-hop packets over every link simulation.
    pub packets: u64,
    /// Paths measured alone.
    pub alone_paths: usize,
    /// Per link simulated, in the order they ran (each cluster's in turn).
    pub links: Vec<LinkReport>,
    /// Per flow, what each link on its path cost it (ns), when kept.
    pub costs: Option<Vec<Vec<(LinkId, f64)>>>,
}

/// What one link's simulation found.
#[derive(Debug, Clone)]
pub struct LinkReport {
    /// The link.
    pub link: LinkId,
    /// Flows crossing it.
    pub flows: usize,
    /// Per-hop packets its simulation took.
    pub packets: u64,
    /// What it cost its flows beyond their time alone, summed (ns).
    pub cost_ns: f64,
}

/// Refuses what a decomposition cannot run, naming the first coflow.
pub fn check(workload: &ValidWorkload) -> Result<(), DecomposeError> {
    for c in workload.coflows() {
        if !c.parents.is_empty() {
            return Err(DecomposeError::Input(format!(
                "coflow {} depends on another coflow: the decomposed engine runs independent flows \
                 (run dependencies with --engine flow or packet)",
                c.id.0
            )));
        }
        for (k, f) in c.flows.iter().enumerate() {
            if f.kind == FlowKind::Compute {
                return Err(DecomposeError::Input(format!(
                    "coflow {} flow {k} is a compute stage; the decomposed engine models the \
                     network only (run it with --engine flow)",
                    c.id.0
                )));
            }
            if f.after.is_some() {
                return Err(DecomposeError::Input(format!(
                    "coflow {} flow {k} waits for a barrier: the decomposed engine runs \
                     independent flows (run barriers with --engine flow or packet)",
                    c.id.0
                )));
            }
        }
    }
    Ok(())
}

/// Runs `f` on every item, taken in `order` (a permutation of their
/// indices), on `threads` threads; `done(k, n)` after each. The results
/// are in the items' order whatever `order` is.
fn par_map<T: Sync, R: Send>(
    items: &[T],
    order: &[usize],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
    done: &mut dyn FnMut(usize, usize),
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1).min(items.len().max(1)) {
            let tx = tx.clone();
            let (next, f) = (&next, &f);
            s.spawn(move || loop {
                let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    break;
                };
                if tx.send((i, f(&items[i]))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (k, (i, r)) in rx.iter().enumerate() {
            out[i] = Some(r);
            done(k + 1, items.len());
        }
    });
    out.into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

/// The slowest rate on `path` (bits/s).
fn bottleneck_rate(fabric: &Fabric, path: &[LinkId]) -> f64 {
    path.iter()
        .map(|l| fabric.links()[l.0 as usize].capacity.0)
        .fold(f64::INFINITY, f64::min)
}

/// Per link of flow `i`'s path, how many half octaves below its NIC's rate
/// its link simulation's source sends it at (0: unpaced; [`pace_rate`]):
/// its fluid mean rate, where that is below [`PACE_BELOW`] of the NIC's and
/// the link is not where the fluid view holds it back (for [`Pace::Up`],
/// only after that link; for [`Pace::Rest`], at every link beyond its
/// NIC, at its rate while that link did not hold it back). A flow's NIC is
/// paced only with [`FluidUse::nic`], and there by what comes after it
/// (`linksim`). With [`FluidUse::host`], a link beyond the NIC where it is
/// not paced so paces it at its NIC's room, where that is below
/// [`PACE_BELOW`] of the NIC's rate.
fn pace_of(
    fabric: &Fabric,
    path: &[LinkId],
    fl: &fluid::Fluid,
    i: usize,
    bytes: u64,
    fu: FluidUse,
    out: &mut [u8],
) {
    let (Some(r), Some(main)) = (fl.mean_rate(i, bytes), fl.main_bottleneck(i)) else {
        return;
    };
    let nic = fabric.links()[path[0].0 as usize].capacity.0;
    let step_of = |rate: f64| {
        let steps = (nic / rate.max(1.0)).ln() / PACE_STEP.ln();
        let floor = PACE_FLOOR.ln() / PACE_STEP.ln();
        steps.round().clamp(1.0, floor) as u8
    };
    if fu.pace == Pace::Rest {
        for (k, o) in out.iter_mut().enumerate().skip(1) {
            if let Some(r) = fl.rest_rate(i, k, bytes).filter(|&r| r < PACE_BELOW * nic) {
                *o = step_of(r);
            }
        }
        return;
    }
    let own = (r < PACE_BELOW * nic).then(|| step_of(r));
    let room = (fu.host && fl.nic_room[i] < PACE_BELOW * nic).then(|| step_of(fl.nic_room[i]));
    let first = if fu.nic { 0 } else { 1 };
    for (k, o) in out.iter_mut().enumerate().skip(first) {
        let held_here = fl.bottleneck[i][k] >= 0.5;
        let after = k > main;
        if !held_here && (fu.pace == Pace::All || after) {
            if let Some(step) = own {
                *o = step;
                continue;
            }
        }
        if k > 0 {
            if let Some(step) = room {
                *o = step;
            }
        }
    }
}

/// The rate (bits/s) `step` half octaves below a NIC's `nic` rate.
fn pace_rate(nic: f64, step: u8) -> u64 {
    (nic / PACE_STEP.powi(i32::from(step))).round() as u64
}

/// Where the links' simulations pace whom: per flow, per link of its path
/// (in flow order, then path order), a step of [`pace_of`]: what the
/// fluid view decides, and all a link's simulation needs of it.
pub struct Paces {
    steps: fluid::PerHop<u8>,
    /// Each flow's NIC rate (bits/s).
    nic: Vec<f64>,
}

impl Paces {
    /// The rate flow `i`'s source is paced at on the `pos`-th link of its
    /// path, if it is.
    pub fn rate(&self, i: usize, pos: usize) -> Option<u64> {
        match self.steps[i][pos] {
            0 => None,
            step => Some(pace_rate(self.nic[i], step)),
        }
    }

    fn new(fabric: &Fabric, paths: &[Vec<LinkId>], steps: fluid::PerHop<u8>) -> Paces {
        let nic = paths
            .iter()
            .map(|p| {
                p.first()
                    .map_or(0.0, |l| fabric.links()[l.0 as usize].capacity.0)
            })
            .collect();
        Paces { steps, nic }
    }
}

/// One link simulation's result: each of its flows' completion time (ns,
/// in the simulation's flow order) and the per-hop packets it took.
pub type LinkRun = (Vec<u64>, u64);

/// A decomposition prepared up to its packet-level runs ([`prepare`]):
/// every flow routed, the links that carry flows clustered (or not), and
/// the jobs to run ([`Plan::job`]: the link simulations, then the paths
/// alone). These are independent of each other, so they can run anywhere
/// (threads, [`simulate`]; or other processes, sent as bytes,
/// [`job::run_encoded`]) before [`finish`] combines their results.
pub struct Plan<'a> {
    fabric: &'a Fabric,
    workload: &'a ValidWorkload,
    cfg: &'a PacketConfig,
    opts: Options,
    routes: route::Routes,
    flow_at: Vec<(u32, u32)>,
    bytes: Vec<u64>,
    links: Vec<LinkId>,
    start: Vec<Time>,
    groups: Vec<cluster::Cluster>,
    /// The fluid view of the whole fabric, when the options use it.
    fluid: Option<fluid::Fluid>,
    /// Where the links' simulations pace whom, when they do.
    paces: Option<Paces>,
    /// The link simulations, in the order [`finish`] takes their results
    /// (each cluster's simulated links in turn).
    pub sims: Vec<linksim::LinkSim>,
    /// Every path a flow's time alone is asked on (each flow's own, and
    /// each link simulation's), after the simulations in [`finish`]'s
    /// order.
    pub alone: Vec<AlonePath>,
    /// Each path's place in [`Plan::alone`].
    alone_of: HashMap<Vec<Hop>, usize>,
    /// Each flow's own path's place in [`Plan::alone`].
    own_path: Vec<u32>,
}

impl Plan<'_> {
    /// Where its links' simulations pace whom: per flow, per link of its
    /// path, how many half octaves below its NIC's rate its source is
    /// paced there (0: not paced); `None` when they pace no one.
    pub fn paces(&self) -> Option<Vec<u8>> {
        self.paces.as_ref().map(|p| p.steps.values().to_vec())
    }

    /// How many packet-level runs [`finish`] takes the results of: every
    /// link simulation, then every path alone.
    pub fn n_jobs(&self) -> usize {
        self.sims.len() + self.alone.len()
    }

    /// Run `i` of [`Plan::n_jobs`].
    pub fn job(&self, i: usize) -> Job<'_> {
        match self.sims.get(i) {
            Some(s) => Job::Link(&s.part),
            None => Job::Alone(&self.alone[i - self.sims.len()]),
        }
    }

    /// The jobs' indices, those that send the most bytes first: run in
    /// that order on a few threads or workers, the last to start is a
    /// short one, so none runs a long job alone at the end (longest
    /// processing time first, Graham 1969).
    pub fn costliest_first(&self) -> Vec<usize> {
        let mss = u64::from(self.cfg.mss());
        let cost = |i: usize| -> u64 {
            match self.sims.get(i) {
                Some(s) => s.flows.iter().map(|&f| self.bytes[f as usize]).sum(),
                None => {
                    let max = self.alone[i - self.sims.len()].max_bytes;
                    alone::grid(max.min(alone::LINEAR), mss).iter().sum()
                }
            }
        };
        let mut order: Vec<usize> = (0..self.n_jobs()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(cost(i)));
        order
    }
}

/// Runs `workload` on `fabric` decomposed into one simulation per link
/// (`pinned`: a flow's path number, else ECMP's); `progress(done, total)`
/// over its packet-level runs (the link simulations and the paths alone),
/// which run on `opts.threads` threads.
pub fn simulate(
    fabric: &Fabric,
    workload: &ValidWorkload,
    run: &Run<'_>,
    pinned: &[Option<u32>],
    cfg: &PacketConfig,
    opts: Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<DecomposedResult, DecomposeError> {
    let plan = prepare(fabric, workload, pinned, cfg, opts)?;
    let order = plan.costliest_first();
    let jobs: Vec<Job<'_>> = (0..plan.n_jobs()).map(|i| plan.job(i)).collect();
    let ran = par_map(&jobs, &order, opts.threads, |j| j.run(run, cfg), progress);
    finish(plan, run, ran)
}

/// Prepares `workload` on `fabric` (`pinned`: a flow's path number, else
/// ECMP's) up to its link simulations.
pub fn prepare<'a>(
    fabric: &'a Fabric,
    workload: &'a ValidWorkload,
    pinned: &[Option<u32>],
    cfg: &'a PacketConfig,
    opts: Options,
) -> Result<Plan<'a>, DecomposeError> {
    check(workload)?;
    cfg.check()
        .map_err(|e| DecomposeError::Input(e.to_string()))?;
    if cfg.via_coordinator {
        return Err(DecomposeError::Input(
            "packet option via=coordinator: the decomposed engine simulates each link alone and \
             runs no central coordinator (the packet engine does)"
                .into(),
        ));
    }
    let routes = route::route(fabric, workload, pinned);
    let flow_at: Vec<(u32, u32)> = workload
        .coflows()
        .iter()
        .enumerate()
        .flat_map(|(c, x)| (0..x.flows.len() as u32).map(move |k| (c as u32, k)))
        .collect();
    let bytes: Vec<u64> = workload
        .coflows()
        .iter()
        .flat_map(|c| c.flows.iter().map(|f| f.bytes.0))
        .collect();
    let links: Vec<LinkId> = (0..fabric.n_links() as u32)
        .map(LinkId)
        .filter(|l| {
            routes.on_link[l.0 as usize]
                .iter()
                .any(|&i| bytes[i as usize] > 0)
        })
        .collect();
    let start: Vec<Time> = flow_at
        .iter()
        .map(|&(c, k)| {
            let x = &workload.coflows()[c as usize];
            Time(x.arrival.0 + x.flows[k as usize].delay.0)
        })
        .collect();
    // The fluid view, and where it paces whom.
    let paced = opts.fluid.pace != Pace::Off;
    let fluid = opts
        .fluid
        .is_on()
        .then(|| fluid::run(fabric, &routes.paths, &bytes, &start));
    let paces: Option<Paces> = fluid.as_ref().filter(|_| paced).map(|fl| {
        let mut steps = fluid::PerHop::zeros(routes.paths.iter().map(Vec::len));
        for (i, &b) in bytes.iter().enumerate() {
            pace_of(
                fabric,
                &routes.paths[i],
                fl,
                i,
                b,
                opts.fluid,
                &mut steps[i],
            );
        }
        Paces::new(fabric, &routes.paths, steps)
    });
    // Which links are simulated: each cluster's first ones, or every link.
    let groups: Vec<cluster::Cluster> = match opts.cluster {
        Some(min_flows) => {
            let profiles: Vec<cluster::Profile> = links
                .iter()
                .map(|&l| {
                    let on = &routes.on_link[l.0 as usize];
                    let get = |f: &dyn Fn(usize) -> u64| {
                        on.iter().map(|&i| f(i as usize)).collect::<Vec<u64>>()
                    };
                    let hops: Vec<usize> =
                        on.iter().map(|&i| routes.paths[i as usize].len()).collect();
                    cluster::Profile::new(
                        fabric,
                        l,
                        &get(&|i| bytes[i]),
                        &get(&|i| start[i].0),
                        &hops,
                    )
                })
                .collect();
            cluster::clusters(&profiles, min_flows)
        }
        None => (0..links.len())
            .map(|k| cluster::Cluster {
                members: vec![k],
                simulated: 1,
            })
            .collect(),
    };
    let order: Vec<usize> = groups
        .iter()
        .flat_map(|g| g.members[..g.simulated].iter().copied())
        .collect();
    let sims = order
        .iter()
        .map(|&k| {
            linksim::build(
                fabric,
                workload,
                cfg,
                &routes,
                &flow_at,
                links[k],
                opts.sources,
                paces.as_ref(),
                opts.direct,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Every path a flow's time alone is asked on, with its largest flow:
    // each flow's own, then each simulation's.
    let mut alone: Vec<AlonePath> = vec![];
    let mut alone_of: HashMap<Vec<Hop>, usize> = HashMap::new();
    let mut ask = |p: Vec<Hop>, b: u64| -> u32 {
        let k = *alone_of.entry(p).or_insert_with_key(|p| {
            // A path's last hop never holds two of a lone flow's packets
            // when it is at least as fast as the hop before it.
            let n = p.len();
            alone.push(AlonePath {
                path: p.clone(),
                max_bytes: 0,
                direct_acks: opts.direct,
                direct_last_hop: opts.direct && n >= 2 && p[n - 1].rate >= p[n - 2].rate,
            });
            alone.len() - 1
        });
        alone[k].max_bytes = alone[k].max_bytes.max(b);
        k as u32
    };
    let own_path: Vec<u32> = routes
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            ask(
                p.iter().map(|&l| Hop::of(fabric, cfg, l)).collect(),
                bytes[i],
            )
        })
        .collect();
    for s in &sims {
        for (n, p) in s.paths.iter().enumerate() {
            ask(p.clone(), bytes[s.flows[n] as usize]);
        }
    }
    Ok(Plan {
        fabric,
        workload,
        cfg,
        opts,
        routes,
        flow_at,
        bytes,
        links,
        start,
        groups,
        fluid,
        paces,
        sims,
        alone,
        alone_of,
        own_path,
    })
}

/// The run's estimates from its jobs' results (`ran`: one per
/// [`Plan::job`], in order, each link simulation having run `run`).
pub fn finish(
    plan: Plan<'_>,
    run: &Run<'_>,
    ran: Vec<Result<LinkRun, DecomposeError>>,
) -> Result<DecomposedResult, DecomposeError> {
    let n_jobs = plan.n_jobs();
    let Plan {
        fabric,
        workload,
        cfg,
        opts,
        routes,
        flow_at,
        bytes,
        links,
        start,
        groups,
        fluid,
        paces: _,
        sims,
        alone: paths_alone,
        alone_of,
        own_path,
    } = plan;
    let link_sims = sims.len();
    if ran.len() != n_jobs {
        return Err(DecomposeError::Input(format!(
            "{} results for {n_jobs} jobs ({link_sims} link simulations, {} paths alone)",
            ran.len(),
            paths_alone.len()
        )));
    }
    let mut ran = ran.into_iter();
    let sim_runs: Vec<_> = ran.by_ref().take(link_sims).collect();
    let alone: Vec<Alone> = paths_alone
        .iter()
        .zip(ran)
        .map(|(p, r)| p.alone(cfg, r?.0))
        .collect::<Result<_, _>>()?;
    let alone_paths = alone.len();
    // Each flow's time alone on its own path.
    let own: Vec<f64> = (0..bytes.len())
        .map(|i| {
            if bytes[i] == 0 {
                0.0
            } else {
                alone[own_path[i] as usize].fct(bytes[i])
            }
        })
        .collect();
    let alone_on = |p: &Vec<Hop>| &alone[alone_of[p]];
    let mut packets = 0;
    let mut reports = Vec::with_capacity(sims.len());
    let mut kept: Option<Vec<Vec<(LinkId, f64)>>> =
        opts.keep_costs.then(|| vec![vec![]; bytes.len()]);
    // Each flow's (cost, a short flow's mean cost) at each link of its path.
    let mut parts: Vec<Vec<(LinkId, f64, f64)>> = vec![vec![]; bytes.len()];
    let short = u64::from(cfg.init_cwnd) * u64::from(cfg.mss());
    let mut ran = sim_runs.into_iter();
    let mut sims = sims.iter();
    for g in &groups {
        // The cluster's simulated links: their flows' costs, kept as they
        // are and pooled (relative to each flow's time alone) for the rest.
        let mut pool = vec![];
        let (mut q, mut nq) = (0.0, 0usize);
        for _ in 0..g.simulated {
            let s = sims.next().expect("one simulation per simulated link");
            let (fct, p) = ran.next().expect("one result per simulation")?;
            if fct.len() != s.flows.len() {
                return Err(DecomposeError::Input(format!(
                    "link {}'s simulation: {} completion times for its {} flows",
                    fabric.link_name(s.link),
                    fct.len(),
                    s.flows.len()
                )));
            }
            packets += p;
            let costs: Vec<f64> = s
                .flows
                .iter()
                .enumerate()
                .map(|(n, &i)| fct[n] as f64 - alone_on(&s.paths[n]).fct(bytes[i as usize]))
                .collect();
            let (mut lq, mut lnq) = (0.0, 0usize);
            for (n, &i) in s.flows.iter().enumerate() {
                let i = i as usize;
                if bytes[i] <= short {
                    lq += costs[n].max(0.0);
                    lnq += 1;
                }
                if g.members.len() > g.simulated && own[i] > 0.0 {
                    pool.push((bytes[i], costs[n] / own[i]));
                }
            }
            let queue = if lnq > 0 { lq / lnq as f64 } else { 0.0 };
            (q, nq) = (q + lq, nq + lnq);
            for (n, &i) in s.flows.iter().enumerate() {
                parts[i as usize].push((s.link, costs[n], queue));
                if let Some(k) = kept.as_mut() {
                    k[i as usize].push((s.link, costs[n]));
                }
            }
            reports.push(LinkReport {
                link: s.link,
                flows: s.flows.len(),
                packets: p,
                cost_ns: costs.iter().sum(),
            });
        }
        if g.members.len() == g.simulated {
            continue;
        }
        let pool = cluster::Pool::new(pool);
        let queue = if nq > 0 { q / nq as f64 } else { 0.0 };
        for &k in &g.members[g.simulated..] {
            let l = links[k];
            for &i in &routes.on_link[l.0 as usize] {
                let i = i as usize;
                let key = (i as u64) << 32 | u64::from(l.0);
                let c = pool.draw(bytes[i], key) * own[i];
                parts[i].push((l, c, queue));
                if let Some(kk) = kept.as_mut() {
                    kk[i].push((l, c));
                }
            }
        }
    }
    let cost: Vec<f64> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| match (&fluid, opts.fluid.base) {
            (Some(fl), true) if bytes[i] > 0 => {
                // The fluid's sharing, or what the bottleneck link cost
                // the flow when that is more (its queues, its slow start).
                let path = &routes.paths[i];
                let b = fl.main_bottleneck(i).map(|k| path[k]);
                let at_b = p
                    .iter()
                    .filter(|x| Some(x.0) == b)
                    .map(|x| x.1)
                    .fold(0.0, f64::max);
                let ideal = bytes[i] as f64 * 8e9 / bottleneck_rate(fabric, path);
                (fl.fct[i] as f64 - ideal).max(0.0).max(at_b)
            }
            _ => match opts.combine {
                Combine::Sum => p.iter().map(|x| x.1).sum(),
                Combine::Max => p.iter().map(|x| x.1).fold(0.0, f64::max),
                Combine::Queues => {
                    let top = (0..p.len()).max_by(|&a, &b| p[a].1.total_cmp(&p[b].1));
                    p.iter()
                        .enumerate()
                        .map(|(k, &(_, c, q))| if Some(k) == top { c } else { c.min(q) })
                        .sum()
                }
            },
        })
        .collect();
    let finish: Vec<Time> = (0..bytes.len())
        .map(|i| {
            if bytes[i] == 0 {
                return start[i];
            }
            let est = own[i] + cost[i].max(0.0);
            Time(start[i].0 + est.round() as u64)
        })
        .collect();
    let mut completion = vec![Time(0); workload.coflows().len()];
    for (i, &(c, _)) in flow_at.iter().enumerate() {
        completion[c as usize] = completion[c as usize].max(finish[i]);
    }
    let release: Vec<Time> = workload.coflows().iter().map(|c| c.arrival).collect();
    let bottleneck: Vec<f64> = own_path
        .iter()
        .map(|&k| {
            paths_alone[k as usize]
                .path
                .iter()
                .map(|h| h.rate as f64)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let name = match run {
        Run::Transport => cfg.transport.name().to_string(),
        Run::Hosts(spec) => spec.name.clone(),
    };
    let sim = SimResult::collect(Outcome {
        scheduler: &name,
        workload,
        release: &release,
        completion: &completion,
        flow_start: &|i| start[i],
        flow_finish: &finish,
        flow_dropped: &[],
        flow_bottleneck: &|i| bottleneck[i],
        per_flow: true,
        link_util: None,
        n_events: 0,
    });
    Ok(DecomposedResult {
        sim,
        link_sims,
        links_used: links.len(),
        clusters: groups.len(),
        packets,
        alone_paths,
        links: reports,
        costs: kept,
    })
}
