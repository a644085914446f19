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
//! coordinator acknowledges it, and an unregistered coflow once a sync has
//! carried that. A coordinator that cannot be reached is retried every Δ
//! (the channel reconnects); until then flows keep their last schedule.
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
use std::time::Duration;
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
    rate: Option<FlowRate>,
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
}

type Shared = Arc<Mutex<State>>;

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
                self.next_coflow += 1;
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
                let id = self.next_flow;
                let n_open = self.flows.values().filter(|f| !f.finished).count();
                // Until the first schedule: an even share of the NIC.
                let initial = FlowRate {
                    flow_id: id,
                    rate_bps: self.host_rate_bps / (n_open + 1) as f64,
                    class: 0,
                    paused: false,
                };
                self.flows.insert(
                    id,
                    AgentFlow {
                        coflow: r.coflow_id,
                        dst: r.dst_host,
                        size_hint: r.size_hint,
                        bytes: 0,
                        finished: false,
                        conn,
                        rate: None,
                    },
                );
                AgentReply {
                    kind: Some(agent_reply::Kind::FlowOpened(proto::FlowOpened {
                        flow_id: id,
                        initial: Some(initial),
                    })),
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
                let mut rates = Vec::with_capacity(r.flows.len());
                for f in &r.flows {
                    let x = self.flows.get_mut(&f.flow_id).expect("checked");
                    x.bytes = f.bytes_sent;
                    if let Some(rate) = &x.rate {
                        rates.push(*rate);
                    }
                }
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
                    AgentReply {
                        kind: Some(agent_reply::Kind::Ok(true)),
                    }
                }
                _ => error(format!("flow {} is not open on this connection", r.flow_id)),
            },
        }
    }

    /// Connection `conn` went away: its flows close at their last count and
    /// its coflows are unregistered.
    fn disconnect(&mut self, conn: u64) {
        for f in self.flows.values_mut() {
            if f.conn == conn {
                f.finished = true;
            }
        }
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
    fn apply(&mut self, sent: &proto::SyncRequest, reply: proto::SyncReply) {
        for c in &sent.coflows {
            if c.unregistered {
                self.coflows.remove(&c.coflow_id);
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
            }
        }
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
    let channel = tonic::transport::Endpoint::from_shared(url.to_string())
        .map_err(|e| e.to_string())?
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
/// socket and syncs every Δ.
pub async fn spawn(cfg: AgentConfig) -> Result<AgentHandle, AgentError> {
    let coord_err = |why: String| AgentError::Coordinator {
        url: cfg.coordinator.clone(),
        why,
    };
    let mut client = coordinator_client(&cfg.coordinator, &cfg.token).map_err(&coord_err)?;
    let hello = client
        .hello(proto::HelloRequest {
            protocol_version: PROTOCOL_VERSION,
            host: cfg.host,
        })
        .await
        .map_err(|s| coord_err(format!("{}: {}", s.code(), s.message())))?
        .into_inner();
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
    let state: Shared = Arc::new(Mutex::new(State {
        host: cfg.host,
        n_hosts: hello.n_hosts,
        host_rate_bps: hello.host_rate_bps,
        next_coflow: 0,
        next_flow: 0,
        coflows: HashMap::new(),
        flows: HashMap::new(),
    }));
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let serve = tokio::spawn(serve_clients(listener, state.clone(), stop_rx.clone()));
    let sync = tokio::spawn(sync_loop(client, state, delta, stop_rx));
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
) {
    let mut next_conn = 0u64;
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => {
                    next_conn += 1;
                    tokio::spawn(serve_client(stream, next_conn, state.clone(), stop.clone()));
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
) {
    loop {
        let req: Result<ClientRequest, FrameError> = tokio::select! {
            r = wire::read_async(&mut stream) => r,
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

async fn sync_loop(
    mut client: Client,
    state: Shared,
    delta: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut every = tokio::time::interval(delta);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.changed() => return,
        }
        let req = state.lock().expect("agent lock").sync_request();
        match client.sync(req.clone()).await {
            Ok(reply) => {
                let reply = reply.into_inner();
                if let Err(e) = validate::sync_reply(&reply) {
                    warn!(reason = %e, "refused the coordinator's reply");
                    continue;
                }
                if failing {
                    info!("coordinator reachable again");
                    failing = false;
                }
                state.lock().expect("agent lock").apply(&req, reply);
            }
            Err(s) => {
                if !failing {
                    warn!(code = %s.code(), reason = s.message(), "sync failed; keeping the last schedule");
                    failing = true;
                }
            }
        }
    }
}
