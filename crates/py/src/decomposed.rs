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
use coflowkit_decomposed::{simulate, DecomposedResult, Options, Run as How};
use coflowkit_model::Fabric;
use coflowkit_packet::{how_run, packet_schedulers, Via};
use coflowkit_sim::Progress;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

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
#[pyfunction]
#[pyo3(signature = (workload, transports, options = "", capacity_bps = None, n_hosts = None, progress = true, topology = None, paths = None, threads = None, decompose = ""))]
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
) -> PyResult<Bound<'py, PyList>> {
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
    let names: Vec<String> = transports.iter().map(|s| s.trim().to_string()).collect();
    let board = Board::with_unit(progress, names.clone(), "links");
    let mut results = Vec::with_capacity(runs.len());
    for (k, run) in runs.iter().enumerate() {
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
            let (how, cfg) = match run {
                Run::Transport(cfg) => (How::Transport, cfg),
                Run::Scheduler(spec, cfg) => (How::Hosts(spec), cfg),
            };
            simulate(&fabric, &valid, &how, &paths, cfg, opts, &mut report)
        });
        results.push(r.map_err(value_error)?);
    }
    board.finish();
    let out = PyList::empty(py);
    for (name, r) in names.iter().zip(results) {
        out.append(decomposed_dict(py, name, &fabric, r)?)?;
    }
    Ok(out)
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
