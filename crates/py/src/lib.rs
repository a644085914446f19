//! `coflowkit._core`: the thin Python binding of the coflowkit Rust core.
//!
//! This crate only translates. Every decision (parsing, validation,
//! scheduling, simulation, statistics) is made by the pyo3-free crates it
//! calls; here Rust values become numpy columns, dicts and Python errors:
//!
//! - [`workload`]: the `Workload` handle, trace loading (coflow-benchmark and
//!   native CSV), the embedded synthetic generator, every registered
//!   generator by name and text parameters, and workloads to and from
//!   native columns (the Python side reads and writes Parquet with pyarrow
//!   through these columns);
//! - [`simulate`]: runs one or more schedulers over a workload with the GIL
//!   released, several in parallel threads, and returns per-scheduler
//!   columns and summaries;
//! - [`topology`]: fabrics from a `--topology` spec string or a TOML/YAML
//!   file (parsed and built in Rust), and their description;
//! - [`runtime`]: the runtime's coordinator and agent run in this process
//!   (`runtime_main`, the `coflowkit-runtime` command line without the
//!   GIL) and its client (`AgentClient`, `CoflowWriter`), a binding of
//!   `coflowkit_runtime::client` over Python sockets;
//! - [`host_policy`]: one host's policy (`HostPolicy`), the Rust policies
//!   of `coflowkit_sched::host` that the testbed's replay workers run, and
//!   the control datagrams of its native clock;
//! - `receive_flows` (here) and `AgentClient.send_flows` ([`runtime`]): the
//!   two native ends of a replay's connections, run without the GIL; they,
//!   the host clock and the sockets reached by descriptor are the testbed's
//!   data plane, `coflowkit_testbed`, which this crate only calls;
//! - [`progress`]: the progress bar on stderr (only on a terminal, only once
//!   a run has taken more than a second).
//!
//! Errors: every Rust error becomes one Python exception carrying the Rust
//! message on one line ([`errors`]): `OSError` (or `FileNotFoundError`) for
//! I/O, `ValueError` for bad input (naming file, line and field), and
//! `coflowkit._core.SimulationError` (a `RuntimeError`) when a run cannot
//! finish.

use pyo3::prelude::*;

mod decomposed;
mod errors;
mod host_policy;
mod packet;
mod progress;
mod runtime;
mod simulate;
mod topology;
mod workload;

pub use errors::SimulationError;

use coflowkit_sched::karuna_thresholds::{derive_thresholds, model_mean_fct, ThresholdKind};

/// A size as every front end reads it (`10MiB`, `5MB`, `1460`): whole
/// bytes, or `ValueError` naming what is wrong.
#[pyfunction]
fn parse_bytes(text: &str) -> PyResult<u64> {
    coflowkit_model::parse::bytes(text.trim())
        .map(|b| b.0)
        .map_err(errors::value_error)
}

/// The CDF points (bytes, F) of `websearch` or `datamining`.
fn size_cdf_points(sizes: &str) -> PyResult<Vec<(f64, f64)>> {
    let cdf = match sizes {
        "websearch" => &coflowkit_workload::dist::WEB_SEARCH,
        "datamining" => &coflowkit_workload::dist::DATA_MINING,
        _ => {
            return Err(errors::value_error(format!(
                "sizes: '{sizes}' is not websearch or datamining"
            )))
        }
    };
    Ok(cdf
        .points
        .iter()
        .map(|&(u, f)| (u * cdf.unit_bytes, f))
        .collect())
}

fn threshold_kind(kind: &str) -> PyResult<ThresholdKind> {
    match kind {
        "sieve" => Ok(ThresholdKind::Sieve),
        "split" => Ok(ThresholdKind::Split),
        _ => Err(errors::value_error(format!(
            "kind: '{kind}' is not sieve or split"
        ))),
    }
}

/// `n` Karuna/PIAS thresholds (bytes) derived from the `websearch` or
/// `datamining` size distribution at `load` (`coflowkit_sched::karuna_thresholds`).
#[pyfunction]
fn karuna_thresholds(sizes: &str, load: f64, n: usize, kind: &str) -> PyResult<Vec<f64>> {
    derive_thresholds(&size_cdf_points(sizes)?, load, n, threshold_kind(kind)?)
        .map_err(errors::value_error)
}

/// The threshold model's mean FCT (s at `capacity_bps`) of thresholds `t`
/// (bytes) for a named size distribution at `load`.
#[pyfunction]
fn karuna_model_fct(
    sizes: &str,
    load: f64,
    t: Vec<f64>,
    kind: &str,
    capacity_bps: f64,
) -> PyResult<f64> {
    Ok(model_mean_fct(
        &size_cdf_points(sizes)?,
        load,
        &t,
        threshold_kind(kind)?,
        capacity_bps,
    ))
}

/// Serves the listening socket `fd` (a replay worker's data port; a
/// duplicate is taken, the caller keeps its own) until `n_in` flows have
/// arrived whole or the wall clock passes `deadline` (seconds since the
/// epoch), without the GIL (`coflowkit_testbed::replay_receiver`). Returns `(received, broken,
/// whole)`: per flow id `[instant of the last byte, bytes, CRC-32, instant
/// its connection was accepted]`, the
/// connections lost on the way, and how many flows arrived whole.
#[pyfunction]
fn receive_flows<'py>(
    py: Python<'py>,
    fd: i32,
    host: u32,
    n_in: usize,
    deadline: f64,
) -> PyResult<(Bound<'py, pyo3::types::PyDict>, Vec<String>, usize)> {
    if fd < 0 {
        return Err(errors::value_error(format!("fd {fd}: not a descriptor")));
    }
    // SAFETY: the caller's socket stays open for this call.
    let listener = unsafe { coflowkit_testbed::fd::listener_from_fd(fd) }
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("fd {fd}: {e}")))?;
    let got = py.detach(|| {
        coflowkit_testbed::replay_receiver::receive_flows(listener, host, n_in, deadline)
    });
    let received = pyo3::types::PyDict::new(py);
    for (id, r) in &got.received {
        received.set_item(id, (r.t, r.bytes, r.crc, r.accepted))?;
    }
    Ok((received, got.broken, got.whole))
}

/// The Python module `coflowkit._core`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add_class::<workload::PyWorkload>()?;
    m.add_function(wrap_pyfunction!(workload::load_trace, m)?)?;
    m.add_function(wrap_pyfunction!(workload::workload_from_columns, m)?)?;
    m.add_function(wrap_pyfunction!(workload::synthetic, m)?)?;
    m.add_function(wrap_pyfunction!(workload::synth_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(workload::generate_workload, m)?)?;
    m.add_function(wrap_pyfunction!(workload::generators, m)?)?;
    m.add_function(wrap_pyfunction!(workload::generator_params, m)?)?;
    m.add_function(wrap_pyfunction!(workload::check_generator, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::refusals, m)?)?;
    m.add_function(wrap_pyfunction!(packet::simulate_packet, m)?)?;
    m.add_function(wrap_pyfunction!(decomposed::simulate_decomposed, m)?)?;
    m.add_function(wrap_pyfunction!(decomposed::check_decomposed_options, m)?)?;
    m.add_function(wrap_pyfunction!(decomposed::check_decomposed_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(decomposed::decomposed_run_parts, m)?)?;
    m.add_function(wrap_pyfunction!(packet::packet_transports, m)?)?;
    m.add_function(wrap_pyfunction!(packet::packet_schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(packet::packet_options, m)?)?;
    m.add_function(wrap_pyfunction!(packet::check_packet_options, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::check_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::scheduler_descriptors, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::scheduler_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(topology::topology_info, m)?)?;
    m.add_function(wrap_pyfunction!(topology::topology_graph, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(karuna_thresholds, m)?)?;
    m.add_function(wrap_pyfunction!(karuna_model_fct, m)?)?;
    m.add_function(wrap_pyfunction!(receive_flows, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::runtime_main, m)?)?;
    m.add_class::<host_policy::PyHostPolicy>()?;
    m.add_function(wrap_pyfunction!(host_policy::host_policy_replay, m)?)?;
    m.add_function(wrap_pyfunction!(host_policy::control_encode, m)?)?;
    m.add_function(wrap_pyfunction!(host_policy::control_decode, m)?)?;
    m.add_class::<runtime::PyAgentClient>()?;
    m.add_class::<runtime::PyCoflowWriter>()?;
    m.add(
        "NATIVE_COLUMNS",
        coflowkit_workload::NATIVE_COLUMNS.to_vec(),
    )?;
    m.add(
        "BINS",
        std::iter::once("All")
            .chain(coflowkit_model::Bin::ALL.map(|b| b.name()))
            .collect::<Vec<_>>(),
    )?;
    Ok(())
}
