//! The coordinator: one per cluster. It drives a scheduler from the
//! registry through the same [`Scheduler`](coflowkit_sched::Scheduler)
//! trait and [`NetState`] as the simulator's engine, on bytes the agents
//! measure rather than bytes advanced at rates.
//!
//! The fabric is a big switch of `n_hosts` hosts whose NICs run at
//! `host_rate_bps` each way (the coflow papers' model); a flow is one
//! coflow-aware writer (one TCP connection) from its agent's host to its
//! destination host, of its size hint, or of [`MAX_BYTES`] (a placeholder,
//! flagged size-unknown) without one.
//!
//! Agents' syncs only record what they report ([`Core::sync`]); every Δ one
//! tick ([`Core::tick`]) changes the state, in this order, so that a
//! scheduler sees each flow start before it finishes and each coflow arrive
//! before it completes, as in the simulator:
//! 1. flows reported finished (seen by an earlier tick) finish with their
//!    measured bytes as their size ([`NetState::finish_flow_measured`]);
//! 2. coflows unregistered by their owner with no open flow complete;
//! 3. coflows first reported since arrive and are released (their Aalo
//!    CoflowId from their parents: the first parent's DAG, one stage past
//!    every parent's);
//! 4. flows first reported since start;
//! 5. every active flow's sent bytes become the reported ones
//!    ([`NetState::resync_sent`], [`Changes::resynced`]), the scheduler is
//!    called, and the changed allocation is applied to the state as the
//!    engine does;
//! 6. each flow's rate (solo, its shared group's, or, in a proportional
//!    group, what it has left over the time to the group's deadline) and
//!    class are kept per host for the next sync's reply.
//!
//! The scheduler is built with its descriptor's coordinator defaults
//! (`aalo`: `delta=0` unless the spec sets `delta`): the coordinator's own
//! Δ is the coordination, so the scheduler takes the reported sizes as
//! they are instead of modelling a refresh of its own.
//!
//! A flow first reported after its coflow completed (its owner unregistered
//! it before another host's first report of a short flow) reopens the
//! coflow, which completes again once that flow finishes: a late report is
//! never refused for being late.
//!
//! A sync may also overtake another: when the coordinator stalls, an agent
//! gives up on its stream after 2 s and sends its next sync on a new one,
//! and the two requests then wait for the same lock in either order. Agents
//! number their syncs per session (`SyncRequest::session`, `seq`), and a
//! request numbered at or below the last one taken from its host and
//! session is stale: answered with the current schedule, counted
//! (`stale_syncs`), and nothing else: its older byte counts are not taken
//! for a flow going back.
//!
//! Correctness properties: a flow's reported bytes never decrease and its
//! coflow and destination never change (a sync that says otherwise is
//! refused whole, `Core::check`); a flow finishes once, and only after a
//! tick has started it (`Core::tick` step 1); every message is validated
//! before it touches the state ([`crate::validate::sync`]); every call
//! carries the shared token (`check_token`).

use crate::proto::coordinator_server::{Coordinator as CoordinatorRpc, CoordinatorServer};
use crate::proto::{FlowRate, HelloReply, HelloRequest, SyncReply, SyncRequest};
use crate::validate::{self, Invalid, MAX_BYTES, MAX_MESSAGE_BYTES};
use crate::PROTOCOL_VERSION;
use coflowkit_model::{flow, BitsPerSec, CoflowId, CoflowSpec, DagId, DagKey, Fabric, Time};
use coflowkit_sched::{
    build, Allocation, AnyScheduler, Changes, CoflowIdx, FlowIdx, NetState, SchedulerError,
    SchedulerSpec, Timer, WorkloadHints,
};
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;
use tracing::{info, warn};

/// How a coordinator runs.
#[derive(Debug, Clone)]
pub struct CoordinatorConfig {
    /// Hosts in the cluster (agents are numbered `0..n_hosts`).
    pub n_hosts: u32,
    /// Capacity of each host's NIC, each way, bits/s.
    pub host_rate_bps: f64,
    /// The coordination interval Δ.
    pub delta: Duration,
    /// The scheduler spec, as in the simulator (`aalo`, `varys`, `fair`, ...).
    pub scheduler: String,
    /// The token every agent must present.
    pub token: String,
    /// Whether flows are told the scheduler's priority class (DSCP,
    /// SO_PRIORITY). `false`: every flow is class 0, and only the rates
    /// (pacing, pauses) enforce the schedule; for schedules made of rates
    /// (aalo's weighted queues) on fabrics whose queues are strict
    /// priorities, which would serve the classes strictly on top of them.
    pub mark_classes: bool,
    /// What the scheduler's configuration may take from a workload (a
    /// percentile threshold's coflow sizes): read from a trace by
    /// `--hints`, else empty, and a spec that needs them is refused
    /// ([`build_scheduler`]).
    pub hints: WorkloadHints,
}

/// Why a coordinator could not start.
#[derive(Debug, Error)]
pub enum CoordinatorError {
    /// The scheduler spec is not valid.
    #[error("scheduler: {0}")]
    Scheduler(#[from] SchedulerError),
    /// The scheduler spec needs a workload hint the coordinator was not
    /// given; the message (one line) says what to pass.
    #[error("{0}")]
    NeedsHint(String),
    /// The configuration is not valid.
    #[error("coordinator configuration: {0}")]
    Config(String),
    /// The listener failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The gRPC server failed.
    #[error("gRPC server: {0}")]
    Transport(#[from] tonic::transport::Error),
}

#[derive(Debug)]
struct CoflowEntry {
    idx: Option<CoflowIdx>,
    parents: Vec<u64>,
    unregistered: bool,
    /// Flows reported and not yet finished by a tick.
    n_open: u32,
    /// Flows finished by a tick, and their measured bytes.
    n_done: u32,
    bytes_done: u64,
    /// When it arrived (the tick's time).
    arrived: Time,
}

/// A coflow the coordinator completed: what it reports.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletedCoflow {
    /// Its id.
    pub id: u64,
    /// Flows it had (each counted once, whatever the faults).
    pub n_flows: u32,
    /// Bytes its flows wrote, as measured by the client libraries.
    pub bytes: u64,
    /// When it arrived and completed (the coordinator's clock, from its
    /// start).
    pub arrived: Time,
    /// See `arrived`.
    pub completed: Time,
}

#[derive(Debug)]
struct FlowEntry {
    host: u32,
    agent_id: u64,
    coflow: u64,
    dst: u32,
    size_hint: u64,
    bytes: u64,
    finished: bool,
    idx: Option<FlowIdx>,
    done: bool,
}

/// The coordinator's state and scheduler; see the module doc.
pub struct Core {
    n_hosts: u32,
    state: NetState,
    sched: AnyScheduler,
    alloc: Allocation,
    changes: Changes,
    coflows: HashMap<u64, CoflowEntry>,
    completed: HashSet<u64>,
    dags: HashMap<u64, DagId>,
    flows: Vec<FlowEntry>,
    flow_of: HashMap<(u32, u64), usize>,
    entry_of_idx: Vec<usize>,
    new_coflows: Vec<u64>,
    new_flows: Vec<usize>,
    finishing: Vec<usize>,
    timer: Timer,
    rates: Vec<Vec<FlowRate>>,
    reports: Vec<(FlowIdx, f64)>,
    log: Vec<CompletedCoflow>,
    host_rate_bps: f64,
    mark_classes: bool,
    /// Per host: syncs taken, and when the last one was.
    syncs: Vec<u64>,
    last_sync: Vec<Option<Instant>>,
    refused: u64,
    /// Per host: the session and number of the last numbered sync taken.
    sync_seq: Vec<(u64, u64)>,
    /// Stale syncs answered without being taken.
    stale: u64,
    ticks: u64,
    /// How long the last tick took (the scheduler's time included).
    last_tick: Duration,
}

/// The queue thresholds (bytes) agents use for coflows not scheduled yet:
/// the scheduler's local classes (`aalo`'s D-CLAS queues, `q1 * e^i`:
/// Aalo's defaults 10 queues, E = 10, Q1hi = 10 MiB), or none
/// ([`coflowkit_sched::local_thresholds`]).
pub fn local_thresholds(spec: &SchedulerSpec) -> Vec<f64> {
    // The scheduler was built from the same spec, so it parses.
    coflowkit_sched::local_thresholds(spec).unwrap_or_default()
}

/// Builds the scheduler of spec `text` as the coordinator runs it
/// ([`runtime_spec`]), with `hints` (empty unless `--hints` gave a trace).
/// A spec whose values need a hint not given (a percentile threshold: the
/// runtime does not know the workload) is refused with one line naming
/// what to pass.
pub fn build_scheduler(
    text: &str,
    hints: &WorkloadHints,
) -> Result<AnyScheduler, CoordinatorError> {
    let spec = runtime_spec(text)?;
    let e = match build(&spec, hints) {
        Ok(sched) => return Ok(sched),
        Err(e) => e,
    };
    let SchedulerError::NeedsHint { key, hint, .. } = &e else {
        return Err(e.into());
    };
    let help = coflowkit_sched::registry::descriptor(&spec.name)
        .ok()
        .and_then(|d| d.params.iter().find(|p| p.key == key))
        .map_or("", |p| p.help);
    Err(CoordinatorError::NeedsHint(format!(
        "{e}: pass --hints TRACE (a trace to take the workload's {} from), or set '{key}' to \
         a value that needs no workload ({help})",
        hint.label()
    )))
}

/// The scheduler spec the coordinator builds: `text` parsed, with its
/// descriptor's coordinator defaults ([`coflowkit_sched::coordinator_spec`]).
pub fn runtime_spec(text: &str) -> Result<SchedulerSpec, SchedulerError> {
    coflowkit_sched::coordinator_spec(&SchedulerSpec::parse(text)?)
}

impl Core {
    /// A coordinator's state for `cfg`.
    pub fn new(cfg: &CoordinatorConfig) -> Result<Core, CoordinatorError> {
        if cfg.n_hosts < 2 {
            return Err(CoordinatorError::Config(format!(
                "{} hosts: a cluster needs at least 2",
                cfg.n_hosts
            )));
        }
        if !(cfg.host_rate_bps.is_finite() && cfg.host_rate_bps > 0.0) {
            return Err(CoordinatorError::Config(format!(
                "host rate {} bits/s: give a positive rate",
                cfg.host_rate_bps
            )));
        }
        let fabric = Fabric::big_switch(cfg.n_hosts, BitsPerSec(cfg.host_rate_bps))
            .map_err(|e| CoordinatorError::Config(e.to_string()))?;
        let sched = build_scheduler(&cfg.scheduler, &cfg.hints)?;
        Ok(Core {
            n_hosts: cfg.n_hosts,
            state: NetState::new(fabric),
            sched,
            alloc: Allocation::default(),
            changes: Changes::default(),
            coflows: HashMap::new(),
            completed: HashSet::new(),
            dags: HashMap::new(),
            flows: vec![],
            flow_of: HashMap::new(),
            entry_of_idx: vec![],
            new_coflows: vec![],
            new_flows: vec![],
            finishing: vec![],
            timer: Timer::default(),
            rates: vec![vec![]; cfg.n_hosts as usize],
            reports: vec![],
            log: vec![],
            host_rate_bps: cfg.host_rate_bps,
            mark_classes: cfg.mark_classes,
            syncs: vec![0; cfg.n_hosts as usize],
            last_sync: vec![None; cfg.n_hosts as usize],
            refused: 0,
            sync_seq: vec![(0, 0); cfg.n_hosts as usize],
            stale: 0,
            ticks: 0,
            last_tick: Duration::ZERO,
        })
    }

    /// The scheduler's name.
    pub fn scheduler_name(&self) -> &str {
        self.sched.name()
    }

    /// Checks a validated sync against what earlier syncs said.
    fn check(&self, r: &SyncRequest) -> Result<(), Invalid> {
        let bad = |i: usize, why: String| Invalid::Field {
            field: format!("flows[{i}]"),
            why,
        };
        for (i, f) in r.flows.iter().enumerate() {
            let Some(&e) = self.flow_of.get(&(r.host, f.flow_id)) else {
                continue;
            };
            let e = &self.flows[e];
            if e.coflow != f.coflow_id || e.dst != f.dst_host {
                return Err(bad(
                    i,
                    format!(
                        "flow {} was coflow {} to host {}, now coflow {} to host {}",
                        f.flow_id, e.coflow, e.dst, f.coflow_id, f.dst_host
                    ),
                ));
            }
            if f.bytes_sent < e.bytes {
                return Err(bad(
                    i,
                    format!(
                        "flow {}: bytes sent went back from {} to {}",
                        f.flow_id, e.bytes, f.bytes_sent
                    ),
                ));
            }
        }
        Ok(())
    }

    fn coflow_entry(&mut self, id: u64) -> &mut CoflowEntry {
        let new_coflows = &mut self.new_coflows;
        self.coflows.entry(id).or_insert_with(|| {
            new_coflows.push(id);
            CoflowEntry {
                idx: None,
                parents: vec![],
                unregistered: false,
                n_open: 0,
                n_done: 0,
                bytes_done: 0,
                arrived: Time::NEVER,
            }
        })
    }

    /// Records agent `r.host`'s report and answers with the latest schedule
    /// of its flows. Refuses (changing nothing) a report that is malformed
    /// or contradicts an earlier one.
    pub fn sync(&mut self, r: &SyncRequest) -> Result<SyncReply, Invalid> {
        let reply = self.take_sync(r);
        match &reply {
            Ok(_) => {
                let h = r.host as usize;
                self.syncs[h] += 1;
                self.last_sync[h] = Some(Instant::now());
            }
            Err(_) => self.refused += 1,
        }
        reply
    }

    fn take_sync(&mut self, r: &SyncRequest) -> Result<SyncReply, Invalid> {
        validate::sync(r, self.n_hosts)?;
        let h = r.host as usize;
        if r.seq != 0 {
            let (session, seq) = self.sync_seq[h];
            if r.session == session && r.seq <= seq {
                // Overtaken by a newer sync of the same agent: answer, take nothing.
                self.stale += 1;
                return Ok(self.reply(h, vec![], vec![]));
            }
        }
        self.check(r)?;
        if r.seq != 0 {
            self.sync_seq[h] = (r.session, r.seq);
        }
        let mut completed_coflows = vec![];
        for c in &r.coflows {
            if self.completed.contains(&c.coflow_id) {
                if c.unregistered {
                    completed_coflows.push(c.coflow_id);
                }
                continue;
            }
            let e = self.coflow_entry(c.coflow_id);
            if e.idx.is_none() && !c.parents.is_empty() {
                e.parents = c.parents.clone();
            }
            e.unregistered |= c.unregistered;
        }
        let mut acks = vec![];
        for f in &r.flows {
            let i = match self.flow_of.get(&(r.host, f.flow_id)) {
                Some(&i) => i,
                None => {
                    if self.completed.remove(&f.coflow_id) {
                        // Its owner unregistered it before this host's first
                        // report of the flow (a short flow on another host):
                        // it arrives again, and completes when its flows do.
                        warn!(
                            coflow = f.coflow_id,
                            host = r.host,
                            "a flow joined a completed coflow; reopening it"
                        );
                        self.coflow_entry(f.coflow_id).unregistered = true;
                    }
                    self.coflow_entry(f.coflow_id).n_open += 1;
                    let i = self.flows.len();
                    self.flows.push(FlowEntry {
                        host: r.host,
                        agent_id: f.flow_id,
                        coflow: f.coflow_id,
                        dst: f.dst_host,
                        size_hint: f.size_hint,
                        bytes: 0,
                        finished: false,
                        idx: None,
                        done: false,
                    });
                    self.flow_of.insert((r.host, f.flow_id), i);
                    self.new_flows.push(i);
                    i
                }
            };
            let e = &mut self.flows[i];
            e.bytes = f.bytes_sent;
            if f.finished {
                if !e.finished {
                    e.finished = true;
                    self.finishing.push(i);
                }
                acks.push(f.flow_id);
            }
        }
        Ok(self.reply(h, acks, completed_coflows))
    }

    /// The reply to host `h`: the latest schedule of its flows, with these
    /// acknowledgements.
    fn reply(&self, h: usize, finished_acks: Vec<u64>, completed_coflows: Vec<u64>) -> SyncReply {
        SyncReply {
            protocol_version: PROTOCOL_VERSION,
            rates: self.rates[h].clone(),
            finished_acks,
            completed_coflows,
        }
    }

    fn dag_of(&self, id: u64, parents: &[u64]) -> DagId {
        let Some(&first) = parents.first() else {
            return DagId {
                dag: DagKey::Root(CoflowId(id)),
                stage: 0,
            };
        };
        let of = |p: u64| {
            self.dags.get(&p).copied().unwrap_or(DagId {
                dag: DagKey::Root(CoflowId(p)),
                stage: 0,
            })
        };
        DagId {
            dag: of(first).dag,
            stage: 1 + parents.iter().map(|&p| of(p).stage).max().unwrap_or(0),
        }
    }

    /// One coordination round at `now`; see the module doc.
    pub fn tick(&mut self, now: Time) {
        let t0 = Instant::now();
        self.tick_inner(now);
        self.ticks += 1;
        self.last_tick = t0.elapsed();
    }

    fn tick_inner(&mut self, now: Time) {
        let now = now.max(self.state.now());
        self.state.set_now(now);
        // 1. Flows that finished, once a tick has started them.
        let finishing = std::mem::take(&mut self.finishing);
        for i in finishing {
            let e = &mut self.flows[i];
            match e.idx {
                Some(f) if !e.done => {
                    e.done = true;
                    self.state.finish_flow_measured(f, e.bytes as f64);
                    self.alloc.forget(f);
                    self.changes.finished.push(f);
                    let (c, bytes) = (e.coflow, e.bytes);
                    if let Some(c) = self.coflows.get_mut(&c) {
                        c.n_open -= 1;
                        c.n_done += 1;
                        c.bytes_done += bytes;
                    }
                }
                Some(_) => {}
                None => self.finishing.push(i),
            }
        }
        // 2. Coflows unregistered with nothing open.
        let done: Vec<u64> = self
            .coflows
            .iter()
            .filter(|(_, c)| c.unregistered && c.n_open == 0 && c.idx.is_some())
            .map(|(&id, _)| id)
            .collect();
        for id in done {
            let c = self.coflows.remove(&id).expect("listed");
            let idx = c.idx.expect("arrived");
            self.state.complete_coflow(idx);
            self.changes.finished_coflows.push(idx);
            self.completed.insert(id);
            let cct_ms = now.0.saturating_sub(c.arrived.0) as f64 / 1e6;
            info!(
                coflow = id,
                flows = c.n_done,
                bytes = c.bytes_done,
                cct_ms,
                "coflow complete"
            );
            self.log.push(CompletedCoflow {
                id,
                n_flows: c.n_done,
                bytes: c.bytes_done,
                arrived: c.arrived,
                completed: now,
            });
        }
        // 3. Coflows that arrived.
        for id in std::mem::take(&mut self.new_coflows) {
            let Some(parents) = self.coflows.get(&id).map(|c| c.parents.clone()) else {
                continue;
            };
            let dag = self.dag_of(id, &parents);
            self.dags.insert(id, dag);
            let c = self.state.add_coflow(&CoflowSpec::new(id, now, vec![]));
            self.state.set_dag(c, dag);
            self.state.release_coflow(c);
            self.changes.arrived.push(c);
            let e = self.coflows.get_mut(&id).expect("listed");
            e.idx = Some(c);
            e.arrived = now;
        }
        // 4. Flows that started.
        for i in std::mem::take(&mut self.new_flows) {
            let e = &self.flows[i];
            let c = self.coflows[&e.coflow].idx.expect("arrived in step 3");
            let spec = if e.size_hint > 0 {
                flow(e.host, e.dst, e.size_hint)
            } else {
                flow(e.host, e.dst, MAX_BYTES).size_unknown()
            };
            let f = self.state.add_flow(c, &spec);
            let started = self.state.start_flow(f);
            debug_assert!(started, "sizes are positive");
            self.alloc.resize(self.state.n_flows());
            if self.entry_of_idx.len() <= f as usize {
                self.entry_of_idx.resize(f as usize + 1, usize::MAX);
            }
            self.entry_of_idx[f as usize] = i;
            self.changes.started.push(f);
            self.flows[i].idx = Some(f);
        }
        // 5. Measured progress, the scheduler, its allocation applied.
        self.reports.clear();
        for &f in self.state.active() {
            let e = &self.flows[self.entry_of_idx[f as usize]];
            self.reports.push((f, e.bytes as f64));
        }
        self.state.resync_sent(&self.reports);
        self.changes.resynced = true;
        self.timer.call(
            &mut self.sched,
            now,
            &self.state,
            &mut self.changes,
            &mut self.alloc,
        );
        self.state.apply_allocation(&mut self.alloc, &mut ());
        // 6. Rates per host.
        for r in &mut self.rates {
            r.clear();
        }
        for &f in self.state.active() {
            let e = &self.flows[self.entry_of_idx[f as usize]];
            let rate_bps = self.rate_of(f, now);
            self.rates[e.host as usize].push(FlowRate {
                flow_id: e.agent_id,
                rate_bps,
                class: if self.mark_classes {
                    self.alloc.class(f).min(63)
                } else {
                    0
                },
                paused: rate_bps < 1.0,
            });
        }
    }

    /// The rate flow `f` is to send at now, bits/s.
    fn rate_of(&self, f: FlowIdx, now: Time) -> f64 {
        self.alloc
            .rate_now(&self.state, f, now)
            .min(validate::MAX_RATE_BPS)
    }

    /// The coflows completed so far, in the order they completed (a coflow
    /// reopened by a late flow and completed again appears twice).
    pub fn completed_coflows(&self) -> &[CompletedCoflow] {
        &self.log
    }

    /// A snapshot of what the coordinator knows, for its status page and
    /// metrics ([`crate::status`]).
    pub fn status(&self) -> crate::status::Status {
        use crate::status::{
            AgentStatus, CoflowStatus, CompletionStatus, FlowStatus, LinkStatus, Status,
            RECENT_COMPLETIONS,
        };
        let fabric = self.state.fabric();
        let mut links: Vec<LinkStatus> = (0..fabric.n_links())
            .map(|l| LinkStatus {
                name: fabric.link_name(coflowkit_model::LinkId(l as u32)),
                capacity_bps: fabric.link(coflowkit_model::LinkId(l as u32)).capacity.0,
                rate_bps: 0.0,
                n_flows: 0,
            })
            .collect();
        let mut flows = vec![];
        let mut open_of: HashMap<u64, (u32, u64, Option<u32>)> = HashMap::new();
        for e in &self.flows {
            if e.done {
                continue;
            }
            let r = self.rates[e.host as usize]
                .iter()
                .find(|r| r.flow_id == e.agent_id);
            if let (Some(r), Some(f)) = (r, e.idx) {
                for l in self.state.path_of(f) {
                    let l = &mut links[l.0 as usize];
                    l.rate_bps += r.rate_bps;
                    l.n_flows += 1;
                }
            }
            let o = open_of.entry(e.coflow).or_insert((0, 0, None));
            o.0 += 1;
            o.1 += e.bytes;
            if let Some(r) = r {
                o.2 = Some(o.2.map_or(r.class, |c| c.min(r.class)));
            }
            flows.push(FlowStatus {
                host: e.host,
                flow_id: e.agent_id,
                coflow: e.coflow,
                dst: e.dst,
                bytes: e.bytes,
                size: (e.size_hint > 0).then_some(e.size_hint),
                finished: e.finished,
                rate_bps: r.map(|r| r.rate_bps),
                class: r.map(|r| r.class),
                paused: r.is_some_and(|r| r.paused),
            });
        }
        let mut coflows: Vec<CoflowStatus> = self
            .coflows
            .iter()
            .map(|(&id, c)| {
                let (open, bytes, queue) = open_of.get(&id).copied().unwrap_or((0, 0, None));
                CoflowStatus {
                    id,
                    parents: c.parents.clone(),
                    unregistered: c.unregistered,
                    open_flows: open,
                    finished_flows: c.n_done,
                    bytes: bytes + c.bytes_done,
                    queue,
                }
            })
            .collect();
        coflows.sort_by_key(|c| c.id);
        let agents = (0..self.n_hosts as usize)
            .map(|h| AgentStatus {
                host: h as u32,
                syncs: self.syncs[h],
                last_sync_ago_s: self.last_sync[h].map(|t| t.elapsed().as_secs_f64()),
                scheduled_flows: self.rates[h].len() as u32,
                scheduled_rate_bps: self.rates[h].iter().map(|r| r.rate_bps).sum(),
            })
            .collect();
        Status {
            scheduler: self.sched.name().to_string(),
            n_hosts: self.n_hosts,
            host_rate_bps: self.host_rate_bps,
            now_ns: self.state.now().0,
            ticks: self.ticks,
            last_tick_s: self.last_tick.as_secs_f64(),
            refused_syncs: self.refused,
            stale_syncs: self.stale,
            completed_coflows: self.log.len() as u64,
            completed_bytes: self.log.iter().map(|c| c.bytes).sum(),
            agents,
            coflows,
            flows,
            links,
            recent_completions: self
                .log
                .iter()
                .rev()
                .take(RECENT_COMPLETIONS)
                .map(|c| CompletionStatus {
                    id: c.id,
                    n_flows: c.n_flows,
                    bytes: c.bytes,
                    cct_ns: c.completed.0.saturating_sub(c.arrived.0),
                    completed_ns: c.completed.0,
                })
                .collect(),
        }
    }

    /// The latest schedule of host `host`'s flows (empty for a host out of
    /// range).
    pub fn schedule_of(&self, host: u32) -> &[FlowRate] {
        self.rates.get(host as usize).map_or(&[], |r| r.as_slice())
    }

    /// Active coflows and flows (for logs and tests).
    pub fn counts(&self) -> (usize, usize) {
        (
            self.state.observed().active_coflows().len(),
            self.state.active().len(),
        )
    }
}

/// Compares the presented token with the expected one in time independent
/// of where they differ.
pub(crate) fn same_token(got: &[u8], want: &[u8]) -> bool {
    if got.len() != want.len() {
        return false;
    }
    got.iter().zip(want).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// The check run on every call: the `authorization` metadata must be
/// `Bearer TOKEN`. Refusals are logged with the peer and the reason.
#[allow(clippy::result_large_err)]
pub fn check_token(
    token: &str,
) -> impl FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Clone {
    let want = format!("Bearer {token}").into_bytes();
    move |req: tonic::Request<()>| {
        let peer = req.remote_addr();
        let reason = match req.metadata().get("authorization") {
            None => "no authorization token",
            Some(v) if same_token(v.as_bytes(), &want) => return Ok(req),
            Some(_) => "wrong authorization token",
        };
        warn!(?peer, reason, "refused a call");
        Err(tonic::Status::unauthenticated(reason))
    }
}

#[derive(Clone)]
struct Service {
    core: Arc<Mutex<Core>>,
    hello: HelloReply,
    /// Turns true when the coordinator shuts down: sync streams end then
    /// (the server's graceful shutdown waits for every open stream).
    closing: tokio::sync::watch::Receiver<bool>,
}

impl Service {
    /// Takes one sync (of either call); a refusal is logged with the peer and
    /// returned as `invalid_argument` with the reason.
    fn sync_one(
        &self,
        peer: Option<SocketAddr>,
        r: &SyncRequest,
    ) -> Result<SyncReply, tonic::Status> {
        let reply = self.core.lock().expect("coordinator lock").sync(r);
        reply.map_err(|e| {
            warn!(?peer, host = r.host, reason = %e, "refused a sync");
            tonic::Status::invalid_argument(e.to_string())
        })
    }
}

/// The replies of a sync stream: one per request, in order.
type ReplyStream = tokio_stream::wrappers::ReceiverStream<Result<SyncReply, tonic::Status>>;

#[tonic::async_trait]
impl CoordinatorRpc for Service {
    async fn hello(
        &self,
        req: tonic::Request<HelloRequest>,
    ) -> Result<tonic::Response<HelloReply>, tonic::Status> {
        let peer = req.remote_addr();
        let r = req.into_inner();
        if let Err(e) = validate::hello(&r, self.hello.n_hosts) {
            warn!(?peer, reason = %e, "refused a hello");
            return Err(tonic::Status::invalid_argument(e.to_string()));
        }
        info!(?peer, host = r.host, "agent said hello");
        Ok(tonic::Response::new(self.hello.clone()))
    }

    async fn sync(
        &self,
        req: tonic::Request<SyncRequest>,
    ) -> Result<tonic::Response<SyncReply>, tonic::Status> {
        let peer = req.remote_addr();
        self.sync_one(peer, &req.into_inner())
            .map(tonic::Response::new)
    }

    type SyncStreamStream = ReplyStream;

    async fn sync_stream(
        &self,
        req: tonic::Request<tonic::Streaming<SyncRequest>>,
    ) -> Result<tonic::Response<ReplyStream>, tonic::Status> {
        let peer = req.remote_addr();
        let mut requests = req.into_inner();
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let (svc, mut closing) = (self.clone(), self.closing.clone());
        // Each request is answered as it is read. The stream ends after the
        // first error (a refused or malformed request: the agent opens a new
        // stream), when the agent ends it, or when the coordinator shuts
        // down.
        tokio::spawn(async move {
            loop {
                let reply = tokio::select! {
                    r = requests.message() => match r {
                        Ok(Some(r)) => svc.sync_one(peer, &r),
                        Ok(None) => return,
                        Err(s) => Err(s),
                    },
                    _ = closing.wait_for(|c| *c) => {
                        Err(tonic::Status::unavailable("the coordinator is shutting down"))
                    }
                };
                let last = reply.is_err();
                if tx.send(reply).await.is_err() || last {
                    return;
                }
            }
        });
        Ok(tonic::Response::new(ReplyStream::new(rx)))
    }
}

/// A running coordinator: its address, and what stops it.
pub struct CoordinatorHandle {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// The state (for tests and status).
    pub core: Arc<Mutex<Core>>,
    /// The token, which the status server asks too.
    token: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    status_stop: tokio::sync::watch::Sender<bool>,
    status_tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl CoordinatorHandle {
    /// Also serves the coordinator's state (`GET /state`, JSON), Prometheus
    /// metrics (`GET /metrics`), both to requests with the coordinator's
    /// token, and the live view (`GET /`) over HTTP on `listener`, until
    /// shutdown; see [`crate::status`]. Returns the address.
    pub fn serve_status(
        &mut self,
        listener: tokio::net::TcpListener,
    ) -> std::io::Result<SocketAddr> {
        let addr = listener.local_addr()?;
        info!(%addr, "status over HTTP: / (live view), /state, /metrics");
        let core = self.core.clone();
        let snapshot: crate::status::Snapshot =
            Arc::new(move || core.lock().expect("coordinator lock").status());
        self.status_tasks.push(tokio::spawn(crate::status::serve(
            snapshot,
            self.token.clone(),
            listener,
            self.status_stop.subscribe(),
        )));
        Ok(addr)
    }

    /// Stops serving and ticking, and waits until it has.
    pub async fn shutdown(mut self) {
        let _ = self.status_stop.send(true);
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = (&mut self.task).await;
        for t in self.status_tasks.drain(..) {
            let _ = t.await;
        }
    }
}

/// Starts a coordinator on `listener` (on the current tokio runtime): the
/// gRPC service and the tick every Δ.
pub fn spawn(
    cfg: CoordinatorConfig,
    listener: tokio::net::TcpListener,
) -> Result<CoordinatorHandle, CoordinatorError> {
    spawn_on(cfg, listener, tonic::transport::Server::builder())
}

/// [`spawn`], serving gRPC over TLS with the certificate chain `cert_pem`
/// and its private key `key_pem` (PEM; agents check the chain against their
/// CA and the name they are given). Built with the `tls` feature.
#[cfg(feature = "tls")]
pub fn spawn_tls(
    cfg: CoordinatorConfig,
    listener: tokio::net::TcpListener,
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<CoordinatorHandle, CoordinatorError> {
    use tonic::transport::{Identity, ServerTlsConfig};
    let builder = tonic::transport::Server::builder()
        .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(cert_pem, key_pem)))?;
    info!("gRPC over TLS");
    spawn_on(cfg, listener, builder)
}

fn spawn_on(
    cfg: CoordinatorConfig,
    listener: tokio::net::TcpListener,
    builder: tonic::transport::Server,
) -> Result<CoordinatorHandle, CoordinatorError> {
    let core = Core::new(&cfg)?;
    let addr = listener.local_addr()?;
    let hello = HelloReply {
        protocol_version: PROTOCOL_VERSION,
        n_hosts: cfg.n_hosts,
        host_rate_bps: cfg.host_rate_bps,
        delta_us: cfg.delta.as_micros() as u64,
        scheduler: core.scheduler_name().to_string(),
        local_thresholds: local_thresholds(&runtime_spec(&cfg.scheduler)?),
    };
    info!(%addr, scheduler = %hello.scheduler, n_hosts = cfg.n_hosts, "coordinator up");
    let core = Arc::new(Mutex::new(core));
    let (closing_tx, closing) = tokio::sync::watch::channel(false);
    let svc = Service {
        core: core.clone(),
        hello,
        closing,
    };
    let server = CoordinatorServer::new(svc)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let server =
        tonic::service::interceptor::InterceptedService::new(server, check_token(&cfg.token));
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (server_stop_tx, server_stop_rx) = tokio::sync::oneshot::channel::<()>();
    let ticking = core.clone();
    let delta = cfg.delta;
    let task = tokio::spawn(async move {
        // One service, so no router: every path goes to it (an unknown
        // method gets Unimplemented from the generated server).
        let serve = tokio::spawn(builder.serve_with_incoming_shutdown(
            server,
            // Without TCP_NODELAY (which an incoming stream built from a
            // listener does not set), replies to syncs sharing a connection
            // wait on Nagle and the peer's delayed ACK: 40 ms rounds
            // (docs/benchmarks.md).
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true)),
            async {
                let _ = server_stop_rx.await;
            },
        ));
        let start = Instant::now();
        let mut every = tokio::time::interval(delta);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = every.tick() => {
                    let now = Time(start.elapsed().as_nanos() as u64);
                    ticking.lock().expect("coordinator lock").tick(now);
                }
                _ = &mut stop_rx => break,
            }
        }
        let _ = closing_tx.send(true);
        let _ = server_stop_tx.send(());
        let _ = serve.await;
    });
    Ok(CoordinatorHandle {
        addr,
        core,
        token: cfg.token,
        stop: Some(stop_tx),
        task,
        status_stop: tokio::sync::watch::channel(false).0,
        status_tasks: vec![],
    })
}

#[cfg(test)]
mod tests;
