//! The client library an application links (blocking, no async runtime of
//! its own, so that it binds to Python as it is).
//!
//! [`AgentClient::connect`] opens the local agent's Unix socket and starts
//! one reporter thread, which every Δ sends the bytes each open writer has
//! written and takes back their schedule. [`AgentClient::register`] and
//! [`AgentClient::unregister`] manage coflows; [`AgentClient::writer`]
//! wraps a TCP stream in a [`CoflowWriter`], which:
//!
//! * counts bytes as the kernel accepts them (never the application's word);
//! * paces the socket to the flow's rate with `SO_MAX_PACING_RATE` and marks
//!   it with the flow's class (`IP_TOS`, `SO_PRIORITY`), re-applied as soon
//!   as the reporter receives a new schedule, not at the writer's next write
//!   (see [`crate::enforce`]): at a low rate a full send buffer holds a
//!   write back for as long as its slice takes at that rate;
//! * blocks in `write` while the schedule says the flow must wait;
//! * meters its writes to the flow's rate (`writer::Meter`: never more than Δ of
//!   the rate or 16 KiB ahead of it), so that what it counts is what left
//!   but for that much; below the kernel's pacing floor
//!   ([`enforce::KERNEL_PACING_FLOOR_BPS`]), where the kernel paces at the
//!   floor (its pacing at a low rate commits the socket for seconds per
//!   packet), the meter alone holds the flow to its rate;
//! * keeps the send buffer small.
//!
//! [`AgentClient::writer`] waits for the agent's answer to the flow's open;
//! [`AgentClient::writer_at_once`] does not (Aalo 6.1), see there. All
//! requests of a client share its one connection and are pipelined: each is
//! written at once and one reader thread hands the agent's replies, which
//! come in order, to their waiters, so no call waits for another's round
//! trip.
//!
//! If the agent cannot be reached (at connect, or later), writers send as
//! plain, unthrottled TCP: the runtime only ever delays data. The reporter
//! thread then tries the socket again (after Δ, doubling up to 1 s); when an
//! agent answers (the same one, or a restarted one), the client announces
//! again the coflows it registered (`AdoptCoflow`, with their parents and
//! whether they were unregistered meanwhile) and its writers' flows
//! (`ReopenFlow`, with the id the earlier agent gave them and the bytes
//! written so far, so that the coordinator sees each flow once and counts
//! every byte once), closes the flows whose writers closed meanwhile, and
//! the writers are scheduled again. The reporter also serves as a
//! heartbeat: it reports every Δ even with no writer open, so that an agent
//! can tell a silent (hung) client from an idle one.

use crate::enforce;
use crate::proto::client_request::Kind;
use crate::proto::{self, agent_reply, AgentReply, ClientRequest};
use crate::wire;
use crate::{DEFAULT_DELTA, PROTOCOL_VERSION};
use coflowkit_model::CoflowId;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;
use thiserror::Error;
use tracing::warn;

mod writer;

pub use writer::{CoflowWriter, FlowHandle};

/// The longest wait between two attempts to reach a lost agent.
const MAX_RECONNECT_WAIT: Duration = Duration::from_secs(1);
/// How long a closed flow is remembered: an agent that dies after the
/// close but before its next sync never told the coordinator, so a
/// reconnection within this time closes it again on the new agent.
const RECENT_CLOSE: Duration = Duration::from_secs(2);

/// Why a client call failed.
#[derive(Debug, Error)]
pub enum ClientError {
    /// No agent: the application may carry on unscheduled.
    #[error("the agent cannot be reached")]
    Unreachable,
    /// The agent refused the request.
    #[error("the agent refused: {0}")]
    Refused(String),
    /// The agent answered with something else than expected.
    #[error("unexpected reply from the agent")]
    Unexpected,
}

/// The schedule of one writer, shared with the reporter thread.
#[derive(Debug)]
struct FlowShared {
    bytes: AtomicU64,
    sched: Mutex<Sched>,
    changed: Condvar,
    /// What the flow is, to open it again on a restarted agent.
    coflow: u64,
    dst_host: u32,
    size_hint: u64,
    /// The writer closed but the agent has not heard yet (it was
    /// unreachable): the close is sent once it is back.
    closed: AtomicBool,
    /// The agent's id of the flow; 0 while an open sent without waiting
    /// ([`AgentClient::writer_at_once`]) has no reply yet.
    id: AtomicU64,
    /// Its close was sent without waiting and is not answered yet: not for
    /// the reporter to send again.
    close_sent: AtomicBool,
    /// [`OPENING`], [`OPENED`] or [`UNSCHEDULED`].
    state: std::sync::atomic::AtomicU8,
    /// The writer's socket while it is open, and the schedule version last
    /// applied to it: a new schedule is applied as it comes (the reporter
    /// thread), not at the writer's next write, which a full send buffer at
    /// a low rate holds back for as long as a slice takes at that rate.
    socket: Mutex<Applied>,
}

#[derive(Debug, Default)]
struct Applied {
    fd: Option<RawFd>,
    version: Option<u64>,
}

impl FlowShared {
    /// A flow of `coflow` to `dst_host` with nothing written yet, starting
    /// with `sched`, the agent's `id` (0 while its open is unanswered) and
    /// `state`.
    fn new(
        coflow: u64,
        dst_host: u32,
        size_hint: Option<u64>,
        sched: Sched,
        id: u64,
        state: u8,
    ) -> Arc<FlowShared> {
        Arc::new(FlowShared {
            bytes: AtomicU64::new(0),
            sched: Mutex::new(sched),
            changed: Condvar::new(),
            coflow,
            dst_host,
            size_hint: size_hint.unwrap_or(0),
            closed: AtomicBool::new(false),
            id: AtomicU64::new(id),
            close_sent: AtomicBool::new(false),
            state: std::sync::atomic::AtomicU8::new(state),
            socket: Mutex::new(Applied::default()),
        })
    }

    /// Applies schedule `s` (the caller holds the flow's lock) to the
    /// writer's socket if it is open and has not had it: its pacing rate and
    /// class. A pause is not applied: the writer stops writing, and what its
    /// send buffer holds leaves at the last rate. Pacing at the kernel's
    /// floor instead stalled the socket for tens of seconds after the
    /// resumption (measured: the kernel spaces each packet by its length
    /// over the rate when it sends it, and a new rate does not move a
    /// departure already set).
    fn apply(&self, s: &Sched) {
        if s.paused {
            return;
        }
        let mut a = self.socket.lock().expect("socket lock");
        let Some(fd) = a.fd else { return };
        if a.version == Some(s.version) {
            return;
        }
        if let Err(e) = enforce::set_pacing_rate(fd, s.rate_bps) {
            warn!(error = %e, "could not pace the socket");
        }
        // Marking is best effort (an IPv6 or a non-IP socket refuses IP_TOS).
        let _ = enforce::set_class(fd, s.class);
        a.version = Some(s.version);
    }
}

/// A writer's open was sent and not answered yet.
const OPENING: u8 = 0;
/// The agent schedules the flow.
const OPENED: u8 = 1;
/// The agent refused the flow, or its connection failed before the
/// answer: the writer is plain TCP for good.
const UNSCHEDULED: u8 = 2;

/// A flow this client watches, as it announces it again after reconnecting.
#[derive(Debug, Clone)]
struct Watched {
    coflow: u64,
    dst_host: u32,
    size_hint: u64,
    address: proto::FlowAddress,
    /// Its close, made while no agent could be reached: the bytes arrived.
    closed: Option<u64>,
}

/// A coflow this client registered, to announce again to a restarted agent.
#[derive(Debug, Clone)]
struct OwnedCoflow {
    parents: Vec<u64>,
    unregistered: bool,
}

/// Why one exchange with the agent failed.
enum CallError {
    Refused(String),
    Transport(String),
}

/// The request frame of `kind`.
fn request(kind: Kind) -> ClientRequest {
    ClientRequest {
        protocol_version: PROTOCOL_VERSION,
        kind: Some(kind),
    }
}

/// An agent's reply, its error turned into [`CallError::Refused`].
fn refused_or(reply: AgentReply) -> Result<AgentReply, CallError> {
    match reply {
        AgentReply {
            kind: Some(agent_reply::Kind::Error(e)),
        } => Err(CallError::Refused(e)),
        reply => Ok(reply),
    }
}

/// One request and its reply on `conn`, alone on it (a reconnection's
/// announcements, before the connection is shared).
fn exchange(conn: &mut UnixStream, kind: Kind) -> Result<AgentReply, CallError> {
    let r = wire::write_blocking(&mut *conn, &request(kind))
        .and_then(|_| wire::read_blocking::<AgentReply, _>(&mut *conn));
    match r {
        Ok(reply) => refused_or(reply),
        Err(e) => Err(CallError::Transport(e.to_string())),
    }
}

/// Who takes a reply.
#[derive(Debug)]
enum Waiter {
    /// A caller waiting for it.
    Call(std::sync::mpsc::SyncSender<Result<AgentReply, String>>),
    /// A writer opened without waiting: the reply gives its id and
    /// schedule (see [`Inner::opened`]).
    Open(Arc<FlowShared>),
    /// A writer's close sent without waiting: flow `0` is closed at the
    /// agent once answered.
    Close(u64),
}

/// The callers waiting for a reply on one connection, in the order of
/// their requests; `broken` once the connection failed.
#[derive(Debug, Default)]
struct Pending {
    waiters: VecDeque<Waiter>,
    broken: Option<String>,
}

/// One connection to the agent, shared by every caller: requests are
/// pipelined (written one after another, each with its waiter queued in
/// the same order under the connection's lock, without waiting for the
/// replies before), and one reader thread hands each reply to the oldest
/// waiter, since the agent answers a connection's requests in order. So
/// hundreds of flows' threads opening writers at once cost the agent's
/// work, not hundreds of round trips one after another.
#[derive(Debug)]
struct Conn {
    stream: UnixStream,
    pending: Arc<Mutex<Pending>>,
}

impl Conn {
    /// Takes `stream` into use and starts its reader thread, which hands
    /// the replies to writers opened or closed without waiting to `inner`.
    fn start(stream: UnixStream, inner: Weak<Inner>) -> io::Result<Conn> {
        let reading = stream.try_clone()?;
        let pending = Arc::new(Mutex::new(Pending::default()));
        let p = pending.clone();
        std::thread::Builder::new()
            .name("coflowkit-agent-replies".into())
            .spawn(move || read_replies(reading, &p, &inner))?;
        Ok(Conn { stream, pending })
    }

    /// Sends `kind`; `waiter` takes its reply (or why none comes).
    fn send(&mut self, kind: Kind, waiter: Waiter) {
        {
            let mut p = self.pending.lock().expect("client lock");
            if let Some(why) = &p.broken {
                let why = why.clone();
                drop(p);
                fail(waiter, &why);
                return;
            }
            p.waiters.push_back(waiter);
        }
        if wire::write_blocking(&mut self.stream, &request(kind)).is_err() {
            // A frame may be cut: the stream is no longer usable. The
            // reader fails every waiter (this one too) when it sees it end.
            let _ = self.stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// `waiter`'s request got no reply, because of `why`.
fn fail(waiter: Waiter, why: &str) {
    match waiter {
        Waiter::Call(tx) => {
            let _ = tx.send(Err(why.to_string()));
        }
        Waiter::Open(f) => {
            // Never opened at the agent: its bytes were never reported,
            // so the writer goes on as plain TCP, counted by no one.
            f.state.store(UNSCHEDULED, Ordering::SeqCst);
            f.set(None, 0, false);
        }
        // Still listed, closed: a reconnection closes it on the new agent.
        Waiter::Close(_) => {}
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Ends the reader thread (it holds a clone of the socket).
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// A connection's reader thread: each reply to the oldest waiter; when the
/// connection ends or breaks, every waiter left gets the reason, and the
/// client is lost if this is still its connection.
fn read_replies(stream: UnixStream, pending: &Arc<Mutex<Pending>>, inner: &Weak<Inner>) {
    let mut r = io::BufReader::new(stream);
    let why = loop {
        match wire::read_blocking::<AgentReply, _>(&mut r) {
            Ok(reply) => {
                let w = pending.lock().expect("client lock").waiters.pop_front();
                match w {
                    Some(Waiter::Call(tx)) => {
                        let _ = tx.send(Ok(reply));
                    }
                    Some(Waiter::Open(f)) => match inner.upgrade() {
                        Some(i) => i.opened(&f, reply),
                        None => fail(Waiter::Open(f), "the client is gone"),
                    },
                    Some(Waiter::Close(id)) => {
                        if let Some(i) = inner.upgrade() {
                            i.closed_at_agent(id);
                        }
                    }
                    None => break "the agent sent a reply to no request".to_string(),
                }
            }
            Err(e) => break e.to_string(),
        }
    };
    let waiters: Vec<Waiter> = {
        let mut p = pending.lock().expect("client lock");
        p.broken = Some(why.clone());
        p.waiters.drain(..).collect()
    };
    for w in waiters {
        fail(w, &why);
    }
    if let Some(i) = inner.upgrade() {
        i.lose_conn(pending, &why);
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Sched {
    /// `None`: unthrottled.
    rate_bps: Option<f64>,
    class: u32,
    paused: bool,
    version: u64,
}

#[derive(Debug)]
struct Inner {
    socket: PathBuf,
    /// `None` until an agent has been reached.
    conn: Mutex<Option<Conn>>,
    flows: Mutex<HashMap<u64, Arc<FlowShared>>>,
    coflows: Mutex<HashMap<u64, OwnedCoflow>>,
    /// Flows closed at the agent in the last [`RECENT_CLOSE`].
    recent: Mutex<Vec<(std::time::Instant, u64, Arc<FlowShared>)>>,
    /// Flows this client watches (named by address), by id, until their
    /// close reaches the agent.
    watched: Mutex<HashMap<u64, Watched>>,
    lost: AtomicBool,
    stop: AtomicBool,
    /// This client, for its connections' reader threads.
    me: Weak<Inner>,
}

impl Inner {
    fn call(&self, kind: Kind) -> Result<AgentReply, ClientError> {
        if self.lost.load(Ordering::Relaxed) {
            return Err(ClientError::Unreachable);
        }
        let (tx, reply) = std::sync::mpsc::sync_channel(1);
        let on = {
            let mut conn = self.conn.lock().expect("client lock");
            let Some(c) = conn.as_mut() else {
                return Err(ClientError::Unreachable);
            };
            c.send(kind, Waiter::Call(tx));
            c.pending.clone()
        };
        // Waits with no lock held: other callers pipeline their requests
        // meanwhile.
        let reply = reply
            .recv()
            .unwrap_or_else(|_| Err("the reply reader stopped".to_string()));
        match reply.map(refused_or) {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(CallError::Refused(e))) => Err(ClientError::Refused(e)),
            Ok(Err(CallError::Transport(e))) | Err(e) => {
                self.lose_conn(&on, &e);
                Err(ClientError::Unreachable)
            }
        }
    }

    /// Sends `kind` without waiting for its reply, which `waiter` takes;
    /// false if no agent is reachable now.
    fn send(&self, kind: Kind, waiter: Waiter) -> bool {
        if self.lost.load(Ordering::Relaxed) {
            return false;
        }
        let mut conn = self.conn.lock().expect("client lock");
        let Some(c) = conn.as_mut() else {
            return false;
        };
        c.send(kind, waiter);
        true
    }

    /// The connection of `pending` failed: the client is lost, but only if
    /// it is still the client's connection (a reconnection may have
    /// replaced it meanwhile, and the new one is fine).
    fn lose_conn(&self, pending: &Arc<Mutex<Pending>>, why: &str) {
        let current = self
            .conn
            .lock()
            .expect("client lock")
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(&c.pending, pending));
        if current {
            self.lose(why);
        }
    }

    /// The reply to writer `f`'s open sent without waiting: the flow is
    /// listed under its id with its schedule, or stays plain TCP if the
    /// agent refused it. A writer that closed meanwhile is closed at the
    /// agent by the reporter's next round, with its final count.
    fn opened(&self, f: &Arc<FlowShared>, reply: AgentReply) {
        match reply {
            AgentReply {
                kind: Some(agent_reply::Kind::FlowOpened(o)),
            } => {
                let initial = o.initial.unwrap_or_default();
                if crate::validate::rate("initial", &initial).is_ok() {
                    f.set(Some(initial.rate_bps), initial.class, initial.paused);
                }
                f.id.store(o.flow_id, Ordering::SeqCst);
                f.state.store(OPENED, Ordering::SeqCst);
                self.flows
                    .lock()
                    .expect("client lock")
                    .insert(o.flow_id, f.clone());
            }
            other => {
                let why = match other.kind {
                    Some(agent_reply::Kind::Error(e)) => e,
                    _ => "an unexpected reply".to_string(),
                };
                warn!(reason = %why, "the agent did not open a writer's flow; it stays unscheduled");
                fail(Waiter::Open(f.clone()), &why);
            }
        }
    }

    /// Tries to reach the agent again; on success announces again this
    /// client's coflows and flows (see the module doc) and returns true.
    fn reconnect(&self) -> bool {
        let Ok(mut stream) = UnixStream::connect(&self.socket) else {
            return false;
        };
        let mut conn = self.conn.lock().expect("client lock");
        let coflows: Vec<(u64, OwnedCoflow)> = self
            .coflows
            .lock()
            .expect("client lock")
            .iter()
            .map(|(&id, c)| (id, c.clone()))
            .collect();
        for (id, c) in coflows {
            match exchange(
                &mut stream,
                Kind::AdoptCoflow(proto::AdoptCoflowRequest {
                    coflow_id: id,
                    parents: c.parents.clone(),
                    unregistered: c.unregistered,
                }),
            ) {
                Ok(_) => {
                    if c.unregistered {
                        self.coflows.lock().expect("client lock").remove(&id);
                    }
                }
                Err(CallError::Refused(e)) => {
                    warn!(coflow = id, reason = %e, "the agent refused a coflow announced again");
                    self.coflows.lock().expect("client lock").remove(&id);
                }
                Err(CallError::Transport(_)) => return false,
            }
        }
        let mut flows: Vec<(u64, Arc<FlowShared>)> = self
            .flows
            .lock()
            .expect("client lock")
            .iter()
            .map(|(&id, f)| (id, f.clone()))
            .collect();
        {
            let mut recent = self.recent.lock().expect("client lock");
            recent.retain(|(t, _, _)| t.elapsed() < RECENT_CLOSE);
            // Kept until the reconnection succeeds (no close can reach the
            // agent meanwhile, so none is added).
            flows.extend(recent.iter().map(|(_, id, f)| (*id, f.clone())));
        }
        for (id, f) in flows {
            let bytes = f.bytes.load(Ordering::Relaxed);
            let reopened = exchange(
                &mut stream,
                Kind::ReopenFlow(proto::ReopenFlowRequest {
                    flow_id: id,
                    coflow_id: f.coflow,
                    dst_host: f.dst_host,
                    size_hint: f.size_hint,
                    bytes_sent: bytes,
                    watch: None,
                }),
            );
            match reopened {
                Ok(AgentReply {
                    kind: Some(agent_reply::Kind::FlowOpened(o)),
                }) => {
                    if f.closed.load(Ordering::Relaxed) {
                        match exchange(
                            &mut stream,
                            Kind::CloseFlow(proto::CloseFlowRequest {
                                flow_id: id,
                                bytes_sent: bytes,
                            }),
                        ) {
                            Err(CallError::Transport(_)) => return false,
                            _ => {
                                self.flows.lock().expect("client lock").remove(&id);
                            }
                        }
                        // Not remembered again: the new agent has it closed.
                    } else if let Some(r) = o.initial {
                        if crate::validate::rate("initial", &r).is_ok() {
                            f.set(Some(r.rate_bps), r.class, r.paused);
                        }
                    }
                }
                Ok(_) | Err(CallError::Refused(_)) => {
                    // A recently closed flow the agent still knows, or a
                    // flow it refuses: its writer stays plain TCP.
                    if !f.closed.load(Ordering::Relaxed) {
                        warn!(
                            flow = id,
                            "the agent did not take a flow back; its writer stays unscheduled"
                        );
                    }
                    self.flows.lock().expect("client lock").remove(&id);
                }
                Err(CallError::Transport(_)) => return false,
            }
        }
        let watched: Vec<(u64, Watched)> = self
            .watched
            .lock()
            .expect("client lock")
            .iter()
            .map(|(&id, w)| (id, w.clone()))
            .collect();
        for (id, w) in watched {
            let taken = exchange(
                &mut stream,
                Kind::ReopenFlow(proto::ReopenFlowRequest {
                    flow_id: id,
                    coflow_id: w.coflow,
                    dst_host: w.dst_host,
                    size_hint: w.size_hint,
                    bytes_sent: 0,
                    watch: Some(w.address.clone()),
                }),
            );
            match taken {
                Ok(AgentReply {
                    kind: Some(agent_reply::Kind::FlowOpened(_)),
                }) => {
                    let Some(arrived) = w.closed else { continue };
                    match exchange(
                        &mut stream,
                        Kind::CloseFlow(proto::CloseFlowRequest {
                            flow_id: id,
                            bytes_sent: arrived,
                        }),
                    ) {
                        Err(CallError::Transport(_)) => return false,
                        _ => {
                            self.watched.lock().expect("client lock").remove(&id);
                        }
                    }
                }
                Ok(_) | Err(CallError::Refused(_)) => {
                    // Closed by the agent meanwhile (idle), or not
                    // enforceable there: nothing more to tell it.
                    warn!(flow = id, "the agent did not take a watched flow back");
                    self.watched.lock().expect("client lock").remove(&id);
                }
                Err(CallError::Transport(_)) => return false,
            }
        }
        let Ok(started) = Conn::start(stream, self.me.clone()) else {
            return false;
        };
        self.recent.lock().expect("client lock").clear();
        *conn = Some(started);
        self.lost.store(false, Ordering::Relaxed);
        tracing::info!(socket = %self.socket.display(), "agent reached again; coflows and flows announced again");
        true
    }

    /// The agent is gone: every writer goes unthrottled.
    fn lose(&self, why: &str) {
        if self.lost.swap(true, Ordering::Relaxed) {
            return;
        }
        warn!(
            reason = why,
            "agent lost; writers fall back to unthrottled TCP"
        );
        for f in self.flows.lock().expect("client lock").values() {
            let mut s = f.sched.lock().expect("flow lock");
            *s = Sched {
                rate_bps: None,
                class: s.class,
                paused: false,
                version: s.version + 1,
            };
            f.apply(&s);
            f.changed.notify_all();
        }
    }

    /// Flow `id`'s close reached the agent: it is remembered for a while
    /// (see [`RECENT_CLOSE`]) instead of listed.
    fn closed_at_agent(&self, id: u64) {
        let f = self.flows.lock().expect("client lock").remove(&id);
        if let Some(f) = f {
            let mut recent = self.recent.lock().expect("client lock");
            recent.retain(|(t, _, _)| t.elapsed() < RECENT_CLOSE);
            recent.push((std::time::Instant::now(), id, f));
        }
    }

    /// One report of every open writer's bytes (also the heartbeat, sent
    /// with no flow open too); applies the schedule. First closes the flows
    /// whose writers closed while the agent was unreachable.
    fn report(&self) {
        let closed: Vec<(u64, Arc<FlowShared>)> = self
            .flows
            .lock()
            .expect("client lock")
            .iter()
            .filter(|(_, f)| {
                f.closed.load(Ordering::SeqCst) && !f.close_sent.load(Ordering::SeqCst)
            })
            .map(|(&id, f)| (id, f.clone()))
            .collect();
        for (id, f) in closed {
            match self.call(Kind::CloseFlow(proto::CloseFlowRequest {
                flow_id: id,
                bytes_sent: f.bytes.load(Ordering::Relaxed),
            })) {
                Err(ClientError::Unreachable) => return,
                _ => self.closed_at_agent(id),
            }
        }
        let flows: Vec<(u64, Arc<FlowShared>)> = self
            .flows
            .lock()
            .expect("client lock")
            .iter()
            .filter(|(_, f)| !f.closed.load(Ordering::Relaxed))
            .map(|(&id, f)| (id, f.clone()))
            .collect();
        let report = proto::ReportRequest {
            flows: flows
                .iter()
                .map(|(id, f)| proto::FlowBytes {
                    flow_id: *id,
                    bytes_sent: f.bytes.load(Ordering::Relaxed),
                })
                .collect(),
        };
        let Ok(AgentReply {
            kind: Some(agent_reply::Kind::Schedule(s)),
        }) = self.call(Kind::Report(report))
        else {
            return;
        };
        for r in s.rates {
            if crate::validate::rate("schedule", &r).is_err() {
                continue;
            }
            if let Some((_, f)) = flows.iter().find(|(id, _)| *id == r.flow_id) {
                f.set(Some(r.rate_bps), r.class, r.paused);
            }
        }
    }
}

impl FlowShared {
    fn set(&self, rate_bps: Option<f64>, class: u32, paused: bool) {
        let mut s = self.sched.lock().expect("flow lock");
        if (s.rate_bps, s.class, s.paused) != (rate_bps, class, paused) {
            // The writer waits on `changed` while paused or ahead of its
            // rate; only a resumption or a higher rate lets it write
            // sooner (the reporter applies the rest to the socket itself).
            // Waking it at every change woke hundreds of writers per
            // host every Δ.
            let sooner = (s.paused && !paused)
                || rate_bps.unwrap_or(f64::INFINITY) > s.rate_bps.unwrap_or(f64::INFINITY);
            *s = Sched {
                rate_bps,
                class,
                paused,
                version: s.version + 1,
            };
            self.apply(&s);
            if sooner {
                self.changed.notify_all();
            }
        }
    }
}

/// A connection to the local agent (or its absence); cheap to clone.
#[derive(Debug, Clone)]
pub struct AgentClient {
    inner: Option<Arc<Inner>>,
}

impl AgentClient {
    /// Connects to the agent at `socket`, reporting every 10 ms. Never
    /// fails: without an agent, writers are plain TCP.
    pub fn connect(socket: impl AsRef<Path>) -> AgentClient {
        AgentClient::connect_every(socket, DEFAULT_DELTA)
    }

    /// Connects, reporting every `delta`.
    ///
    /// Without an agent at `socket` now, the client starts unconnected and
    /// keeps trying (after Δ, doubling up to 1 s): [`AgentClient::register`]
    /// fails with [`ClientError::Unreachable`] and writers are plain TCP
    /// until an agent answers.
    pub fn connect_every(socket: impl AsRef<Path>, delta: Duration) -> AgentClient {
        let socket = socket.as_ref().to_path_buf();
        let inner = Arc::new_cyclic(|me: &Weak<Inner>| {
            let conn = match UnixStream::connect(&socket).and_then(|s| Conn::start(s, me.clone())) {
                Ok(c) => Some(c),
                Err(e) => {
                    warn!(socket = %socket.display(), error = %e,
                          "no agent; writers send unthrottled until one answers");
                    None
                }
            };
            Inner {
                lost: AtomicBool::new(conn.is_none()),
                socket,
                conn: Mutex::new(conn),
                flows: Mutex::new(HashMap::new()),
                coflows: Mutex::new(HashMap::new()),
                recent: Mutex::new(vec![]),
                watched: Mutex::new(HashMap::new()),
                stop: AtomicBool::new(false),
                me: me.clone(),
            }
        });
        let weak = Arc::downgrade(&inner);
        std::thread::spawn(move || {
            let mut wait = delta;
            loop {
                std::thread::sleep(wait);
                let Some(inner) = weak.upgrade() else { return };
                if inner.stop.load(Ordering::Relaxed) {
                    return;
                }
                if inner.lost.load(Ordering::Relaxed) {
                    wait = if inner.reconnect() {
                        delta
                    } else {
                        (wait * 2).clamp(delta, MAX_RECONNECT_WAIT.max(delta))
                    };
                    continue;
                }
                wait = delta;
                inner.report();
            }
        });
        AgentClient { inner: Some(inner) }
    }

    /// Whether an agent schedules this client's writers.
    pub fn is_connected(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|i| !i.lost.load(Ordering::Relaxed))
    }

    /// Registers a coflow depending on `parents` (Aalo 5.1); no size or
    /// width needed.
    pub fn register(&self, parents: &[CoflowId]) -> Result<CoflowId, ClientError> {
        let inner = self.inner.as_ref().ok_or(ClientError::Unreachable)?;
        match inner.call(Kind::Register(proto::RegisterRequest {
            parents: parents.iter().map(|p| p.0).collect(),
        }))? {
            AgentReply {
                kind: Some(agent_reply::Kind::Registered(r)),
            } => {
                inner.coflows.lock().expect("client lock").insert(
                    r.coflow_id,
                    OwnedCoflow {
                        parents: parents.iter().map(|p| p.0).collect(),
                        unregistered: false,
                    },
                );
                Ok(CoflowId(r.coflow_id))
            }
            _ => Err(ClientError::Unexpected),
        }
    }

    /// Unregisters coflow `id`: it completes once its writers have closed.
    ///
    /// If the agent that minted `id` is unreachable, the unregistration is
    /// kept and passed on when an agent answers again (this returns `Ok`);
    /// without any agent ever, [`ClientError::Unreachable`].
    pub fn unregister(&self, id: CoflowId) -> Result<(), ClientError> {
        let inner = self.inner.as_ref().ok_or(ClientError::Unreachable)?;
        let r = inner.call(Kind::Unregister(proto::UnregisterRequest {
            coflow_id: id.0,
        }));
        let mut coflows = inner.coflows.lock().expect("client lock");
        match r {
            Ok(AgentReply {
                kind: Some(agent_reply::Kind::Ok(_)),
            }) => {
                coflows.remove(&id.0);
                Ok(())
            }
            Ok(_) => Err(ClientError::Unexpected),
            Err(ClientError::Unreachable) => match coflows.get_mut(&id.0) {
                Some(c) => {
                    c.unregistered = true;
                    Ok(())
                }
                None => Err(ClientError::Unreachable),
            },
            Err(e) => Err(e),
        }
    }

    /// Wraps `stream` in a writer of coflow `coflow` to host `dst_host`,
    /// optionally saying how many bytes it will write (for clairvoyant
    /// schedulers such as `varys`). The writer sends at once; without an
    /// agent, or if the agent refuses the flow, it is plain TCP.
    pub fn writer<S: Write + AsRawFd>(
        &self,
        coflow: CoflowId,
        dst_host: u32,
        size_hint: Option<u64>,
        stream: S,
    ) -> CoflowWriter<S> {
        match self.try_writer(coflow, dst_host, size_hint, stream) {
            Ok(w) => w,
            Err((e, stream)) => {
                warn!(error = %e, "writer unscheduled");
                CoflowWriter::plain(stream)
            }
        }
    }

    /// As [`AgentClient::writer`], but a flow the agent refuses (a host
    /// outside the cluster, this very host, a reserved id) is an error that
    /// gives the stream back. Without an agent the writer is still plain TCP.
    #[allow(clippy::result_large_err)]
    pub fn try_writer<S: Write + AsRawFd>(
        &self,
        coflow: CoflowId,
        dst_host: u32,
        size_hint: Option<u64>,
        stream: S,
    ) -> Result<CoflowWriter<S>, (ClientError, S)> {
        let Some(inner) = &self.inner else {
            return Ok(CoflowWriter::plain(stream));
        };
        let opened = inner.call(Kind::OpenFlow(proto::OpenFlowRequest {
            coflow_id: coflow.0,
            dst_host,
            size_hint: size_hint.unwrap_or(0),
        }));
        let (id, initial) = match opened {
            Ok(AgentReply {
                kind: Some(agent_reply::Kind::FlowOpened(o)),
            }) => (o.flow_id, o.initial.unwrap_or_default()),
            Ok(_) => return Err((ClientError::Unexpected, stream)),
            Err(ClientError::Unreachable) => return Ok(CoflowWriter::plain(stream)),
            Err(e) => return Err((e, stream)),
        };
        let sched = Sched {
            rate_bps: Some(initial.rate_bps),
            class: initial.class,
            paused: initial.paused,
            version: 0,
        };
        let shared = FlowShared::new(coflow.0, dst_host, size_hint, sched, id, OPENED);
        inner
            .flows
            .lock()
            .expect("client lock")
            .insert(id, shared.clone());
        Ok(CoflowWriter::scheduled(
            stream,
            shared,
            inner.clone(),
            false,
        ))
    }

    /// Names a flow of an unmodified application at this agent, by its
    /// address as this agent's host sends it (TCP from the host's port
    /// `src_port` to `dst`), as a flow of coflow `coflow` to host
    /// `dst_host`: the agent holds it to its schedule in the kernel and
    /// counts its bytes there (`coflowkit-runtime agent
    /// --transparent-dev`); nothing is written through this client. Returns
    /// the flow's id for [`AgentClient::close_watched`].
    ///
    /// The agent may be another host's: whoever knows the flow's address
    /// (the receiver of a response, say) names it at the sender's agent.
    /// Errors: [`ClientError::Unreachable`] without an agent,
    /// [`ClientError::Refused`] naming the field (an agent started without
    /// a device refuses every watched flow).
    pub fn watch(
        &self,
        coflow: CoflowId,
        dst_host: u32,
        size_hint: Option<u64>,
        src_port: u16,
        dst: std::net::SocketAddrV4,
    ) -> Result<u64, ClientError> {
        let inner = self.inner.as_ref().ok_or(ClientError::Unreachable)?;
        let address = proto::FlowAddress {
            src_port: src_port as u32,
            dst_addr: dst.ip().to_string(),
            dst_port: dst.port() as u32,
        };
        match inner.call(Kind::WatchFlow(proto::WatchFlowRequest {
            coflow_id: coflow.0,
            dst_host,
            size_hint: size_hint.unwrap_or(0),
            src_port: address.src_port,
            dst_addr: address.dst_addr.clone(),
            dst_port: address.dst_port,
        }))? {
            AgentReply {
                kind: Some(agent_reply::Kind::FlowOpened(o)),
            } => {
                inner.watched.lock().expect("client lock").insert(
                    o.flow_id,
                    Watched {
                        coflow: coflow.0,
                        dst_host,
                        size_hint: size_hint.unwrap_or(0),
                        address,
                        closed: None,
                    },
                );
                Ok(o.flow_id)
            }
            _ => Err(ClientError::Unexpected),
        }
    }

    /// Closes watched flow `flow` (from [`AgentClient::watch`]): it is
    /// done. `bytes_arrived` is what its receiver counted, if it knows
    /// (else 0): the agent's final count is the larger of it and the
    /// kernel's.
    ///
    /// A watched flow outlives this client's connection to its agent: if
    /// the connection is lost (the agent timed the client out, say), the
    /// agent keeps the flow open and enforced, the client takes it back
    /// when it reconnects, and a close made meanwhile is sent then (this
    /// returns `Ok` at once). A flow nobody takes back closes at the agent
    /// once idle for its client timeout.
    pub fn close_watched(&self, flow: u64, bytes_arrived: u64) -> Result<(), ClientError> {
        let inner = self.inner.as_ref().ok_or(ClientError::Unreachable)?;
        let reply = inner.call(Kind::CloseFlow(proto::CloseFlowRequest {
            flow_id: flow,
            bytes_sent: bytes_arrived,
        }));
        let mut watched = inner.watched.lock().expect("client lock");
        match reply {
            Ok(AgentReply {
                kind: Some(agent_reply::Kind::Ok(_)),
            }) => {
                watched.remove(&flow);
                Ok(())
            }
            Ok(_) => Err(ClientError::Unexpected),
            Err(ClientError::Unreachable) => match watched.get_mut(&flow) {
                Some(w) => {
                    w.closed = Some(bytes_arrived);
                    Ok(())
                }
                None => Err(ClientError::Unreachable),
            },
            Err(e) => {
                watched.remove(&flow);
                Err(e)
            }
        }
    }

    /// As [`AgentClient::writer`], but without waiting for the agent: the
    /// flow's open is sent and the writer returned at once (Aalo 6.1:
    /// senders start without blocking), so a flow pays no round trip to
    /// its agent before its first byte, however many flows open at once.
    ///
    /// Until the agent's answer arrives (the next reply on the client's
    /// connection), the writer sends with the schedule of another open
    /// writer of the same coflow in this client if there is one (its rate,
    /// class and pause: the coflow's place in the coordinator's order),
    /// else unpaced in class 0 (a new coflow's local queue, as the agent's
    /// local schedule would put it); then as the agent says. Its bytes are
    /// counted from the first and reported once the flow has its id (every
    /// report carries the cumulative count: none is lost or counted
    /// twice). If the agent refuses the flow, or its connection fails
    /// before answering, the writer goes on as plain TCP, as without an
    /// agent ([`CoflowWriter::is_scheduled`] says which). Its close is sent
    /// without waiting too; a writer that closes before its open was
    /// answered is closed at the agent by the client's next report.
    pub fn writer_at_once<S: Write + AsRawFd>(
        &self,
        coflow: CoflowId,
        dst_host: u32,
        size_hint: Option<u64>,
        stream: S,
    ) -> CoflowWriter<S> {
        let Some(inner) = &self.inner else {
            return CoflowWriter::plain(stream);
        };
        // A sibling's schedule: the coordinator's for this coflow, if it
        // has scheduled one of its flows here.
        let sibling = inner
            .flows
            .lock()
            .expect("client lock")
            .values()
            .filter(|f| f.coflow == coflow.0 && !f.closed.load(Ordering::Relaxed))
            .map(|f| *f.sched.lock().expect("flow lock"))
            .filter(|s| s.rate_bps.is_some())
            .min_by(|a, b| (a.class, a.paused).cmp(&(b.class, b.paused)));
        let sched = Sched {
            version: 0,
            ..sibling.unwrap_or(Sched {
                rate_bps: None,
                class: 0,
                paused: false,
                version: 0,
            })
        };
        let shared = FlowShared::new(coflow.0, dst_host, size_hint, sched, 0, OPENING);
        let sent = inner.send(
            Kind::OpenFlow(proto::OpenFlowRequest {
                coflow_id: coflow.0,
                dst_host,
                size_hint: size_hint.unwrap_or(0),
            }),
            Waiter::Open(shared.clone()),
        );
        if !sent {
            return CoflowWriter::plain(stream);
        }
        CoflowWriter::scheduled(stream, shared, inner.clone(), true)
    }
}

#[cfg(test)]
mod tests;
