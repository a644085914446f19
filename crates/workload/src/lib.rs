//! Workloads for coflowkit: trace formats, a synthetic generator, statistics.
//!
//! Every way of getting a [`Workload`](coflowkit_model::Workload) lives here, and each one checks its
//! input at the door, so that what it returns is well formed (every coflow
//! has a flow, every host is inside the fabric, ids are unique) and
//! `Workload::validate` downstream only has to check it against a fabric:
//!
//! - [`benchmark`] reads the coflow-benchmark trace format (the Facebook 2010
//!   trace), turning mappers and reducers into flows by one documented
//!   convention;
//! - [`native`] reads and writes coflowkit's own format, one flow per row
//!   with everything the model holds, as CSV here and as the columns
//!   ([`FlowColumns`]) the Python side writes to Parquet;
//! - [`synth`] generates the embedded default workload, deterministic for a
//!   seed, with the Facebook trace's bin mix and a target offered load;
//! - [`stats`] summarizes a workload (bins, widths, lengths, load).
//!
//! Reading errors are one [`TraceError`] that names the file, the line and
//! the field; no input makes a reader panic.

#![warn(missing_docs)]

pub mod benchmark;
pub mod error;
pub mod native;
mod num;
pub mod stats;
pub mod synth;

pub use benchmark::{read_benchmark_file, read_benchmark_str};
pub use error::{ConfigError, TraceError};
pub use native::{
    format_parents, parse_parents, read_native_csv, read_native_csv_str, write_native_csv,
    write_native_csv_to, FlowColumns, TextColumn, NATIVE_COLUMNS, N_REQUIRED_COLUMNS,
};
pub use stats::{BinStats, Percentiles, TraceStats};
pub use synth::{generate, SynthConfig};
