//! `_core.HostPolicy`: one host's policy ([`coflowkit_sched::host`]) for the
//! testbed's replay workers, the same code the packet engine runs, through
//! `coflowkit_testbed::host_policy::HostRunner` (which also runs its native
//! clock, `coflowkit_testbed::host_clock`).
//!
//! Only translation: times are integer nanoseconds since the run's origin
//! (the worker converts its wall clock), every call returns what it changed
//! as `(changed flow ids, messages)`, each message `(destination host,
//! kind, number, coflow, value)` with kind 1 (announce) or 2 (reply), the
//! numbers of the testbed's control datagrams. The view a policy may ask
//! of the host (bytes written and not acknowledged) is a Python callable
//! passed to `wake`.

use crate::errors::value_error;
use coflowkit_model::{Dur, Time};
use coflowkit_sched::dcas::host::DcasHost;
use coflowkit_sched::host::{
    replay, Cc, Control, ControlKind, HostContext, HostEvent, HostFlow, HostPolicy, HostView,
    Marking, PathRates, TaskTag,
};
use coflowkit_testbed::host_clock;
use coflowkit_testbed::host_policy::{build, kind_of, message, ClockError, HostRunner, Out};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// One active flow's decision in a replay: (id, class, pace, cc, limit,
/// task tag, demand).
type FlowDecision = (
    u64,
    u8,
    Option<u64>,
    &'static str,
    u64,
    Option<(u64, bool, u64)>,
    Option<u64>,
);

/// A marking as Python sees it: (class, pacing bytes/s or None, congestion
/// control by name).
fn marking(m: Marking) -> (u8, Option<u64>, &'static str) {
    let cc = match m.cc {
        Cc::Default => "default",
        Cc::Mcp { .. } => "mcp",
        Cc::D2tcp { .. } => "d2tcp",
        Cc::Tafe { .. } => "tafe",
    };
    (m.class, m.pace, cc)
}

/// A task tag as Python sees it: (task id, heavy, task bytes sent).
fn task(t: Option<TaskTag>) -> Option<(u64, bool, u64)> {
    t.map(|t| (t.id, t.heavy, t.bytes))
}

/// Unacknowledged bytes of a trace event: flow, bytes, flow, bytes, ...
fn unacked_list(a: &[Option<u64>], bad: impl Fn() -> PyErr) -> PyResult<Vec<(u64, u64)>> {
    a.chunks(2)
        .map(|p| {
            Ok((
                p[0].ok_or_else(&bad)?,
                p.get(1).copied().flatten().ok_or_else(&bad)?,
            ))
        })
        .collect()
}

/// The message kind of its wire number, or a `ValueError`.
fn kind(kind: u8) -> PyResult<ControlKind> {
    kind_of(kind).map_err(value_error)
}

/// One event of a trace from Python: (`start`|`sent`|`finish`|`receive`|
/// `wake`|`feedback`, now ns, arguments as the methods of `HostPolicy` take
/// them; `wake`'s are flow, unacked, flow, unacked, ...; `feedback`'s are
/// flow, least AR, least NR, then `wake`'s).
fn event(name: &str, now: u64, a: &[Option<u64>]) -> PyResult<HostEvent> {
    let bad = || value_error(format!("trace event '{name}' at {now}: arguments {a:?}"));
    let get = |i: usize| a.get(i).copied().flatten().ok_or_else(bad);
    let now = Time(now);
    let narrow = |x: u64| u32::try_from(x).map_err(|_| bad());
    Ok(match name {
        "start" => HostEvent::Start(
            now,
            HostFlow {
                id: get(0)?,
                coflow: narrow(get(1)?)?,
                coflow_arrival: Time(get(2)?),
                dst: narrow(get(3)?)?,
                size: get(4)?,
                size_known: get(5)? != 0,
                deadline: a.get(6).copied().flatten().map(Dur),
            },
        ),
        "sent" => HostEvent::Sent(now, get(0)?, get(1)?),
        "finish" => HostEvent::Finish(now, get(0)?),
        "receive" => HostEvent::Receive(
            now,
            narrow(get(0)?)?,
            Control {
                kind: kind(u8::try_from(get(1)?).map_err(|_| bad())?)?,
                number: narrow(get(2)?)?,
                coflow: narrow(get(3)?)?,
                value: get(4)?,
            },
        ),
        "wake" => HostEvent::Wake(now, unacked_list(a, bad)?),
        "feedback" => HostEvent::Feedback(
            now,
            get(0)?,
            PathRates {
                min_ar: get(1)?,
                min_nr: get(2)?,
            },
            unacked_list(a.get(3..).unwrap_or(&[]), bad)?,
        ),
        _ => return Err(bad()),
    })
}

/// What the policy of `spec` decides at each event of `events`, driven in
/// Rust ([`replay`], as the packet engine drives it): per event (changed
/// flows, messages, every active flow's (id, class, pace, cc, limit, task
/// tag, demand), the next wake-up). The differential test drives `HostPolicy` as the replay
/// worker does and compares.
#[pyfunction]
#[pyo3(signature = (spec, host, n_hosts, nic_bps, rtt_ns, events))]
#[allow(clippy::type_complexity)]
pub fn host_policy_replay(
    spec: &str,
    host: u32,
    n_hosts: u32,
    nic_bps: f64,
    rtt_ns: u64,
    events: Vec<(String, u64, Vec<Option<u64>>)>,
) -> PyResult<
    Vec<(
        Vec<u64>,
        Vec<(u32, u8, u32, u32, u64)>,
        Vec<FlowDecision>,
        Option<u64>,
    )>,
> {
    let ctx = HostContext {
        host,
        n_hosts,
        nic_bps,
        rtt: Dur(rtt_ns),
    };
    let mut policy = build(spec, ctx, vec![], vec![]).map_err(value_error)?;
    let events = events
        .iter()
        .map(|(name, now, a)| event(name, *now, a))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(replay(policy.as_mut(), &events)
        .into_iter()
        .map(|step| {
            let flows = step
                .flows
                .iter()
                .map(|&(f, m, limit, demand)| {
                    let (class, pace, cc) = marking(m);
                    (f, class, pace, cc, limit, task(m.task), demand)
                })
                .collect();
            (
                step.effects.changed,
                step.effects.send.iter().map(message).collect(),
                flows,
                step.wake_at.map(|t| t.0),
            )
        })
        .collect())
}

/// One host's policy, built from a scheduler spec.
#[pyclass(name = "HostPolicy", module = "coflowkit._core", unsendable)]
pub struct PyHostPolicy {
    /// The policy and, between `start_clock` and `stop_clock`, its native clock.
    runner: HostRunner,
}

/// A Python callable `fid -> bytes` as a [`HostView`] (0 if it fails).
struct PyView<'py>(Bound<'py, PyAny>);

impl HostView for PyView<'_> {
    fn unacked(&self, flow: u64) -> u64 {
        self.0
            .call1((flow,))
            .and_then(|v| v.extract::<u64>())
            .unwrap_or(0)
    }
}

#[pymethods]
impl PyHostPolicy {
    /// The policy of scheduler `spec` at `host` of `n_hosts`, with its NIC
    /// rate and the fabric's base RTT; `flow_sizes` and `coflow_sizes` (bytes)
    /// are the workload's hints for thresholds given as percentiles.
    #[new]
    #[pyo3(signature = (spec, host, n_hosts, nic_bps, rtt_ns, flow_sizes = vec![], coflow_sizes = vec![]))]
    fn new(
        spec: &str,
        host: u32,
        n_hosts: u32,
        nic_bps: f64,
        rtt_ns: u64,
        flow_sizes: Vec<f64>,
        coflow_sizes: Vec<f64>,
    ) -> PyResult<Self> {
        let ctx = HostContext {
            host,
            n_hosts,
            nic_bps,
            rtt: Dur(rtt_ns),
        };
        let policy = build(spec, ctx, flow_sizes, coflow_sizes).map_err(value_error)?;
        Ok(PyHostPolicy {
            runner: HostRunner::new(policy),
        })
    }

    /// The policy's name.
    #[getter]
    fn name(&self) -> String {
        self.runner.with(|p| p.name().to_string())
    }

    /// Whether it exchanges control messages (D-CAS negotiating).
    #[getter]
    fn negotiates(&self) -> bool {
        self.runner.with(|p| {
            p.as_any()
                .downcast_ref::<DcasHost>()
                .is_some_and(|d| d.negotiates())
        })
    }

    /// Flow `id` starts at `now` (ns since the origin).
    #[pyo3(signature = (now, id, coflow, coflow_arrival, dst, size, size_known = true, deadline = None))]
    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        now: u64,
        id: u64,
        coflow: u32,
        coflow_arrival: u64,
        dst: u32,
        size: u64,
        size_known: bool,
        deadline: Option<u64>,
    ) -> Out {
        let flow = HostFlow {
            id,
            coflow,
            coflow_arrival: Time(coflow_arrival),
            dst,
            size,
            size_known,
            deadline: deadline.map(Dur),
        };
        self.runner.run(now, |p, now, out| p.start(now, &flow, out))
    }

    /// `n` more bytes of flow `id` handed to the transport at `now`.
    fn sent(&mut self, now: u64, id: u64, n: u64) -> Out {
        self.runner.run(now, |p, now, out| p.sent(now, id, n, out))
    }

    /// Flow `id` finished at `now` (its socket, if attached, is detached).
    fn finish(&mut self, now: u64, id: u64) -> Out {
        let out = self.runner.run(now, |p, now, out| p.finish(now, id, out));
        self.runner.detach(id);
        out
    }

    /// Flow `id` sends on socket `fd`: the native clock may read its queue
    /// (SIOCOUTQ) and mark it. Detach it (`detach`, or `finish`) before
    /// the socket closes.
    fn attach(&mut self, id: u64, fd: i32) {
        self.runner.attach(id, fd);
    }

    /// Flow `id`'s socket is no longer the native clock's to touch.
    fn detach(&mut self, id: u64) {
        self.runner.detach(id);
    }

    /// Runs the policy's clock natively (`coflowkit_testbed::host_clock`): a
    /// thread that wakes the policy at `wake_at`, reads and answers the
    /// control datagrams on `ctl_fd` (a bound, non-blocking UDP socket, or
    /// None) and marks the attached flows' sockets (their class's DSCP, the
    /// policy's pacing or `pace` bytes/s); `t0` is the origin (Unix
    /// seconds), `peers` every host's control (address, port), `host` this
    /// host, `rt_priority` a `SCHED_FIFO` priority to ask for (0: none) and
    /// `nice` the thread's niceness (default: the process's).
    /// Meanwhile call no `wake` nor `receive`: the clock does.
    #[pyo3(signature = (t0, host, peers, ctl_fd = None, pace = None, rt_priority = 0, nice = None))]
    #[allow(clippy::too_many_arguments)]
    fn start_clock(
        &mut self,
        t0: f64,
        host: u16,
        peers: Vec<(String, u16)>,
        ctl_fd: Option<i32>,
        pace: Option<u64>,
        rt_priority: i32,
        nice: Option<i32>,
    ) -> PyResult<()> {
        self.runner
            .start_clock(t0, host, &peers, ctl_fd, pace, rt_priority, nice)
            .map_err(|e| match e {
                ClockError::Io(_) => pyo3::exceptions::PyOSError::new_err(e.to_string()),
                _ => value_error(e),
            })
    }

    /// Stops the native clock; what it counted: `datagrams` sent,
    /// `send_failed`, `ignored` (datagrams by why), `realtime` (whether it
    /// ran at the priority asked) and `wakeups`; None if none ran.
    fn stop_clock<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let runner = &mut self.runner;
        let Some(stats) = py.detach(|| runner.stop_clock()) else {
            return Ok(None);
        };
        let out = PyDict::new(py);
        out.set_item("datagrams", stats.datagrams)?;
        out.set_item("send_failed", stats.send_failed)?;
        out.set_item("ignored", stats.ignored)?;
        out.set_item("realtime", stats.realtime)?;
        out.set_item("nice", stats.nice)?;
        out.set_item("wakeups", stats.wakeups)?;
        Ok(Some(out))
    }

    /// A control message from host `src` at `now`: kind 1 (announce) or 2
    /// (reply), its number, coflow and value.
    fn receive(
        &mut self,
        now: u64,
        src: u32,
        kind: u8,
        number: u32,
        coflow: u32,
        value: u64,
    ) -> PyResult<Out> {
        let msg = Control {
            kind: self::kind(kind)?,
            number,
            coflow,
            value,
        };
        Ok(self
            .runner
            .run(now, |p, now, out| p.receive(now, src, &msg, out)))
    }

    /// When the policy wants `wake` next (ns since the origin), or None.
    fn wake_at(&self) -> Option<u64> {
        self.runner.with(|p| p.wake_at().map(|t| t.0))
    }

    /// The instant `wake_at` named came (or passed): `now`; `unacked(fid)`
    /// gives a flow's bytes written and not yet acknowledged.
    fn wake(&mut self, now: u64, unacked: Bound<'_, PyAny>) -> Out {
        let view = PyView(unacked);
        self.runner.run(now, |p, now, out| p.wake(now, &view, out))
    }

    /// The switches on flow `id`'s path answered its rate request at `now`
    /// (Baraat): their least actual and nominal rates, bits/s;
    /// `unacked(fid)` as for `wake`.
    fn feedback(
        &mut self,
        now: u64,
        id: u64,
        min_ar: u64,
        min_nr: u64,
        unacked: Bound<'_, PyAny>,
    ) -> Out {
        let view = PyView(unacked);
        let rates = PathRates { min_ar, min_nr };
        self.runner
            .run(now, |p, now, out| p.feedback(now, id, rates, &view, out))
    }

    /// The rate flow `id` asks of the switches on its path, bits/s (Baraat's
    /// demand), or None if the policy asks none.
    fn demand(&self, id: u64) -> Option<u64> {
        self.runner.with(|p| p.demand(id))
    }

    /// Flow `id`'s task tag for switches that schedule by task: (task id,
    /// heavy, task bytes sent), or None.
    fn task(&self, id: u64) -> Option<(u64, bool, u64)> {
        task(self.runner.with(|p| p.marking(id).task))
    }

    /// Flow `id`'s marking: (class 0-7, pacing bytes/s or None, congestion
    /// control: `default`, `mcp`, `d2tcp` or `tafe`).
    fn marking(&self, id: u64) -> (u8, Option<u64>, &'static str) {
        marking(self.runner.with(|p| p.marking(id)))
    }

    /// How many more bytes flow `id` may send before its marking may change.
    fn limit(&self, id: u64) -> u64 {
        self.runner.with(|p| p.limit(id))
    }

    /// D-CAS's negotiation as this host saw it (None for other policies):
    /// its counters, `runs` per coflow ([large, starving]), `rtt_ns` and
    /// `round_ns` (durations) and `raised` ([at, coflow, d, Phi, class]).
    fn dcas_report<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.runner.with(|p| dcas_report(py, p))
    }
}

/// D-CAS's negotiation as `policy` saw it, or None if it is not D-CAS's.
fn dcas_report<'py>(
    py: Python<'py>,
    policy: &dyn HostPolicy,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(d) = policy.as_any().downcast_ref::<DcasHost>() else {
        return Ok(None);
    };
    let out = PyDict::new(py);
    let counts = PyDict::new(py);
    for (k, v) in d.counts() {
        counts.set_item(k, v)?;
    }
    out.set_item("counts", counts)?;
    let runs = PyDict::new(py);
    for (c, r) in d.runs() {
        runs.set_item(c, r.to_vec())?;
    }
    out.set_item("runs", runs)?;
    out.set_item("rtt_ns", d.rtts().iter().map(|x| x.0).collect::<Vec<_>>())?;
    out.set_item(
        "round_ns",
        d.rounds().iter().map(|x| x.0).collect::<Vec<_>>(),
    )?;
    let raised: Vec<(u64, u32, u64, u64, u8)> = d
        .raised()
        .iter()
        .map(|r| (r.at.0, r.coflow, r.d, r.p, r.class))
        .collect();
    out.set_item("raised", raised)?;
    Ok(Some(out))
}

/// A D-CAS control datagram (`host_clock::encode`, the one wire format the
/// native clock and the worker's event loop both send): `kind` 1 (announce)
/// or 2 (reply) from `host`, with 1 to 64 entries (number, coflow, value).
#[pyfunction]
pub fn control_encode(kind: u8, host: u16, entries: Vec<(u32, u64, u64)>) -> PyResult<Vec<u8>> {
    host_clock::encode_checked(kind, host, &entries).map_err(value_error)
}

/// `(kind, host, entries)` of a control datagram (`host_clock::decode`), or
/// why it is not one (`size`, `magic`, `version`, `kind`, `host`): never
/// raises.
#[pyfunction]
pub fn control_decode(py: Python<'_>, data: &[u8], n_hosts: usize) -> PyResult<Py<PyAny>> {
    use pyo3::IntoPyObjectExt;
    match host_clock::decode(data, n_hosts) {
        Ok(decoded) => decoded.into_py_any(py),
        Err(why) => why.into_py_any(py),
    }
}
