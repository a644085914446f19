//! The runtime for Python: [`runtime_main`] runs the coordinator or the
//! agent (`coflowkit_runtime::cli::run`, the `coflowkit-runtime` binary's
//! own entry) in this process, and the client library: [`PyAgentClient`] binds
//! `coflowkit_runtime::client::AgentClient` and [`PyCoflowWriter`] binds its
//! `CoflowWriter` over an existing Python socket, which it reaches by file
//! descriptor (`coflowkit_testbed::fd`). Every decision (counting, pacing, marking, pausing, falling
//! back to plain TCP) is the Rust client's; this module only translates.
//!
//! Errors: the agent unreachable is `ConnectionError`; a request the agent
//! refuses (a bad parent, a host outside the cluster) is `ValueError` with
//! the agent's reason; an unexpected reply is `RuntimeError`; a socket's
//! own failures are the `OSError`s Python's `socket` raises
//! (`BrokenPipeError`, `TimeoutError`, `BlockingIOError`, ...).

use crate::errors::{one_line, value_error};
use coflowkit_model::CoflowId;
use coflowkit_runtime::client::{AgentClient, ClientError, CoflowWriter, FlowHandle};
use coflowkit_testbed::fd::{write_some, FdStream};
use coflowkit_testbed::replay_sender::{self, OutFlow};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{
    PyBlockingIOError, PyConnectionError, PyOSError, PyRuntimeError, PyTimeoutError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use std::io;
use std::os::fd::RawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Runs the runtime's command line (`argv`: the program name, then
/// `coordinator ...` or `agent ...`, as the `coflowkit-runtime` binary
/// takes them) in this process with the GIL released, on a tokio runtime
/// of its own that lives as long as the call; returns the exit code (0
/// after SIGINT stopped it cleanly, 2 for a usage error, 1 for any other).
#[pyfunction]
pub fn runtime_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(|| coflowkit_runtime::cli::run(argv))
}

/// How long `sendall` runs without the GIL before it looks for signals
/// (Ctrl-C) and the socket's state.
const SLICE: Duration = Duration::from_millis(100);

fn client_error(what: &str, socket: &std::path::Path, e: ClientError) -> PyErr {
    match e {
        ClientError::Unreachable => PyConnectionError::new_err(format!(
            "{what}: the agent at {} cannot be reached",
            socket.display()
        )),
        ClientError::Refused(why) => {
            PyValueError::new_err(one_line(format!("{what}: the agent refused: {why}")))
        }
        ClientError::Unexpected => {
            PyRuntimeError::new_err(format!("{what}: unexpected reply from the agent"))
        }
    }
}

/// The descriptor of `sock` (an object with `fileno()`, or an int), or an
/// error naming why there is none.
fn fd_of(sock: &Bound<'_, PyAny>) -> PyResult<RawFd> {
    let fd: i64 = if let Ok(fd) = sock.extract::<i64>() {
        fd
    } else if sock.hasattr("fileno")? {
        sock.call_method0("fileno")?.extract()?
    } else {
        return Err(PyValueError::new_err(format!(
            "sock: a socket (with fileno()) or a file descriptor, not {}",
            sock.get_type().name()?
        )));
    };
    if fd < 0 {
        return Err(PyOSError::new_err("sock: the socket is closed"));
    }
    RawFd::try_from(fd).map_err(|_| value_error(format!("sock: {fd} is not a file descriptor")))
}

/// The socket's timeout as Python keeps it: `None` blocking, `0` non-blocking.
fn timeout_of(sock: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    if sock.hasattr("gettimeout")? {
        sock.call_method0("gettimeout")?.extract()
    } else {
        Ok(None)
    }
}

/// What `send_flows` returns: records by flow id, errors, the congestion
/// controls the sockets ended up with, lost connections, attempts of the
/// flows sent more than once.
type SendFlowsResult<'py> = PyResult<(
    Bound<'py, PyDict>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
    std::collections::HashMap<u64, u32>,
)>;

/// A connection to the local agent (the Rust `AgentClient`).
#[pyclass(name = "AgentClient", module = "coflowkit._core", frozen)]
pub struct PyAgentClient {
    client: AgentClient,
    socket: PathBuf,
}

#[pymethods]
impl PyAgentClient {
    /// Connects to the agent's Unix socket; never fails (without an agent,
    /// writers are plain TCP and `connected` is False).
    #[new]
    #[pyo3(signature = (socket, delta_ms = 10))]
    fn new(py: Python<'_>, socket: PathBuf, delta_ms: u64) -> PyResult<Self> {
        if delta_ms == 0 {
            return Err(PyValueError::new_err("delta_ms: give at least 1 ms"));
        }
        let s = socket.clone();
        let client =
            py.detach(move || AgentClient::connect_every(&s, Duration::from_millis(delta_ms)));
        Ok(PyAgentClient { client, socket })
    }

    /// Whether an agent schedules this client's writers.
    #[getter]
    fn connected(&self) -> bool {
        self.client.is_connected()
    }

    /// The agent's socket path.
    #[getter]
    fn socket(&self) -> String {
        self.socket.display().to_string()
    }

    /// Registers a coflow depending on `parents`; returns its id.
    #[pyo3(signature = (parents = Vec::new()))]
    fn register(&self, py: Python<'_>, parents: Vec<u64>) -> PyResult<u64> {
        let ps: Vec<CoflowId> = parents.iter().map(|&p| CoflowId(p)).collect();
        py.detach(|| self.client.register(&ps))
            .map(|id| id.0)
            .map_err(|e| client_error(&format!("register(parents={parents:?})"), &self.socket, e))
    }

    /// Unregisters coflow `coflow`: it completes once its writers have closed.
    fn unregister(&self, py: Python<'_>, coflow: u64) -> PyResult<()> {
        py.detach(|| self.client.unregister(CoflowId(coflow)))
            .map_err(|e| client_error(&format!("unregister({coflow})"), &self.socket, e))
    }

    /// Names a flow of an unmodified application at this agent by its
    /// address as the agent's host sends it (TCP from `src_port` to
    /// `dst_addr:dst_port`), as a flow of coflow `coflow` to host
    /// `dst_host`; the agent enforces its schedule and counts its bytes in
    /// the kernel. Returns the flow's id for `close_watched`.
    #[pyo3(signature = (coflow, dst_host, src_port, dst_addr, dst_port, size_hint = None))]
    fn watch(
        &self,
        py: Python<'_>,
        coflow: u64,
        dst_host: u32,
        src_port: u16,
        dst_addr: &str,
        dst_port: u16,
        size_hint: Option<u64>,
    ) -> PyResult<u64> {
        let what =
            format!("watch(coflow={coflow}, src_port={src_port}, dst={dst_addr}:{dst_port})");
        let ip: std::net::Ipv4Addr = dst_addr.parse().map_err(|_| {
            PyValueError::new_err(format!("{what}: dst_addr is not an IPv4 address"))
        })?;
        let dst = std::net::SocketAddrV4::new(ip, dst_port);
        py.detach(|| {
            self.client
                .watch(CoflowId(coflow), dst_host, size_hint, src_port, dst)
        })
        .map_err(|e| client_error(&what, &self.socket, e))
    }

    /// Closes a watched flow: it is done; `bytes_arrived` is what its
    /// receiver counted (0 if unknown).
    #[pyo3(signature = (flow, bytes_arrived = 0))]
    fn close_watched(&self, py: Python<'_>, flow: u64, bytes_arrived: u64) -> PyResult<()> {
        py.detach(|| self.client.close_watched(flow, bytes_arrived))
            .map_err(|e| client_error(&format!("close_watched({flow})"), &self.socket, e))
    }

    /// Wraps `sock` (a connected TCP socket, or its descriptor) in a writer
    /// of coflow `coflow` to host `dst_host`. With `wait=False` the writer
    /// is returned without waiting for the agent's answer (the Rust
    /// `writer_at_once`: it sends at once with its coflow's schedule in this
    /// client, or unpaced in class 0, until the answer; a flow the agent
    /// refuses is then plain TCP instead of an error, and `scheduled` says
    /// so once answered).
    #[pyo3(signature = (sock, coflow, dst_host, size_hint = None, wait = true))]
    fn writer(
        &self,
        py: Python<'_>,
        sock: Bound<'_, PyAny>,
        coflow: u64,
        dst_host: u32,
        size_hint: Option<u64>,
        wait: bool,
    ) -> PyResult<PyCoflowWriter> {
        if coflow == 0 {
            return Err(PyValueError::new_err(
                "coflow: 0 is reserved; use an id from register()",
            ));
        }
        let fd = fd_of(&sock)?;
        let w = if wait {
            py.detach(|| {
                self.client
                    .try_writer(CoflowId(coflow), dst_host, size_hint, FdStream(fd))
            })
            .map_err(|(e, _)| {
                client_error(
                    &format!("writer(coflow={coflow}, dst_host={dst_host})"),
                    &self.socket,
                    e,
                )
            })?
        } else {
            py.detach(|| {
                self.client
                    .writer_at_once(CoflowId(coflow), dst_host, size_hint, FdStream(fd))
            })
        };
        Ok(PyCoflowWriter {
            handle: w.handle(),
            w: Some(w),
            sock: sock.unbind(),
            fd,
            coflow,
            dst_host,
        })
    }

    /// Sends one host's replay flows natively (`coflowkit_testbed::replay_sender`):
    /// `flows` are `(id, dst, size, start, coflow)` with `start` in seconds
    /// after `t0` (seconds since the epoch), `addrs` each host's data
    /// `(address, port)`, `tcp_cc` the data sockets' congestion control
    /// ("": the host's), `block2` the payload block twice. Returns
    /// `(sent, errors, tcp_cc_seen, broken, resent)`: per flow id the record
    /// of `coflowkit._runtime_sender`, the errors each naming its flow, the
    /// congestion controls the sockets ended up with, the connections lost
    /// (their flows sent again from the first byte, up to three attempts),
    /// and the attempts of each flow sent more than once. `inject_reset`
    /// (tests): flows whose first connection is reset once half is written.
    /// Runs without the GIL.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (host, flows, addrs, tcp_cc, block2, t0, deadline_s, inject_reset = vec![]))]
    fn send_flows<'py>(
        &self,
        py: Python<'py>,
        host: u32,
        flows: Vec<(u64, u32, u64, f64, u64)>,
        addrs: Vec<(String, u16)>,
        tcp_cc: String,
        block2: Vec<u8>,
        t0: f64,
        deadline_s: f64,
        inject_reset: Vec<u64>,
    ) -> SendFlowsResult<'py> {
        let plan =
            replay_sender::Plan::new(host, &addrs, tcp_cc, block2, t0, deadline_s, inject_reset)
                .map_err(PyValueError::new_err)?;
        let flows: Vec<OutFlow> = flows
            .into_iter()
            .map(|(id, dst, size, start, coflow)| OutFlow {
                id,
                dst,
                size,
                start,
                coflow,
            })
            .collect();
        let out = py.detach(|| replay_sender::send_flows(&self.client, plan, flows));
        let sent = PyDict::new(py);
        for (id, r) in &out.sent {
            let rec = PyList::new(
                py,
                [
                    r.t_start.into_py_any(py)?,
                    r.bytes.into_py_any(py)?,
                    r.crc.into_py_any(py)?,
                    r.t_conn.into_py_any(py)?,
                    r.fresh.into_py_any(py)?,
                    r.t_written.into_py_any(py)?,
                    r.taken.into_py_any(py)?,
                    r.first_rate.into_py_any(py)?,
                    r.first_class.into_py_any(py)?,
                    r.changes.into_py_any(py)?,
                    r.paused_s.into_py_any(py)?,
                    r.mean_given.into_py_any(py)?,
                    r.t_opened.into_py_any(py)?,
                    r.t_last.into_py_any(py)?,
                ],
            )?;
            sent.set_item(id, rec)?;
        }
        Ok((sent, out.errors, out.cc_seen, out.broken, out.resent))
    }

    fn __repr__(&self) -> String {
        format!(
            "AgentClient({:?}, connected={})",
            self.socket.display().to_string(),
            if self.client.is_connected() {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// A coflow-aware writer over a Python socket (the Rust `CoflowWriter`).
#[pyclass(name = "CoflowWriter", module = "coflowkit._core")]
pub struct PyCoflowWriter {
    w: Option<CoflowWriter<FdStream>>,
    /// The flow as the agent sees it, after the writer closed too.
    handle: Option<FlowHandle>,
    /// Keeps the socket object (and so its descriptor) alive.
    sock: Py<PyAny>,
    fd: RawFd,
    coflow: u64,
    dst_host: u32,
}

impl PyCoflowWriter {
    /// The open writer and the socket's timeout, or why it cannot write.
    fn ready(&mut self, py: Python<'_>) -> PyResult<(&mut CoflowWriter<FdStream>, Option<f64>)> {
        let sock = self.sock.bind(py);
        if let Ok(fd) = sock.call_method0("fileno").and_then(|f| f.extract::<i64>()) {
            if fd != self.fd as i64 {
                return Err(PyOSError::new_err(format!(
                    "the writer's socket (descriptor {}) was closed",
                    self.fd
                )));
            }
        }
        let timeout = timeout_of(sock)?;
        let w = self
            .w
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("write to a closed CoflowWriter"))?;
        Ok((w, timeout))
    }
}

fn io_error(e: io::Error) -> PyErr {
    if e.kind() == io::ErrorKind::WouldBlock {
        PyBlockingIOError::new_err(e.to_string())
    } else {
        PyErr::from(e)
    }
}

#[pymethods]
impl PyCoflowWriter {
    /// Sends what the socket takes of `data` now (as `socket.send`); returns
    /// the bytes sent. Waits first while the schedule pauses the flow.
    fn write(&mut self, py: Python<'_>, data: Bound<'_, PyAny>) -> PyResult<usize> {
        let buf = PyBuffer::<u8>::get(&data)?;
        let bytes = contiguous(py, &buf)?;
        let fd = self.fd;
        let (w, timeout) = self.ready(py)?;
        let nonblocking = timeout == Some(0.0);
        let deadline = timeout.map(|t| Instant::now() + Duration::from_secs_f64(t.max(0.0)));
        match py.detach(|| write_some(w, fd, bytes, deadline, nonblocking)) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => Err(PyTimeoutError::new_err("timed out")),
            Err(e) => Err(io_error(e)),
        }
    }

    /// Sends all of `data` (as `socket.sendall`), paced and paused as the
    /// schedule says; the socket's timeout bounds each wait for buffer space.
    fn sendall(&mut self, py: Python<'_>, data: Bound<'_, PyAny>) -> PyResult<()> {
        let buf = PyBuffer::<u8>::get(&data)?;
        let bytes = contiguous(py, &buf)?;
        let mut at = 0;
        while at < bytes.len() {
            let fd = self.fd;
            let (w, timeout) = self.ready(py)?;
            let nonblocking = timeout == Some(0.0);
            let r = py.detach(|| {
                let start = Instant::now();
                let mut sent = 0;
                while at + sent < bytes.len() && start.elapsed() < SLICE {
                    let deadline =
                        timeout.map(|t| Instant::now() + Duration::from_secs_f64(t.max(0.0)));
                    match write_some(w, fd, &bytes[at + sent..], deadline, nonblocking) {
                        Ok(Some(n)) => sent += n,
                        Ok(None) => return (sent, Some(Err(()))),
                        Err(e) => return (sent, Some(Ok(e))),
                    }
                }
                (sent, None)
            });
            at += r.0;
            match r.1 {
                None => {}
                Some(Err(())) => return Err(PyTimeoutError::new_err("timed out")),
                Some(Ok(e)) => return Err(io_error(e)),
            }
            py.check_signals()?;
        }
        Ok(())
    }

    /// Bytes written so far (counted as the kernel took them).
    #[getter]
    fn bytes_written(&self) -> u64 {
        self.w.as_ref().map_or(0, |w| w.bytes_written())
    }

    /// Whether an agent schedules this writer (False: plain TCP).
    #[getter]
    fn scheduled(&self) -> bool {
        self.w.as_ref().is_some_and(|w| w.is_scheduled())
    }

    /// Whether the agent took the flow (answered its open), so that its
    /// bytes are counted; unlike `scheduled`, still known once closed (a
    /// writer opened with `wait=False` may close before the answer comes).
    #[getter]
    fn taken(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| h.taken())
    }

    /// The current rate (bits/s; None: unthrottled) and priority class.
    #[getter]
    fn schedule(&self) -> (Option<f64>, u32) {
        self.w.as_ref().map_or((None, 0), |w| w.schedule())
    }

    /// The coflow this writer belongs to.
    #[getter]
    fn coflow(&self) -> u64 {
        self.coflow
    }

    /// The destination host.
    #[getter]
    fn dst_host(&self) -> u32 {
        self.dst_host
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.w.is_none()
    }

    /// The wrapped socket's descriptor.
    fn fileno(&self) -> RawFd {
        self.fd
    }

    /// Closes the flow (its final count goes to the agent); the socket stays
    /// open and the caller's. Closing twice does nothing.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(w) = self.w.take() {
            py.detach(|| w.finish()).map_err(PyErr::from)?;
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        _args: &Bound<'_, pyo3::types::PyTuple>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "CoflowWriter(coflow={}, dst_host={}, fd={}, bytes_written={}{})",
            self.coflow,
            self.dst_host,
            self.fd,
            self.bytes_written(),
            if self.w.is_none() { ", closed" } else { "" }
        )
    }
}

/// The bytes of a C-contiguous buffer of `u8`.
fn contiguous<'a>(py: Python<'_>, buf: &'a PyBuffer<u8>) -> PyResult<&'a [u8]> {
    let _ = py;
    if !buf.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "data: a contiguous bytes-like object (bytes, bytearray, memoryview)",
        ));
    }
    // SAFETY: the buffer is contiguous, holds `len_bytes()` bytes and stays
    // alive (and unresizable) while `buf` lives; as with `socket.sendall`,
    // a concurrent change of its contents by another thread is the
    // caller's race, not a memory error.
    Ok(unsafe { std::slice::from_raw_parts(buf.buf_ptr().cast::<u8>(), buf.len_bytes()) })
}
