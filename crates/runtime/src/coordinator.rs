//! The coordinator: one per cluster. It drives a scheduler from the
//! registry through the same [`Scheduler`](coflowkit_sched::Scheduler)
//! trait and [`NetState`] as the simulator's engine, on bytes the agents
//! measure rather than bytes advanced at rates.
//!
//! The fabric is the configuration's (`--topology`: the same topology
//! specs and files as the simulators and the testbed, so rates respect the
//! capacity of every hop of a tree or leaf-spine), or by default a big
//! switch of `n_hosts` hosts whose NICs run at `host_rate_bps` each way
//! (the coflow papers' model); a flow is one
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
//!    every parent's; a reopened coflow keeps the one it had);
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
//! # Pruning
//!
//! A long run must not keep what has ended. A flow a tick finishes leaves
//! its entry for a tombstone (`EndedFlow`: its coflow, destination and
//! final bytes, what a repeated report is checked against and acknowledged
//! by), and a completed coflow leaves its id and Aalo CoflowId. They are
//! kept in generations, one per eighth of the agent timeout
//! ([`GENERATIONS`]) by when they ended or were last repeated (a repeated
//! final report or unregistration moves its tombstone to the newest), and
//! a generation is dropped whole once the timeout has passed since its
//! stretch ended (on the awake clock, see "Stalls"): each is kept between
//! the timeout and nine eighths of it from its last word, forgetting costs one drop
//! per generation, and what is retained follows the throughput of the last
//! timeout, not its peak (a generation's maps are sized for what the one
//! before took, and freed whole). The scheduler's [`NetState`]
//! (which keeps every flow added) is rebuilt with only the active coflows
//! (in release order, with their arrival instants and Aalo CoflowIds) and
//! their flows (in the order they were added: the active ones at their
//! reported bytes, the finished ones started in one call of the scheduler
//! and finished at their final bytes before the next, so that a coflow's
//! bytes and a scheduler's history of it are what they were), and the
//! scheduler built afresh, once it holds [`COMPACT_MIN_FLOWS`] flows and
//! four times as many as it would keep (a cost linear in what it keeps,
//! once per three times that many ended ones). A
//! proptest checks that compacting at every tick changes no schedule under
//! `aalo`, `varys`, `fair` and `fifo`, whose allocations are functions of
//! the state and of the coflows and flows it has seen, and of what a
//! scheduler remembers beyond them, which the rebuild hands over: `aalo`
//! ranks a DAG by when it first saw one of its coflows
//! ([`coflowkit_sched::DagOrder`]), and a DAG with no active coflow keeps
//! its rank for a later child of a completed parent or a coflow reopened
//! by a late flow. A DAG can get a coflow the coordinator recognises as
//! its own only through one of its coflows not forgotten (active, or
//! completed and within the retention: a child names its parents by id,
//! and a reopened coflow keeps its CoflowId), so once the last of them is
//! forgotten the scheduler forgets the DAG too, with or without a
//! compaction: the order holds one rank per DAG with a coflow not
//! forgotten, and the coordinator counts each DAG's coflows not forgotten
//! besides its root (`Root(r)`'s coflow `r`), listing only DAGs with some
//! (none for tasks without parents). A coflow naming a forgotten parent,
//! or reusing a forgotten root's id, starts a new DAG. A rebuild changes
//! no rate and no class (the property
//! `compacting_the_state_changes_no_schedule`; for a flow left in its
//! coflow's proportional group under `varys` while the coflow moves up,
//! `compaction_under_varys_keeps_a_grouped_flows_class_when_its_coflow_moves_up`).
//! The log of completions keeps the last [`RECENT_COMPLETED`] and totals.
//!
//! Why a window of the agent timeout rather than per-client sequence
//! numbers: what must be recognised is a *repeated* final report (an
//! agent keeps a finished flow, and an unregistered coflow, in every sync
//! until an acknowledgement reaches it) and a *late* first report of a
//! flow of a completed coflow (which reopens it). Both come from an agent
//! that keeps syncing, and an agent whose syncs stop reaching the
//! coordinator for longer than the timeout is dropped: so a repeat arrives
//! within the timeout of the last one (each repeat restarts the window: an
//! agent whose replies are all lost, each past its 2 s deadline, keeps
//! repeating while its syncs are taken), and the window
//! needs no change to the protocol and no per-flow state at the agents.
//! Sequence numbers would forget sooner, but flows finish out of order
//! and a client re-announces recently closed flows to a restarted agent
//! under their old ids, so a watermark would misjudge them. A report that
//! arrives later than the window (an agent dropped and back) is taken as
//! new: its flow counted again.
//!
//! # Agents that stay away
//!
//! An agent none of whose syncs is taken for longer than the agent timeout
//! (`--agent-timeout-ms`, [`DEFAULT_AGENT_TIMEOUT`]) is dropped at the next
//! tick: each of its open flows finishes at its last reported count (those
//! bytes count in its coflow's; bytes it sent after its last report are
//! not known), and every coflow it registered and had not unregistered is
//! unregistered, so it completes once its flows on other hosts finish.
//! If it syncs again it is taken as any agent: the flows the drop finished
//! stay finished (their later bytes are not counted; their final reports
//! are acknowledged), new flows are scheduled. [`Core::drops`] counts it,
//! and [`Core::faults`] (`/state`'s `faults`) every other late or repeated
//! report, so a long run can check its totals.
//!
//! # Stalls
//!
//! Silence and age are measured on an awake clock: the coordinator's clock
//! with each gap between two ticks counted up to a quarter of the agent
//! timeout (at most 1 s, at least 2 Δ). When the coordinator's own process
//! stalls (a starved machine), the agents' syncs wait behind it; counted
//! whole, its first tick after a stall longer than the timeout would drop
//! every agent and forget every tombstone before taking those syncs, and
//! their repeats would then count again (the soak with `--stall-every`:
//! 29 agents dropped and 31,802 coflows completed twice in 150 s, stalls of
//! 4 s against a 3 s timeout). A stall is logged with its length.
//!
//! Correctness properties: a flow's reported bytes never decrease and its
//! coflow and destination never change (a sync that says otherwise is
//! refused whole, `Core::check`); a flow finishes once, and only after a
//! tick has started it (`Core::tick` step 1); every message is validated
//! before it touches the state ([`crate::validate::sync`]); every call
//! carries the shared token (`check_token`).

use crate::proto::coordinator_server::{Coordinator as CoordinatorRpc, CoordinatorServer};
use crate::proto::{FlowRate, HelloReply, HelloRequest, SyncReply, SyncRequest};
/// What faults did, as `/state` shows them (defined beside it).
pub use crate::status::{Drops, Faults};
use crate::validate::{self, Invalid, MAX_BYTES, MAX_MESSAGE_BYTES};
use crate::PROTOCOL_VERSION;
use coflowkit_model::{flow, BitsPerSec, CoflowId, CoflowSpec, DagId, DagKey, Fabric, Time};
use coflowkit_sched::{
    build, Allocation, AnyScheduler, Changes, CoflowIdx, FlowIdx, NetState, SchedulerError,
    SchedulerSpec, Timer, WorkloadHints,
};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;
use tracing::{debug, info, warn};

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
    /// The fabric the scheduler allocates on (a topology spec or file's,
    /// `--topology`): every hop's link capacity counts. `None`: a big switch
    /// of `n_hosts` NICs at `host_rate_bps`. Its hosts must be `n_hosts`.
    pub fabric: Option<Fabric>,
    /// How long an agent may stay silent (no sync taken) before it is
    /// dropped ([`Core::tick`], "Agents that stay away"), and how long the
    /// ids of finished flows and completed coflows are kept after they end
    /// (see "Pruning"). [`DEFAULT_AGENT_TIMEOUT`] unless `--agent-timeout-ms`.
    pub agent_timeout: Duration,
}

/// The default of [`CoordinatorConfig::agent_timeout`]: 30 s, well past an
/// agent's retries (Δ, doubling up to 1 s) and its sync call's timeout (2 s).
pub const DEFAULT_AGENT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most a gap between two ticks advances the awake clock
/// ([`Core::tick`]; "Stalls" in the module doc): a quarter of the agent
/// timeout, at most 1 s, and at least 2 Δ.
fn max_awake_step(delta: Duration, agent_timeout: Duration) -> u64 {
    let step = (agent_timeout / 4)
        .min(Duration::from_secs(1))
        .max(2 * delta);
    step.as_nanos().min(u64::MAX as u128) as u64
}

/// The state's flows from which a tick may compact it ([`Core::tick`]):
/// below this, ended flows cost less than rebuilding. The state and the
/// scheduler keep about 2 KB per flow added (its coflow's included), so
/// this bounds the sawtooth of memory between compactions (about 2 MB);
/// a compaction costs what is active, at most a quarter of this.
pub const COMPACT_MIN_FLOWS: usize = 1 << 10;

/// Completed coflows kept for [`Core::completed_coflows`] (the most recent
/// ones; between this and twice this many).
pub const RECENT_COMPLETED: usize = 4096;

/// A flow's key: its sending host and its agent's id of it.
type FlowKey = (u32, u64);

/// A flow a compaction keeps ([`Core::compact_if_due`]).
enum Kept {
    /// An active flow, by its entry.
    Active(FlowKey),
    /// A finished flow of an active coflow, by what the state knew of it.
    Finished {
        coflow: u64,
        src: u32,
        dst: u32,
        size_known: bool,
        bytes: f64,
    },
}

/// [`Core::generation_ns`] for a retention of `retain_ns`: an eighth of it,
/// at least 1 ns.
fn generation_ns(retain_ns: u128) -> u64 {
    (retain_ns / u128::from(GENERATIONS)).clamp(1, u64::MAX as u128) as u64
}

/// A finished flow's tombstone: what a repeated report of it is checked
/// against (its coflow and destination never change, its bytes never go
/// back) and acknowledged by.
#[derive(Debug, Clone, Copy)]
struct EndedFlow {
    coflow: u64,
    bytes: u64,
    dst: u32,
}

/// The flows that finished and the coflows that completed in one stretch
/// of [`Core::generation_ns`] (from `start`): kept together, and forgotten
/// together once the retention has passed since the stretch's end.
#[derive(Debug)]
struct Generation {
    start: Time,
    flows: HashMap<FlowKey, EndedFlow>,
    /// Completed coflows, with their Aalo CoflowId (a later coflow may
    /// name one as a parent).
    coflows: HashMap<u64, DagId>,
}

/// How many generations the retention is cut into: an ended id is kept
/// between the retention and nine eighths of it.
pub const GENERATIONS: u64 = 8;

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
    /// The host whose agent registered it (reported it among its coflows).
    owner: Option<u32>,
    parents: Vec<u64>,
    /// Its Aalo CoflowId, from when it arrived (step 3); a coflow reopened
    /// by a late flow has the one it completed with from the start.
    dag: Option<DagId>,
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
    /// Reported finished (or finished by a drop); a tick finishes it in the
    /// state and leaves an [`EndedFlow`] in its place.
    finished: bool,
    idx: Option<FlowIdx>,
}

/// The coordinator's state and scheduler; see the module doc.
pub struct Core {
    n_hosts: u32,
    state: NetState,
    sched: AnyScheduler,
    /// What the scheduler was built from, to build it again when the state
    /// is compacted.
    sched_text: String,
    hints: WorkloadHints,
    alloc: Allocation,
    changes: Changes,
    /// Coflows reported and not completed.
    coflows: HashMap<u64, CoflowEntry>,
    /// Flows reported and not yet finished by a tick.
    flows: HashMap<FlowKey, FlowEntry>,
    /// Finished flows and completed coflows not yet forgotten, by when
    /// they ended, oldest first.
    ended: VecDeque<Generation>,
    /// The stretch of time one generation covers (ns): the retention over
    /// [`GENERATIONS`].
    generation_ns: u64,
    /// The flow of each state index (rebuilt when the state is compacted).
    entry_of_idx: Vec<FlowKey>,
    /// How many coflows each DAG has, besides its root (coflow `r` of
    /// `Root(r)`), that are not forgotten: arrived or reopened, or
    /// completed and remembered. A DAG with none is not listed, and none is
    /// for a scheduler without a DAG order (see "Pruning").
    dag_joiners: HashMap<DagKey, u32>,
    new_coflows: Vec<u64>,
    new_flows: Vec<FlowKey>,
    finishing: Vec<FlowKey>,
    /// How long ended ids are kept, and agents may stay silent (ns).
    retain: u64,
    /// The state's flows from which a tick compacts it.
    compact_min: usize,
    compactions: u64,
    /// Coflows added to the state since its last compaction.
    state_coflows: usize,
    timer: Timer,
    rates: Vec<Vec<FlowRate>>,
    reports: Vec<(FlowIdx, f64)>,
    /// The most recent completions (see [`RECENT_COMPLETED`]), and the
    /// totals of all.
    log: Vec<CompletedCoflow>,
    n_completed: u64,
    completed_bytes: u64,
    host_rate_bps: f64,
    mark_classes: bool,
    /// Per host: syncs taken, and when the last one was.
    syncs: Vec<u64>,
    last_sync: Vec<Option<Instant>>,
    /// Per host: the coordinator's clock (the last tick's) at its last sync
    /// taken, and whether it was dropped for staying away since.
    seen_at: Vec<Option<Time>>,
    dropped: Vec<bool>,
    drops: Drops,
    faults: Faults,
    /// The awake clock: the coordinator's clock with each gap between two
    /// ticks counted up to `max_awake_step` (see "Stalls" in the module
    /// doc). Agents' silence and tombstones' age are measured on it.
    awake: Time,
    max_awake_step: u64,
    /// The coordination interval Δ (for `max_awake_step`).
    delta: Duration,
    /// The last tick's instant (the coordinator's clock).
    last_now: Option<Time>,
    refused: u64,
    /// Per host: the session and number of the last numbered sync taken.
    sync_seq: Vec<(u64, u64)>,
    /// Stale syncs answered without being taken.
    stale: u64,
    ticks: u64,
    /// How long the last tick took (the scheduler's time included).
    last_tick: Duration,
}

/// How many entries the coordinator holds (what a long run must keep
/// bounded; the soak test watches these).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryCounts {
    /// Flow entries: reported and not yet finished by a tick.
    pub flows: usize,
    /// Coflows not completed.
    pub coflows: usize,
    /// Finished flows' tombstones not yet forgotten.
    pub ended_flows: usize,
    /// Completed coflows' ids (with their Aalo CoflowIds) not yet forgotten.
    pub completed: usize,
    /// Generations the tombstones are kept in (at most [`GENERATIONS`] + 2).
    pub generations: usize,
    /// Flows and coflows in the scheduler's state (active and ended since
    /// its last compaction).
    pub state_flows: usize,
    /// See `state_flows`.
    pub state_coflows: usize,
    /// DAGs in the scheduler's order ([`coflowkit_sched::DagOrder`]; 0
    /// for a scheduler without one): those with a coflow not forgotten.
    pub dags: usize,
    /// DAGs with a coflow other than their root not forgotten (counted for
    /// a scheduler with a DAG order).
    pub dag_joiners: usize,
    /// Completions kept for [`Core::completed_coflows`].
    pub log: usize,
}

/// The slowest host NIC of `fabric` (the lower of each host's uplink and
/// downlink), bits/s: what agents take as their host's rate when they
/// share it out without a coordinator.
pub fn slowest_nic_bps(fabric: &Fabric) -> f64 {
    (0..fabric.n_hosts())
        .flat_map(|h| {
            let h = coflowkit_model::HostId(h);
            [fabric.uplink(h), fabric.downlink(h)]
        })
        .map(|l| fabric.link(l).capacity.0)
        .fold(f64::INFINITY, f64::min)
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
        let fabric = match &cfg.fabric {
            Some(f) if f.n_hosts() != cfg.n_hosts => {
                return Err(CoordinatorError::Config(format!(
                    "the fabric has {} hosts, the cluster {}: give --hosts {} or a fabric of {} hosts",
                    f.n_hosts(),
                    cfg.n_hosts,
                    f.n_hosts(),
                    cfg.n_hosts
                )))
            }
            Some(f) => f.clone(),
            None => Fabric::big_switch(cfg.n_hosts, BitsPerSec(cfg.host_rate_bps))
                .map_err(|e| CoordinatorError::Config(e.to_string()))?,
        };
        if cfg.agent_timeout.is_zero() {
            return Err(CoordinatorError::Config(
                "agent timeout 0: give a positive timeout".into(),
            ));
        }
        let sched = build_scheduler(&cfg.scheduler, &cfg.hints)?;
        let n = cfg.n_hosts as usize;
        Ok(Core {
            n_hosts: cfg.n_hosts,
            state: NetState::new(fabric),
            sched,
            sched_text: cfg.scheduler.clone(),
            hints: cfg.hints.clone(),
            alloc: Allocation::default(),
            changes: Changes::default(),
            coflows: HashMap::new(),
            flows: HashMap::new(),
            ended: VecDeque::new(),
            generation_ns: generation_ns(cfg.agent_timeout.as_nanos()),
            entry_of_idx: vec![],
            dag_joiners: HashMap::new(),
            new_coflows: vec![],
            new_flows: vec![],
            finishing: vec![],
            retain: cfg.agent_timeout.as_nanos().min(u64::MAX as u128) as u64,
            compact_min: COMPACT_MIN_FLOWS,
            compactions: 0,
            state_coflows: 0,
            timer: Timer::default(),
            rates: vec![vec![]; n],
            reports: vec![],
            log: vec![],
            n_completed: 0,
            completed_bytes: 0,
            host_rate_bps: cfg.host_rate_bps,
            mark_classes: cfg.mark_classes,
            syncs: vec![0; n],
            last_sync: vec![None; n],
            seen_at: vec![None; n],
            dropped: vec![false; n],
            drops: Drops::default(),
            faults: Faults::default(),
            awake: Time(0),
            max_awake_step: max_awake_step(cfg.delta, cfg.agent_timeout),
            delta: cfg.delta,
            last_now: None,
            refused: 0,
            sync_seq: vec![(0, 0); n],
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
            let key = (r.host, f.flow_id);
            let e = match self.flows.get(&key) {
                Some(e) => EndedFlow {
                    coflow: e.coflow,
                    bytes: e.bytes,
                    dst: e.dst,
                },
                None => match self.ended_flow(key) {
                    Some(&t) => t,
                    None => continue,
                },
            };
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
                owner: None,
                parents: vec![],
                dag: None,
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
                self.seen_at[h] = Some(self.awake);
                if std::mem::take(&mut self.dropped[h]) {
                    self.drops.returned += 1;
                    warn!(
                        host = h,
                        "an agent dropped for staying away synced again; the flows the drop \
                         finished stay finished"
                    );
                }
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
            if self.completed_dag(c.coflow_id).is_some() {
                if c.unregistered {
                    completed_coflows.push(c.coflow_id);
                    self.faults.repeated_unregisters += 1;
                    // Kept for the timeout from now, as a repeated final
                    // report of a flow is.
                    let dag = self.take_completed(c.coflow_id).expect("listed");
                    let awake = self.awake;
                    self.generation(awake).coflows.insert(c.coflow_id, dag);
                }
                continue;
            }
            if c.unregistered
                && !self.coflows.contains_key(&c.coflow_id)
                && !r.flows.iter().any(|f| f.coflow_id == c.coflow_id)
            {
                self.faults.empty_coflows += 1;
            }
            let e = self.coflow_entry(c.coflow_id);
            if e.idx.is_none() && !c.parents.is_empty() {
                e.parents = c.parents.clone();
            }
            e.owner = Some(r.host);
            e.unregistered |= c.unregistered;
        }
        let mut acks = vec![];
        for f in &r.flows {
            let key = (r.host, f.flow_id);
            if !self.flows.contains_key(&key) {
                if let Some(mut t) = self.take_ended_flow(key) {
                    // A repeated report of a finished flow (its final one
                    // until acknowledged; or later bytes from an agent
                    // dropped and back, not counted). Its tombstone is kept
                    // for the timeout from now: the agent repeats it until
                    // an acknowledgement reaches it.
                    t.bytes = t.bytes.max(f.bytes_sent);
                    if f.finished {
                        acks.push(f.flow_id);
                        self.faults.repeated_finals += 1;
                    }
                    let awake = self.awake;
                    self.generation(awake).flows.insert(key, t);
                    continue;
                }
                if let Some(dag) = self.take_completed(f.coflow_id) {
                    self.faults.reopened_coflows += 1;
                    // Its owner unregistered it before this host's first
                    // report of the flow (a short flow on another host):
                    // it arrives again, in its DAG and place in it, and
                    // completes when its flows do.
                    warn!(
                        coflow = f.coflow_id,
                        host = r.host,
                        "a flow joined a completed coflow; reopening it"
                    );
                    let e = self.coflow_entry(f.coflow_id);
                    e.unregistered = true;
                    e.dag = Some(dag);
                } else if !self.coflows.contains_key(&f.coflow_id) {
                    self.faults.orphan_flows += 1;
                }
                self.coflow_entry(f.coflow_id).n_open += 1;
                self.flows.insert(
                    key,
                    FlowEntry {
                        host: r.host,
                        agent_id: f.flow_id,
                        coflow: f.coflow_id,
                        dst: f.dst_host,
                        size_hint: f.size_hint,
                        bytes: 0,
                        finished: false,
                        idx: None,
                    },
                );
                self.new_flows.push(key);
            }
            let e = self.flows.get_mut(&key).expect("inserted");
            e.bytes = f.bytes_sent;
            if f.finished {
                if !e.finished {
                    e.finished = true;
                    self.finishing.push(key);
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
            self.coflows
                .get(&p)
                .and_then(|c| c.dag)
                .or_else(|| self.completed_dag(p))
                .unwrap_or(DagId {
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
        let gap = self.last_now.map_or(0, |t| now.0.saturating_sub(t.0));
        if gap > self.max_awake_step {
            warn!(
                gap_ms = gap / 1_000_000,
                "the coordinator stalled between two ticks; its awake clock (agent timeout, \
                 tombstones) counts only part of it"
            );
        }
        self.awake = Time(self.awake.0 + gap.min(self.max_awake_step));
        self.last_now = Some(now);
        let awake = self.awake;
        self.state.set_now(now);
        // 0. Agents that stayed away: their open flows finish (step 1).
        self.drop_silent_agents(awake);
        // 1. Flows that finished, once a tick has started them.
        let finishing = std::mem::take(&mut self.finishing);
        for key in finishing {
            let Some(e) = self.flows.get(&key) else {
                continue;
            };
            let Some(f) = e.idx else {
                self.finishing.push(key);
                continue;
            };
            let e = self.flows.remove(&key).expect("listed");
            self.state.finish_flow_measured(f, e.bytes as f64);
            self.alloc.forget(f);
            self.changes.finished.push(f);
            if let Some(c) = self.coflows.get_mut(&e.coflow) {
                c.n_open -= 1;
                c.n_done += 1;
                c.bytes_done += e.bytes;
            }
            self.generation(awake).flows.insert(
                key,
                EndedFlow {
                    coflow: e.coflow,
                    bytes: e.bytes,
                    dst: e.dst,
                },
            );
        }
        // 2. Coflows unregistered with nothing open.
        let mut done: Vec<u64> = self
            .coflows
            .iter()
            .filter(|(_, c)| c.unregistered && c.n_open == 0 && c.idx.is_some())
            .map(|(&id, _)| id)
            .collect();
        done.sort_unstable();
        for id in done {
            let c = self.coflows.remove(&id).expect("listed");
            let idx = c.idx.expect("arrived");
            self.state.complete_coflow(idx);
            self.changes.finished_coflows.push(idx);
            let dag = c.dag.expect("arrived");
            self.generation(awake).coflows.insert(id, dag);
            let cct_ms = now.0.saturating_sub(c.arrived.0) as f64 / 1e6;
            debug!(
                coflow = id,
                flows = c.n_done,
                bytes = c.bytes_done,
                cct_ms,
                "coflow complete"
            );
            self.n_completed += 1;
            self.completed_bytes += c.bytes_done;
            if self.log.len() >= 2 * RECENT_COMPLETED {
                self.log.drain(..self.log.len() - RECENT_COMPLETED);
            }
            self.log.push(CompletedCoflow {
                id,
                n_flows: c.n_done,
                bytes: c.bytes_done,
                arrived: c.arrived,
                completed: now,
            });
        }
        // 2a. Ended flows and coflows kept long enough are forgotten; the
        // state is compacted once ended flows outweigh the active ones.
        if self.forget_ended(awake) {
            self.give_back_memory();
        }
        self.compact_if_due(now);
        // 3. Coflows that arrived.
        for id in std::mem::take(&mut self.new_coflows) {
            let Some(c) = self.coflows.get(&id) else {
                continue;
            };
            let dag = match c.dag {
                Some(dag) => dag,
                None => {
                    let dag = self.dag_of(id, &c.parents);
                    self.join_dag(id, dag.dag);
                    dag
                }
            };
            let c = self.state.add_coflow(&CoflowSpec::new(id, now, vec![]));
            self.state_coflows += 1;
            self.state.set_dag(c, dag);
            self.state.release_coflow(c);
            self.changes.arrived.push(c);
            let e = self.coflows.get_mut(&id).expect("listed");
            e.idx = Some(c);
            e.dag = Some(dag);
            e.arrived = now;
        }
        // 4. Flows that started.
        for key in std::mem::take(&mut self.new_flows) {
            let e = &self.flows[&key];
            let c = self.coflows[&e.coflow].idx.expect("arrived in step 3");
            let f = self.add_started_flow(c, key);
            self.changes.started.push(f);
        }
        // 5. Measured progress, the scheduler, its allocation applied.
        self.reports.clear();
        for &f in self.state.active() {
            let e = &self.flows[&self.entry_of_idx[f as usize]];
            self.reports.push((f, e.bytes as f64));
        }
        self.state.resync_sent(&self.reports);
        self.changes.resynced = true;
        self.allocate(now);
        // 6. Rates per host.
        for r in &mut self.rates {
            r.clear();
        }
        for &f in self.state.active() {
            let e = &self.flows[&self.entry_of_idx[f as usize]];
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

    /// Hands the changes since the last call to the scheduler (timed) and
    /// applies the rates it allocates to the state.
    fn allocate(&mut self, now: Time) {
        self.timer.call(
            &mut self.sched,
            now,
            &self.state,
            &mut self.changes,
            &mut self.alloc,
        );
        self.state.apply_allocation(&mut self.alloc, &mut ());
    }

    /// Adds flow `key` to coflow `c` of the state, started, and keeps its
    /// index; returns it.
    fn add_started_flow(&mut self, c: CoflowIdx, key: FlowKey) -> FlowIdx {
        let e = &self.flows[&key];
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
            self.entry_of_idx.resize(f as usize + 1, (u32::MAX, 0));
        }
        self.entry_of_idx[f as usize] = key;
        self.flows.get_mut(&key).expect("listed").idx = Some(f);
        f
    }

    /// Step 0 of a tick: drops every agent whose last sync taken was more
    /// than the agent timeout before `now` (on the awake clock). Its open flows are marked
    /// finished at their last reported count (step 1 finishes them, and
    /// their coflows count those bytes), and the coflows it registered are
    /// unregistered (they complete once their flows on other hosts finish).
    fn drop_silent_agents(&mut self, now: Time) {
        for h in 0..self.n_hosts as usize {
            let Some(seen) = self.seen_at[h] else {
                continue;
            };
            if self.dropped[h] || now.0.saturating_sub(seen.0) <= self.retain {
                continue;
            }
            self.dropped[h] = true;
            self.drops.agents += 1;
            let mut open: Vec<FlowKey> = self
                .flows
                .iter()
                .filter(|(_, e)| e.host as usize == h && !e.finished)
                .map(|(&k, _)| k)
                .collect();
            open.sort_unstable();
            let mut bytes = 0;
            for &k in &open {
                let e = self.flows.get_mut(&k).expect("listed");
                e.finished = true;
                bytes += e.bytes;
                self.finishing.push(k);
            }
            let mut owned = 0;
            for c in self.coflows.values_mut() {
                if c.owner == Some(h as u32) && !c.unregistered {
                    c.unregistered = true;
                    owned += 1;
                }
            }
            self.drops.flows += open.len() as u64;
            self.drops.bytes += bytes;
            self.drops.coflows += owned;
            warn!(
                host = h,
                silent_ms = now.0.saturating_sub(seen.0) / 1_000_000,
                flows = open.len(),
                bytes,
                coflows = owned,
                "dropped an agent that stayed away: its open flows finish at their last \
                 count, its coflows are unregistered"
            );
        }
    }

    /// The generation that flows and coflows ending at `now` go to: the
    /// newest, or a new one once the newest has covered its stretch. A new
    /// generation's maps are sized for what the one before it took, so
    /// that they do not grow (and leave their smaller tables behind) in a
    /// steady run.
    fn generation(&mut self, now: Time) -> &mut Generation {
        let w = self.generation_ns;
        if self
            .ended
            .back()
            .is_none_or(|g| now.0 >= g.start.0.saturating_add(w))
        {
            let (nf, nc) = self
                .ended
                .back()
                .map_or((0, 0), |g| (g.flows.len(), g.coflows.len()));
            self.ended.push_back(Generation {
                start: now,
                flows: HashMap::with_capacity(nf),
                coflows: HashMap::with_capacity(nc),
            });
        }
        self.ended.back_mut().expect("pushed")
    }

    /// A finished flow's tombstone, if it is not forgotten yet.
    fn ended_flow(&self, key: FlowKey) -> Option<&EndedFlow> {
        self.ended.iter().rev().find_map(|g| g.flows.get(&key))
    }

    /// Takes a finished flow's tombstone out of its generation (the caller
    /// puts it back, in the newest).
    fn take_ended_flow(&mut self, key: FlowKey) -> Option<EndedFlow> {
        self.ended
            .iter_mut()
            .rev()
            .find_map(|g| g.flows.remove(&key))
    }

    /// Takes a completed coflow's id out of its generation; its Aalo
    /// CoflowId.
    fn take_completed(&mut self, id: u64) -> Option<DagId> {
        self.ended
            .iter_mut()
            .rev()
            .find_map(|g| g.coflows.remove(&id))
    }

    /// A completed coflow's Aalo CoflowId, if it is not forgotten yet.
    fn completed_dag(&self, id: u64) -> Option<DagId> {
        self.ended
            .iter()
            .rev()
            .find_map(|g| g.coflows.get(&id).copied())
    }

    /// Forgets the generations whose stretch ended at least the retention
    /// before `now` (see "Pruning" in the module doc), and the DAGs left
    /// with no coflow; whether it forgot any.
    fn forget_ended(&mut self, now: Time) -> bool {
        let mut forgot = false;
        while let Some(g) = self.ended.front() {
            let end = g.start.0.saturating_add(self.generation_ns);
            if now.0 < end.saturating_add(self.retain) {
                break;
            }
            let g = self.ended.pop_front().expect("listed");
            forgot = true;
            if self.sched.dag_order().is_none() {
                continue;
            }
            let mut gone: Vec<(u64, DagKey)> =
                g.coflows.iter().map(|(&id, d)| (id, d.dag)).collect();
            // In a fixed order, though the outcome does not depend on it.
            gone.sort_unstable_by_key(|&(id, _)| id);
            for (id, dag) in gone {
                self.leave_dag(id, dag);
            }
        }
        forgot
    }

    /// Coflow `id` of DAG `dag` arrived for the first time (step 3): if it
    /// is not the DAG's root and the scheduler keeps a DAG order, it is
    /// one more of the DAG's joiners.
    fn join_dag(&mut self, id: u64, dag: DagKey) {
        if dag != DagKey::Root(CoflowId(id)) && self.sched.dag_order().is_some() {
            *self.dag_joiners.entry(dag).or_insert(0) += 1;
        }
    }

    /// Coflow `id` of DAG `dag` is forgotten: if the DAG has no coflow
    /// left (arrived, reopened or remembered as completed), no later
    /// coflow can join it but by naming ids the coordinator has forgotten
    /// too, so the scheduler forgets it (such a coflow then starts a new
    /// DAG, as it would without a compaction).
    fn leave_dag(&mut self, id: u64, dag: DagKey) {
        if dag == DagKey::Root(CoflowId(id)) {
            if self.dag_joiners.contains_key(&dag) {
                return;
            }
        } else {
            let Some(n) = self.dag_joiners.get_mut(&dag) else {
                return;
            };
            *n -= 1;
            if *n > 0 {
                return;
            }
            self.dag_joiners.remove(&dag);
            if let DagKey::Root(CoflowId(root)) = dag {
                let is_root = |d: Option<DagId>| d.is_some_and(|d| d.dag == dag);
                if is_root(self.coflows.get(&root).and_then(|c| c.dag))
                    || is_root(self.completed_dag(root))
                {
                    return;
                }
            }
        }
        if let Some(o) = self.sched.dag_order_mut() {
            o.forget(dag);
        }
    }

    /// After a backlog (a stalled round lets tasks pile up), the maps of
    /// what is active keep the capacity of their peak and the allocator
    /// keeps the freed memory: resident memory would stay at the peak for
    /// the run's life. Each time a generation is forgotten (every eighth
    /// of the agent timeout in a steady run), this shrinks an active map
    /// holding under a quarter of its capacity to twice what it holds, and
    /// asks glibc's allocator to return its free pages to the system
    /// (`malloc_trim`), so resident memory follows what is live.
    fn give_back_memory(&mut self) {
        fn shrink<K: std::hash::Hash + Eq, V>(m: &mut HashMap<K, V>) {
            if m.capacity() > 4 * m.len().max(64) {
                m.shrink_to(2 * m.len());
            }
        }
        shrink(&mut self.coflows);
        shrink(&mut self.flows);
        shrink(&mut self.dag_joiners);
        if let Some(o) = self.sched.dag_order_mut() {
            o.shrink();
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only returns the allocator's free memory to
        // the system; it touches no memory in use.
        unsafe {
            libc::malloc_trim(0);
        }
    }

    /// Rebuilds the state and the scheduler with only the active coflows
    /// and flows once the state holds at least `compact_min` flows and four
    /// times as many as are active (see "Pruning" in the module doc).
    fn compact_if_due(&mut self, now: Time) {
        let (n, active) = (self.state.n_flows(), self.state.active().len());
        if n < self.compact_min || n < 4 * active {
            return;
        }
        // What a rebuild keeps: every flow of an active coflow, finished
        // ones too (their bytes are the coflow's, and a scheduler ranks
        // the coflow by them).
        let kept = active
            + self
                .coflows
                .values()
                .filter(|c| c.idx.is_some())
                .map(|c| c.n_done as usize)
                .sum::<usize>();
        if n < 4 * kept {
            return;
        }
        let mut coflow_id: HashMap<CoflowIdx, u64> = HashMap::new();
        for (&id, c) in &self.coflows {
            if let Some(idx) = c.idx {
                coflow_id.insert(idx, id);
            }
        }
        let order: Vec<u64> = self
            .state
            .observed()
            .active_coflows()
            .iter()
            .map(|c| coflow_id[c])
            .collect();
        // The flows kept, in the order they were added (a scheduler breaks
        // ties by it): an active one by its entry, a finished one by what
        // the state knows of it (its entry is a tombstone by now).
        let old = self.state.clairvoyant();
        let flows: Vec<Kept> = (0..n as FlowIdx)
            .filter_map(|f| {
                let c = *coflow_id.get(&old.coflow_of(f))?;
                if old.is_active(f) {
                    return Some(Kept::Active(self.entry_of_idx[f as usize]));
                }
                let o = old.observed();
                (o.start(f) != Time::NEVER).then(|| Kept::Finished {
                    coflow: c,
                    src: o.src(f).0,
                    dst: o.dst(f).0,
                    size_known: o.size_known(f),
                    bytes: o.sent(f),
                })
            })
            .collect();
        self.state = NetState::new(self.state.fabric().clone());
        self.state.set_now(now);
        // What the scheduler remembers of coflows no longer active (the
        // DAGs it has seen, each kept while one of its coflows is) goes to
        // the new one.
        let dags = self.sched.dag_order_mut().map(std::mem::take);
        self.sched = build_scheduler(&self.sched_text, &self.hints)
            .expect("the scheduler was built from this spec before");
        if let (Some(dags), Some(o)) = (dags, self.sched.dag_order_mut()) {
            *o = dags;
        }
        self.alloc = Allocation::default();
        self.changes = Changes::default();
        self.timer = Timer::default();
        self.entry_of_idx.clear();
        self.state_coflows = 0;
        for id in order {
            let arrived = self.coflows[&id].arrived;
            let c = self.state.add_coflow(&CoflowSpec::new(id, arrived, vec![]));
            self.state_coflows += 1;
            self.state
                .set_dag(c, self.coflows[&id].dag.expect("an active coflow arrived"));
            self.state.release_coflow(c);
            self.changes.arrived.push(c);
            self.coflows.get_mut(&id).expect("listed").idx = Some(c);
        }
        let mut finished = vec![];
        for k in flows {
            let f = match k {
                Kept::Active(key) => {
                    let c = self.coflows[&self.flows[&key].coflow]
                        .idx
                        .expect("an active flow's coflow is active");
                    self.add_started_flow(c, key)
                }
                Kept::Finished {
                    coflow,
                    src,
                    dst,
                    size_known,
                    bytes,
                } => {
                    let c = self.coflows[&coflow].idx.expect("kept coflows are active");
                    let spec = if size_known {
                        flow(src, dst, (bytes as u64).max(1))
                    } else {
                        flow(src, dst, MAX_BYTES).size_unknown()
                    };
                    let f = self.state.add_flow(c, &spec);
                    let started = self.state.start_flow(f);
                    debug_assert!(started, "sizes are positive");
                    self.alloc.resize(self.state.n_flows());
                    if self.entry_of_idx.len() <= f as usize {
                        self.entry_of_idx.resize(f as usize + 1, (u32::MAX, 0));
                    }
                    finished.push((f, bytes));
                    f
                }
            };
            self.changes.started.push(f);
        }
        if !finished.is_empty() {
            // The finished flows start in one call of the scheduler and
            // finish before the next (a scheduler takes a flow's start
            // before its finish, as in the run that added them).
            self.allocate(now);
            for (f, bytes) in finished {
                self.state.finish_flow_measured(f, bytes);
                self.alloc.forget(f);
                self.changes.finished.push(f);
            }
        }
        self.compactions += 1;
        debug!(
            flows = n,
            active,
            kept,
            compactions = self.compactions,
            "compacted the state"
        );
    }

    /// The rate flow `f` is to send at now, bits/s.
    fn rate_of(&self, f: FlowIdx, now: Time) -> f64 {
        self.alloc
            .rate_now(&self.state, f, now)
            .min(validate::MAX_RATE_BPS)
    }

    /// The most recent coflows completed (at least the last
    /// [`RECENT_COMPLETED`], or all if fewer), in the order they completed
    /// (a coflow reopened by a late flow and completed again appears twice).
    /// [`Core::completed_totals`] counts them all.
    pub fn completed_coflows(&self) -> &[CompletedCoflow] {
        &self.log
    }

    /// Coflows completed since the start, and their bytes.
    pub fn completed_totals(&self) -> (u64, u64) {
        (self.n_completed, self.completed_bytes)
    }

    /// What dropping agents that stayed away did so far.
    pub fn drops(&self) -> Drops {
        self.drops
    }

    /// What faults and late reports did so far ([`Faults`]).
    pub fn faults(&self) -> Faults {
        Faults {
            drops: self.drops,
            ..self.faults
        }
    }

    /// Times the state was compacted.
    pub fn compactions(&self) -> u64 {
        self.compactions
    }

    /// Sets how long ended ids are kept and agents may stay silent (the
    /// configuration's `agent_timeout`), for tests and benchmarks that run
    /// a long run's life in seconds.
    pub fn set_agent_timeout(&mut self, d: Duration) {
        self.retain = d.as_nanos().clamp(1, u64::MAX as u128) as u64;
        self.generation_ns = generation_ns(d.as_nanos());
        self.max_awake_step = max_awake_step(self.delta, d);
    }

    /// Sets the state's flows from which a tick may compact it
    /// ([`COMPACT_MIN_FLOWS`]), for tests and benchmarks.
    pub fn set_compact_min(&mut self, n: usize) {
        self.compact_min = n;
    }

    /// The coordinator's entries, by kind ([`EntryCounts`]).
    pub fn entry_counts(&self) -> EntryCounts {
        EntryCounts {
            flows: self.flows.len(),
            coflows: self.coflows.len(),
            ended_flows: self.ended.iter().map(|g| g.flows.len()).sum(),
            completed: self.ended.iter().map(|g| g.coflows.len()).sum(),
            generations: self.ended.len(),
            state_flows: self.state.n_flows(),
            state_coflows: self.state_coflows,
            dags: self.sched.dag_order().map_or(0, |o| o.len()),
            dag_joiners: self.dag_joiners.len(),
            log: self.log.len(),
        }
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
        let rate_of: HashMap<FlowKey, &FlowRate> = self
            .rates
            .iter()
            .enumerate()
            .flat_map(|(h, rs)| rs.iter().map(move |r| ((h as u32, r.flow_id), r)))
            .collect();
        for e in self.flows.values() {
            let r = rate_of.get(&(e.host, e.agent_id)).copied();
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
        flows.sort_by_key(|f| (f.host, f.flow_id));
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
            completed_coflows: self.n_completed,
            completed_bytes: self.completed_bytes,
            faults: self.faults(),
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

use crate::token::same_token;

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
        scheduler_spec: cfg.scheduler.clone(),
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
