//! Workloads for coflowkit: trace formats, the generators of the seed
//! papers' workloads, statistics.
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
//! - the generators, one module per family, each a configuration struct
//!   with documented defaults and a `generate` function, deterministic for a
//!   seed: [`synth`] (`coflow-benchmark`, Aalo/D-CAS, and the embedded
//!   default workload), [`baraat`] (Baraat's task workflows on a tree),
//!   [`empirical`] (`websearch` and `datamining` flows with Karuna's flow
//!   types), [`dag`] (Aalo's multi-stage jobs), [`waves`] (`multi-wave`
//!   coflows and restarted/speculative tasks), [`tafe`] (CPU-then-network
//!   tasks); what they share is in [`arrivals`] (streams, Poisson arrivals
//!   at a target load, deadlines) and [`dist`] (size distributions);
//! - [`registry`] is the one list of generators by name, with their presets
//!   and text parameters ([`params`](mod@params)), for the CLI and Python;
//! - [`stats`] summarizes a workload (bins, widths, lengths, load);
//! - [`transform`] re-declares a workload (each barrier group, such as a
//!   wave, as a coflow of its own; each pipelined dependency as a barrier).
//!
//! Reading errors are one [`TraceError`] that names the file, the line and
//! the field; no input makes a reader panic. Generator configurations are
//! checked by their `validate`, whose [`ConfigError`] names the field.

#![warn(missing_docs)]

pub mod arrivals;
pub mod baraat;
pub mod benchmark;
pub mod dag;
pub mod dist;
pub mod empirical;
pub mod error;
pub mod native;
mod num;
pub mod params;
pub mod registry;
pub mod stats;
pub mod synth;
pub mod tafe;
pub mod transform;
pub mod waves;

pub use benchmark::{read_benchmark_file, read_benchmark_str};
pub use error::{ConfigError, TraceError};
pub use native::{
    format_parents, parse_parents, read_native_csv, read_native_csv_str, write_native_csv,
    write_native_csv_to, FlowColumns, TextColumn, NATIVE_COLUMNS, N_REQUIRED_COLUMNS,
};
pub use registry::{generate_named, GenerateError, GeneratorInfo, GENERATORS};
pub use stats::{BinStats, Features, Percentiles, TraceStats};
pub use synth::{generate, SynthConfig};
