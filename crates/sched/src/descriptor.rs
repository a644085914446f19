//! What a scheduler says about itself: one [`SchedulerDescriptor`] per CLI
//! name, defined in the scheduler's own module next to its logic.
//!
//! A descriptor carries the name, a one-line description, the paper and
//! section it implements, its parameters (key, [`Kind`], default, unit, one
//! line of help), what it [`Needs`] from a driver, the constructor that
//! builds it from a spec, and what differs per scheduler for the drivers
//! ([`Parts`]: its host policy, what its switches do in the packet engine,
//! the parameters a central coordinator sets, a check of a run's cost
//! before it starts) and its relative [`cost`](SchedulerDescriptor::cost).
//! Everything else reads it: the registry's names and key checks,
//! `coflowkit schedulers`, the parameter tables of docs/schedulers.md
//! ([`markdown`], checked by a test), and the drivers (the flow and packet
//! engines, the runtime's coordinator, the testbed's workers), none of which
//! tests a scheduler's name.
//!
//! The constructor reads its parameters through [`Params`]
//! ([`crate::params`]).

use crate::host::HostBuild;
pub use crate::params::{
    or_list, percentile_key, Kind, Param, Params, SOLVER_PARAM, TASK_ID_PARAMS,
};
use crate::spec::{Hint, SchedulerError, SchedulerSpec, WorkloadHints};
use crate::AnyScheduler;
use coflowkit_model::Fabric;

/// The builder of a scheduler from its checked parameters and the
/// workload's hints.
pub type Build = fn(&Params<'_>, &WorkloadHints) -> Result<AnyScheduler, SchedulerError>;

/// A check of a run before it starts, from the spec's checked parameters,
/// the workload's hints and the fabric: an error when the run would cost
/// more than the spec allows (`baraat`'s `budget`).
pub type Preflight = fn(&Params<'_>, &WorkloadHints, &Fabric) -> Result<(), SchedulerError>;

/// The class thresholds (bytes) a runtime agent uses for coflows not
/// scheduled yet, from the spec's checked parameters.
pub type LocalThresholds = fn(&Params<'_>) -> Result<Vec<f64>, SchedulerError>;

/// One scheduler as the registry, the CLI and the docs know it.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerDescriptor {
    /// The CLI name (`fifo-lm`).
    pub name: &'static str,
    /// What it does, in one line.
    pub description: &'static str,
    /// The paper and section it implements (or "ideal" for the baselines).
    pub paper: &'static str,
    /// Its parameters, in the order the docs list them.
    pub params: &'static [Param],
    /// What a driver must give it.
    pub needs: Needs,
    /// Builds it.
    pub build: Build,
    /// What differs for the drivers.
    pub parts: Parts,
    /// Its CPU time on a large trace relative to `fair`'s (the flow engine
    /// alone on FB2010's whole trace, docs/benchmarks.md rows 3-7; `baraat`,
    /// refused there, an estimate above all): a driver that
    /// runs several schedulers on a few cores starts the costliest first, so
    /// that the cores finish close together. Only the order of the runs
    /// moves; their results do not depend on it.
    pub cost: f64,
}

/// What a scheduler brings to the drivers beyond its flow-level rule.
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    /// Its per-host policy, if it has one (run by the packet engine's hosts
    /// and the testbed's replay workers).
    pub host: Option<HostBuild>,
    /// What its switches do in the packet engine.
    pub switch: Switch,
    /// Parameters a central coordinator (the packet engine's, the
    /// runtime's) adds to the spec when the spec does not give them, as
    /// `(key, value)`.
    pub coordinated: &'static [(&'static str, &'static str)],
    /// A check of a run before it starts, if any.
    pub preflight: Option<Preflight>,
    /// The class thresholds (bytes sent) a runtime agent marks coflows
    /// by until the coordinator has scheduled them, if any (`aalo`'s
    /// D-CLAS queues).
    pub local_thresholds: Option<LocalThresholds>,
}

impl Parts {
    /// No host policy, plain switches, no coordinator defaults, no check.
    pub const NONE: Parts = Parts {
        host: None,
        switch: Switch::Plain,
        coordinated: &[],
        preflight: None,
        local_thresholds: None,
    };
}

/// What a scheduler's switches do in the packet engine, beyond serving the
/// classes its hosts mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// Strict priority queues only.
    Plain,
    /// Baraat's Smart Priority Classes: ports that answer the flows'
    /// requests with rates (Baraat 4.2).
    SmartPriorityClasses,
    /// TAFE's task-aware marking at the switch (TAFE 3.2).
    TaskMarking,
}

impl SchedulerDescriptor {
    /// The parameters `given` to this scheduler, every key checked against
    /// the declared ones (an unknown key is refused, the valid ones listed).
    pub fn params_of<'a>(
        &'static self,
        given: &'a [(String, String)],
    ) -> Result<Params<'a>, SchedulerError> {
        if let Some((k, _)) = given
            .iter()
            .find(|(k, _)| !self.params.iter().any(|p| p.key == k))
        {
            let keys: Vec<&str> = self.params.iter().map(|p| p.key).collect();
            return Err(SchedulerError::UnknownParam {
                name: self.name.into(),
                key: k.clone(),
                valid: if keys.is_empty() {
                    "it takes none".into()
                } else {
                    format!("valid: {}", keys.join(", "))
                },
            });
        }
        Ok(Params::new(self.name, given, self.params))
    }

    /// `spec` as a central coordinator builds it: the spec with every
    /// [`Parts::coordinated`] key it does not give added.
    pub fn coordinated(&self, spec: &SchedulerSpec) -> SchedulerSpec {
        let mut spec = spec.clone();
        for (k, v) in self.parts.coordinated {
            if !spec.params.iter().any(|(key, _)| key == k) {
                spec.params.push((k.to_string(), v.to_string()));
            }
        }
        spec
    }
}

/// The fabrics a scheduler runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FabricKind {
    /// A big switch or any multi-hop topology.
    Any,
    /// Only a big switch (a non-blocking core, contention at the ports).
    BigSwitch,
}

/// What a scheduler needs from its driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// It reads flow sizes (clairvoyant): the driver must know them.
    pub sizes: bool,
    /// Workload hints some parameter values need (which values: the
    /// parameter's help; a driver without them gets
    /// [`SchedulerError::NeedsHint`] naming the key).
    pub hints: &'static [Hint],
    /// The fabrics it runs on.
    pub fabric: FabricKind,
    /// It reads deadlines (flows without one are served as the help says).
    pub deadlines: bool,
}

impl Needs {
    /// Needs nothing: non-clairvoyant, no hints, any fabric, no deadlines.
    pub const NOTHING: Needs = Needs {
        sizes: false,
        hints: &[],
        fabric: FabricKind::Any,
        deadlines: false,
    };
    /// Needs flow sizes and nothing else.
    pub const SIZES: Needs = Needs {
        sizes: true,
        ..Needs::NOTHING
    };

    /// The needs in words (`sizes, coflow sizes (hint), deadlines`), or `-`.
    pub fn label(&self) -> String {
        let mut out = vec![];
        if self.sizes {
            out.push("sizes".to_string());
        }
        out.extend(self.hints.iter().map(|h| format!("{} (hint)", h.label())));
        if self.fabric == FabricKind::BigSwitch {
            out.push("big switch".into());
        }
        if self.deadlines {
            out.push("deadlines".into());
        }
        if out.is_empty() {
            "-".into()
        } else {
            out.join(", ")
        }
    }
}

/// The parameter tables of every scheduler in `descriptors`, as markdown
/// (docs/schedulers.md holds this between its `params` markers).
pub fn markdown(descriptors: &[&SchedulerDescriptor]) -> String {
    let mut out = String::new();
    for d in descriptors {
        out.push_str(&format!("### `{}`\n\n", d.name));
        out.push_str(&format!(
            "{}. Source: {}. Needs: {}.\n\n",
            d.description,
            d.paper,
            d.needs.label()
        ));
        if d.params.is_empty() {
            out.push_str("No parameters.\n\n");
            continue;
        }
        out.push_str("| key | value | default | meaning |\n|---|---|---|---|\n");
        for p in d.params {
            let unit = if p.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", p.unit)
            };
            out.push_str(&format!(
                "| `{}` | {}{unit} | `{}` | {} |\n",
                p.key,
                p.kind.label().replace('|', "\\|"),
                p.default,
                p.help.replace('|', "\\|")
            ));
        }
        out.push('\n');
    }
    out
}
