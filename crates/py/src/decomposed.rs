//! Decomposed runs from Python (`coflowkit_decomposed`): one run per
//! transport or scheduler that decides on the hosts alone, each link of the
//! fabric simulated at packet level on its own, the same result dict as
//! `simulate` plus what the decomposition did.

use crate::errors::value_error;
use crate::packet::{run_of, Run};
use crate::progress::Board;
use crate::simulate::{col, result_dict};
use crate::topology::fabric_for;
use crate::workload::PyWorkload;
use coflowkit_decomposed::{
    finish, prepare_paced, simulate, DecomposedResult, LinkRun, Options, Plan, Run as How,
};
use coflowkit_model::{Fabric, ValidWorkload};
use coflowkit_packet::PacketConfig;
use coflowkit_packet::{how_run, packet_schedulers, Via};
use coflowkit_sim::Progress;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// Runs `workload` decomposed into one packet-level simulation per link,
/// once per entry of `transports` (a transport's name, or the spec of a
/// scheduler whose host policies decide alone; one that needs a
/// coordinator is refused naming the engines that run it); `options` the
/// packet engine's knobs; `paths` each flow's pinned path or None;
/// `threads` how many link simulations run at once (default: every core);
/// `decompose` the decomposition's own options (`combine=`, `cluster=`,
/// `sources=`; docs/decomposed-engine.md).
/// Each result is `simulate`'s dict plus `decomposed`: `link_sims`,
/// `links_used` (links carrying flows), `clusters`,
/// `packets` (per-hop, over every link simulation), `alone_paths`, and
/// `links` (columns `link`, `name`, `flows`, `packets`, `cost_s`: what the
/// link cost its flows beyond their time alone, summed).
/// `link_runs`: the link simulations' results, run elsewhere
/// (`decomposed_link_runs`, e.g. on Dask workers), one run only: the
/// estimates are made from them and no link simulation runs here.
/// `paces`: with `link_runs`, the run's pacing (`decomposed_paces`), so
/// that the fluid view is not run again.
#[pyfunction]
#[pyo3(signature = (workload, transports, options = "", capacity_bps = None, n_hosts = None, progress = true, topology = None, paths = None, threads = None, decompose = "", link_runs = None, paces = None))]
#[allow(clippy::too_many_arguments)]
pub fn simulate_decomposed<'py>(
    py: Python<'py>,
    workload: &Bound<'py, PyWorkload>,
    transports: Vec<String>,
    options: &str,
    capacity_bps: Option<f64>,
    n_hosts: Option<u32>,
    progress: bool,
    topology: Option<&str>,
    paths: Option<Vec<Option<u32>>>,
    threads: Option<usize>,
    decompose: &str,
    link_runs: Option<Vec<(usize, Vec<u64>, u64)>>,
    paces: Option<Bound<'py, PyBytes>>,
) -> PyResult<Bound<'py, PyList>> {
    let paces = paces.map(|b| b.as_bytes().to_vec());
    if paces.is_some() && link_runs.is_none() {
        return Err(value_error(
            "paces: given with link_runs only (a run that simulates its links here finds its own)",
        ));
    }
    let s = Setup::new(
        py,
        workload,
        &transports,
        options,
        capacity_bps,
        n_hosts,
        topology,
        paths,
        threads,
        decompose,
    )?;
    if let Some(given) = link_runs {
        if s.runs.len() != 1 {
            return Err(value_error(format!(
                "link_runs: the results of one run's link simulations, but {} transports given",
                s.runs.len()
            )));
        }
        let (how, _) = how(&s.runs[0]);
        let r = py.detach(|| -> PyResult<DecomposedResult> {
            let plan = s.plan(0, paces)?;
            let ran = in_order(plan.sims.len(), given)?;
            finish(plan, &how, ran.into_iter().map(Ok).collect()).map_err(value_error)
        })?;
        let out = PyList::empty(py);
        out.append(decomposed_dict(py, transports[0].trim(), &s.fabric, r)?)?;
        return Ok(out);
    }
    let names: Vec<String> = transports.iter().map(|s| s.trim().to_string()).collect();
    let board = Board::with_unit(progress, names.clone(), "links");
    let mut results = Vec::with_capacity(s.runs.len());
    for (k, run) in s.runs.iter().enumerate() {
        let r = py.detach(|| {
            board.start(k);
            let mut report = |done: usize, total: usize| {
                board.report(
                    k,
                    Progress {
                        now: coflowkit_model::Time(0),
                        coflows_done: done,
                        n_coflows: total,
                    },
                )
            };
            let (how, cfg) = how(run);
            simulate(
                &s.fabric,
                &s.valid,
                &how,
                &s.paths,
                cfg,
                s.opts,
                &mut report,
            )
        });
        results.push(r.map_err(value_error)?);
    }
    board.finish();
    let out = PyList::empty(py);
    for (name, r) in names.iter().zip(results) {
        out.append(decomposed_dict(py, name, &s.fabric, r)?)?;
    }
    Ok(out)
}

/// Runs shard `shard` of `shards` of one decomposed run's link simulations
/// (dealt in turn, the costliest first, so that shards carry alike work:
/// `Plan::costliest_first`), one after another, and
/// returns how many simulations the run has and, per simulation run here,
/// `(i, each of its flows' completion time in ns, its per-hop packets)`:
/// what `simulate_decomposed(..., link_runs=)` takes, gathered over every
/// shard. Every shard prepares the same plan (routes and clusters are
/// deterministic), so shards can run in other processes or on Dask workers.
/// The other arguments are `simulate_decomposed`'s, for one transport;
/// `paces`, the run's pacing (`decomposed_paces`), spares each shard the
/// fluid view.
#[pyfunction]
#[pyo3(signature = (workload, transport, shard, shards, options = "", capacity_bps = None, n_hosts = None, topology = None, paths = None, decompose = "", paces = None))]
#[allow(clippy::too_many_arguments)]
pub fn decomposed_link_runs<'py>(
    py: Python<'py>,
    workload: &Bound<'py, PyWorkload>,
    transport: String,
    shard: usize,
    shards: usize,
    options: &str,
    capacity_bps: Option<f64>,
    n_hosts: Option<u32>,
    topology: Option<&str>,
    paths: Option<Vec<Option<u32>>>,
    decompose: &str,
    paces: Option<Bound<'py, PyBytes>>,
) -> PyResult<(usize, Vec<(usize, Vec<u64>, u64)>)> {
    let paces = paces.map(|b| b.as_bytes().to_vec());
    if shards == 0 || shard >= shards {
        return Err(value_error(format!(
            "shard: {shard} of {shards}; shards from 1, shard from 0 to shards - 1"
        )));
    }
    let s = Setup::one(
        py,
        workload,
        &transport,
        options,
        capacity_bps,
        n_hosts,
        topology,
        paths,
        decompose,
    )?;
    py.detach(|| {
        let (how, cfg) = how(&s.runs[0]);
        let plan = s.plan(0, paces)?;
        let n = plan.sims.len();
        let order = plan.costliest_first();
        let runs = order[shard.min(n)..]
            .iter()
            .step_by(shards)
            .map(|&i| {
                let (fct, packets) = plan.sims[i].run(&how, cfg).map_err(value_error)?;
                Ok((i, fct, packets))
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok((n, runs))
    })
}

/// Where one decomposed run's link simulations pace whom (the fluid view's
/// verdict, one byte per flow and link of its path), or None when they pace
/// no one: what `decomposed_link_runs` and `simulate_decomposed(...,
/// link_runs=)` take as `paces`, so that a run split into tasks runs the
/// fluid view once. The arguments are `decomposed_link_runs`'s.
#[pyfunction]
#[pyo3(signature = (workload, transport, options = "", capacity_bps = None, n_hosts = None, topology = None, paths = None, decompose = ""))]
#[allow(clippy::too_many_arguments)]
pub fn decomposed_paces<'py>(
    py: Python<'py>,
    workload: &Bound<'py, PyWorkload>,
    transport: String,
    options: &str,
    capacity_bps: Option<f64>,
    n_hosts: Option<u32>,
    topology: Option<&str>,
    paths: Option<Vec<Option<u32>>>,
    decompose: &str,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let s = Setup::one(
        py,
        workload,
        &transport,
        options,
        capacity_bps,
        n_hosts,
        topology,
        paths,
        decompose,
    )?;
    let steps = py.detach(|| s.plan(0, None).map(|plan| plan.paces()))?;
    Ok(steps.map(|b| PyBytes::new(py, &b)))
}

/// What the decomposed entry points check and build from their arguments.
struct Setup {
    runs: Vec<Run>,
    fabric: Fabric,
    valid: ValidWorkload,
    paths: Vec<Option<u32>>,
    opts: Options,
}

impl Setup {
    /// The setup of one run (`transport`), its link simulations one at a
    /// time (the entry points that run some of them or none).
    #[allow(clippy::too_many_arguments)]
    fn one(
        py: Python<'_>,
        workload: &Bound<'_, PyWorkload>,
        transport: &str,
        options: &str,
        capacity_bps: Option<f64>,
        n_hosts: Option<u32>,
        topology: Option<&str>,
        paths: Option<Vec<Option<u32>>>,
        decompose: &str,
    ) -> PyResult<Setup> {
        Setup::new(
            py,
            workload,
            &[transport.to_string()],
            options,
            capacity_bps,
            n_hosts,
            topology,
            paths,
            Some(1),
            decompose,
        )
    }

    /// Run `k`'s plan, with the pacing another preparation found when
    /// given (`paces`).
    fn plan(&self, k: usize, paces: Option<Vec<u8>>) -> PyResult<Plan<'_>> {
        let (_, cfg) = how(&self.runs[k]);
        prepare_paced(
            &self.fabric,
            &self.valid,
            &self.paths,
            cfg,
            self.opts,
            paces,
        )
        .map_err(value_error)
    }

    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        workload: &Bound<'_, PyWorkload>,
        transports: &[String],
        options: &str,
        capacity_bps: Option<f64>,
        n_hosts: Option<u32>,
        topology: Option<&str>,
        paths: Option<Vec<Option<u32>>>,
        threads: Option<usize>,
        decompose: &str,
    ) -> PyResult<Setup> {
        if transports.is_empty() {
            return Err(value_error("transports: give at least one transport"));
        }
        let runs = transports
            .iter()
            .map(|t| {
                let run = run_of(t, options)?;
                if let Run::Scheduler(spec, _) = &run {
                    check_decomposed_scheduler(&spec.name)?;
                }
                Ok(run)
            })
            .collect::<PyResult<Vec<_>>>()?;
        if threads == Some(0) {
            return Err(value_error("threads: at least 1"));
        }
        let w = workload.get();
        let fabric = fabric_for(topology, capacity_bps, n_hosts, w.inner.n_hosts, &w.source)?;
        let valid = py
            .detach(|| w.inner.clone().validate(&fabric))
            .map_err(|e| value_error(format!("{}: {e}", w.source)))?;
        coflowkit_decomposed::check(&valid).map_err(value_error)?;
        let paths = paths.unwrap_or_default();
        let n_flows = valid.n_flows();
        if !paths.is_empty() && paths.len() != n_flows {
            return Err(value_error(format!(
                "paths: {} given for {n_flows} flows",
                paths.len()
            )));
        }
        let mut opts = Options::default();
        opts.set(decompose).map_err(value_error)?;
        if let Some(t) = threads {
            opts.threads = t;
        }
        Ok(Setup {
            runs,
            fabric,
            valid,
            paths,
            opts,
        })
    }
}

/// What runs on the link simulations' hosts, and the packet knobs.
fn how(run: &Run) -> (How<'_>, &PacketConfig) {
    match run {
        Run::Transport(cfg) => (How::Transport, cfg),
        Run::Scheduler(spec, cfg) => (How::Hosts(spec), cfg),
    }
}

/// `given` link simulations' results put in order: each of the `n`
/// simulations exactly once, else a `ValueError` naming the first index
/// missing, repeated or out of range.
fn in_order(n: usize, given: Vec<(usize, Vec<u64>, u64)>) -> PyResult<Vec<LinkRun>> {
    let mut slots: Vec<Option<LinkRun>> = (0..n).map(|_| None).collect();
    for (i, fct, packets) in given {
        match slots.get_mut(i) {
            None => {
                return Err(value_error(format!(
                    "link_runs: simulation {i}, but the run has {n} (0 to {})",
                    n.saturating_sub(1)
                )))
            }
            Some(Some(_)) => {
                return Err(value_error(format!(
                    "link_runs: simulation {i} given twice"
                )))
            }
            Some(slot) => *slot = Some((fct, packets)),
        }
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            r.ok_or_else(|| {
                value_error(format!(
                    "link_runs: simulation {i} of {n} missing (gather every shard)"
                ))
            })
        })
        .collect()
}

/// Checks the decomposition's own options (`simulate_decomposed`'s
/// `decompose`): a `ValueError` naming the wrong item.
#[pyfunction]
pub fn check_decomposed_options(decompose: &str) -> PyResult<()> {
    Options::default().set(decompose).map_err(value_error)
}

/// Checks that the decomposed engine runs scheduler `name` (a transport's
/// name or a scheduler unknown to the packet engine passes: the packet
/// engine's own checks name those): a `ValueError` in one line naming the
/// engines that run it when a central coordinator runs it.
#[pyfunction]
pub fn check_decomposed_scheduler(name: &str) -> PyResult<()> {
    match how_run(name) {
        Some(Via::Coordinator) => Err(value_error(refusal(name))),
        _ => Ok(()),
    }
}

/// The one line refusing scheduler `name`, run by a coordinator.
fn refusal(name: &str) -> String {
    let local: Vec<&str> = packet_schedulers()
        .into_iter()
        .filter(|(_, v)| *v == Via::HostPolicy)
        .map(|(n, _)| n)
        .collect();
    format!(
        "scheduler: '{name}' needs a central coordinator, which sees the whole fabric; the decomposed \
         engine simulates each link alone and runs transports and the schedulers whose host policies \
         decide alone ({}); run '{name}' with engine 'flow' or 'packet'",
        local.join(", ")
    )
}

fn decomposed_dict<'py>(
    py: Python<'py>,
    name: &str,
    fabric: &Fabric,
    r: DecomposedResult,
) -> PyResult<Bound<'py, PyDict>> {
    let extra = PyDict::new(py);
    extra.set_item("link_sims", r.link_sims)?;
    extra.set_item("links_used", r.links_used)?;
    extra.set_item("clusters", r.clusters)?;
    extra.set_item("packets", r.packets)?;
    extra.set_item("alone_paths", r.alone_paths)?;
    let links = PyDict::new(py);
    links.set_item("link", col(py, r.links.iter().map(|l| l.link.0)))?;
    links.set_item(
        "name",
        r.links
            .iter()
            .map(|l| fabric.link_name(l.link))
            .collect::<Vec<_>>(),
    )?;
    links.set_item("flows", col(py, r.links.iter().map(|l| l.flows as u64)))?;
    links.set_item("packets", col(py, r.links.iter().map(|l| l.packets)))?;
    links.set_item("cost_s", col(py, r.links.iter().map(|l| l.cost_ns / 1e9)))?;
    extra.set_item("links", links)?;
    let d = result_dict(py, name, r.sim)?;
    d.set_item("decomposed", extra)?;
    Ok(d)
}
