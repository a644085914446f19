//! One host's policy as the testbed's replay worker runs it ([`HostRunner`]): built from a
//! scheduler spec, called by the worker (a flow starts, bytes written, a flow ends, a control
//! message, a wake-up) and, while its native clock runs ([`crate::host_clock`]), by the clock's
//! thread too, the two taking turns behind one mutex.
//!
//! Each call returns what it changed as [`Out`]: the flows whose marking changed and the messages
//! to send, each `(destination host, kind, number, coflow, value)` with kind 1 (announce) or 2
//! (reply), the numbers of the testbed's control datagrams. Times are integer nanoseconds since
//! the run's origin (the worker converts its wall clock).
//!
//! Correctness property: while the clock runs, every call's `now` is held to the latest instant
//! the policy saw ([`Host::at`]): the worker reads its clock before it takes the lock and the
//! thread after, and the policy must see one order of time.

use crate::host_clock::{lock, peer, Clock, ClockConfig, ClockStats, Host};
use coflowkit_model::Time;
use coflowkit_sched::build_host;
use coflowkit_sched::host::{Control, ControlKind, Effects, HostContext, HostPolicy};
use coflowkit_sched::spec::{SchedulerSpec, WorkloadHints};
use std::sync::{Arc, Mutex};
use thiserror::Error;

/// A message as the worker sends it: (destination, kind, number, coflow, value).
pub type Message = (u32, u8, u32, u32, u64);

/// What one call returns: flows whose marking changed, messages to send.
pub type Out = (Vec<u64>, Vec<Message>);

/// The wire number of a message kind (the testbed's datagram head).
pub fn kind_number(kind: ControlKind) -> u8 {
    match kind {
        ControlKind::Announce => 1,
        ControlKind::Reply => 2,
    }
}

/// The message kind of its wire number, or why it is none.
pub fn kind_of(kind: u8) -> Result<ControlKind, String> {
    match kind {
        1 => Ok(ControlKind::Announce),
        2 => Ok(ControlKind::Reply),
        k => Err(format!("control kind {k}: 1 or 2")),
    }
}

/// A message to `dst` as the worker sends it.
pub fn message((dst, m): &(u32, Control)) -> Message {
    (*dst, kind_number(m.kind), m.number, m.coflow, m.value)
}

/// The policy of scheduler `spec` at the host `ctx` describes, with the workload's hints for
/// thresholds given as percentiles, or why there is none (the spec's or the policy's error).
pub fn build(
    spec: &str,
    ctx: HostContext,
    flow_sizes: Vec<f64>,
    coflow_sizes: Vec<f64>,
) -> Result<Box<dyn HostPolicy>, String> {
    let spec = SchedulerSpec::parse(spec).map_err(|e| e.to_string())?;
    let hints = WorkloadHints {
        coflow_sizes,
        flow_sizes,
    };
    build_host(&spec, &hints, &ctx).map_err(|e| e.to_string())
}

/// Why a clock did not start.
#[derive(Debug, Error)]
pub enum ClockError {
    /// `start_clock` twice.
    #[error("the clock already runs")]
    Running,
    /// A peer's address is not an IPv4 address.
    #[error("{0}")]
    Peer(String),
    /// This host is not one of the peers.
    #[error("host {host} of {n_peers} peers")]
    Host {
        /// The host asked for.
        host: u16,
        /// How many peers were given.
        n_peers: usize,
    },
    /// The thread or its descriptors could not be made.
    #[error("host clock: {0}")]
    Io(#[from] std::io::Error),
}

/// One host's policy and, between [`HostRunner::start_clock`] and [`HostRunner::stop_clock`],
/// its native clock.
pub struct HostRunner {
    /// The policy, shared with its native clock while one runs.
    host: Arc<Mutex<Host>>,
    /// The native clock, while it runs.
    clock: Option<Clock>,
}

impl HostRunner {
    /// A runner of `policy`, with no clock.
    pub fn new(policy: Box<dyn HostPolicy>) -> HostRunner {
        HostRunner {
            host: Arc::new(Mutex::new(Host::new(policy))),
            clock: None,
        }
    }

    /// Calls `f` with the policy, `now` and empty effects, and returns the effects; wakes the
    /// clock if the policy's next instant moved before the one it sleeps until.
    pub fn run(
        &mut self,
        now: u64,
        f: impl FnOnce(&mut dyn HostPolicy, Time, &mut Effects),
    ) -> Out {
        let mut h = lock(&self.host);
        let h = &mut *h;
        let now = if self.clock.is_some() { h.at(now) } else { now };
        h.out.clear();
        f(h.policy.as_mut(), Time(now), &mut h.out);
        let sends = h.out.send.iter().map(message).collect();
        let out = (std::mem::take(&mut h.out.changed), sends);
        if let Some(clock) = &self.clock {
            if h.wake_needed() {
                clock.nudge();
            }
        }
        out
    }

    /// A read of the policy.
    pub fn with<T>(&self, f: impl FnOnce(&dyn HostPolicy) -> T) -> T {
        f(lock(&self.host).policy.as_ref())
    }

    /// Flow `id` sends on socket `fd`: the native clock may read its queue (SIOCOUTQ) and mark
    /// it. Detach it before the socket closes.
    pub fn attach(&mut self, id: u64, fd: i32) {
        lock(&self.host).attach(id, fd);
    }

    /// Flow `id`'s socket is no longer the native clock's to touch.
    pub fn detach(&mut self, id: u64) {
        lock(&self.host).detach(id);
    }

    /// Starts the native clock: `t0` is the origin (Unix seconds), `peers` every host's control
    /// (address, port), `host` this host; the rest as [`ClockConfig`] says.
    #[allow(clippy::too_many_arguments)]
    pub fn start_clock(
        &mut self,
        t0: f64,
        host: u16,
        peers: &[(String, u16)],
        ctl_fd: Option<i32>,
        pace: Option<u64>,
        rt_priority: i32,
        nice: Option<i32>,
    ) -> Result<(), ClockError> {
        if self.clock.is_some() {
            return Err(ClockError::Running);
        }
        let peers = peers
            .iter()
            .map(|(a, p)| peer(a, *p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ClockError::Peer)?;
        if usize::from(host) >= peers.len() {
            return Err(ClockError::Host {
                host,
                n_peers: peers.len(),
            });
        }
        let config = ClockConfig {
            host,
            t0_ns: (t0 * 1e9).round() as i128,
            ctl_fd,
            peers,
            pace,
            rt_priority,
            nice,
        };
        self.clock = Some(Clock::start(Arc::clone(&self.host), config)?);
        Ok(())
    }

    /// Stops the native clock and returns what it counted; None if none ran.
    pub fn stop_clock(&mut self) -> Option<ClockStats> {
        self.clock.take().map(Clock::stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Dur;
    use coflowkit_sched::host::HostFlow;

    fn ctx() -> HostContext {
        HostContext {
            host: 0,
            n_hosts: 2,
            nic_bps: 1e9,
            rtt: Dur(100_000),
        }
    }

    fn pias() -> HostRunner {
        HostRunner::new(build("pias:thresholds=100/1000/5000", ctx(), vec![], vec![]).unwrap())
    }

    #[test]
    fn kinds_read_back_as_numbered_and_others_are_refused() {
        for k in [ControlKind::Announce, ControlKind::Reply] {
            assert_eq!(kind_of(kind_number(k)), Ok(k));
        }
        assert_eq!(kind_of(3), Err("control kind 3: 1 or 2".to_owned()));
    }

    #[test]
    fn a_bad_spec_is_refused_with_its_reason() {
        let e = build("no-such-scheduler", ctx(), vec![], vec![])
            .err()
            .unwrap();
        assert!(e.contains("no-such-scheduler"), "{e}");
    }

    #[test]
    fn a_call_returns_what_it_changed_and_reads_see_the_policy() {
        let mut r = pias();
        let flow = HostFlow {
            id: 7,
            coflow: 1,
            coflow_arrival: Time(0),
            dst: 1,
            size: 10_000,
            size_known: true,
            deadline: None,
        };
        let (_, sends) = r.run(1_000, |p, now, out| p.start(now, &flow, out));
        assert!(sends.is_empty(), "PIAS sends no messages: {sends:?}");
        assert_eq!(r.with(|p| p.marking(7).class), 0);
        r.run(2_000, |p, now, out| p.sent(now, 7, 2_000, out));
        assert!(
            r.with(|p| p.marking(7).class) > 0,
            "past the first threshold"
        );
    }

    #[test]
    fn a_clock_starts_once_for_a_known_host_and_stops() {
        let mut r = pias();
        let peers = vec![
            ("127.0.0.1".to_owned(), 9000),
            ("127.0.0.1".to_owned(), 9001),
        ];
        let e = r
            .start_clock(0.0, 2, &peers, None, None, 0, None)
            .unwrap_err();
        assert_eq!(e.to_string(), "host 2 of 2 peers");
        let bad = [("not-an-ip".to_owned(), 1)];
        let e = r
            .start_clock(0.0, 0, &bad, None, None, 0, None)
            .unwrap_err();
        assert!(matches!(e, ClockError::Peer(_)), "{e}");
        r.start_clock(0.0, 0, &peers, None, None, 0, None).unwrap();
        let e = r
            .start_clock(0.0, 0, &peers, None, None, 0, None)
            .unwrap_err();
        assert_eq!(e.to_string(), "the clock already runs");
        assert!(r.stop_clock().is_some());
        assert!(r.stop_clock().is_none());
    }
}
