//! Topologies from Python: a `--topology` spec string or a config file,
//! parsed and built in Rust (`coflowkit-topology-config`), described for
//! the CLI, and turned into the fabric a simulation runs on.

use crate::errors::{topology_error, value_error};
use crate::workload::checked_capacity;
use coflowkit_model::{BitsPerSec, Fabric, HostId, LinkId, Node};
use coflowkit_topology_config::{resolve, FabricInfo};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The fabric of a simulation: the big switch of `n_hosts` (default
/// `workload_hosts`) ports of `capacity_bps` (default 1 Gbit/s) when no
/// topology is given, else the topology (a spec or a file), whose big
/// switch (if it is one without `hosts`) is sized to `workload_hosts`.
/// `capacity_bps` and `n_hosts` only describe the default big switch: given
/// with a topology they are an error, not silently ignored. Errors of the
/// default big switch name the workload's `source`.
pub fn fabric_for(
    topology: Option<&str>,
    capacity_bps: Option<f64>,
    n_hosts: Option<u32>,
    workload_hosts: u32,
    source: &str,
) -> PyResult<Fabric> {
    match topology {
        None => {
            let capacity = checked_capacity(capacity_bps.unwrap_or(1e9))?;
            Fabric::big_switch(n_hosts.unwrap_or(workload_hosts), capacity)
                .map_err(|e| value_error(format!("{source}: {e}")))
        }
        Some(spec) => {
            if capacity_bps.is_some() || n_hosts.is_some() {
                return Err(value_error(
                    "topology: capacity_bps and n_hosts size the default big switch; \
                     with a topology, give its rates and hosts in the topology spec",
                ));
            }
            let config = resolve(spec).map_err(topology_error)?;
            config.build(Some(workload_hosts)).map_err(topology_error)
        }
    }
}

/// Describes a topology (a spec string or a `.toml`/`.yaml` file): builds
/// it (a big switch without `hosts` gets `n_hosts`) and returns a dict:
/// `kind`, `description` (one line), `spec` (canonical spec string, None
/// for a custom graph), `n_hosts`, `n_switches`, `switches` (list of
/// (tier, count)), `links` (list of dicts: `kind`, `count`,
/// `min_capacity_bps`, `max_capacity_bps`, `total_capacity_bps`),
/// `bisection` (None, or a dict of `capacity_bps`, `hosts_per_side`,
/// `oversubscription`), `max_paths`, `ecmp_seed`, `host_rate_bps` (host 0's
/// uplink) and `text` (the report `coflowkit topology info` prints).
/// Raises `ValueError` naming the file or spec, the key and the problem,
/// or `FileNotFoundError`.
#[pyfunction]
#[pyo3(signature = (spec, n_hosts = None))]
pub fn topology_info<'py>(
    py: Python<'py>,
    spec: &str,
    n_hosts: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let config = resolve(spec)
        .and_then(|c| c.sized_to(n_hosts))
        .map_err(topology_error)?;
    let fabric = py
        .detach(|| config.build(n_hosts))
        .map_err(topology_error)?;
    let info = FabricInfo::of(&fabric);
    let d = PyDict::new(py);
    d.set_item("kind", info.kind)?;
    d.set_item("description", config.describe())?;
    d.set_item("spec", config.to_spec())?;
    d.set_item("n_hosts", info.n_hosts)?;
    d.set_item("n_switches", fabric.n_switches())?;
    d.set_item("switches", info.switches.clone())?;
    let links = PyList::empty(py);
    for g in &info.links {
        let l = PyDict::new(py);
        l.set_item("kind", &g.label)?;
        l.set_item("count", g.count)?;
        l.set_item("min_capacity_bps", g.min_capacity.0)?;
        l.set_item("max_capacity_bps", g.max_capacity.0)?;
        l.set_item("total_capacity_bps", g.total_capacity.0)?;
        links.append(l)?;
    }
    d.set_item("links", links)?;
    match &info.bisection {
        None => d.set_item("bisection", py.None())?,
        Some(b) => {
            let bd = PyDict::new(py);
            bd.set_item("capacity_bps", b.capacity.0)?;
            bd.set_item("hosts_per_side", b.hosts_per_side)?;
            bd.set_item("oversubscription", b.oversubscription)?;
            d.set_item("bisection", bd)?;
        }
    }
    d.set_item("max_paths", info.max_paths)?;
    d.set_item("ecmp_seed", info.ecmp_seed)?;
    let BitsPerSec(host_rate) = fabric.link(fabric.uplink(HostId(0))).capacity;
    d.set_item("host_rate_bps", host_rate)?;
    d.set_item(
        "text",
        format!("description    {}\n{info}", config.describe()),
    )?;
    Ok(d)
}

/// A topology's graph (a spec string or a config file, built as
/// [`topology_info`] builds it), for tools that build it for real, such as
/// the emulated testbed: a dict of `n_hosts`, `switches` (list of dicts:
/// `name`, `tier`) and `links` (list of dicts: `name`, `src`, `dst`,
/// `capacity_bps`; an end is `("host", i)` or `("switch", j)`, `j` indexing
/// `switches`). A host's CPU resource is not a link and is left out.
#[pyfunction]
#[pyo3(signature = (spec, n_hosts = None))]
pub fn topology_graph<'py>(
    py: Python<'py>,
    spec: &str,
    n_hosts: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let config = resolve(spec)
        .and_then(|c| c.sized_to(n_hosts))
        .map_err(topology_error)?;
    let fabric = py
        .detach(|| config.build(n_hosts))
        .map_err(topology_error)?;
    let d = PyDict::new(py);
    d.set_item("n_hosts", fabric.n_hosts())?;
    let switches = PyList::empty(py);
    for s in fabric.switches() {
        let sd = PyDict::new(py);
        sd.set_item("name", &s.name)?;
        sd.set_item("tier", s.tier.name())?;
        switches.append(sd)?;
    }
    d.set_item("switches", switches)?;
    let end = |n: Node| match n {
        Node::Host(h) => ("host", h.0),
        Node::Switch(s) => ("switch", s.0),
    };
    let links = PyList::empty(py);
    for i in 0..fabric.n_links() {
        let id = LinkId(i as u32);
        let Some((from, to)) = fabric.link_ends(id) else {
            continue;
        };
        let l = PyDict::new(py);
        l.set_item("name", fabric.link_name(id))?;
        l.set_item("src", end(from))?;
        l.set_item("dst", end(to))?;
        l.set_item("capacity_bps", fabric.link(id).capacity.0)?;
        links.append(l)?;
    }
    d.set_item("links", links)?;
    Ok(d)
}
