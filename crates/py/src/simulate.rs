//! Simulations from Python: a workload under one or more schedulers.
//!
//! Everything that can be wrong with the request (a scheduler spec, the
//! capacity, the workload against the fabric) is checked before any run
//! starts, with the GIL held, so a bad request fails at once. Then the GIL is
//! released and the runs go to `min(n_schedulers, cores)` worker threads
//! (`std::thread::scope`, a shared queue of schedulers, the costliest first:
//! `coflowkit_sched::costliest_first`, so that no long run starts last and
//! runs alone at the end); results come back in the given order whatever
//! order they ran and finished in.
//!
//! While the workers run, the calling thread wakes every 100 ms to let
//! Python handle signals: on Ctrl-C it raises a cancel flag that every run's
//! progress callback checks, unwinds the runs (with `resume_unwind`, which
//! prints nothing) and returns the `KeyboardInterrupt`.
//!
//! Each run is independent: its own scheduler, its own engine state, the
//! shared workload read-only, so the output does not depend on how many
//! threads ran or in which order they finished.

use crate::errors::{simulation_error, value_error};
use crate::progress::Board;
use crate::topology::fabric_for;
use crate::workload::{set_optional, PyWorkload};
use coflowkit_model::{Dur, Fabric, FlowKind, ValidWorkload};
use coflowkit_sched::descriptor::Switch;
use coflowkit_sched::{
    build, cost_rank, AnyScheduler, SchedulerSpec, WorkloadHints, NAMES, SCHEDULERS,
};
use coflowkit_sim::{Missed, SimError, SimOptions, SimResult, Simulation};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::any::Any;
use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// The payload a cancelled run unwinds with.
struct Cancelled;

/// How one run ended.
enum Outcome {
    /// It finished.
    Done(Box<SimResult>),
    /// The engine gave up.
    Failed(SimError),
    /// The engine panicked (a bug); the panic's message.
    Panicked(String),
    /// It was cancelled.
    Cancelled,
}

/// Every scheduler name with its one-line description.
#[pyfunction]
pub fn schedulers() -> Vec<(&'static str, &'static str)> {
    NAMES.to_vec()
}

/// Every scheduler's descriptor as a dict: `name`, `description`, `paper`,
/// `needs` (a dict: `sizes`, `hints` (list of str), `fabric`, `deadlines`),
/// `params` (a list of dicts: `key`, `kind`, `default`, `unit`, `help`) and
/// `parts` (a dict, what differs for the drivers: `host` (whether it has a
/// host policy), `switch` (`plain`, `smart-priority-classes` or
/// `task-marking`), `coordinated` (a list of (key, value)), `preflight` and
/// `local_thresholds` (whether it has them)).
#[pyfunction]
pub fn scheduler_descriptors(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for d in SCHEDULERS {
        let desc = PyDict::new(py);
        desc.set_item("name", d.name)?;
        desc.set_item("description", d.description)?;
        desc.set_item("paper", d.paper)?;
        let needs = PyDict::new(py);
        needs.set_item("sizes", d.needs.sizes)?;
        let hints: Vec<&str> = d.needs.hints.iter().map(|h| h.label()).collect();
        needs.set_item("hints", hints)?;
        let big_switch = d.needs.fabric == coflowkit_sched::descriptor::FabricKind::BigSwitch;
        needs.set_item("fabric", if big_switch { "big-switch" } else { "any" })?;
        needs.set_item("deadlines", d.needs.deadlines)?;
        desc.set_item("needs", needs)?;
        let params = PyList::empty(py);
        for p in d.params {
            let param = PyDict::new(py);
            param.set_item("key", p.key)?;
            param.set_item("kind", p.kind.label())?;
            param.set_item("default", p.default)?;
            param.set_item("unit", p.unit)?;
            param.set_item("help", p.help)?;
            params.append(param)?;
        }
        desc.set_item("params", params)?;
        let parts = PyDict::new(py);
        parts.set_item("host", d.parts.host.is_some())?;
        parts.set_item("switch", switch_label(d.parts.switch))?;
        parts.set_item("coordinated", d.parts.coordinated.to_vec())?;
        parts.set_item("preflight", d.parts.preflight.is_some())?;
        parts.set_item("local_thresholds", d.parts.local_thresholds.is_some())?;
        desc.set_item("parts", parts)?;
        out.append(desc)?;
    }
    Ok(out)
}

/// What a scheduler's switches do, as `scheduler_descriptors` names it.
fn switch_label(switch: Switch) -> &'static str {
    match switch {
        Switch::Plain => "plain",
        Switch::SmartPriorityClasses => "smart-priority-classes",
        Switch::TaskMarking => "task-marking",
    }
}

/// The parameter tables of every scheduler as markdown (what
/// docs/schedulers.md holds between its `params` markers).
#[pyfunction]
pub fn scheduler_markdown() -> String {
    coflowkit_sched::descriptor::markdown(SCHEDULERS)
}

/// Checks a scheduler spec (`name` or `name:key=value;...`) without a
/// workload: every key and value, a value that needs the workload (a
/// percentile, by the descriptor's needs) passing, since the run gives the
/// workload; returns the scheduler's name or raises `ValueError`.
#[pyfunction]
pub fn check_scheduler(spec: &str) -> PyResult<String> {
    let parsed = SchedulerSpec::parse(spec).map_err(value_error)?;
    coflowkit_sched::registry::check(&parsed).map_err(value_error)?;
    Ok(parsed.name)
}

/// Simulates `workload` under each scheduler spec of `schedulers` on a big
/// switch of `n_hosts` (default: the workload's) ports of `capacity_bps`
/// (default 1 Gbit/s), or on `topology`: a spec string (`fat-tree:k=8`) or
/// a `.toml`/`.yaml` file, built in Rust (then `capacity_bps` and
/// `n_hosts` must not be given; see [`fabric_for`]).
///
/// Returns one dict per scheduler, in the given order: `spec` (as given),
/// `scheduler` (its name), `n_events`; `coflows` (numpy columns `coflow_id`,
/// `job_id`, `stage_id` (each with a `*_valid` mask), `arrival_s`,
/// `release_s`, `finish_s` (completion), `cct_s` (completion - release),
/// `deadline_s` and `deadline_met` (each with a `*_valid` mask),
/// `width`, `length_bytes`, `total_bytes`, and `bin` as a list of str);
/// `flows` (None, or with `per_flow` numpy columns `coflow_id`, `src`,
/// `dst`, `bytes`, `kind` (list of "net"/"compute"), `group`,
/// `karuna_type`, `arrival_s`, `start_s`, `finish_s`, `fct_s` (finish -
/// start), `slowdown`, `deadline_s` and `deadline_met` (each with a
/// `*_valid` mask), `dropped`); `jobs` (numpy columns `job_id` (with
/// `job_id_valid`), `first_coflow_id`, `n_coflows`, `arrival_s`,
/// `completion_s`, `jct_s`); `summary` (rows `bin` = All, SN, LN, SW, LW
/// with `count`, `mean`, `median`, `p95`, `p99`, `max` CCT in s); `metrics`
/// (one dict of scalars: FCT, slowdown, job completion and deadline
/// statistics); `link_util` (None, or with `link_util_bin_ns` numpy columns
/// `link`, `bin_start_s`, `utilization`, link-major, and `link_names`
/// indexed by link). `missed` (`finish` or `drop`): what happens to a flow
/// unfinished at its deadline (`coflowkit_sim::Missed`).
#[pyfunction]
#[pyo3(signature = (workload, schedulers, capacity_bps = None, n_hosts = None, per_flow = false, progress = true, topology = None, link_util_bin_ns = None, missed = "finish"))]
#[allow(clippy::too_many_arguments)]
pub fn simulate<'py>(
    py: Python<'py>,
    workload: &Bound<'py, PyWorkload>,
    schedulers: Vec<String>,
    capacity_bps: Option<f64>,
    n_hosts: Option<u32>,
    per_flow: bool,
    progress: bool,
    topology: Option<&str>,
    link_util_bin_ns: Option<u64>,
    missed: &str,
) -> PyResult<Bound<'py, PyList>> {
    let missed = Missed::parse(missed).map_err(|m| value_error(format!("missed: {m}")))?;
    if schedulers.is_empty() {
        return Err(value_error("schedulers: give at least one scheduler"));
    }
    if link_util_bin_ns == Some(0) {
        return Err(value_error("link_util_bin_ns: a bin must be at least 1 ns"));
    }
    let (specs, fabric) = specs_and_fabric(workload, &schedulers, capacity_bps, n_hosts, topology)?;
    let w = workload.get();
    let valid = py
        .detach(|| w.inner.clone().validate(&fabric))
        .map_err(|e| value_error(format!("{}: {e}", w.source)))?;
    let hints = WorkloadHints::of(&valid);
    for s in &specs {
        coflowkit_sched::preflight(s, &hints, &fabric).map_err(value_error)?;
    }
    let built = specs
        .iter()
        .map(|s| build(s, &hints))
        .collect::<Result<Vec<_>, _>>()
        .map_err(value_error)?;
    let names: Vec<String> = schedulers.iter().map(|s| s.trim().to_string()).collect();
    let board = Board::new(progress, names.clone());
    let options = SimOptions {
        per_flow,
        link_util_bin: link_util_bin_ns.map(Dur),
        missed,
    };
    let results = py.detach(|| run_all(&fabric, &valid, built, &options, &board))?;
    let out = PyList::empty(py);
    for (spec, r) in names.iter().zip(results) {
        out.append(result_dict(py, spec, r)?)?;
    }
    Ok(out)
}

/// The schedulers of `schedulers` that `simulate` would refuse on
/// `workload` over the fabric the other arguments name (as `simulate`), each
/// with its one-line reason: its scheduler's preflight refuses the run
/// (`coflowkit_sched::preflight`: a `baraat` spec whose estimated CPU time
/// is above its `budget`). The CLI
/// leaves them out of its default list. Cheap: it reads the coflows' sizes,
/// it does not validate the workload.
#[pyfunction]
#[pyo3(signature = (workload, schedulers, capacity_bps = None, n_hosts = None, topology = None))]
pub fn refusals(
    workload: &Bound<'_, PyWorkload>,
    schedulers: Vec<String>,
    capacity_bps: Option<f64>,
    n_hosts: Option<u32>,
    topology: Option<&str>,
) -> PyResult<Vec<(String, String)>> {
    let (specs, fabric) = specs_and_fabric(workload, &schedulers, capacity_bps, n_hosts, topology)?;
    let hints = WorkloadHints::of_coflows(&workload.get().inner.coflows);
    Ok(schedulers
        .iter()
        .zip(&specs)
        .filter_map(|(name, s)| {
            coflowkit_sched::preflight(s, &hints, &fabric)
                .err()
                .map(|e| (name.trim().to_string(), e.to_string()))
        })
        .collect())
}

/// The parsed `schedulers` and the fabric the other arguments name: what
/// `simulate` and `refusals` start from.
fn specs_and_fabric(
    workload: &Bound<'_, PyWorkload>,
    schedulers: &[String],
    capacity_bps: Option<f64>,
    n_hosts: Option<u32>,
    topology: Option<&str>,
) -> PyResult<(Vec<SchedulerSpec>, Fabric)> {
    let specs = schedulers
        .iter()
        .map(|s| SchedulerSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(value_error)?;
    let w = workload.get();
    let fabric = fabric_for(topology, capacity_bps, n_hosts, w.inner.n_hosts, &w.source)?;
    Ok((specs, fabric))
}

/// Runs every scheduler over `workload` on worker threads; results in the
/// schedulers' order, or the first failure in that order.
fn run_all(
    fabric: &Fabric,
    workload: &ValidWorkload,
    schedulers: Vec<AnyScheduler>,
    options: &SimOptions,
    board: &Board,
) -> PyResult<Vec<SimResult>> {
    let n = schedulers.len();
    let mut jobs: Vec<(usize, AnyScheduler)> = schedulers.into_iter().enumerate().collect();
    jobs.sort_by_key(|(_, s)| cost_rank(s.name()));
    let queue = Mutex::new(jobs.into_iter().collect::<VecDeque<_>>());
    let cancel = AtomicBool::new(false);
    let n_workers = std::thread::available_parallelism()
        .map_or(1, |p| p.get())
        .clamp(1, n);
    let mut outcomes: Vec<Option<Outcome>> = (0..n).map(|_| None).collect();
    let mut interrupt: Option<PyErr> = None;
    let (tx, rx) = mpsc::channel::<(usize, Outcome)>();
    std::thread::scope(|s| {
        let (queue, cancel) = (&queue, &cancel);
        for _ in 0..n_workers {
            let tx = tx.clone();
            s.spawn(move || loop {
                if cancel.load(Ordering::Relaxed) {
                    break;
                }
                let job = queue
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .pop_front();
                let Some((k, scheduler)) = job else { break };
                let outcome = run_one(k, fabric, workload, scheduler, options, board, cancel);
                if tx.send((k, outcome)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut received = 0;
        while received < n {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok((k, outcome)) => {
                    outcomes[k] = Some(outcome);
                    received += 1;
                }
                Err(RecvTimeoutError::Timeout) => {
                    if interrupt.is_none() {
                        if let Err(e) = Python::attach(|py| py.check_signals()) {
                            interrupt = Some(e);
                            cancel.store(true, Ordering::Relaxed);
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
    });
    board.finish();
    if let Some(e) = interrupt {
        return Err(e);
    }
    outcomes
        .into_iter()
        .map(|o| match o {
            Some(Outcome::Done(r)) => Ok(*r),
            Some(Outcome::Failed(e)) => Err(simulation_error(e)),
            Some(Outcome::Panicked(msg)) => Err(simulation_error(format!(
                "the simulation engine panicked: {msg}"
            ))),
            Some(Outcome::Cancelled) | None => {
                Err(simulation_error("the simulation was cancelled"))
            }
        })
        .collect()
}

/// One run, with panics and cancellation caught.
fn run_one(
    k: usize,
    fabric: &Fabric,
    workload: &ValidWorkload,
    scheduler: AnyScheduler,
    options: &SimOptions,
    board: &Board,
    cancel: &AtomicBool,
) -> Outcome {
    board.start(k);
    let sim = Simulation::new(fabric.clone(), workload, scheduler, options.clone());
    let run = catch_unwind(AssertUnwindSafe(|| {
        sim.run(&mut |p| {
            if cancel.load(Ordering::Relaxed) {
                resume_unwind(Box::new(Cancelled));
            }
            board.report(k, p);
        })
    }));
    match run {
        Ok(Ok(r)) => Outcome::Done(Box::new(r)),
        Ok(Err(e)) => Outcome::Failed(e),
        Err(payload) if payload.is::<Cancelled>() => Outcome::Cancelled,
        Err(payload) => Outcome::Panicked(panic_message(payload.as_ref())),
    }
}

/// The text of a panic, if it has one.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// A numpy column from an iterator.
pub(crate) fn col<'py, T: numpy::Element>(
    py: Python<'py>,
    values: impl Iterator<Item = T>,
) -> Bound<'py, numpy::PyArray1<T>> {
    values.collect::<Vec<T>>().into_pyarray(py)
}

/// Seconds of an optional span.
fn secs(d: Option<Dur>) -> Option<f64> {
    d.map(Dur::as_secs_f64)
}

/// One run's result as the dict `simulate` documents.
pub(crate) fn result_dict<'py>(
    py: Python<'py>,
    spec: &str,
    r: SimResult,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("spec", spec)?;
    d.set_item("scheduler", &r.scheduler)?;
    d.set_item("n_events", r.n_events)?;

    let summary = PyList::empty(py);
    for row in r.summary().rows {
        let s = PyDict::new(py);
        s.set_item("bin", row.bin.map_or("All", |b| b.name()))?;
        s.set_item("count", row.count)?;
        s.set_item("mean", row.mean)?;
        s.set_item("median", row.median)?;
        s.set_item("p95", row.p95)?;
        s.set_item("p99", row.p99)?;
        s.set_item("max", row.max)?;
        summary.append(s)?;
    }
    d.set_item("summary", summary)?;

    let m = r.metrics();
    let md = PyDict::new(py);
    md.set_item("n_coflows", m.cct.count)?;
    md.set_item("n_flows", m.flows.fct.count)?;
    md.set_item("fct_mean_s", m.flows.fct.mean)?;
    md.set_item("fct_p95_s", m.flows.fct.p95)?;
    md.set_item("fct_p99_s", m.flows.fct.p99)?;
    md.set_item("slowdown_mean", m.flows.slowdown.mean)?;
    md.set_item("slowdown_p95", m.flows.slowdown.p95)?;
    md.set_item("slowdown_p99", m.flows.slowdown.p99)?;
    md.set_item("n_jobs", m.jct.count)?;
    md.set_item("jct_mean_s", m.jct.mean)?;
    md.set_item("jct_median_s", m.jct.median)?;
    md.set_item("jct_p95_s", m.jct.p95)?;
    md.set_item("jct_p99_s", m.jct.p99)?;
    md.set_item("jct_max_s", m.jct.max)?;
    md.set_item("flow_deadlines", m.flows.deadlines.with_deadline)?;
    md.set_item("flow_deadline_misses", m.flows.deadlines.missed)?;
    md.set_item("flow_deadline_miss_rate", m.flows.deadlines.miss_rate())?;
    md.set_item("flow_deadline_drops", m.flows.dropped)?;
    md.set_item("n_flows_no_deadline", m.flows.fct_no_deadline.count)?;
    md.set_item("fct_no_deadline_mean_s", m.flows.fct_no_deadline.mean)?;
    md.set_item("fct_no_deadline_p95_s", m.flows.fct_no_deadline.p95)?;
    md.set_item("n_short_no_deadline", m.flows.fct_no_deadline_short.count)?;
    md.set_item(
        "fct_short_no_deadline_mean_s",
        m.flows.fct_no_deadline_short.mean,
    )?;
    md.set_item(
        "fct_short_no_deadline_p95_s",
        m.flows.fct_no_deadline_short.p95,
    )?;
    md.set_item("coflow_deadlines", m.coflow_deadlines.with_deadline)?;
    md.set_item("coflow_deadline_misses", m.coflow_deadlines.missed)?;
    md.set_item("coflow_deadline_miss_rate", m.coflow_deadlines.miss_rate())?;
    d.set_item("metrics", md)?;

    let cs = &r.coflows;
    let c = PyDict::new(py);
    c.set_item("coflow_id", col(py, cs.iter().map(|c| c.id)))?;
    set_optional(
        &c,
        "job_id",
        cs.iter().map(|c| c.job.map(|j| j.job)).collect(),
    )?;
    set_optional(
        &c,
        "stage_id",
        cs.iter().map(|c| c.job.map(|j| j.stage)).collect(),
    )?;
    c.set_item(
        "arrival_s",
        col(py, cs.iter().map(|c| c.arrival.as_secs_f64())),
    )?;
    c.set_item(
        "release_s",
        col(py, cs.iter().map(|c| c.release.as_secs_f64())),
    )?;
    c.set_item(
        "finish_s",
        col(py, cs.iter().map(|c| c.finish.as_secs_f64())),
    )?;
    c.set_item("cct_s", col(py, cs.iter().map(|c| c.cct_s())))?;
    set_optional(
        &c,
        "deadline_s",
        cs.iter().map(|c| secs(c.deadline)).collect(),
    )?;
    set_optional(
        &c,
        "deadline_met",
        cs.iter().map(|c| c.deadline_met()).collect(),
    )?;
    c.set_item("width", col(py, cs.iter().map(|c| c.width)))?;
    c.set_item("length_bytes", col(py, cs.iter().map(|c| c.length)))?;
    c.set_item("total_bytes", col(py, cs.iter().map(|c| c.total_bytes)))?;
    c.set_item("bin", cs.iter().map(|c| c.bin.name()).collect::<Vec<_>>())?;
    d.set_item("coflows", c)?;

    let jobs = r.jobs();
    let j = PyDict::new(py);
    set_optional(&j, "job_id", jobs.iter().map(|j| j.job).collect())?;
    j.set_item(
        "first_coflow_id",
        col(py, jobs.iter().map(|j| j.first_coflow)),
    )?;
    j.set_item("n_coflows", col(py, jobs.iter().map(|j| j.n_coflows)))?;
    j.set_item(
        "arrival_s",
        col(py, jobs.iter().map(|j| j.arrival.as_secs_f64())),
    )?;
    j.set_item(
        "completion_s",
        col(py, jobs.iter().map(|j| j.completion.as_secs_f64())),
    )?;
    j.set_item("jct_s", col(py, jobs.iter().map(|j| j.jct().as_secs_f64())))?;
    d.set_item("jobs", j)?;

    match &r.flows {
        None => d.set_item("flows", py.None())?,
        Some(fs) => {
            let f = PyDict::new(py);
            f.set_item("coflow_id", col(py, fs.iter().map(|f| f.coflow_id)))?;
            f.set_item("src", col(py, fs.iter().map(|f| f.src)))?;
            f.set_item("dst", col(py, fs.iter().map(|f| f.dst)))?;
            f.set_item("bytes", col(py, fs.iter().map(|f| f.bytes)))?;
            f.set_item(
                "kind",
                fs.iter()
                    .map(|f| match f.kind {
                        FlowKind::Net => "net",
                        FlowKind::Compute => "compute",
                    })
                    .collect::<Vec<_>>(),
            )?;
            f.set_item("group", col(py, fs.iter().map(|f| f.group)))?;
            f.set_item("karuna_type", col(py, fs.iter().map(|f| f.karuna_type)))?;
            f.set_item(
                "arrival_s",
                col(py, fs.iter().map(|f| f.arrival.as_secs_f64())),
            )?;
            f.set_item("start_s", col(py, fs.iter().map(|f| f.start.as_secs_f64())))?;
            f.set_item(
                "finish_s",
                col(py, fs.iter().map(|f| f.finish.as_secs_f64())),
            )?;
            f.set_item("fct_s", col(py, fs.iter().map(|f| f.fct().as_secs_f64())))?;
            f.set_item("slowdown", col(py, fs.iter().map(|f| f.slowdown)))?;
            set_optional(
                &f,
                "deadline_s",
                fs.iter().map(|f| secs(f.deadline)).collect(),
            )?;
            set_optional(
                &f,
                "deadline_met",
                fs.iter().map(|f| f.deadline_met()).collect(),
            )?;
            f.set_item("dropped", col(py, fs.iter().map(|f| f.dropped)))?;
            d.set_item("flows", f)?;
        }
    }

    match &r.link_util {
        None => d.set_item("link_util", py.None())?,
        Some(u) => {
            let l = PyDict::new(py);
            let n_links = u.link_names.len();
            let bin_s = u.bin.as_secs_f64();
            l.set_item("link_util_bin_ns", u.bin.0)?;
            l.set_item(
                "link",
                col(
                    py,
                    (0..n_links as u32).flat_map(|l| std::iter::repeat_n(l, u.n_bins)),
                ),
            )?;
            l.set_item(
                "bin_start_s",
                col(
                    py,
                    (0..n_links).flat_map(|_| (0..u.n_bins).map(|b| b as f64 * bin_s)),
                ),
            )?;
            l.set_item("utilization", col(py, u.utilization.iter().copied()))?;
            l.set_item("link_names", u.link_names.clone())?;
            d.set_item("link_util", l)?;
        }
    }
    Ok(d)
}
