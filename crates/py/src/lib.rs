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
//! - [`progress`]: the progress bar on stderr (only on a terminal, only once
//!   a run has taken more than a second).
//!
//! Errors: every Rust error becomes one Python exception carrying the Rust
//! message on one line ([`errors`]): `OSError` (or `FileNotFoundError`) for
//! I/O, `ValueError` for bad input (naming file, line and field), and
//! `coflowkit._core.SimulationError` (a `RuntimeError`) when a run cannot
//! finish.

use pyo3::prelude::*;

mod errors;
mod progress;
mod simulate;
mod topology;
mod workload;

pub use errors::SimulationError;

/// A size as every front end reads it (`10MiB`, `5MB`, `1460`): whole
/// bytes, or `ValueError` naming what is wrong.
#[pyfunction]
fn parse_bytes(text: &str) -> PyResult<u64> {
    coflowkit_model::parse::bytes(text.trim())
        .map(|b| b.0)
        .map_err(errors::value_error)
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
    m.add_function(wrap_pyfunction!(simulate::schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::check_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(topology::topology_info, m)?)?;
    m.add_function(wrap_pyfunction!(topology::topology_graph, m)?)?;
    m.add_function(wrap_pyfunction!(parse_bytes, m)?)?;
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
