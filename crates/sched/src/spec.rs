//! What a driver hands a scheduler's constructor and what it gets back when the
//! spec is wrong: a spec (a name and its `key=value` parameters), the
//! workload's hints, and the error. The contracts every scheduler module and
//! the registry share; no scheduler is named here.

use thiserror::Error;

/// A fact about the workload a scheduler's configuration may need, given by
/// the driver in [`WorkloadHints`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// Total bytes of every coflow (percentile thresholds).
    CoflowSizes,
    /// Bytes of every network flow (Karuna's and PIAS's `auto@LOAD`).
    FlowSizes,
}

impl Hint {
    /// What the hint is, in words.
    pub fn label(&self) -> &'static str {
        match self {
            Hint::CoflowSizes => "coflow sizes",
            Hint::FlowSizes => "flow sizes",
        }
    }
}

/// Why a scheduler spec cannot be built.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SchedulerError {
    /// No scheduler has this name.
    #[error("unknown scheduler '{name}' (known: {known})")]
    Unknown {
        /// The name given.
        name: String,
        /// The known names.
        known: String,
    },
    /// A parameter the scheduler does not take.
    #[error("scheduler '{name}': unknown parameter '{key}' ({valid})")]
    UnknownParam {
        /// The scheduler.
        name: String,
        /// The parameter.
        key: String,
        /// The keys it takes, in words (`valid: k, e` or `it takes none`).
        valid: String,
    },
    /// A parameter value that does not parse.
    #[error("scheduler '{name}': parameter '{key}': {message}")]
    BadParam {
        /// The scheduler.
        name: String,
        /// The parameter.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A scheduler that has no per-host policy, asked for one (a driver
    /// that runs hosts: the packet engine, the testbed).
    #[error("scheduler '{name}' has no host policy (those with one: {known})")]
    NoHostPolicy {
        /// The scheduler.
        name: String,
        /// The schedulers with a host policy.
        known: String,
    },
    /// A parameter value that needs a workload hint the driver did not give.
    #[error("scheduler '{name}': parameter '{key}': {message}")]
    NeedsHint {
        /// The scheduler.
        name: String,
        /// The parameter.
        key: String,
        /// The hint it needs.
        hint: Hint,
        /// Which value needed it.
        message: String,
    },
}

/// A parsed scheduler spec: a name and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerSpec {
    /// The CLI name.
    pub name: String,
    /// `key=value` parameters, in order.
    pub params: Vec<(String, String)>,
}

/// Facts about the workload that a scheduler's configuration may use (not
/// per-coflow knowledge: a percentile threshold is set once, offline).
#[derive(Debug, Clone, Default)]
pub struct WorkloadHints {
    /// Total bytes of every coflow of the workload.
    pub coflow_sizes: Vec<f64>,
    /// Bytes of every network flow of the workload (Karuna's and PIAS's
    /// `auto@LOAD` thresholds are derived from their distribution).
    pub flow_sizes: Vec<f64>,
}

impl WorkloadHints {
    /// The hints of a validated workload.
    pub fn of(workload: &coflowkit_model::ValidWorkload) -> WorkloadHints {
        WorkloadHints::of_coflows(workload.coflows())
    }

    /// The hints of these coflows (a workload not validated against a
    /// fabric: the runtime reads a trace only for its sizes).
    pub fn of_coflows(coflows: &[coflowkit_model::CoflowSpec]) -> WorkloadHints {
        WorkloadHints {
            coflow_sizes: coflows.iter().map(|c| c.total_bytes().0 as f64).collect(),
            flow_sizes: coflows
                .iter()
                .flat_map(|c| c.flows.iter())
                .filter(|f| f.kind == coflowkit_model::FlowKind::Net)
                .map(|f| f.bytes.0 as f64)
                .collect(),
        }
    }
}

impl SchedulerSpec {
    /// The value of parameter `key`, the last one given if repeated.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses a byte size: a plain number of bytes or a number with a unit
/// (B, KB, MB, GB, TB as powers of 10; KiB, MiB, GiB, TiB as powers of 2),
/// by the grammar every front end shares ([`coflowkit_model::parse::bytes`]).
pub fn parse_bytes(s: &str) -> Option<f64> {
    coflowkit_model::parse::bytes(s).ok().map(|b| b.0 as f64)
}
