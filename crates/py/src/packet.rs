//! Packet-level runs from Python: one run per transport or scheduler (a
//! registry spec, run by its host policy or a coordinator:
//! `coflowkit_packet::how_run`), the same result dict as `simulate` plus
//! the packet engine's own tables.
//!
//! Options are checked (every `key=value`, the workload against the fabric)
//! with the GIL held, before any run; runs go one after another with the GIL
//! released.

use crate::errors::{simulation_error, value_error};
use crate::progress::Board;
use crate::simulate::{col, result_dict};
use crate::topology::fabric_for;
use crate::workload::PyWorkload;
use coflowkit_packet::{PacketConfig, PacketError, PacketResult, KEYS};
use coflowkit_sched::SchedulerSpec;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Every transport of the packet engine.
#[pyfunction]
pub fn packet_transports() -> Vec<&'static str> {
    coflowkit_packet::transports::options()
        .map(|t| t.name())
        .collect()
}

/// Every registry scheduler the packet engine runs: (name, how: `host
/// policy` or `via coordinator`).
#[pyfunction]
pub fn packet_schedulers() -> Vec<(&'static str, &'static str)> {
    coflowkit_packet::packet_schedulers()
        .into_iter()
        .map(|(n, v)| (n, v.describe()))
        .collect()
}

/// Every packet option: (key, what it sets).
#[pyfunction]
pub fn packet_options() -> Vec<(&'static str, &'static str)> {
    KEYS.to_vec()
}

/// Checks packet options (`key=value,...`) without running anything: a
/// `ValueError` naming the key, or None.
#[pyfunction]
pub fn check_packet_options(options: &str) -> PyResult<()> {
    config("dctcp", options).map(|_| ())
}

/// One packet-level run: a transport alone, or a scheduler over the
/// configured transport.
pub(crate) enum Run {
    Transport(PacketConfig),
    Scheduler(SchedulerSpec, PacketConfig),
}

/// The run `name` asks for: a transport's name, or a registry scheduler
/// spec the packet engine runs (its options may then name the transport).
pub(crate) fn run_of(name: &str, options: &str) -> PyResult<Run> {
    let t = name.trim();
    if coflowkit_packet::transports::options().any(|k| k.name() == t) {
        return Ok(Run::Transport(config(t, options)?));
    }
    let spec = SchedulerSpec::parse(t).map_err(|e| value_error(format!("scheduler: {e}")))?;
    if coflowkit_packet::how_run(&spec.name).is_none() {
        let known: Vec<&str> = coflowkit_packet::packet_schedulers()
            .iter()
            .map(|(n, _)| *n)
            .collect();
        return Err(value_error(format!(
            "scheduler: '{}' is not one the packet engine runs ({}; or a transport: {})",
            spec.name,
            known.join(", "),
            packet_transports().join(", ")
        )));
    }
    coflowkit_sched::registry::check(&spec).map_err(|e| value_error(format!("scheduler: {e}")))?;
    let mut c = PacketConfig::default();
    c.set_all(options).map_err(value_error)?;
    Ok(Run::Scheduler(spec, c))
}

/// Checks `options` (`key=value,...`) with `transport`; the configuration's
/// error message if any.
fn config(transport: &str, options: &str) -> PyResult<PacketConfig> {
    let mut c = PacketConfig::default();
    c.set("transport", transport).map_err(value_error)?;
    c.set_all(options).map_err(value_error)?;
    if let Some((_, v)) = options
        .split([',', ';'])
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| k.trim() == "transport")
    {
        return Err(value_error(format!(
            "packet option 'transport': name transports as the schedulers to run, not in the options (got '{}'); a scheduler's runs take it",
            v.trim()
        )));
    }
    Ok(c)
}

/// Runs `workload` at packet level once per entry of `transports`: a
/// transport's name, or a registry scheduler spec (`pias`, `aalo`) run by
/// its host policies or by a coordinator over the options' transport
/// (`transport=...`, default dctcp); `classes` is refused with a scheduler.
/// `options`: `key=value` pairs (see `packet_options`); `classes`: each
/// flow's strict-priority class in the workload's flow order (0 highest);
/// `paths`: each flow's pinned path, an index into the fabric's equal-cost
/// paths between its hosts (on a leaf-spine the spine), None for the ECMP
/// hash's.
/// Each result is `simulate`'s dict (with per-flow rows) plus `packet`: a
/// dict with `flows` (columns `drops`, `ecn_marks`, `retransmits`,
/// `timeouts`, `timeouts_lost`, `timeouts_spurious`, `timeouts_host_queued`,
/// `timeouts_switch_queued`, and the reordering
/// counters `class_changes`, `promotions`, `reordered`, `fast_retransmits`,
/// `fast_retransmits_spurious`, `stalled_ps`, `bytes_class0`..`7`), `ports` (columns `port`, `name`, `tx_packets`, `tx_bytes`,
/// `drops`, `marks`, `max_bytes`), `queue_trace` (columns `port`, `time_s`,
/// `bytes`, or None), `packets` (per-hop transmissions) and `events`.
#[pyfunction]
#[pyo3(signature = (workload, transports, options = "", classes = None, capacity_bps = None, n_hosts = None, progress = true, topology = None, paths = None))]
#[allow(clippy::too_many_arguments)]
pub fn simulate_packet<'py>(
    py: Python<'py>,
    workload: &Bound<'py, PyWorkload>,
    transports: Vec<String>,
    options: &str,
    classes: Option<Vec<u8>>,
    capacity_bps: Option<f64>,
    n_hosts: Option<u32>,
    progress: bool,
    topology: Option<&str>,
    paths: Option<Vec<Option<u32>>>,
) -> PyResult<Bound<'py, PyList>> {
    if transports.is_empty() {
        return Err(value_error("transports: give at least one transport"));
    }
    let runs = transports
        .iter()
        .map(|t| run_of(t, options))
        .collect::<PyResult<Vec<_>>>()?;
    let w = workload.get();
    let fabric = fabric_for(topology, capacity_bps, n_hosts, w.inner.n_hosts, &w.source)?;
    let valid = py
        .detach(|| w.inner.clone().validate(&fabric))
        .map_err(|e| value_error(format!("{}: {e}", w.source)))?;
    let n_flows = valid.coflows().iter().map(|c| c.flows.len()).sum::<usize>();
    let classes = classes.unwrap_or_default();
    if !classes.is_empty() && classes.len() != n_flows {
        return Err(value_error(format!(
            "classes: {} given for {n_flows} flows",
            classes.len()
        )));
    }
    let paths = paths.unwrap_or_default();
    if !paths.is_empty() && paths.len() != n_flows {
        return Err(value_error(format!(
            "paths: {} given for {n_flows} flows",
            paths.len()
        )));
    }
    if !classes.is_empty() && runs.iter().any(|r| matches!(r, Run::Scheduler(..))) {
        return Err(value_error(
            "classes: a scheduler's runs take their classes from its policy; give classes only with transports",
        ));
    }
    let names: Vec<String> = transports.iter().map(|s| s.trim().to_string()).collect();
    let board = Board::new(progress, names.clone());
    let mut results = Vec::with_capacity(runs.len());
    for (k, run) in runs.iter().enumerate() {
        let r = py.detach(|| {
            board.start(k);
            let mut report = |p| board.report(k, p);
            match run {
                Run::Transport(cfg) => {
                    coflowkit_packet::simulate(&fabric, &valid, &classes, &paths, cfg, &mut report)
                }
                Run::Scheduler(spec, cfg) => coflowkit_packet::simulate_scheduled(
                    &fabric,
                    &valid,
                    spec,
                    &paths,
                    cfg,
                    &mut report,
                ),
            }
        });
        results.push(r.map_err(|e| match e {
            PacketError::Stalled { .. } => simulation_error(e),
            _ => value_error(e),
        })?);
    }
    board.finish();
    let out = PyList::empty(py);
    for (name, r) in names.iter().zip(results) {
        out.append(packet_dict(py, name, r)?)?;
    }
    Ok(out)
}

fn packet_dict<'py>(py: Python<'py>, name: &str, r: PacketResult) -> PyResult<Bound<'py, PyDict>> {
    let extra = PyDict::new(py);
    let fs = &r.flow_stats;
    let flows = PyDict::new(py);
    flows.set_item("drops", col(py, fs.iter().map(|s| s.drops)))?;
    flows.set_item("ecn_marks", col(py, fs.iter().map(|s| s.ecn_marks)))?;
    flows.set_item("retransmits", col(py, fs.iter().map(|s| s.retransmits)))?;
    flows.set_item("timeouts", col(py, fs.iter().map(|s| s.timeouts)))?;
    flows.set_item("timeouts_lost", col(py, fs.iter().map(|s| s.timeouts_lost)))?;
    let spurious = fs.iter().map(|s| s.timeouts_spurious);
    flows.set_item("timeouts_spurious", col(py, spurious))?;
    let host_queued = fs.iter().map(|s| s.timeouts_host_queued);
    flows.set_item("timeouts_host_queued", col(py, host_queued))?;
    let switch_queued = fs.iter().map(|s| s.timeouts_switch_queued);
    flows.set_item("timeouts_switch_queued", col(py, switch_queued))?;
    flows.set_item("class_changes", col(py, fs.iter().map(|s| s.class_changes)))?;
    flows.set_item("promotions", col(py, fs.iter().map(|s| s.promotions)))?;
    flows.set_item("reordered", col(py, fs.iter().map(|s| s.reordered)))?;
    let fast = fs.iter().map(|s| s.fast_retransmits);
    flows.set_item("fast_retransmits", col(py, fast))?;
    let fast_spurious = fs.iter().map(|s| s.fast_retransmits_spurious);
    flows.set_item("fast_retransmits_spurious", col(py, fast_spurious))?;
    flows.set_item("stalled_ps", col(py, fs.iter().map(|s| s.stalled_ps)))?;
    for c in 0..8 {
        let bytes = fs.iter().map(|s| s.bytes_by_class[c]);
        flows.set_item(format!("bytes_class{c}"), col(py, bytes))?;
    }
    extra.set_item("flows", flows)?;
    let ports = PyDict::new(py);
    ports.set_item("port", col(py, 0..r.ports.len() as u32))?;
    ports.set_item(
        "name",
        r.ports.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
    )?;
    ports.set_item(
        "tx_packets",
        col(py, r.ports.iter().map(|p| p.1.tx_packets)),
    )?;
    ports.set_item("tx_bytes", col(py, r.ports.iter().map(|p| p.1.tx_bytes)))?;
    ports.set_item("drops", col(py, r.ports.iter().map(|p| p.1.drops)))?;
    ports.set_item("marks", col(py, r.ports.iter().map(|p| p.1.marks)))?;
    ports.set_item("max_bytes", col(py, r.ports.iter().map(|p| p.1.max_bytes)))?;
    for q in 0..8 {
        ports.set_item(
            format!("class{q}_bytes"),
            col(py, r.ports.iter().map(|p| p.1.class_payload[q])),
        )?;
    }
    extra.set_item("ports", ports)?;
    if r.queue_trace.is_empty() {
        extra.set_item("queue_trace", py.None())?;
    } else {
        let q = PyDict::new(py);
        let t = &r.queue_trace;
        q.set_item("port", col(py, t.iter().map(|s| s.port)))?;
        q.set_item("time_s", col(py, t.iter().map(|s| s.at.as_secs_f64())))?;
        q.set_item("bytes", col(py, t.iter().map(|s| s.bytes)))?;
        extra.set_item("queue_trace", q)?;
    }
    extra.set_item("packets", r.packets)?;
    extra.set_item("events", r.events)?;
    let sched = PyDict::new(py);
    if let Some(h) = r.hosts {
        sched.set_item("marking_changes", h.marking_changes)?;
        sched.set_item("control_sent", h.control_sent)?;
        sched.set_item("control_delivered", h.control_delivered)?;
        sched.set_item("control_dropped", h.control_dropped)?;
        sched.set_item("wakes", h.wakes)?;
    }
    for (k, v) in r.negotiation.iter().flatten() {
        sched.set_item(format!("dcas_{k}"), *v)?;
    }
    if let Some(c) = r.coordinator {
        sched.set_item("coordinator_ticks", c.ticks)?;
        sched.set_item("coordinator_decisions", c.decisions)?;
    }
    if let Some(s) = r.spc {
        sched.set_item("spc_requests", s.requests)?;
        sched.set_item("spc_carried", s.carried)?;
        sched.set_item("spc_echoes", s.echoes)?;
        sched.set_item("spc_lost", s.lost)?;
        sched.set_item("spc_heavy", s.heavy)?;
        sched.set_item("spc_expired", s.expired)?;
    }
    extra.set_item("scheduler", sched)?;
    let d = result_dict(py, name, r.sim)?;
    d.set_item("packet", extra)?;
    Ok(d)
}
