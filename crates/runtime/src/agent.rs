//! The agent: one per host, between the host's applications and the
//! coordinator.
//!
//! Applications reach it only through a Unix socket whose file permissions
//! (`socket_mode`, 0o660 by default) say who may; each connection is one
//! client. A client registers coflows (ids are minted here, unique across
//! the cluster: `(host + 1) << 40 | n`, no round trip), opens one flow per
//! coflow-aware writer, reports the bytes its writers have written every Δ
//! (the reply is their schedule), and closes flows. A client that
//! disconnects has its open flows closed at their last count and its
//! coflows unregistered.
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
//!   flows close at their last count and its coflows are unregistered.
//!
//! Every client message is validated ([`crate::validate::client_request`])
//! and must name flows of its own connection; a malformed or oversized frame
//! closes that connection with a logged reason, and the agent carries on.

use crate::proto::client_request::Kind;
use crate::proto::coordinator_client::CoordinatorClient;
use crate::proto::{self, agent_reply, AgentReply, ClientRequest, FlowRate};
use crate::validate::{self, MAX_MESSAGE_BYTES};
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
    /// (its flows finish at their last count, its coflows are
    /// unregistered). Clients report every Δ; default 10 s.
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

/// This agent process's sync session: the clock in ns mixed with the
/// process id, so that a restarted agent's syncs (numbered from 1 again)
/// are not taken for stale ones of its previous life.
fn sync_session() -> u64 {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    t ^ (u64::from(std::process::id()) << 40)
}

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
            Kind::ReopenFlow(r) => {
                if self.flows.contains_key(&r.flow_id) {
                    return error(format!(
                        "flow {} is already known to this agent; open a new one",
                        r.flow_id
                    ));
                }
                info!(
                    flow = r.flow_id,
                    bytes = r.bytes_sent,
                    "a client reopened a flow"
                );
                self.open(
                    r.flow_id,
                    conn,
                    r.coflow_id,
                    r.dst_host,
                    r.size_hint,
                    r.bytes_sent,
                )
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
            if f.finished || f.global {
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
    }

    /// Connection `conn` went away: its flows close at their last count and
    /// its coflows are unregistered.
    fn disconnect(&mut self, conn: u64) {
        let mut closed = vec![];
        for (&id, f) in self.flows.iter_mut() {
            if f.conn == conn && !f.finished {
                f.finished = true;
                closed.push(id);
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

    fn sync_request(&self) -> proto::SyncRequest {
        proto::SyncRequest {
            protocol_version: PROTOCOL_VERSION,
            host: self.host,
            session: 0,
            seq: 0,
            coflows: self
                .coflows
                .iter()
                .map(|(&id, c)| proto::CoflowInfo {
                    coflow_id: id,
                    parents: c.parents.clone(),
                    unregistered: c.unregistered,
                })
                .collect(),
            flows: self
                .flows
                .iter()
                .map(|(&id, f)| proto::FlowReport {
                    flow_id: id,
                    coflow_id: f.coflow,
                    dst_host: f.dst,
                    bytes_sent: f.bytes,
                    size_hint: f.size_hint,
                    finished: f.finished,
                })
                .collect(),
        }
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
            if let Some(f) = self.flows.get_mut(&r.flow_id) {
                f.rate = Some(r);
                f.global = true;
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

/// What adds the token to every call.
type AddToken =
    Box<dyn FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Send>;

/// A coordinator client that presents the token.
pub type Client = CoordinatorClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, AddToken>,
>;

/// A gRPC client of the coordinator that presents `token` on every call.
pub fn coordinator_client(url: &str, token: &str) -> Result<Client, String> {
    let endpoint =
        tonic::transport::Endpoint::from_shared(url.to_string()).map_err(|e| e.to_string())?;
    client_on(endpoint, token)
}

/// [`coordinator_client`] over TLS: the coordinator's certificate must
/// chain to `ca_pem` (PEM) and name `domain`; `url` is `https://...`.
/// Built with the `tls` feature.
#[cfg(feature = "tls")]
pub fn coordinator_client_tls(
    url: &str,
    token: &str,
    ca_pem: &[u8],
    domain: &str,
) -> Result<Client, String> {
    use tonic::transport::{Certificate, ClientTlsConfig};
    let endpoint = tonic::transport::Endpoint::from_shared(url.to_string())
        .map_err(|e| e.to_string())?
        .tls_config(
            ClientTlsConfig::new()
                .ca_certificate(Certificate::from_pem(ca_pem))
                .domain_name(domain),
        )
        .map_err(|e| format!("TLS: {e}"))?;
    client_on(endpoint, token)
}

fn client_on(endpoint: tonic::transport::Endpoint, token: &str) -> Result<Client, String> {
    let channel = endpoint
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(2))
        .connect_lazy();
    let value: tonic::metadata::MetadataValue<tonic::metadata::Ascii> = format!("Bearer {token}")
        .parse()
        .map_err(|_| "the token must be printable ASCII".to_string())?;
    let add: AddToken = Box::new(move |mut req: tonic::Request<()>| {
        req.metadata_mut().insert("authorization", value.clone());
        Ok(req)
    });
    Ok(CoordinatorClient::with_interceptor(channel, add)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES))
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
    let client = coordinator_client(&cfg.coordinator, &cfg.token).map_err(|why| {
        AgentError::Coordinator {
            url: cfg.coordinator.clone(),
            why,
        }
    })?;
    spawn_on(cfg, opts, client).await
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
    spawn_on(cfg, opts, client).await
}

async fn spawn_on(
    cfg: AgentConfig,
    opts: AgentOptions,
    mut client: Client,
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
                let unreachable = matches!(
                    s.code(),
                    tonic::Code::Unavailable | tonic::Code::DeadlineExceeded
                );
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

/// How long an agent waits for the reply to a sync on its stream.
const SYNC_TIMEOUT: Duration = Duration::from_secs(2);

/// The agent's end of its sync stream: requests go in, replies come back in
/// order, one per request.
struct SyncStream {
    requests: tokio::sync::mpsc::Sender<proto::SyncRequest>,
    replies: tonic::Streaming<proto::SyncReply>,
}

/// How an agent syncs: over one long-lived stream (opened on first use and
/// after any failure), or, against a coordinator that does not serve
/// streams (one older than `SyncStream`), one `Sync` call each Δ.
struct Syncer {
    client: Client,
    stream: Option<SyncStream>,
    unary: bool,
}

impl Syncer {
    fn new(client: Client) -> Syncer {
        Syncer {
            client,
            stream: None,
            unary: false,
        }
    }

    /// One sync. After an error the stream is dropped (a late reply can
    /// never be taken for the next request's), and the next sync opens a
    /// new one.
    async fn sync(&mut self, req: proto::SyncRequest) -> Result<proto::SyncReply, tonic::Status> {
        if !self.unary && self.stream.is_none() {
            match self.open().await {
                Ok(s) => self.stream = Some(s),
                Err(s) if s.code() == tonic::Code::Unimplemented => {
                    info!("the coordinator serves no sync stream; syncing with one call per delta");
                    self.unary = true;
                }
                Err(s) => return Err(s),
            }
        }
        let Some(stream) = self.stream.as_mut() else {
            return self.client.sync(req).await.map(tonic::Response::into_inner);
        };
        let r = stream.exchange(req).await;
        if r.is_err() {
            self.stream = None;
        }
        r
    }

    async fn open(&mut self) -> Result<SyncStream, tonic::Status> {
        let (requests, rx) = tokio::sync::mpsc::channel(1);
        let replies = self
            .client
            .sync_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await?
            .into_inner();
        Ok(SyncStream { requests, replies })
    }
}

impl SyncStream {
    async fn exchange(
        &mut self,
        req: proto::SyncRequest,
    ) -> Result<proto::SyncReply, tonic::Status> {
        self.requests
            .send(req)
            .await
            .map_err(|_| tonic::Status::unavailable("the sync stream is closed"))?;
        match tokio::time::timeout(SYNC_TIMEOUT, self.replies.message()).await {
            Err(_) => Err(tonic::Status::deadline_exceeded(format!(
                "no reply to a sync within {} s",
                SYNC_TIMEOUT.as_secs()
            ))),
            Ok(Ok(Some(reply))) => Ok(reply),
            Ok(Ok(None)) => Err(tonic::Status::unavailable(
                "the coordinator ended the sync stream",
            )),
            Ok(Err(status)) => Err(status),
        }
    }
}

async fn sync_loop(
    client: Client,
    state: Shared,
    delta: Duration,
    fallback_after: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut every = tokio::time::interval(delta);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Since when syncs have failed, the wait before the next attempt and
    // when that is, and whether the flows have fallen back.
    let mut failing_since: Option<Instant> = None;
    let mut backoff = delta;
    let mut next_try = Instant::now();
    let mut fell_back = false;
    let mut syncer = Syncer::new(client);
    let (session, mut seq) = (sync_session(), 0u64);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.changed() => return,
        }
        if let Some(since) = failing_since {
            if !fell_back && since.elapsed() >= fallback_after {
                warn!(
                    after_ms = since.elapsed().as_millis() as u64,
                    "coordinator unreachable; no flow stays paused: each gets an even share of the NIC"
                );
                state.lock().expect("agent lock").fall_back();
                fell_back = true;
            }
            if Instant::now() < next_try {
                continue;
            }
        }
        let mut req = state.lock().expect("agent lock").sync_request();
        // Numbered, so that a request of a stream given up on that reaches
        // the coordinator after a newer one is not taken (coordinator doc).
        seq += 1;
        req.session = session;
        req.seq = seq;
        let result = tokio::select! {
            r = syncer.sync(req) => r,
            _ = stop.changed() => return,
        };
        match result {
            Ok(reply) => {
                if let Err(e) = validate::sync_reply(&reply) {
                    warn!(reason = %e, "refused the coordinator's reply");
                    continue;
                }
                if let Some(since) = failing_since.take() {
                    info!(
                        after_ms = since.elapsed().as_millis() as u64,
                        "coordinator reachable again; resynchronised"
                    );
                    backoff = delta;
                    fell_back = false;
                }
                state.lock().expect("agent lock").apply(reply);
            }
            Err(s) => {
                if failing_since.is_none() {
                    warn!(code = %s.code(), reason = s.message(), "sync failed; keeping the counts and the last schedule, retrying with backoff");
                    failing_since = Some(Instant::now());
                } else {
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
                next_try = Instant::now() + backoff;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        let (next_coflow, next_flow) = id_seeds();
        State {
            host: 0,
            n_hosts: 3,
            host_rate_bps: 1e9,
            next_coflow,
            next_flow,
            coflows: HashMap::new(),
            flows: HashMap::new(),
            thresholds: vec![1000.0, 10_000.0],
        }
    }

    fn opened(r: AgentReply) -> u64 {
        match r.kind {
            Some(agent_reply::Kind::FlowOpened(o)) => o.flow_id,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn falling_back_unpauses_every_open_flow_and_keeps_its_class() {
        let mut s = state();
        let open = |s: &mut State| {
            opened(s.handle(
                1,
                Kind::OpenFlow(proto::OpenFlowRequest {
                    coflow_id: 5,
                    dst_host: 1,
                    size_hint: 0,
                }),
            ))
        };
        let (f1, f2) = (open(&mut s), open(&mut s));
        s.flows.get_mut(&f1).unwrap().rate = Some(FlowRate {
            flow_id: f1,
            rate_bps: 0.0,
            class: 3,
            paused: true,
        });
        s.fall_back();
        for (f, class) in [(f1, 3), (f2, 0)] {
            let r = s.flows[&f].rate.unwrap();
            assert!(!r.paused && r.rate_bps == 5e8 && r.class == class, "{r:?}");
        }
    }

    #[test]
    fn reopened_flows_keep_their_id_and_bytes_and_adopted_coflows_must_be_this_hosts() {
        let mut s = state();
        let old = s.next_flow - 7;
        let f = opened(s.handle(
            2,
            Kind::ReopenFlow(proto::ReopenFlowRequest {
                flow_id: old,
                coflow_id: 5,
                dst_host: 1,
                size_hint: 0,
                bytes_sent: 777,
            }),
        ));
        assert_eq!(f, old);
        assert_eq!(s.flows[&old].bytes, 777);
        // Known already: refused, the first one untouched.
        let again = s.handle(
            3,
            Kind::ReopenFlow(proto::ReopenFlowRequest {
                flow_id: old,
                coflow_id: 6,
                dst_host: 2,
                size_hint: 0,
                bytes_sent: 1,
            }),
        );
        assert!(matches!(again.kind, Some(agent_reply::Kind::Error(_))));
        assert_eq!((s.flows[&old].coflow, s.flows[&old].conn), (5, 2));
        // New flows never take an earlier incarnation's id.
        let new = opened(s.handle(
            2,
            Kind::OpenFlow(proto::OpenFlowRequest {
                coflow_id: 5,
                dst_host: 1,
                size_hint: 0,
            }),
        ));
        assert!(new > old);
        let mine = (1u64 << 40) | 9;
        let adopt = |s: &mut State, id: u64, unregistered: bool| {
            s.handle(
                2,
                Kind::AdoptCoflow(proto::AdoptCoflowRequest {
                    coflow_id: id,
                    parents: vec![],
                    unregistered,
                }),
            )
            .kind
        };
        assert!(matches!(
            adopt(&mut s, mine, false),
            Some(agent_reply::Kind::Ok(_))
        ));
        assert!(matches!(
            adopt(&mut s, mine, true),
            Some(agent_reply::Kind::Ok(_))
        ));
        assert!(s.coflows[&mine].unregistered);
        let theirs = (2u64 << 40) | 9;
        assert!(matches!(
            adopt(&mut s, theirs, false),
            Some(agent_reply::Kind::Error(_))
        ));
    }

    fn open(s: &mut State, coflow: u64, dst: u32) -> (u64, FlowRate) {
        match s
            .handle(
                1,
                Kind::OpenFlow(proto::OpenFlowRequest {
                    coflow_id: coflow,
                    dst_host: dst,
                    size_hint: 0,
                }),
            )
            .kind
        {
            Some(agent_reply::Kind::FlowOpened(o)) => (o.flow_id, o.initial.unwrap()),
            other => panic!("{other:?}"),
        }
    }

    fn report(s: &mut State, flows: &[(u64, u64)]) -> Vec<FlowRate> {
        match s
            .handle(
                1,
                Kind::Report(proto::ReportRequest {
                    flows: flows
                        .iter()
                        .map(|&(flow_id, bytes_sent)| proto::FlowBytes {
                            flow_id,
                            bytes_sent,
                        })
                        .collect(),
                }),
            )
            .kind
        {
            Some(agent_reply::Kind::Schedule(x)) => x.rates,
            other => panic!("{other:?}"),
        }
    }

    fn global(s: &mut State, rates: &[(u64, f64, u32, bool)]) {
        s.apply(proto::SyncReply {
            protocol_version: PROTOCOL_VERSION,
            rates: rates
                .iter()
                .map(|&(flow_id, rate_bps, class, paused)| FlowRate {
                    flow_id,
                    rate_bps,
                    class,
                    paused,
                })
                .collect(),
            finished_acks: vec![],
            completed_coflows: vec![],
        });
    }

    fn sched(r: &FlowRate) -> (f64, u32, bool) {
        (r.rate_bps, r.class, r.paused)
    }

    #[test]
    fn flows_not_scheduled_yet_are_scheduled_locally_with_no_round_trip() {
        // Local queues at 1000 and 10,000 bytes; a 1 Gbit/s NIC.
        let mut s = state();
        let (a1, init) = open(&mut s, 5, 1);
        assert_eq!(sched(&init), (1e9, 0, false), "alone and new: Q1, the NIC");
        let (b1, init) = open(&mut s, 6, 2);
        assert_eq!(sched(&init), (5e8, 0, false), "two flows share the NIC");
        // Coflow 5 crosses the first threshold locally: demoted, locally.
        let r = report(&mut s, &[(a1, 1500), (b1, 10)]);
        assert_eq!(sched(&r[0]), (5e8, 1, false));
        assert_eq!(sched(&r[1]), (5e8, 0, false));
        // The coordinator schedules coflow 5's flow; a new flow of coflow 5
        // takes its place in the global order at once.
        global(&mut s, &[(a1, 3e8, 2, true)]);
        let (a2, init) = open(&mut s, 5, 2);
        assert_eq!(
            sched(&init),
            (3e8, 2, true),
            "a paused coflow's new flow waits"
        );
        let (c1, init) = open(&mut s, 7, 1);
        assert_eq!(
            sched(&init),
            (2.5e8, 0, false),
            "a tiny new coflow goes at once, in Q1, at an even share of the NIC"
        );
        let r = report(&mut s, &[(a1, 1500), (a2, 0), (b1, 10), (c1, 0)]);
        let got: Vec<_> = r.iter().map(sched).collect();
        assert_eq!(
            got,
            vec![
                (3e8, 2, true),
                (3e8, 2, true),
                (2.5e8, 0, false),
                (2.5e8, 0, false)
            ]
        );
        // The coordinator's schedule replaces the local one.
        global(&mut s, &[(c1, 2e8, 4, false)]);
        assert_eq!(sched(&s.flows[&c1].rate.unwrap()), (2e8, 4, false));
        assert_eq!(sched(&s.flows[&b1].rate.unwrap()), (2.5e8, 0, false));
    }

    #[test]
    fn a_finished_flows_rate_goes_to_the_next_flow_to_the_same_destination() {
        let mut s = state();
        let (x, _) = open(&mut s, 5, 1);
        let (y, _) = open(&mut s, 6, 1);
        let (z, _) = open(&mut s, 4, 2);
        let (w, _) = open(&mut s, 8, 1);
        let (v, _) = open(&mut s, 9, 1);
        global(
            &mut s,
            &[
                (x, 6e8, 0, false),
                (y, 0.0, 1, true),
                (z, 0.0, 0, true),
                (w, 0.0, 2, true),
                (v, 1e8, 3, false),
            ],
        );
        let close = |s: &mut State, id: u64| {
            s.handle(
                1,
                Kind::CloseFlow(proto::CloseFlowRequest {
                    flow_id: id,
                    bytes_sent: 100,
                }),
            )
        };
        close(&mut s, x);
        let of = |s: &State, id: u64| sched(&s.flows[&id].rate.unwrap());
        assert_eq!(
            of(&s, y),
            (6e8, 1, false),
            "next in order to host 1: resumed"
        );
        assert_eq!(of(&s, z), (0.0, 0, true), "another destination: untouched");
        assert_eq!(of(&s, w), (0.0, 2, true), "later in order: still waits");
        assert_eq!(of(&s, v), (1e8, 3, false));
        // y finishes too: its (borrowed) rate goes on to w.
        close(&mut s, y);
        assert_eq!(of(&s, w), (6e8, 2, false));
        // A flow the coordinator never scheduled passes nothing on.
        let (u, _) = open(&mut s, 10, 1);
        close(&mut s, u);
        assert_eq!(of(&s, v), (1e8, 3, false));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Req(u64, u8, u64, u32, u64),
        Reply(Vec<(u64, f64, u32, bool)>, Vec<u64>, Vec<u64>),
        Disconnect(u64),
        FallBack,
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            4 => (1u64..4, 0u8..7, 0u64..8, 0u32..4, 0u64..30_000)
                .prop_map(|(c, k, id, dst, b)| Op::Req(c, k, id, dst, b)),
            2 => (
                proptest::collection::vec((0u64..8, 0.0f64..2e9, 0u32..5, any::<bool>()), 0..4),
                proptest::collection::vec(0u64..8, 0..2),
                proptest::collection::vec(0u64..8, 0..2),
            )
                .prop_map(|(r, a, c)| Op::Reply(r, a, c)),
            1 => (1u64..4).prop_map(Op::Disconnect),
            1 => Just(Op::FallBack),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
        /// Random (often invalid) requests from a few connections, replies,
        /// disconnects and fallbacks: no panic, every rate told to a client
        /// valid, and no flow's bytes ever go back.
        #[test]
        fn random_requests_never_break_the_agent(ops in proptest::collection::vec(op(), 1..60)) {
            let mut s = state();
            let base = s.next_flow;
            let mine = |id: u64| (1u64 << 40) | (id + 1);
            for o in ops {
                let before: HashMap<u64, u64> =
                    s.flows.iter().map(|(&id, f)| (id, f.bytes)).collect();
                match o {
                    Op::Req(conn, kind, id, dst, b) => {
                        // Flow ids near the agent's own, so that some exist.
                        let fid = base + id;
                        let k = match kind {
                            0 => Kind::Register(proto::RegisterRequest { parents: vec![] }),
                            1 => Kind::Unregister(proto::UnregisterRequest { coflow_id: mine(id) }),
                            2 => Kind::OpenFlow(proto::OpenFlowRequest { coflow_id: mine(id % 3), dst_host: dst, size_hint: b }),
                            3 => Kind::Report(proto::ReportRequest { flows: vec![proto::FlowBytes { flow_id: fid, bytes_sent: b }] }),
                            4 => Kind::CloseFlow(proto::CloseFlowRequest { flow_id: fid, bytes_sent: b }),
                            5 => Kind::AdoptCoflow(proto::AdoptCoflowRequest { coflow_id: mine(id), parents: vec![], unregistered: b % 2 == 0 }),
                            _ => Kind::ReopenFlow(proto::ReopenFlowRequest { flow_id: fid, coflow_id: mine(id % 3), dst_host: dst, size_hint: 0, bytes_sent: b }),
                        };
                        let req = ClientRequest { protocol_version: PROTOCOL_VERSION, kind: Some(k) };
                        if validate::client_request(&req, s.n_hosts, s.host).is_ok() {
                            let reply = s.handle(conn, req.kind.unwrap());
                            let rates: Vec<FlowRate> = match reply.kind {
                                Some(agent_reply::Kind::Schedule(x)) => x.rates,
                                Some(agent_reply::Kind::FlowOpened(o)) => o.initial.into_iter().collect(),
                                _ => vec![],
                            };
                            for r in &rates {
                                proptest::prop_assert!(validate::rate("r", r).is_ok(), "{r:?}");
                            }
                        }
                    }
                    Op::Reply(rates, acks, done) => {
                        let reply = proto::SyncReply {
                            protocol_version: PROTOCOL_VERSION,
                            rates: rates
                                .into_iter()
                                .map(|(id, rate_bps, class, paused)| FlowRate { flow_id: base + id, rate_bps, class, paused })
                                .collect(),
                            finished_acks: acks.into_iter().map(|id| base + id).collect(),
                            completed_coflows: done.into_iter().map(mine).collect(),
                        };
                        if validate::sync_reply(&reply).is_ok() {
                            s.apply(reply);
                        }
                    }
                    Op::Disconnect(conn) => s.disconnect(conn),
                    Op::FallBack => s.fall_back(),
                }
                // An open's own local schedule (one pass) is the whole
                // local schedule's for that flow.
                let local: Vec<(u64, FlowRate)> = s
                    .flows
                    .iter()
                    .filter(|(_, f)| !f.finished && !f.global)
                    .map(|(&id, _)| (id, s.local_rate(id)))
                    .collect();
                s.local_schedule();
                for (id, r) in local {
                    let got = s.flows[&id].rate.expect("scheduled locally");
                    proptest::prop_assert_eq!((r.rate_bps, r.class, r.paused), (got.rate_bps, got.class, got.paused));
                }
                for (id, f) in &s.flows {
                    if let Some(&b) = before.get(id) {
                        proptest::prop_assert!(f.bytes >= b, "flow {id}: {b} -> {}", f.bytes);
                    }
                    if let Some(r) = &f.rate {
                        proptest::prop_assert!(validate::rate("r", r).is_ok(), "{r:?}");
                    }
                }
                let _ = s.sync_request();
            }
        }
    }
}
