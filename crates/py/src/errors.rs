//! Rust errors as Python exceptions, one line each, with the Rust message.
//!
//! | Rust error                          | Python exception                     |
//! |-------------------------------------|--------------------------------------|
//! | `TraceError::Io` (not found)        | `FileNotFoundError`                  |
//! | `TraceError::Io` (other)            | `OSError`                            |
//! | `TopologyError::Io` (not found)     | `FileNotFoundError`                  |
//! | `TopologyError::Io` (other)         | `OSError`                            |
//! | `TraceError::Parse`, `ConfigError`, `WorkloadError`, `FabricError`, `SchedulerError`, other `TopologyError`s | `ValueError` |
//! | `SimError`, a panic in a run        | `SimulationError` (a `RuntimeError`) |

use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::PyErr;

create_exception!(
    _core,
    SimulationError,
    PyRuntimeError,
    "A simulation could not finish (a scheduler stalled, or the engine failed)."
);

/// `msg` on one line: any line breaks become "; ".
pub fn one_line(msg: impl std::fmt::Display) -> String {
    let s = msg.to_string();
    if s.contains('\n') {
        s.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        s
    }
}

/// A `ValueError` with `msg` on one line.
pub fn value_error(msg: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(one_line(msg))
}

/// A trace error: `OSError` for I/O, `ValueError` for the text.
pub fn trace_error(e: coflowkit_workload::TraceError) -> PyErr {
    use coflowkit_workload::TraceError;
    match &e {
        TraceError::Io { err, .. } if err.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(one_line(&e))
        }
        TraceError::Io { .. } => PyOSError::new_err(one_line(&e)),
        TraceError::Parse { .. } => value_error(&e),
    }
}

/// A topology error: `FileNotFoundError`/`OSError` for I/O, else `ValueError`.
pub fn topology_error(e: coflowkit_topology_config::TopologyError) -> PyErr {
    use coflowkit_topology_config::TopologyError;
    match &e {
        _ if e.is_not_found() => PyFileNotFoundError::new_err(one_line(&e)),
        TopologyError::Io { .. } => PyOSError::new_err(one_line(&e)),
        _ => value_error(&e),
    }
}

/// A `SimulationError` with `msg` on one line.
pub fn simulation_error(msg: impl std::fmt::Display) -> PyErr {
    SimulationError::new_err(one_line(msg))
}
