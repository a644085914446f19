//! Packet-level runs from Python: one run per transport, the same result
//! dict as `simulate` plus the packet engine's own tables.
//!
//! Options are checked (every `key=value`, the workload against the fabric)
//! with the GIL held, before any run; runs go one after another with the GIL
//! released.

use crate::errors::{simulation_error, value_error};
use crate::progress::Board;
use crate::simulate::{col, result_dict};
use crate::topology::fabric_for;
use crate::workload::PyWorkload;
use coflowkit_packet::{PacketConfig, PacketError, PacketResult, TransportKind, KEYS};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Every transport of the packet engine.
#[pyfunction]
pub fn packet_transports() -> Vec<&'static str> {
    TransportKind::ALL.iter().map(|t| t.name()).collect()
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
            "packet option 'transport': name transports as the schedulers to run, not in the options (got '{}')",
            v.trim()
        )));
    }
    Ok(c)
}

/// Runs `workload` at packet level once per transport in `transports`.
/// `options`: `key=value` pairs (see `packet_options`); `classes`: each
/// flow's strict-priority class in the workload's flow order (0 highest);
/// `paths`: each flow's pinned path, an index into the fabric's equal-cost
/// paths between its hosts (on a leaf-spine the spine), None for the ECMP
/// hash's.
/// Each result is `simulate`'s dict (with per-flow rows) plus `packet`: a
/// dict with `flows` (columns `drops`, `ecn_marks`, `retransmits`,
/// `timeouts`), `ports` (columns `port`, `name`, `tx_packets`, `tx_bytes`,
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
    let configs = transports
        .iter()
        .map(|t| config(t, options))
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
    let names: Vec<String> = transports.iter().map(|s| s.trim().to_string()).collect();
    let board = Board::new(progress, names.clone());
    let mut results = Vec::with_capacity(configs.len());
    for (k, cfg) in configs.iter().enumerate() {
        let r = py.detach(|| {
            board.start(k);
            coflowkit_packet::simulate(&fabric, &valid, &classes, &paths, cfg, &mut |p| {
                board.report(k, p)
            })
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
    let d = result_dict(py, name, r.sim)?;
    d.set_item("packet", extra)?;
    Ok(d)
}
