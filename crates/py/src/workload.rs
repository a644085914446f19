//! The `Workload` handle and every way of making one from Python.
//!
//! A `Workload` wraps the model's raw [`Workload`] with the name of where it
//! came from. It is immutable (a frozen pyclass), so simulations read it
//! from other threads without copying it first.
//!
//! Native columns cross the boundary as numpy arrays, one entry per flow, in
//! the order of [`NATIVE_COLUMNS`]. The optional columns (`job_id`,
//! `stage_id`, `deadline_ns`, `after`, `flow_deadline_ns`) travel as a value
//! array (0 where empty) plus a boolean `<name>_valid` array; `kind` as
//! uint8 codes (0 net, 1 compute); `parents` as Arrow-style text, int64
//! `parents_offsets` (rows + 1) into uint8 `parents_data`, so pyarrow wraps
//! it without a Python object per row. `workload_from_columns(**w.columns())`
//! rebuilds `w` exactly.

use crate::errors::{trace_error, value_error};
use coflowkit_model::{BitsPerSec, FlowKind, Workload};
use coflowkit_workload::registry::{self, GENERATORS};
use coflowkit_workload::{
    generate, read_benchmark_file, read_native_csv, write_native_csv, FlowColumns, SynthConfig,
    TextColumn, TraceStats,
};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

/// A workload: coflows of flows on `n_hosts` hosts, as read or generated.
#[pyclass(frozen, name = "Workload", module = "coflowkit._core")]
pub struct PyWorkload {
    /// The workload itself.
    pub inner: Workload,
    /// Where it came from (a path or a generator description), for messages.
    pub source: String,
}

#[pymethods]
impl PyWorkload {
    /// Hosts the workload is for.
    #[getter]
    fn n_hosts(&self) -> u32 {
        self.inner.n_hosts
    }

    /// Number of coflows.
    #[getter]
    fn n_coflows(&self) -> usize {
        self.inner.coflows.len()
    }

    /// Number of flows.
    #[getter]
    fn n_flows(&self) -> usize {
        self.inner.coflows.iter().map(|c| c.flows.len()).sum()
    }

    /// Where the workload came from (a path, or the generator's settings).
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    /// The native columns as numpy arrays, one entry per flow, coflow by
    /// coflow: `coflow_id`, `arrival_ns`, `src`, `dst`, `bytes`, `job_id`,
    /// `stage_id`, `deadline_ns`, `kind` (uint8: 0 net, 1 compute), `group`,
    /// `after`, `delay_ns`, `flow_deadline_ns`, `size_known`, the optional
    /// columns' `<name>_valid` masks (False where empty; the value there is
    /// 0), and `parents` as `parents_offsets` (int64, rows + 1) into
    /// `parents_data` (uint8, UTF-8 text like `12:sa;13:fb`).
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let cols = py.detach(|| FlowColumns::from_workload(&self.inner));
        let d = PyDict::new(py);
        d.set_item("coflow_id", cols.coflow_id.into_pyarray(py))?;
        d.set_item("arrival_ns", cols.arrival_ns.into_pyarray(py))?;
        d.set_item("src", cols.src.into_pyarray(py))?;
        d.set_item("dst", cols.dst.into_pyarray(py))?;
        d.set_item("bytes", cols.bytes.into_pyarray(py))?;
        set_optional(&d, "job_id", cols.job_id)?;
        set_optional(&d, "stage_id", cols.stage_id)?;
        set_optional(&d, "deadline_ns", cols.deadline_ns)?;
        let kind: Vec<u8> = cols.kind.iter().map(|&k| kind_code(k)).collect();
        d.set_item("kind", kind.into_pyarray(py))?;
        d.set_item("group", cols.group.into_pyarray(py))?;
        set_optional(&d, "after", cols.after)?;
        d.set_item("delay_ns", cols.delay_ns.into_pyarray(py))?;
        set_optional(&d, "flow_deadline_ns", cols.flow_deadline_ns)?;
        d.set_item("size_known", cols.size_known.into_pyarray(py))?;
        let (offsets, data) = cols.parents.into_parts();
        // Offsets are at most the text's length, far below i64::MAX.
        let offsets: Vec<i64> = offsets.into_iter().map(|o| o as i64).collect();
        d.set_item("parents_offsets", offsets.into_pyarray(py))?;
        d.set_item("parents_data", data.into_pyarray(py))?;
        Ok(d)
    }

    /// The summary `coflowkit trace info` prints (offered load on ports of
    /// `capacity_bps`).
    #[pyo3(signature = (capacity_bps = 1e9))]
    fn stats_text(&self, py: Python<'_>, capacity_bps: f64) -> PyResult<String> {
        let capacity = checked_capacity(capacity_bps)?;
        Ok(py.detach(|| TraceStats::new(&self.inner, capacity).to_string()))
    }

    /// The same summary as a dict: counts, bytes, arrivals (s), offered load,
    /// per-bin counts and shares, width and length percentiles, and
    /// `features` (counts of flows and coflows using groups, delays, compute
    /// stages, deadlines, hidden sizes, jobs and parents).
    #[pyo3(signature = (capacity_bps = 1e9))]
    fn stats<'py>(&self, py: Python<'py>, capacity_bps: f64) -> PyResult<Bound<'py, PyDict>> {
        let capacity = checked_capacity(capacity_bps)?;
        let s = py.detach(|| TraceStats::new(&self.inner, capacity));
        let d = PyDict::new(py);
        d.set_item("n_hosts", s.n_hosts)?;
        d.set_item("n_coflows", s.n_coflows)?;
        d.set_item("n_flows", s.n_flows)?;
        d.set_item("total_bytes", s.total_bytes)?;
        d.set_item("first_arrival_s", s.first_arrival.map(|t| t.as_secs_f64()))?;
        d.set_item("last_arrival_s", s.last_arrival.map(|t| t.as_secs_f64()))?;
        d.set_item("span_s", s.span().as_secs_f64())?;
        d.set_item("capacity_bps", s.capacity.0)?;
        d.set_item("offered_load", s.offered_load)?;
        let bins = PyList::empty(py);
        for b in &s.bins {
            let row = PyDict::new(py);
            row.set_item("bin", b.bin.name())?;
            row.set_item("n_coflows", b.n_coflows)?;
            row.set_item("count_share", b.count_share)?;
            row.set_item("bytes", b.bytes)?;
            row.set_item("byte_share", b.byte_share)?;
            bins.append(row)?;
        }
        d.set_item("bins", bins)?;
        let x = s.features;
        let features = PyDict::new(py);
        for (name, n) in [
            ("compute", x.n_compute),
            ("after", x.n_after),
            ("delayed", x.n_delayed),
            ("flow_deadlines", x.n_flow_deadlines),
            ("size_unknown", x.n_size_unknown),
            ("coflow_deadlines", x.n_coflow_deadlines),
            ("in_jobs", x.n_in_jobs),
            ("with_parents", x.n_with_parents),
        ] {
            features.set_item(name, n)?;
        }
        d.set_item("features", features)?;
        for (name, p) in [("width", s.width), ("length_bytes", s.length)] {
            let row = PyDict::new(py);
            row.set_item("p50", p.p50)?;
            row.set_item("p95", p.p95)?;
            row.set_item("max", p.max)?;
            d.set_item(name, row)?;
        }
        Ok(d)
    }

    /// Writes the workload as a native CSV file at `path` (replacing it).
    fn write_csv(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| write_native_csv(&self.inner, &path))
            .map_err(trace_error)
    }

    fn __repr__(&self) -> String {
        format!(
            "Workload(source={:?}, n_hosts={}, n_coflows={}, n_flows={})",
            self.source,
            self.inner.n_hosts,
            self.inner.coflows.len(),
            self.n_flows()
        )
    }

    fn __len__(&self) -> usize {
        self.inner.coflows.len()
    }
}

/// The uint8 code of a flow kind in the numpy columns.
fn kind_code(k: FlowKind) -> u8 {
    match k {
        FlowKind::Net => 0,
        FlowKind::Compute => 1,
    }
}

/// Puts an optional column as `name` (0 where empty) and `name_valid`.
pub(crate) fn set_optional<T>(
    d: &Bound<'_, PyDict>,
    name: &str,
    col: Vec<Option<T>>,
) -> PyResult<()>
where
    T: numpy::Element + Default + Copy,
{
    let py = d.py();
    let valid: Vec<bool> = col.iter().map(Option::is_some).collect();
    let values: Vec<T> = col.into_iter().map(Option::unwrap_or_default).collect();
    d.set_item(name, values.into_pyarray(py))?;
    d.set_item(format!("{name}_valid"), valid.into_pyarray(py))?;
    Ok(())
}

/// A port capacity from Python, checked.
pub fn checked_capacity(capacity_bps: f64) -> PyResult<BitsPerSec> {
    if capacity_bps.is_finite() && capacity_bps > 0.0 {
        Ok(BitsPerSec(capacity_bps))
    } else {
        Err(value_error(format!(
            "capacity_bps: must be a positive finite number, got {capacity_bps}"
        )))
    }
}

/// Reads a trace file. `fmt` is `"benchmark"` (coflow-benchmark text) or
/// `"csv"` (native CSV); without it the extension decides (`.txt` or `.csv`).
/// Parquet is read by the Python side (`coflowkit.load_trace`).
#[pyfunction]
#[pyo3(signature = (path, fmt = None))]
pub fn load_trace(py: Python<'_>, path: PathBuf, fmt: Option<&str>) -> PyResult<PyWorkload> {
    let shown = path.display().to_string();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let fmt = match (fmt, ext.as_deref()) {
        (Some(f), _) => f.to_string(),
        (None, Some("txt")) => "benchmark".into(),
        (None, Some("csv")) => "csv".into(),
        (None, Some("parquet")) => {
            return Err(value_error(format!("{shown}: Parquet traces are read by coflowkit.load_trace (with pyarrow)")))
        }
        (None, other) => {
            return Err(value_error(format!(
                "{shown}: cannot tell the trace format from the extension {:?} (.txt is coflow-benchmark, .csv and .parquet are native)",
                other.map_or(String::new(), |e| format!(".{e}"))
            )))
        }
    };
    let inner = match fmt.as_str() {
        "benchmark" => py.detach(|| read_benchmark_file(&path)),
        "csv" => py.detach(|| read_native_csv(&path)),
        other => {
            return Err(value_error(format!(
                "fmt: unknown trace format '{other}' (benchmark, csv)"
            )))
        }
    }
    .map_err(trace_error)?;
    Ok(PyWorkload {
        inner,
        source: shown,
    })
}

/// A required column as a `Vec`.
fn required<T: numpy::Element + Copy>(col: &PyReadonlyArray1<'_, T>) -> Vec<T> {
    col.as_array().iter().copied().collect()
}

/// A column with a default: its values, or `n` defaults when absent.
fn defaulted<T: numpy::Element + Copy>(
    name: &str,
    col: Option<PyReadonlyArray1<'_, T>>,
    default: T,
    n: usize,
    source: &str,
) -> PyResult<Vec<T>> {
    match col {
        None => Ok(vec![default; n]),
        Some(col) => {
            let values = required(&col);
            if values.len() != n {
                return Err(value_error(format!(
                    "{source}:0: {name}: has {} rows but coflow_id has {n}",
                    values.len()
                )));
            }
            Ok(values)
        }
    }
}

/// An optional column from its values and validity mask (either may be
/// absent: no values means all empty, no mask means all set).
fn optional<T: numpy::Element + Copy>(
    name: &str,
    values: Option<PyReadonlyArray1<'_, T>>,
    valid: Option<PyReadonlyArray1<'_, bool>>,
    n: usize,
    source: &str,
) -> PyResult<Vec<Option<T>>> {
    let bad_len = |field: String, len: usize| {
        value_error(format!(
            "{source}:0: {field}: has {len} rows but coflow_id has {n}"
        ))
    };
    let Some(values) = values else {
        return Ok(vec![None; n]);
    };
    let values = values.as_array();
    if values.len() != n {
        return Err(bad_len(name.to_string(), values.len()));
    }
    match valid {
        None => Ok(values.iter().map(|&v| Some(v)).collect()),
        Some(valid) => {
            let valid = valid.as_array();
            if valid.len() != n {
                return Err(bad_len(format!("{name}_valid"), valid.len()));
            }
            Ok(values
                .iter()
                .zip(valid.iter())
                .map(|(&v, &ok)| ok.then_some(v))
                .collect())
        }
    }
}

/// The `kind` column from uint8 codes (0 net, 1 compute; all net when absent).
fn kinds(
    codes: Option<PyReadonlyArray1<'_, u8>>,
    n: usize,
    source: &str,
) -> PyResult<Vec<FlowKind>> {
    defaulted("kind", codes, 0, n, source)?
        .into_iter()
        .enumerate()
        .map(|(i, c)| match c {
            0 => Ok(FlowKind::Net),
            1 => Ok(FlowKind::Compute),
            other => Err(value_error(format!(
                "{source}:{}: kind: code {other} is not a flow kind (0 net, 1 compute)",
                i + 1
            ))),
        })
        .collect()
}

/// The `parents` text column from offsets and bytes (all empty when absent).
fn parents(
    offsets: Option<PyReadonlyArray1<'_, i64>>,
    data: Option<PyReadonlyArray1<'_, u8>>,
    n: usize,
    source: &str,
) -> PyResult<TextColumn> {
    let Some(offsets) = offsets else {
        return Ok(TextColumn::empty_rows(n));
    };
    let offsets = offsets.as_array();
    if offsets.len() != n + 1 {
        return Err(value_error(format!(
            "{source}:0: parents_offsets: has {} entries, expected rows + 1 = {}",
            offsets.len(),
            n + 1
        )));
    }
    let offsets = offsets
        .iter()
        .enumerate()
        .map(|(i, &o)| {
            u64::try_from(o)
                .map_err(|_| value_error(format!("{source}:{i}: parents_offsets: {o} is negative")))
        })
        .collect::<PyResult<Vec<u64>>>()?;
    let data = data.map(|d| required(&d)).unwrap_or_default();
    TextColumn::from_parts(offsets, data)
        .map_err(|(row, m)| value_error(format!("{source}:{row}: parents: {m}")))
}

/// Builds a workload from native columns (numpy arrays of the exact dtypes
/// `Workload.columns()` returns; every column but the first five may be
/// left out and takes its default). Errors name `source`, the 1-based row
/// and the column. `n_hosts` defaults to the largest host + 1.
#[pyfunction]
#[pyo3(signature = (
    coflow_id, arrival_ns, src, dst, bytes,
    job_id = None, stage_id = None, deadline_ns = None,
    job_id_valid = None, stage_id_valid = None, deadline_ns_valid = None,
    kind = None, group = None, after = None, after_valid = None, delay_ns = None,
    flow_deadline_ns = None, flow_deadline_ns_valid = None, size_known = None,
    parents_offsets = None, parents_data = None,
    n_hosts = None, source = "<columns>"
))]
#[allow(clippy::too_many_arguments)]
pub fn workload_from_columns(
    py: Python<'_>,
    coflow_id: PyReadonlyArray1<'_, u64>,
    arrival_ns: PyReadonlyArray1<'_, u64>,
    src: PyReadonlyArray1<'_, u32>,
    dst: PyReadonlyArray1<'_, u32>,
    bytes: PyReadonlyArray1<'_, u64>,
    job_id: Option<PyReadonlyArray1<'_, u64>>,
    stage_id: Option<PyReadonlyArray1<'_, u32>>,
    deadline_ns: Option<PyReadonlyArray1<'_, u64>>,
    job_id_valid: Option<PyReadonlyArray1<'_, bool>>,
    stage_id_valid: Option<PyReadonlyArray1<'_, bool>>,
    deadline_ns_valid: Option<PyReadonlyArray1<'_, bool>>,
    kind: Option<PyReadonlyArray1<'_, u8>>,
    group: Option<PyReadonlyArray1<'_, u32>>,
    after: Option<PyReadonlyArray1<'_, u32>>,
    after_valid: Option<PyReadonlyArray1<'_, bool>>,
    delay_ns: Option<PyReadonlyArray1<'_, u64>>,
    flow_deadline_ns: Option<PyReadonlyArray1<'_, u64>>,
    flow_deadline_ns_valid: Option<PyReadonlyArray1<'_, bool>>,
    size_known: Option<PyReadonlyArray1<'_, bool>>,
    parents_offsets: Option<PyReadonlyArray1<'_, i64>>,
    parents_data: Option<PyReadonlyArray1<'_, u8>>,
    n_hosts: Option<u32>,
    source: &str,
) -> PyResult<PyWorkload> {
    let n = coflow_id.len()?;
    let cols = FlowColumns {
        coflow_id: required(&coflow_id),
        arrival_ns: required(&arrival_ns),
        src: required(&src),
        dst: required(&dst),
        bytes: required(&bytes),
        job_id: optional("job_id", job_id, job_id_valid, n, source)?,
        stage_id: optional("stage_id", stage_id, stage_id_valid, n, source)?,
        deadline_ns: optional("deadline_ns", deadline_ns, deadline_ns_valid, n, source)?,
        kind: kinds(kind, n, source)?,
        group: defaulted("group", group, 0, n, source)?,
        after: optional("after", after, after_valid, n, source)?,
        delay_ns: defaulted("delay_ns", delay_ns, 0, n, source)?,
        flow_deadline_ns: optional(
            "flow_deadline_ns",
            flow_deadline_ns,
            flow_deadline_ns_valid,
            n,
            source,
        )?,
        size_known: defaulted("size_known", size_known, true, n, source)?,
        parents: parents(parents_offsets, parents_data, n, source)?,
    };
    let inner = py
        .detach(|| cols.into_workload(n_hosts, source))
        .map_err(trace_error)?;
    Ok(PyWorkload {
        inner,
        source: source.to_string(),
    })
}

/// A count parameter from Python, checked (names the field).
fn count<T: TryFrom<i64>>(field: &str, v: i64, min: i64) -> PyResult<T> {
    if v < min {
        return Err(value_error(format!(
            "{field}: must be at least {min}, got {v}"
        )));
    }
    T::try_from(v).map_err(|_| value_error(format!("{field}: {v} is too large")))
}

/// Generates the embedded synthetic workload (FB2010-like bin mix at a
/// target offered load); deterministic for a seed. Parameters left as None
/// take the defaults of `synth_defaults()`. `mix` is the SN, LN, SW, LW
/// shares by count.
#[pyfunction]
#[pyo3(signature = (n_hosts = None, n_coflows = None, load = None, seed = None, capacity_bps = None, mix = None))]
pub fn synthetic(
    py: Python<'_>,
    n_hosts: Option<i64>,
    n_coflows: Option<i64>,
    load: Option<f64>,
    seed: Option<i64>,
    capacity_bps: Option<f64>,
    mix: Option<[f64; 4]>,
) -> PyResult<PyWorkload> {
    let d = SynthConfig::default();
    let config = SynthConfig {
        n_hosts: n_hosts
            .map(|v| count("n_hosts", v, 1))
            .transpose()?
            .unwrap_or(d.n_hosts),
        n_coflows: n_coflows
            .map(|v| count("n_coflows", v, 0))
            .transpose()?
            .unwrap_or(d.n_coflows),
        load: load.unwrap_or(d.load),
        capacity_bps: capacity_bps.map_or(d.capacity_bps, BitsPerSec),
        seed: seed
            .map(|v| count("seed", v, 0))
            .transpose()?
            .unwrap_or(d.seed),
        mix: mix.unwrap_or(d.mix),
        ..d
    };
    config.validate().map_err(value_error)?;
    let source = format!(
        "synthetic(n_hosts={}, n_coflows={}, load={}, seed={}, capacity_bps={})",
        config.n_hosts, config.n_coflows, config.load, config.seed, config.capacity_bps.0
    );
    let inner = py.detach(|| generate(&config));
    Ok(PyWorkload { inner, source })
}

/// The defaults of `synthetic()` (the embedded workload), as a dict.
#[pyfunction]
pub fn synth_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let c = SynthConfig::default();
    let d = PyDict::new(py);
    d.set_item("n_hosts", c.n_hosts)?;
    d.set_item("n_coflows", c.n_coflows)?;
    d.set_item("load", c.load)?;
    d.set_item("seed", c.seed)?;
    d.set_item("capacity_bps", c.capacity_bps.0)?;
    d.set_item("mix", c.mix.to_vec())?;
    Ok(d)
}

/// Generates workload `name` (see `generators()`) from `preset` (default:
/// the generator's first) with `params`, `(name, value)` pairs of text set
/// in order. Raises `ValueError` naming an unknown workload, preset or
/// parameter (listing the valid ones) or a bad value.
#[pyfunction]
#[pyo3(signature = (name, preset = None, params = Vec::new()))]
pub fn generate_workload(
    py: Python<'_>,
    name: &str,
    preset: Option<&str>,
    params: Vec<(String, String)>,
) -> PyResult<PyWorkload> {
    let info = registry::find(name).map_err(value_error)?;
    let pairs: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let config = info.configure(preset, &pairs).map_err(value_error)?;
    let mut source = format!("{name}(preset={}", preset.unwrap_or(info.presets[0].0));
    for (k, v) in &params {
        source.push_str(&format!(", {k}={v}"));
    }
    source.push(')');
    let inner = py.detach(|| config.run());
    Ok(PyWorkload { inner, source })
}

/// Checks generator `name` in `preset` with `params` (as for
/// `generate_workload`) without generating: raises the `ValueError` that
/// generating would (unknown workload, preset or parameter, a bad value, a
/// configuration that does not hold together).
#[pyfunction]
#[pyo3(signature = (name, preset = None, params = Vec::new()))]
pub fn check_generator(
    name: &str,
    preset: Option<&str>,
    params: Vec<(String, String)>,
) -> PyResult<()> {
    let info = registry::find(name).map_err(value_error)?;
    let pairs: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    info.configure(preset, &pairs).map_err(value_error)?;
    Ok(())
}

/// Every generator: a dict with `name`, `about`, `source` (paper and
/// section), `presets` (list of `(name, about)`, the first the default) and
/// `params` (list of `(name, default, doc)` in the default preset).
#[pyfunction]
pub fn generators(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for g in GENERATORS {
        let d = PyDict::new(py);
        d.set_item("name", g.name)?;
        d.set_item("about", g.about)?;
        d.set_item("source", g.source)?;
        d.set_item("presets", g.presets.to_vec())?;
        let params: Vec<(&str, String, &str)> = g
            .describe(None)
            .map_err(value_error)?
            .into_iter()
            .map(|p| (p.name, p.value, p.doc))
            .collect();
        d.set_item("params", params)?;
        out.append(d)?;
    }
    Ok(out)
}

/// The parameters of generator `name` in `preset`: `(name, value, doc)`.
#[pyfunction]
#[pyo3(signature = (name, preset = None))]
pub fn generator_params(
    name: &str,
    preset: Option<&str>,
) -> PyResult<Vec<(&'static str, String, &'static str)>> {
    let info = registry::find(name).map_err(value_error)?;
    Ok(info
        .describe(preset)
        .map_err(value_error)?
        .into_iter()
        .map(|p| (p.name, p.value, p.doc))
        .collect())
}
