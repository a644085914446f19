//! The agent: one per host, between the host's applications and the
//! coordinator.
//!
//! Applications reach it only through a Unix socket whose file permissions
//! (`socket_mode`, 0o660 by default) say who may; each connection is one
//! client. A client registers coflows (ids are minted here, unique across
//! the cluster: `(host + 1) << 40 | n`, no round trip), opens one flow per
//! coflow-aware writer, reports the bytes its writers have written every Δ
//! (the reply is their schedule), and closes flows. A client that
//! disconnects has its writers' open flows closed at their last count and
//! its coflows unregistered. Its watched flows (named by address, counted
//! in the kernel) stay open and enforced, for the application's bytes go on
//! whatever became of the client that named them: the client's next
//! connection takes them back (`ReopenFlow` with their address), and one
//! nobody takes back closes at its kernel count once it has been idle for
//! the client timeout.
//!
//! Every Δ the agent sends the coordinator its coflows and flows with their
//! cumulative bytes (so a lost or repeated sync never double counts) and
//! keeps the schedule it gets back; it forgets a finished flow once the
//! coordinator acknowledges it, and an unregistered coflow once the
//! coordinator says it completed.
//!
//! Faults:
//! * the coordinator cannot be reached: the agent keeps its counts and the
//!   last schedule and retries with exponential backoff (Δ doubling up to
//!   [`MAX_BACKOFF`]); once syncs have failed for
//!   [`AgentOptions::fallback_after`], no flow stays paused: every open flow
//!   gets an even share of the host's NIC, in its last class. Because every
//!   sync carries every coflow (unregistered ones until they are reported
//!   complete) and every flow with its cumulative bytes, a restarted
//!   coordinator rebuilds its state from the first sync of each agent;
//! * the agent restarts: it mints coflow and flow ids from the clock
//!   (milliseconds and microseconds since 1970), so a new incarnation never
//!   hands out an id of an earlier one, and takes back what reconnecting
//!   clients announce again (`AdoptCoflow`, `ReopenFlow` with the earlier
//!   id and the bytes written so far: the coordinator sees the same flow
//!   continue, never a second one);
//! * a client that goes silent (its reporter sends every Δ, even with no
//!   flow open) for [`AgentOptions::client_timeout`] is disconnected: its
//!   writers' flows close at their last count, its watched flows wait to
//!   be taken back (above), and its coflows are unregistered.
//!
//! Every client message is validated ([`crate::validate::client_request`])
//! and must name flows of its own connection; a malformed or oversized frame
//! closes that connection with a logged reason, and the agent carries on.

use crate::proto::client_request::Kind;
use crate::proto::{self, agent_reply, AgentReply, ClientRequest, FlowRate};
use crate::validate;
use crate::wire::{self, FrameError};
use crate::PROTOCOL_VERSION;
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use thiserror::Error;
use tokio::net::{UnixListener, UnixStream};
use tracing::{debug, info, warn};

mod local;
mod sync;
mod transparent;

pub use transparent::{Ceiling, Enforcer, Transparent, Watch, HEADER_BYTES};

#[cfg(feature = "tls")]
pub use sync::coordinator_client_tls;
use sync::sync_loop;
pub use sync::{coordinator_client, Client};

/// How an agent runs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// This host's number in the cluster.
    pub host: u32,
    /// The coordinator's URL (`http://HOST:PORT`).
    pub coordinator: String,
    /// The cluster's shared token.
    pub token: String,
    /// Where to put the Unix socket for clients.
    pub socket: PathBuf,
    /// The socket file's permissions.
    pub socket_mode: u32,
}

/// The longest wait between two attempts to reach the coordinator.
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// How an agent handles faults (defaults: [`AgentOptions::default`]).
#[derive(Debug, Clone, Copy)]
pub struct AgentOptions {
    /// A client connection silent for this long is closed and cleaned up
    /// (its writers' flows finish at their last count, its coflows are
    /// unregistered); a watched flow nobody takes back closes once its
    /// count has stood still this long. Clients report every Δ; default
    /// 10 s.
    pub client_timeout: Duration,
    /// Once syncs have failed for this long, no flow stays paused: each
    /// open flow gets an even share of the NIC until the coordinator is
    /// back. Default 200 ms (20 default Δ).
    pub fallback_after: Duration,
    /// How long to keep trying to say hello to a coordinator that cannot
    /// be reached (connection refused, timeout), with backoff up to
    /// [`MAX_BACKOFF`], before giving up; `None`: for ever. A coordinator
    /// that answers and refuses (a wrong token, say) is not retried.
    /// Default: no retry (the library fails at once); the binary waits for
    /// ever, so that an agent (re)started while its coordinator is down
    /// comes up when it does.
    pub hello_retry: Option<Duration>,
}

impl Default for AgentOptions {
    fn default() -> AgentOptions {
        AgentOptions {
            client_timeout: Duration::from_secs(10),
            fallback_after: Duration::from_millis(200),
            hello_retry: Some(Duration::ZERO),
        }
    }
}

/// Why an agent could not start.
#[derive(Debug, Error)]
pub enum AgentError {
    /// The coordinator refused or could not be reached.
    #[error("coordinator at {url}: {why}")]
    Coordinator {
        /// Where.
        url: String,
        /// What happened.
        why: String,
    },
    /// Transparent enforcement could not start on the device.
    #[error("--transparent-dev {dev}: {why}")]
    Transparent {
        /// The device.
        dev: String,
        /// What is wrong.
        why: String,
    },
    /// The socket could not be made.
    #[error("socket {path}: {err}")]
    Socket {
        /// Where.
        path: PathBuf,
        /// What happened.
        err: std::io::Error,
    },
}

#[derive(Debug)]
struct OwnCoflow {
    parents: Vec<u64>,
    unregistered: bool,
    conn: u64,
}

#[derive(Debug)]
struct AgentFlow {
    coflow: u64,
    dst: u32,
    size_hint: u64,
    bytes: u64,
    finished: bool,
    conn: u64,
    /// What the flow's writer is told: the coordinator's schedule, or the
    /// agent's own (see [`State::local_schedule`]).
    rate: Option<FlowRate>,
    /// Whether the coordinator has scheduled this flow.
    global: bool,
    /// A flow of an unmodified application, named by its address: the
    /// agent enforces its schedule in the kernel and counts its bytes there
    /// ([`transparent`]); no writer reports it.
    watch: Option<Watch>,
    /// A watched flow whose client connection was lost: the syncs since
    /// its kernel count last grew. `None` while a connection holds it.
    orphan: Option<u32>,
    /// A watched flow the agent's host policy marks ([`local`]): the
    /// coordinator's rates do not apply to it.
    marked: bool,
}

/// What an agent knows; shared by its client connections and its sync loop.
#[derive(Debug)]
struct State {
    host: u32,
    n_hosts: u32,
    host_rate_bps: f64,
    next_coflow: u64,
    next_flow: u64,
    coflows: HashMap<u64, OwnCoflow>,
    flows: HashMap<u64, AgentFlow>,
    /// The scheduler's queue thresholds in bytes (Aalo's `Q1hi`, ...),
    /// for the local queues of coflows not scheduled yet; empty: one queue.
    thresholds: Vec<f64>,
    /// Enforces watched flows (`--transparent-dev`); `None`: refused.
    enforcer: Option<Enforcer>,
    /// Syncs an orphaned watched flow may stay idle before it closes (the
    /// client timeout in Δ).
    orphan_syncs: u32,
    /// The scheduler's host policy, marking the watched flows
    /// (`--transparent-policy host`); `None`: the coordinator's schedule.
    local: Option<local::Local>,
}

type Shared = Arc<Mutex<State>>;

/// Ids minted by an agent that starts now: coflow numbers from the
/// milliseconds and flow ids from the microseconds since 1970, so that a
/// restarted agent never hands out an id of an earlier incarnation (unless
/// it minted ids faster than the clock ticks, over its whole life).
fn id_seeds() -> (u64, u64) {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (
        (t.as_millis() as u64) & COFLOW_NUMBER_MASK,
        t.as_micros() as u64,
    )
}

/// The most coflows, and the most flows, one sync carries while the agent
/// works off a backlog waiting for acknowledgements (a quarter of what a
/// message may carry, [`validate::MAX_FLOWS`], so that the coordinator
/// answers it in time).
pub const SYNC_BATCH: usize = validate::MAX_FLOWS / 4;

/// Coflow numbers are the low 40 bits of a coflow id.
const COFLOW_NUMBER_MASK: u64 = (1 << 40) - 1;

fn error(msg: impl Into<String>) -> AgentReply {
    AgentReply {
        kind: Some(agent_reply::Kind::Error(msg.into())),
    }
}

impl State {
    /// Answers one validated request of connection `conn`.
    fn handle(&mut self, conn: u64, req: Kind) -> AgentReply {
        match req {
            Kind::Register(r) => {
                self.next_coflow = (self.next_coflow + 1) & COFLOW_NUMBER_MASK;
                if self.next_coflow == 0 {
                    self.next_coflow = 1;
                }
                let id = ((self.host as u64 + 1) << 40) | self.next_coflow;
                self.coflows.insert(
                    id,
                    OwnCoflow {
                        parents: r.parents,
                        unregistered: false,
                        conn,
                    },
                );
                debug!(coflow = id, "registered");
                AgentReply {
                    kind: Some(agent_reply::Kind::Registered(proto::Registered {
                        coflow_id: id,
                    })),
                }
            }
            Kind::Unregister(r) => match self.coflows.get_mut(&r.coflow_id) {
                Some(c) => {
                    c.unregistered = true;
                    AgentReply {
                        kind: Some(agent_reply::Kind::Ok(true)),
                    }
                }
                None => error(format!(
                    "coflow {} was not registered at this agent",
                    r.coflow_id
                )),
            },
            Kind::OpenFlow(r) => {
                self.next_flow += 1;
                while self.flows.contains_key(&self.next_flow) {
                    self.next_flow += 1;
                }
                let id = self.next_flow;
                self.open(id, conn, r.coflow_id, r.dst_host, r.size_hint, 0)
            }
            Kind::WatchFlow(r) => {
                let Some(enforcer) = &self.enforcer else {
                    return error(
                        "this agent enforces no flow named by its address: start it with \
                         --transparent-dev DEV (the host's egress device; needs root)",
                    );
                };
                let watch = Watch {
                    src_port: r.src_port as u16,
                    dst: r.dst_addr.parse().expect("validated"),
                    dst_port: r.dst_port as u16,
                };
                if let Some((&other, _)) = self
                    .flows
                    .iter()
                    .find(|(_, f)| !f.finished && f.watch == Some(watch))
                {
                    return error(format!(
                        "flow {other} already watches {}:{} -> {}:{}; close it first",
                        self.host, watch.src_port, watch.dst, watch.dst_port
                    ));
                }
                let _ = enforcer;
                self.next_flow += 1;
                while self.flows.contains_key(&self.next_flow) {
                    self.next_flow += 1;
                }
                let id = self.next_flow;
                let reply = self.open(id, conn, r.coflow_id, r.dst_host, r.size_hint, 0);
                self.start_watching(id, watch);
                reply
            }
            Kind::ReopenFlow(r) => {
                let watch = r.watch.as_ref().map(|w| Watch {
                    src_port: w.src_port as u16,
                    dst: w.dst_addr.parse().expect("validated"),
                    dst_port: w.dst_port as u16,
                });
                if let Some(f) = self.flows.get_mut(&r.flow_id) {
                    return match (f.orphan, watch) {
                        (Some(_), Some(w))
                            if !f.finished && f.watch == Some(w) && f.coflow == r.coflow_id =>
                        {
                            info!(flow = r.flow_id, "a client took back a watched flow");
                            f.conn = conn;
                            f.orphan = None;
                            f.bytes = f.bytes.max(r.bytes_sent);
                            AgentReply {
                                kind: Some(agent_reply::Kind::FlowOpened(proto::FlowOpened {
                                    flow_id: r.flow_id,
                                    initial: f.rate,
                                })),
                            }
                        }
                        _ => error(format!(
                            "flow {} is already known to this agent; open a new one",
                            r.flow_id
                        )),
                    };
                }
                if watch.is_some() && self.enforcer.is_none() {
                    return error(format!(
                        "flow {} is watched, and this agent enforces no flow named by its \
                         address: start it with --transparent-dev DEV",
                        r.flow_id
                    ));
                }
                info!(
                    flow = r.flow_id,
                    bytes = r.bytes_sent,
                    "a client reopened a flow"
                );
                let reply = self.open(
                    r.flow_id,
                    conn,
                    r.coflow_id,
                    r.dst_host,
                    r.size_hint,
                    r.bytes_sent,
                );
                if let Some(w) = watch {
                    self.start_watching(r.flow_id, w);
                }
                reply
            }
            Kind::AdoptCoflow(r) => {
                if r.coflow_id >> 40 != self.host as u64 + 1 {
                    return error(format!(
                        "coflow {} was not minted by host {}'s agent",
                        r.coflow_id, self.host
                    ));
                }
                let c = self.coflows.entry(r.coflow_id).or_insert(OwnCoflow {
                    parents: r.parents,
                    unregistered: false,
                    conn,
                });
                c.unregistered |= r.unregistered;
                c.conn = conn;
                AgentReply {
                    kind: Some(agent_reply::Kind::Ok(true)),
                }
            }
            Kind::Report(r) => {
                for f in &r.flows {
                    match self.flows.get(&f.flow_id) {
                        Some(x) if x.watch.is_some() => {
                            return error(format!(
                                "flow {} is watched: the agent counts its bytes in the kernel",
                                f.flow_id
                            ))
                        }
                        Some(x) if x.conn == conn && !x.finished => {
                            if f.bytes_sent < x.bytes {
                                return error(format!(
                                    "flow {}: bytes sent went back from {} to {}",
                                    f.flow_id, x.bytes, f.bytes_sent
                                ));
                            }
                        }
                        _ => {
                            return error(format!(
                                "flow {} is not open on this connection",
                                f.flow_id
                            ))
                        }
                    }
                }
                for f in &r.flows {
                    self.flows.get_mut(&f.flow_id).expect("checked").bytes = f.bytes_sent;
                }
                if !r.flows.is_empty() {
                    // Bytes moved (a local queue may change); a heartbeat
                    // alone changes nothing.
                    self.local_schedule();
                }
                let rates = r
                    .flows
                    .iter()
                    .filter_map(|f| self.flows[&f.flow_id].rate)
                    .collect();
                AgentReply {
                    kind: Some(agent_reply::Kind::Schedule(proto::Schedule { rates })),
                }
            }
            Kind::CloseFlow(r) => match self.flows.get_mut(&r.flow_id) {
                Some(x) if x.conn == conn && !x.finished && x.watch.is_some() => {
                    // The kernel's count, or what the client says arrived
                    // if that is more (the count is read every Δ).
                    let counted = self.enforcer.as_ref().and_then(|e| e.bytes(r.flow_id));
                    x.bytes = x.bytes.max(counted.unwrap_or(0)).max(r.bytes_sent);
                    x.finished = true;
                    self.stop_watching(r.flow_id);
                    self.pass_on(r.flow_id);
                    AgentReply {
                        kind: Some(agent_reply::Kind::Ok(true)),
                    }
                }
                Some(x) if x.conn == conn && !x.finished => {
                    if r.bytes_sent < x.bytes {
                        return error(format!(
                            "flow {}: bytes sent went back from {} to {}",
                            r.flow_id, x.bytes, r.bytes_sent
                        ));
                    }
                    x.bytes = r.bytes_sent;
                    x.finished = true;
                    self.pass_on(r.flow_id);
                    // The other flows' local schedules (an even share among
                    // one flow fewer) reach their writers with their next
                    // report, which recomputes them.
                    AgentReply {
                        kind: Some(agent_reply::Kind::Ok(true)),
                    }
                }
                _ => error(format!("flow {} is not open on this connection", r.flow_id)),
            },
        }
    }

    /// Opens flow `id` of connection `conn` with `bytes` written so far.
    fn open(
        &mut self,
        id: u64,
        conn: u64,
        coflow: u64,
        dst: u32,
        size_hint: u64,
        bytes: u64,
    ) -> AgentReply {
        self.flows.insert(
            id,
            AgentFlow {
                coflow,
                dst,
                size_hint,
                bytes,
                finished: false,
                conn,
                rate: None,
                global: false,
                watch: None,
                orphan: None,
                marked: false,
            },
        );
        // Only this flow's local schedule: the others' even shares change
        // too, but their writers learn them from their next report, which
        // runs the whole local schedule; so an open costs one pass over
        // the host's flows with no allocation, not `local_schedule`'s
        // (hundreds of flows open at once on a loaded host).
        let initial = self.local_rate(id);
        self.flows.get_mut(&id).expect("inserted").rate = Some(initial);
        AgentReply {
            kind: Some(agent_reply::Kind::FlowOpened(proto::FlowOpened {
                flow_id: id,
                initial: Some(initial),
            })),
        }
    }

    /// Flow `id`, just opened, is the watched flow `watch`: the enforcer
    /// holds it to its schedule from now.
    /// With a host policy, the policy marks it from now: the NIC's rate in
    /// the policy's class.
    fn start_watching(&mut self, id: u64, watch: Watch) {
        let host_rate_bps = self.host_rate_bps;
        let f = self.flows.get_mut(&id).expect("opened");
        f.watch = Some(watch);
        if let Some(local) = self.local.as_mut() {
            let class = local.start(id, f.coflow, f.dst, f.size_hint);
            f.marked = true;
            f.rate = Some(FlowRate {
                flow_id: id,
                rate_bps: host_rate_bps,
                class: class as u32,
                paused: false,
            });
        }
        if let (Some(e), Some(rate)) = (&self.enforcer, f.rate) {
            e.set(id, watch, rate);
        }
    }

    /// Watched flow `id` is done: its class goes, and its host policy (if
    /// any) is told.
    fn stop_watching(&mut self, id: u64) {
        if let Some(e) = &self.enforcer {
            e.remove(id);
        }
        let f = &self.flows[&id];
        if let (true, Some(local)) = (f.marked, self.local.as_mut()) {
            local.finish(id, f.coflow);
        }
    }

    /// What [`State::local_schedule`] gives flow `id`, which the
    /// coordinator has not scheduled: the same rules, for it alone.
    fn local_rate(&self, id: u64) -> FlowRate {
        let coflow = self.flows[&id].coflow;
        let (mut n_open, mut bytes) = (0usize, 0u64);
        let mut known: Option<FlowRate> = None;
        for f in self.flows.values() {
            if !f.finished {
                n_open += 1;
            }
            if f.coflow != coflow {
                continue;
            }
            bytes += f.bytes;
            if f.finished {
                continue;
            }
            if let (true, Some(r)) = (f.global, f.rate) {
                match known {
                    Some(k) if (r.class, r.paused) >= (k.class, k.paused) => {}
                    _ => known = Some(r),
                }
            }
        }
        match known {
            Some(r) => FlowRate { flow_id: id, ..r },
            None => FlowRate {
                flow_id: id,
                rate_bps: self.host_rate_bps / n_open.max(1) as f64,
                class: self
                    .thresholds
                    .iter()
                    .take_while(|&&t| bytes as f64 >= t)
                    .count() as u32,
                paused: false,
            },
        }
    }

    /// Aalo's short-term local prioritisation (Aalo 3.2, 6.2), for flows
    /// the coordinator has not scheduled yet, so that they start with no
    /// round trip:
    /// * a flow of a coflow the coordinator has scheduled (another of its
    ///   flows on this host has a schedule) takes that flow's schedule (its
    ///   class, rate, and pause: the coflow's place in the global order);
    /// * otherwise its coflow is new: it is in the local queue its bytes
    ///   written on this host reach (`Q1`, class 0, below `Q1hi`: the fast
    ///   path that tiny coflows never leave), at an even share of the NIC
    ///   among this host's open flows.
    ///
    /// The coordinator's next schedule replaces all of it. O(flows on this
    /// host) per call.
    fn local_schedule(&mut self) {
        // The coordinator's best schedule of each coflow here, and each
        // coflow's bytes here.
        let mut known: HashMap<u64, FlowRate> = HashMap::new();
        let mut bytes: HashMap<u64, u64> = HashMap::new();
        for f in self.flows.values() {
            *bytes.entry(f.coflow).or_default() += f.bytes;
            if f.finished {
                continue;
            }
            if let (true, Some(r)) = (f.global, f.rate) {
                let k = known.entry(f.coflow).or_insert(r);
                if (r.class, r.paused) < (k.class, k.paused) {
                    *k = r;
                }
            }
        }
        // An even share of the NIC among all open flows here (as before
        // any schedule): the class gives a new coflow its priority; its rate
        // does not take from the flows the coordinator scheduled, which
        // pacing alone could not take back on other hosts.
        let n_open = self.flows.values().filter(|f| !f.finished).count().max(1);
        let share = self.host_rate_bps / n_open as f64;
        for (&id, f) in self.flows.iter_mut() {
            if f.finished || f.global || f.marked {
                continue;
            }
            f.rate = Some(match known.get(&f.coflow) {
                Some(r) => FlowRate { flow_id: id, ..*r },
                None => {
                    let b = bytes[&f.coflow] as f64;
                    FlowRate {
                        flow_id: id,
                        rate_bps: share,
                        class: self.thresholds.iter().take_while(|&&t| b >= t).count() as u32,
                        paused: false,
                    }
                }
            });
        }
        self.enforce_watched();
    }

    /// Hands every open watched flow's schedule to the enforcer (which
    /// changes only the classes whose schedule changed).
    fn enforce_watched(&self) {
        let Some(e) = &self.enforcer else { return };
        for (&id, f) in &self.flows {
            if let (false, Some(w), Some(r)) = (f.finished, f.watch, f.rate) {
                e.set(id, w, r);
            }
        }
    }

    /// Takes the kernel's counts of the open watched flows (and tells the
    /// host policy, if any, the bytes sent), and closes at its count an
    /// orphaned one idle for [`State::orphan_syncs`] syncs.
    fn count_watched(&mut self) {
        let Some(e) = &self.enforcer else { return };
        let mut idle = vec![];
        let mut sent = vec![];
        for (&id, f) in self.flows.iter_mut() {
            if f.watch.is_none() || f.finished {
                continue;
            }
            let before = f.bytes;
            if let Some(b) = e.bytes(id) {
                f.bytes = f.bytes.max(b);
            }
            if f.marked && f.bytes > before {
                sent.push((id, f.bytes - before));
            }
            if let Some(n) = f.orphan.as_mut() {
                *n = if f.bytes > before { 0 } else { *n + 1 };
                if *n > self.orphan_syncs {
                    f.finished = true;
                    idle.push(id);
                }
            }
        }
        if let Some(local) = self.local.as_mut() {
            for (id, class) in local.sent(&sent) {
                let Some(f) = self.flows.get_mut(&id) else {
                    continue;
                };
                if let (Some(r), Some(w), false) = (f.rate.as_mut(), f.watch, f.finished) {
                    r.class = class as u32;
                    e.set(id, w, *r);
                }
            }
        }
        for id in idle {
            info!(flow = id, "a watched flow nobody took back closed idle");
            self.stop_watching(id);
            self.pass_on(id);
        }
    }

    /// Work conservation between syncs (Aalo 3.2): flow `id` finished;
    /// its scheduled rate goes to the next flow from this host to the same
    /// destination in the coordinator's order (highest class, then coflow
    /// id, then flow id; a paused one is resumed) until the next schedule.
    fn pass_on(&mut self, id: u64) {
        let Some(done) = self.flows.get(&id) else {
            return;
        };
        let (dst, rate) = match done.rate {
            Some(r) if done.global && !r.paused && r.rate_bps > 0.0 => (done.dst, r.rate_bps),
            _ => return,
        };
        let next = self
            .flows
            .iter()
            .filter(|(&j, f)| j != id && !f.finished && f.global && f.dst == dst)
            .filter_map(|(&j, f)| f.rate.map(|r| ((r.class, f.coflow, j), j)))
            .min()
            .map(|(_, j)| j);
        let Some(j) = next else { return };
        let cap = self.host_rate_bps.min(validate::MAX_RATE_BPS);
        let r = self
            .flows
            .get_mut(&j)
            .expect("listed")
            .rate
            .as_mut()
            .expect("listed");
        r.rate_bps = if r.paused { rate } else { r.rate_bps + rate }.min(cap);
        r.paused = false;
        debug!(
            from = id,
            to = j,
            rate_bps = r.rate_bps,
            "a finished flow's rate passed on"
        );
    }

    /// The coordinator has been unreachable too long: no open flow stays
    /// paused; each gets an even share of the NIC in its last class.
    fn fall_back(&mut self) {
        let n_open = self.flows.values().filter(|f| !f.finished).count().max(1);
        let share = self.host_rate_bps / n_open as f64;
        for (&id, f) in self.flows.iter_mut() {
            if f.finished {
                continue;
            }
            f.rate = Some(FlowRate {
                flow_id: id,
                rate_bps: share,
                class: f.rate.map_or(0, |r| r.class),
                paused: false,
            });
        }
        self.enforce_watched();
    }

    /// Connection `conn` went away: its writers' flows close at their last
    /// count, its watched flows wait for a client to take them back (see
    /// the module doc), and its coflows are unregistered.
    fn disconnect(&mut self, conn: u64) {
        let mut closed = vec![];
        for (&id, f) in self.flows.iter_mut() {
            if f.conn == conn && !f.finished {
                if f.watch.is_some() {
                    f.orphan = Some(0);
                } else {
                    f.finished = true;
                    closed.push(id);
                }
            }
        }
        for id in closed {
            self.pass_on(id);
        }
        self.local_schedule();
        for c in self.coflows.values_mut() {
            if c.conn == conn {
                c.unregistered = true;
            }
        }
    }

    /// The next sync: every coflow and flow with its cumulative bytes, or,
    /// when a backlog of finished flows and unregistered coflows waiting
    /// for their acknowledgement (replies the coordinator was too slow to
    /// send in time) is past [`SYNC_BATCH`] of either, a bounded part of
    /// it ([`State::bounded`]), so that a sync always fits the limit a
    /// message may carry and its reply sheds that part.
    fn sync_request(&mut self) -> proto::SyncRequest {
        self.count_watched();
        let (coflows, flows) = if self.coflows.len() <= SYNC_BATCH && self.flows.len() <= SYNC_BATCH
        {
            (
                self.coflows.keys().copied().collect(),
                self.flows.keys().copied().collect(),
            )
        } else {
            self.bounded()
        };
        proto::SyncRequest {
            protocol_version: PROTOCOL_VERSION,
            host: self.host,
            session: 0,
            seq: 0,
            coflows: coflows
                .into_iter()
                .map(|id| {
                    let c = &self.coflows[&id];
                    proto::CoflowInfo {
                        coflow_id: id,
                        parents: c.parents.clone(),
                        unregistered: c.unregistered,
                    }
                })
                .collect(),
            flows: flows
                .into_iter()
                .map(|id| {
                    let f = &self.flows[&id];
                    proto::FlowReport {
                        flow_id: id,
                        coflow_id: f.coflow,
                        dst_host: f.dst,
                        bytes_sent: f.bytes,
                        size_hint: f.size_hint,
                        finished: f.finished,
                    }
                })
                .collect(),
        }
    }

    /// A backlog's sync: every open flow and every coflow still
    /// registered (what schedules are made of), then finished flows and
    /// unregistered coflows in coflow id order, at most [`SYNC_BATCH`] of
    /// each. An unregistered coflow goes only with every one of its flows
    /// here, so that the coordinator never completes it without them.
    fn bounded(&self) -> (Vec<u64>, Vec<u64>) {
        let mut flows: Vec<u64> = vec![];
        let mut done: Vec<(u64, u64)> = vec![];
        for (&id, f) in &self.flows {
            if f.finished {
                done.push((f.coflow, id));
            } else {
                flows.push(id);
            }
        }
        let mut coflows: Vec<u64> = self
            .coflows
            .iter()
            .filter(|(_, c)| !c.unregistered)
            .map(|(&id, _)| id)
            .collect();
        flows.truncate(SYNC_BATCH);
        coflows.truncate(SYNC_BATCH);
        // Coflows with a flow left out of this sync (open flows past the
        // batch, or finished ones past it) stay out as unregistered.
        let mut open_of: HashMap<u64, usize> = HashMap::new();
        for f in self.flows.values().filter(|f| !f.finished) {
            *open_of.entry(f.coflow).or_default() += 1;
        }
        let mut included_open: HashMap<u64, usize> = HashMap::new();
        for id in &flows {
            *included_open.entry(self.flows[id].coflow).or_default() += 1;
        }
        done.sort_unstable();
        let mut whole: Vec<u64> = vec![];
        let mut i = 0;
        while i < done.len() {
            let coflow = done[i].0;
            let n = done[i..].iter().take_while(|d| d.0 == coflow).count();
            if flows.len() + n > SYNC_BATCH {
                break;
            }
            flows.extend(done[i..i + n].iter().map(|d| d.1));
            if open_of.get(&coflow) == included_open.get(&coflow) {
                whole.push(coflow);
            }
            i += n;
        }
        // Unregistered coflows all of whose flows here are in: those just
        // taken, and those with no flow here at all.
        let with_flows: std::collections::HashSet<u64> =
            self.flows.values().map(|f| f.coflow).collect();
        let mut unregistered: Vec<u64> = self
            .coflows
            .iter()
            .filter(|(id, c)| c.unregistered && !with_flows.contains(id))
            .map(|(&id, _)| id)
            .collect();
        unregistered.extend(
            whole
                .into_iter()
                .filter(|id| self.coflows.get(id).is_some_and(|c| c.unregistered)),
        );
        unregistered.sort_unstable();
        let room = SYNC_BATCH.saturating_sub(coflows.len());
        coflows.extend(unregistered.into_iter().take(room));
        (coflows, flows)
    }

    /// Takes in a validated reply to `sent`.
    fn apply(&mut self, reply: proto::SyncReply) {
        for id in reply.completed_coflows {
            if self.coflows.get(&id).is_some_and(|c| c.unregistered) {
                self.coflows.remove(&id);
            }
        }
        for id in reply.finished_acks {
            if self.flows.get(&id).is_some_and(|f| f.finished) {
                self.flows.remove(&id);
            }
        }
        for r in reply.rates {
            match self.flows.get_mut(&r.flow_id) {
                Some(f) if !f.marked => {
                    f.rate = Some(r);
                    f.global = true;
                }
                _ => {}
            }
        }
        self.local_schedule();
    }
}

/// A running agent.
pub struct AgentHandle {
    /// The client socket.
    pub socket: PathBuf,
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl AgentHandle {
    /// Stops the agent (its socket file is removed) and waits until it has.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for t in self.tasks {
            let _ = t.await;
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Starts an agent on the current tokio runtime: says hello to the
/// coordinator (which must accept its token), then serves clients on its
/// socket and syncs every Δ; faults are handled as
/// [`AgentOptions::default`] says.
pub async fn spawn(cfg: AgentConfig) -> Result<AgentHandle, AgentError> {
    spawn_with(cfg, AgentOptions::default()).await
}

/// [`spawn`] with fault handling set by `opts`.
pub async fn spawn_with(cfg: AgentConfig, opts: AgentOptions) -> Result<AgentHandle, AgentError> {
    spawn_transparent(cfg, opts, None).await
}

/// [`spawn_with`], enforcing flows named by their address (`WatchFlow`) on
/// the egress device of `transparent` when given ([`Enforcer`]: its root
/// must be HTB `1:` with a class `1:1`; needs `CAP_NET_ADMIN`). Without
/// it, such flows are refused.
pub async fn spawn_transparent(
    cfg: AgentConfig,
    opts: AgentOptions,
    transparent: Option<Transparent>,
) -> Result<AgentHandle, AgentError> {
    let client = coordinator_client(&cfg.coordinator, &cfg.token).map_err(|why| {
        AgentError::Coordinator {
            url: cfg.coordinator.clone(),
            why,
        }
    })?;
    spawn_on(cfg, opts, client, transparent).await
}

/// [`spawn_with`], reaching the coordinator over TLS: its certificate must
/// chain to `ca_pem` (PEM) and name `domain`; `cfg.coordinator` is
/// `https://...`. Built with the `tls` feature.
#[cfg(feature = "tls")]
pub async fn spawn_tls(
    cfg: AgentConfig,
    opts: AgentOptions,
    ca_pem: &[u8],
    domain: &str,
) -> Result<AgentHandle, AgentError> {
    let client =
        coordinator_client_tls(&cfg.coordinator, &cfg.token, ca_pem, domain).map_err(|why| {
            AgentError::Coordinator {
                url: cfg.coordinator.clone(),
                why,
            }
        })?;
    spawn_on(cfg, opts, client, None).await
}

async fn spawn_on(
    cfg: AgentConfig,
    opts: AgentOptions,
    mut client: Client,
    transparent: Option<Transparent>,
) -> Result<AgentHandle, AgentError> {
    let coord_err = |why: String| AgentError::Coordinator {
        url: cfg.coordinator.clone(),
        why,
    };
    let started = Instant::now();
    let mut wait = Duration::from_millis(10);
    let hello = loop {
        let r = client
            .hello(proto::HelloRequest {
                protocol_version: PROTOCOL_VERSION,
                host: cfg.host,
            })
            .await;
        match r {
            Ok(h) => break h.into_inner(),
            Err(s) => {
                // A call that timed out (tonic reports it as Cancelled,
                // "Timeout expired") is unreachable too: 20 agents starting
                // at once on a loaded machine met it.
                let unreachable = matches!(
                    s.code(),
                    tonic::Code::Unavailable | tonic::Code::DeadlineExceeded
                ) || (s.code() == tonic::Code::Cancelled
                    && s.message().contains("Timeout"));
                let out_of_time = opts.hello_retry.is_some_and(|t| started.elapsed() >= t);
                if !unreachable || out_of_time {
                    return Err(coord_err(format!("{}: {}", s.code(), s.message())));
                }
                if wait == Duration::from_millis(10) {
                    warn!(code = %s.code(), reason = s.message(), "coordinator unreachable; retrying hello with backoff");
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(MAX_BACKOFF);
            }
        }
    };
    if hello.protocol_version != PROTOCOL_VERSION {
        return Err(coord_err(format!(
            "speaks protocol {}, this agent {PROTOCOL_VERSION}",
            hello.protocol_version
        )));
    }
    if !(hello.host_rate_bps.is_finite() && hello.host_rate_bps > 0.0) || hello.delta_us == 0 {
        return Err(coord_err(format!(
            "sent host rate {} and delta {} us",
            hello.host_rate_bps, hello.delta_us
        )));
    }
    let t = &hello.local_thresholds;
    if t.len() > 64
        || t.iter().any(|x| !(x.is_finite() && *x > 0.0))
        || t.windows(2).any(|w| w[0] >= w[1])
    {
        return Err(coord_err(format!(
            "sent local queue thresholds {t:?}: give at most 64 increasing positive numbers"
        )));
    }
    let delta = Duration::from_micros(hello.delta_us.min(10_000_000));
    let enforcer = match &transparent {
        Some(t) => Some(
            Enforcer::start(&t.dev, hello.host_rate_bps, delta, t.ceiling, t.mark).map_err(
                |why| AgentError::Transparent {
                    dev: t.dev.clone(),
                    why,
                },
            )?,
        ),
        None => None,
    };
    let local = match &transparent {
        Some(t) if t.host_policy => Some(
            local::Local::build(
                if hello.scheduler_spec.is_empty() {
                    &hello.scheduler
                } else {
                    &hello.scheduler_spec
                },
                cfg.host,
                hello.n_hosts,
                hello.host_rate_bps,
            )
            .map_err(|why| AgentError::Transparent {
                dev: t.dev.clone(),
                why,
            })?,
        ),
        _ => None,
    };
    let sock_err = |err: std::io::Error| AgentError::Socket {
        path: cfg.socket.clone(),
        err,
    };
    if cfg.socket.exists() {
        std::fs::remove_file(&cfg.socket).map_err(sock_err)?;
    }
    let listener = UnixListener::bind(&cfg.socket).map_err(sock_err)?;
    std::fs::set_permissions(
        &cfg.socket,
        std::fs::Permissions::from_mode(cfg.socket_mode),
    )
    .map_err(sock_err)?;
    info!(host = cfg.host, socket = %cfg.socket.display(), scheduler = %hello.scheduler, "agent up");
    let (next_coflow, next_flow) = id_seeds();
    let state: Shared = Arc::new(Mutex::new(State {
        host: cfg.host,
        n_hosts: hello.n_hosts,
        host_rate_bps: hello.host_rate_bps,
        next_coflow,
        next_flow,
        coflows: HashMap::new(),
        flows: HashMap::new(),
        thresholds: hello.local_thresholds.clone(),
        enforcer,
        orphan_syncs: (opts.client_timeout.as_nanos() / delta.as_nanos().max(1))
            .min(u32::MAX as u128) as u32,
        local,
    }));
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let serve = tokio::spawn(serve_clients(
        listener,
        state.clone(),
        stop_rx.clone(),
        opts.client_timeout,
    ));
    let sync = tokio::spawn(sync_loop(
        client,
        state,
        delta,
        opts.fallback_after,
        stop_rx,
    ));
    Ok(AgentHandle {
        socket: cfg.socket,
        stop,
        tasks: vec![serve, sync],
    })
}

async fn serve_clients(
    listener: UnixListener,
    state: Shared,
    mut stop: tokio::sync::watch::Receiver<bool>,
    client_timeout: Duration,
) {
    let mut next_conn = 0u64;
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => {
                    next_conn += 1;
                    tokio::spawn(serve_client(
                        stream,
                        next_conn,
                        state.clone(),
                        stop.clone(),
                        client_timeout,
                    ));
                }
                Err(e) => warn!(error = %e, "accept failed"),
            },
            _ = stop.changed() => return,
        }
    }
}

async fn serve_client(
    mut stream: UnixStream,
    conn: u64,
    state: Shared,
    mut stop: tokio::sync::watch::Receiver<bool>,
    client_timeout: Duration,
) {
    loop {
        let req: Result<ClientRequest, FrameError> = tokio::select! {
            r = tokio::time::timeout(client_timeout, wire::read_async(&mut stream)) => match r {
                Ok(r) => r,
                Err(_) => {
                    warn!(conn, timeout_ms = client_timeout.as_millis() as u64,
                          "client silent too long; closing its flows and unregistering its coflows");
                    break;
                }
            },
            _ = stop.changed() => break,
        };
        let reply = match req {
            Ok(req) => {
                let (n_hosts, host) = {
                    let s = state.lock().expect("agent lock");
                    (s.n_hosts, s.host)
                };
                match validate::client_request(&req, n_hosts, host) {
                    Ok(()) => {
                        let kind = req.kind.expect("validated");
                        state.lock().expect("agent lock").handle(conn, kind)
                    }
                    Err(e) => {
                        warn!(conn, reason = %e, "refused a client request");
                        error(e.to_string())
                    }
                }
            }
            Err(FrameError::Closed) => break,
            Err(e) => {
                // The framing cannot be trusted any more: say why and close.
                warn!(conn, reason = %e, "closing a client connection");
                let _ = wire::write_async(&mut stream, &error(e.to_string())).await;
                break;
            }
        };
        if let Err(e) = wire::write_async(&mut stream, &reply).await {
            debug!(conn, error = %e, "client went away");
            break;
        }
    }
    state.lock().expect("agent lock").disconnect(conn);
}

#[cfg(test)]
mod tests;
