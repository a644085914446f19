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
use coflowkit_decomposed::job::run_encoded;
use coflowkit_decomposed::{
    finish, prepare, simulate, DecomposedResult, LinkRun, Options, Plan, Run as How,
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
/// `run_parts`: a callable that runs the packet-level runs elsewhere (e.g.
/// as Dask tasks), for one transport only: it is given each run (a link's
/// simulation or a path's times alone) as bytes, the costliest first, and
/// returns, in that order, what `decomposed_run_parts` returns for them;
/// the run is prepared and combined here, and none of them runs here.
#[pyfunction]
#[pyo3(signature = (workload, transports, options = "", capacity_bps = None, n_hosts = None, progress = true, topology = None, paths = None, threads = None, decompose = "", run_parts = None))]
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
    run_parts: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
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
    if let Some(ship) = run_parts {
        if s.runs.len() != 1 {
            return Err(value_error(format!(
                "run_parts: runs one transport's link simulations, but {} transports given",
                s.runs.len()
            )));
        }
        let (how, _) = how(&s.runs[0]);
        let plan = py.detach(|| s.plan(0))?;
        let order = plan.costliest_first();
        let sent = PyList::new(
            py,
            order
                .iter()
                .map(|&i| PyBytes::new(py, &plan.job(i).encode())),
        )?;
        let got: Vec<(Vec<u64>, u64)> = ship.call1((sent,))?.extract().map_err(|e| {
            value_error(format!(
                "run_parts: returned what is not a list of (completion times, packets): {e}"
            ))
        })?;
        let ran = in_order(&order, got)?;
        let r = py
            .detach(|| finish(plan, &how, ran.into_iter().map(Ok).collect()))
            .map_err(value_error)?;
        let out = PyList::empty(py);
        out.append(decomposed_dict(py, transports[0].trim(), &s.fabric, r)?)?;
        return Ok(out);
    }
    let names: Vec<String> = transports.iter().map(|s| s.trim().to_string()).collect();
    let board = Board::with_unit(progress, names.clone(), "runs");
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

/// Runs a decomposition's packet-level runs sent as bytes
/// (`simulate_decomposed`'s `run_parts`: a link's small fabric and flows,
/// or a path to measure alone), one after another,
/// with `transport` (a transport's name, or the spec of a scheduler whose
/// host policies decide alone) and the packet knobs `options`, which must
/// be the run's: per part, its flows' completion times (ns, in its flow
/// order) and the per-hop packets it took. Needs neither the workload
/// nor the fabric, so a Dask worker runs its share of a point's link
/// simulations without preparing the point.
#[pyfunction]
#[pyo3(signature = (parts, transport, options = ""))]
pub fn decomposed_run_parts(
    py: Python<'_>,
    parts: Vec<Vec<u8>>,
    transport: &str,
    options: &str,
) -> PyResult<Vec<(Vec<u64>, u64)>> {
    let run = run_of(transport.trim(), options)?;
    if let Run::Scheduler(spec, _) = &run {
        check_decomposed_scheduler(&spec.name)?;
    }
    let (how, cfg) = how(&run);
    py.detach(|| {
        parts
            .iter()
            .enumerate()
            .map(|(k, bytes)| {
                run_encoded(bytes, &how, cfg).map_err(|e| value_error(format!("parts[{k}]: {e}")))
            })
            .collect()
    })
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
    /// Run `k`'s plan.
    fn plan(&self, k: usize) -> PyResult<Plan<'_>> {
        let (_, cfg) = how(&self.runs[k]);
        prepare(&self.fabric, &self.valid, &self.paths, cfg, self.opts).map_err(value_error)
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

/// What `run_parts` returned (`got`, one per part sent, in `order`) put
/// in the plan's order, else a `ValueError` saying how many came back.
fn in_order(order: &[usize], got: Vec<(Vec<u64>, u64)>) -> PyResult<Vec<LinkRun>> {
    if got.len() != order.len() {
        return Err(value_error(format!(
            "run_parts: {} results for {} parts sent",
            got.len(),
            order.len()
        )));
    }
    let mut slots: Vec<Option<LinkRun>> = (0..order.len()).map(|_| None).collect();
    for (&i, r) in order.iter().zip(got) {
        slots[i] = Some(r);
    }
    Ok(slots
        .into_iter()
        .map(|r| r.expect("every slot filled"))
        .collect())
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
