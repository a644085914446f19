"""Experiment files: a declared grid of simulations, checked at the door.

An experiment file (TOML or YAML) names a workload (a generator with its
parameters, or a trace), a fabric, the schedulers with their parameters, the
values to sweep, the number of seeds and the metrics to report. It is read
once into a checked :class:`Experiment` (``load_experiment``); everything
after that trusts it. :meth:`Experiment.points` expands the grid into
:class:`Point` s, one simulation each::

    name = "loads"
    seed = 1                      # the experiment's seed
    seeds = 3                     # replicates of every workload
    baseline = "fair"             # improvements are relative to it
    schedulers = ["fair", "varys", { spec = "fifo-lm", sweep = { threshold = ["p50", "p90"] } }]
    metrics = ["improvement_mean", "improvement_p95"]

    [workload]
    generator = "coflow-benchmark"   # or: trace = "FB2010-1Hr-150-0.txt"
    preset = "aalo"
    n_coflows = 200                  # any parameter of the generator
    sweep = { load = [0.2, 0.4, 0.6, 0.8, 1.0] }

    [topology]                       # or: topology = "fat-tree:k=4"; default a big switch
    spec = "tree:pods=2,racks=4,hosts=8"
    sweep = { tor_oversub = [1, 2, 4] }

    [plot]
    at = { load = 0.8 }              # the slice of the CDF and the bar figures

The grid. Every sweep is an *axis*, named by where it sits:
``workload.<param>``, ``topology.<param>`` or ``scheduler.<param>``. A
*workload cell* is one combination of the workload axes' values and one
replicate (``0 .. seeds-1``); every scheduler (and every value of its own
axes) runs on every workload cell and every topology value, so comparisons
against the baseline are paired: the baseline and the scheme see the same
coflows.

Seeds. A workload cell's generator seed is derived from the experiment's
``seed``, the replicate number and the cell's values on the workload axes
(a hash, :func:`derive_seed`): never from the order points run in, where
they run, or the position of the cell in the file, so a point's result is
the same on one core or a cluster, and adding a value to an axis leaves
the other points (and the results already stored for them) untouched. With
``common_seeds = true`` the seed comes from the replicate alone: every cell
of a replicate draws from the same seed (common random numbers), so a curve
against a workload parameter compares the same draws at each value.

Identity. A point's ``key`` is a hash of what determines its result: the
workload (generator, preset and every parameter including the derived
seed, or the trace path as written), the topology spec and the scheduler
spec. The result store files results under that key, so a re-run finds
what is already done.

Errors. A bad file raises :class:`ExperimentError`, one line that names the
file and the key: ``loads.toml: workload.sweep.load[2]: coflow-benchmark:
load: must be a positive finite number, got -1``; syntax errors give the
line and column.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core
from ..sim import ENGINES as ENGINES_OF_SIM
from ..sim import check_decomposed_run

__all__ = [
    "METRICS",
    "Axis",
    "Experiment",
    "ExperimentError",
    "Point",
    "SchedulerEntry",
    "derive_seed",
    "load_experiment",
    "parse_experiment",
]

#: Metrics an experiment may report (``metrics = [...]``), with what they are.
METRICS: dict[str, str] = {
    "improvement_mean": "baseline mean CCT / scheme mean CCT (above 1 is better)",
    "improvement_p95": "baseline p95 CCT / scheme p95 CCT",
    "normalized_mean": "scheme mean CCT / baseline mean CCT (below 1 is better)",
    "normalized_p95": "scheme p95 CCT / baseline p95 CCT",
    "cct_mean": "mean coflow completion time (s)",
    "cct_median": "median coflow completion time (s)",
    "cct_p95": "95th percentile coflow completion time (s)",
    "cct_p99": "99th percentile coflow completion time (s)",
    "fct_mean": "mean flow completion time (s)",
    "fct_p99": "99th percentile flow completion time (s)",
    "slowdown_mean": "mean flow slowdown",
    "slowdown_p99": "99th percentile flow slowdown",
    "jct_mean": "mean job completion time (s)",
    "coflow_deadline_miss_rate": "share of coflows with a deadline that missed it",
    "flow_deadline_miss_rate": "share of flows with a deadline that missed it",
    "fct_no_deadline_mean": "mean FCT of flows without a deadline (Karuna types 2 and 3, s)",
    "fct_no_deadline_p95": "95th percentile FCT of flows without a deadline (s)",
    "fct_short_no_deadline_mean": "mean FCT of flows without a deadline under 100 KB (s)",
    "fct_short_no_deadline_p95": "95th percentile FCT of flows without a deadline under 100 KB (s)",
}
#: What happens to a flow unfinished at its deadline (``missed = ...``; the first is the default).
MISSED = ("finish", "drop")
DEFAULT_METRICS = ["improvement_mean", "improvement_p95"]
#: What a bar figure shows per bin.
BARS = ("improvement", "normalized")

_TOP_KEYS = (
    "name",
    "description",
    "seed",
    "seeds",
    "common_seeds",
    "baseline",
    "schedulers",
    "workload",
    "topology",
    "metrics",
    "plot",
    "grid",
    "bins",
    "missed",
    "engine",
    "packet",
    "decompose",
    "link_tasks",
)
#: The simulators a file may name (``engine = ...``; the first is the default).
ENGINES = ENGINES_OF_SIM
#: How the workload and topology axes combine into cells.
GRIDS = ("product", "one-at-a-time")
#: The bins of summaries when a file names none (Aalo 7.1, the core's): short below 5 MiB, narrow up to 50 flows.
DEFAULT_BINS = {"short_below": 5 * 2**20, "narrow_up_to": 50}
_WORKLOAD_KEYS = ("generator", "preset", "trace", "sweep")
_SCHEDULER_KEYS = ("spec", "label", "sweep", "packet")
_TOPOLOGY_KEYS = ("spec", "sweep")
_PLOT_KEYS = ("at", "bars", "labels", "ticks")
_BINS_KEYS = ("short_below", "narrow_up_to")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_TOPOLOGY_FILE = (".toml", ".yaml", ".yml")
#: What the embedded workload is (as `coflowkit generate default`).
_DEFAULT_WORKLOAD = ("coflow-benchmark", "aalo")

Value = bool | int | float | str


class ExperimentError(ValueError):
    """A bad experiment file: one line naming the file and the key."""


@dataclass(frozen=True)
class Axis:
    """One swept parameter: ``name`` is ``workload.<p>``, ``topology.<p>`` or ``scheduler.<p>``."""

    name: str
    values: tuple[Value, ...]

    @property
    def param(self) -> str:
        """The parameter's own name (``load`` for ``workload.load``)."""
        return self.name.split(".", 1)[1]

    @property
    def part(self) -> str:
        """``workload``, ``topology`` or ``scheduler``."""
        return self.name.split(".", 1)[0]


@dataclass(frozen=True)
class SchedulerEntry:
    """A scheduler as declared: its spec as written, its label and its own axes."""

    spec: str
    label: str
    axes: tuple[Axis, ...] = ()
    #: The packet engine's options for this entry (``key=value,...``), over the file's ``packet``.
    packet: str = ""

    def specs(self) -> list[tuple[str, dict[str, Value]]]:
        """Every full spec with the values of this entry's axes."""
        return [(_with_params(self.spec, ":", ";", combo), combo) for combo in _combos(self.axes)]


@dataclass(frozen=True)
class Point:
    """One simulation of the grid: a workload cell, a topology, a scheduler spec."""

    #: Position in the expanded grid (file order); for display only.
    index: int
    #: Hash of what determines the result (see the module doc).
    key: str
    #: Hash of the workload cell and topology: points that share it are paired.
    cell: str
    #: The scheduler entry's label.
    label: str
    #: The full scheduler spec.
    scheduler: str
    #: Replicate number, 0 .. seeds-1.
    replicate: int
    #: The derived generator seed (None for a trace).
    seed: int | None
    #: Value on each axis this point has (axis name -> value).
    coords: dict[str, Value]
    #: What determines the result (hashed into ``key``).
    config: dict[str, Any]
    #: What a worker needs: ``config`` with paths resolved.
    task: dict[str, Any] = field(repr=False)

    def metadata(self, experiment: Experiment) -> dict[str, Any]:
        """The full configuration of this point, as stored with its result."""
        return {
            "experiment": experiment.name,
            "experiment_file": str(experiment.path),
            "experiment_seed": experiment.seed,
            "label": self.label,
            "replicate": self.replicate,
            "coords": self.coords,
            **self.config,
            "resolved": {k: v for k, v in self.task.items() if k.endswith("_path")},
        }


@dataclass(frozen=True)
class Experiment:
    """A checked experiment file."""

    path: Path
    name: str
    description: str
    seed: int
    n_seeds: int
    #: Seeds from the replicate alone (the same draws in every cell of a replicate).
    common_seeds: bool
    baseline: str
    schedulers: tuple[SchedulerEntry, ...]
    #: ``generator``, ``preset``, ``params`` (name -> value) or ``trace`` (as written) and ``trace_path``.
    workload: dict[str, Any]
    workload_axes: tuple[Axis, ...]
    topology: str | None
    topology_axes: tuple[Axis, ...]
    metrics: tuple[str, ...]
    #: ``at`` (axis name -> value), ``bars``, ``labels`` (axis name -> text),
    #: ``ticks`` (axis name -> {value as text -> tick text}).
    plot: dict[str, Any]
    #: The file's text, kept with the results.
    text: str = field(repr=False)
    #: ``product`` (every combination of the workload and topology axes) or
    #: ``one-at-a-time`` (the center ``plot.at``, and each axis varied alone around it).
    grid: str = "product"
    #: How coflows are binned in summaries: ``short_below`` (bytes) and ``narrow_up_to`` (flows).
    bins: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_BINS))
    #: What happens to a flow unfinished at its deadline: ``finish`` or ``drop``.
    missed: str = "finish"
    #: The simulator: ``flow`` (the exact fluid engine) or ``packet`` (docs/packet-engine.md).
    engine: str = "flow"
    #: The packet engine's options for every point (``key=value,...``); each scheduler entry's own
    #: ``packet`` adds to them (its keys win).
    packet: str = ""
    #: The decomposed engine's own options (``cluster=...,combine=...``; docs/decomposed-engine.md).
    decompose: str = ""
    #: The decomposed engine: how many tasks each point's link simulations are split into (Dask
    #: tasks on a cluster, threads locally); the results do not depend on it.
    link_tasks: int = 1

    def packet_options(self, entry: SchedulerEntry) -> str:
        """The packet engine's options of ``entry``'s points: the file's, then the entry's."""
        return ",".join(o for o in (self.packet, entry.packet) if o)

    @property
    def labels(self) -> list[str]:
        """The schedulers' labels, in file order (the baseline included)."""
        return [s.label for s in self.schedulers]

    def axes(self) -> list[Axis]:
        """Every axis: workload, topology, then scheduler axes (values merged by name)."""
        out = [*self.workload_axes, *self.topology_axes]
        merged: dict[str, list[Value]] = {}
        for entry in self.schedulers:
            for axis in entry.axes:
                values = merged.setdefault(axis.name, [])
                values.extend(v for v in axis.values if v not in values)
        out.extend(Axis(name, tuple(values)) for name, values in merged.items())
        return out

    def cells(self) -> list[tuple[dict[str, Value], int, dict[str, Value]]]:
        """Every (workload values, replicate, topology values) of the grid, in run order.

        ``product``: every combination, the first axis slowest. ``one-at-a-time``:
        the center (each axis at its ``plot.at`` value), then each axis's other
        values with every other axis at the center; the figures' slices are
        exactly these cells."""
        if self.grid == "product":
            return [
                (w, r, t)
                for w in _combos(self.workload_axes)
                for r in range(self.n_seeds)
                for t in _combos(self.topology_axes)
            ]
        at = self.plot["at"]
        center = {a.name: at[a.name] for a in (*self.workload_axes, *self.topology_axes)}
        stars = [center]
        for axis in (*self.workload_axes, *self.topology_axes):
            stars += [{**center, axis.name: v} for v in axis.values if v != center[axis.name]]

        def part(values: dict[str, Value], prefix: str) -> dict[str, Value]:
            return {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith(prefix)}

        return [(part(c, "workload."), r, part(c, "topology.")) for c in stars for r in range(self.n_seeds)]

    def points(self) -> list[Point]:
        """The expanded grid, workload cell by workload cell (schedulers of a cell together)."""
        points: list[Point] = []
        seen: dict[str, int] = {}
        trace = self.workload.get("trace")
        for w_combo, replicate, t_combo in self.cells():
            if trace is None:
                seed = derive_seed(self.seed, replicate, {} if self.common_seeds else w_combo)
                params = {**self.workload["params"], **w_combo, "seed": seed}
                workload = {"generator": self.workload["generator"], "preset": self.workload["preset"]}
                config_w = {**workload, "params": params}
                task_w = {**workload, "params": [(k, _param_text(v)) for k, v in params.items()]}
                task_extra = {}
            else:
                seed = None
                config_w = {"trace": trace}
                task_w = {"trace": trace}
                task_extra = {"trace_path": str(self.workload["trace_path"])}
            topology = None if self.topology is None else _with_params(self.topology, ":", ",", t_combo)
            if topology is not None and _is_file(topology):
                task_extra["topology_path"] = str(_resolve(self.path, topology))
            cell = _hash({"workload": config_w, "topology": topology})
            for entry in self.schedulers:
                for spec, s_combo in entry.specs():
                    config = {"workload": config_w, "topology": topology, "scheduler": spec}
                    if self.missed != MISSED[0]:
                        # Only when not the default, so that older stores keep their keys.
                        config["missed"] = self.missed
                    if self.engine != ENGINES[0]:
                        config["engine"] = self.engine
                        config["packet"] = self.packet_options(entry)
                    if self.decompose:
                        # Only when given, so that older stores keep their keys.
                        config["decompose"] = self.decompose
                    key = _hash(config)
                    if key in seen:
                        raise ExperimentError(
                            f"{self.path}: schedulers: points {seen[key]} and {len(points)} are the same "
                            f"simulation ({spec} on one workload and topology); give each once"
                        )
                    seen[key] = len(points)
                    coords = {
                        **{f"workload.{k}": v for k, v in w_combo.items()},
                        **{f"topology.{k}": v for k, v in t_combo.items()},
                        **{f"scheduler.{k}": v for k, v in s_combo.items()},
                    }
                    task = {
                        "workload": task_w,
                        "topology": task_extra.get("topology_path", topology),
                        "scheduler": spec,
                        "missed": self.missed,
                        **({"engine": self.engine, "packet": config["packet"]} if "engine" in config else {}),
                        **({"decompose": self.decompose, "link_tasks": self.link_tasks} if self.engine == "decomposed" else {}),
                        **task_extra,
                    }
                    points.append(
                        Point(
                            index=len(points),
                            key=key,
                            cell=cell,
                            label=entry.label,
                            scheduler=spec,
                            replicate=replicate,
                            seed=seed,
                            coords=coords,
                            config=config,
                            task=task,
                        )
                    )
        return points

    def to_json(self) -> dict[str, Any]:
        """What plots and reports need, without re-reading the file."""
        return {
            "name": self.name,
            "description": self.description,
            "file": str(self.path),
            "seed": self.seed,
            "seeds": self.n_seeds,
            "common_seeds": self.common_seeds,
            "baseline": self.baseline,
            "labels": self.labels,
            "schedulers": [
                {"spec": s.spec, "label": s.label, "axes": [a.name for a in s.axes], "packet": s.packet}
                for s in self.schedulers
            ],
            "workload": {k: v for k, v in self.workload.items() if k != "trace_path"},
            "topology": self.topology,
            "axes": [{"name": a.name, "values": list(a.values)} for a in self.axes()],
            "metrics": list(self.metrics),
            "plot": self.plot,
            "grid": self.grid,
            "bins": self.bins,
            "missed": self.missed,
            "engine": self.engine,
            "packet": self.packet,
            "decompose": self.decompose,
            "link_tasks": self.link_tasks,
        }


def derive_seed(experiment_seed: int, replicate: int, coords: Mapping[str, Value]) -> int:
    """The generator seed of a workload cell: a 63-bit hash of the experiment's
    seed, the replicate number and the cell's workload-axis values."""
    text = json.dumps([experiment_seed, replicate, sorted(coords.items())], separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def load_experiment(path: str | os.PathLike[str]) -> Experiment:
    """Read and check an experiment file (``.toml``, ``.yaml`` or ``.yml``)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise ExperimentError(f"{p}: an experiment file is .toml, .yaml or .yml, not {p.suffix!r}")
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{p}: No such file or directory") from None
    except UnicodeDecodeError as e:
        raise ExperimentError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return parse_experiment(text, p)


def parse_experiment(text: str, path: Path) -> Experiment:
    """Check the text of an experiment file; ``path`` names it (and anchors relative paths)."""
    raw = _parse_text(text, path)
    return _Checker(path).experiment(raw, text)


def _parse_text(text: str, path: Path) -> dict[str, Any]:
    if path.suffix.lower() == ".toml":
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            msg = str(e)
            m = re.search(r"^(.*) \(at line (\d+), column (\d+)\)$", msg)
            if m:
                raise ExperimentError(f"{path}:{m.group(2)}:{m.group(3)}: {m.group(1)}") from None
            raise ExperimentError(f"{path}: {msg}") from None
    else:
        import yaml

        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            problem = getattr(e, "problem", None) or str(e)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
            raise ExperimentError(f"{where}: {' '.join(problem.split())}") from None
        if raw is None:
            raw = {}
    if not isinstance(raw, dict):
        raise ExperimentError(f"{path}: the file must be a table of keys (name, schedulers, workload, ...)")
    return raw


class _Checker:
    """Reads the raw value tree into an Experiment; every error names the key."""

    def __init__(self, path: Path):
        #: The file's engine, read first: it says what a scheduler spec may name.
        self.engine = ENGINES[0]
        self.path = path

    def fail(self, key: str, message: str) -> ExperimentError:
        return ExperimentError(f"{self.path}: {key}: {message}")

    def table(self, raw: Any, key: str, known: Iterable[str] | None) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise self.fail(key, f"expected a table, got {_kind(raw)}")
        for k in raw:
            if not isinstance(k, str):
                raise self.fail(key, f"key {k!r} is not text")
        if known is not None:
            known = tuple(known)
            for k in raw:
                if k not in known:
                    raise self.fail(_join(key, k), f"unknown key (known: {', '.join(known)})")
        return raw

    def integer(self, raw: Any, key: str, minimum: int) -> int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise self.fail(key, f"expected a whole number, got {_kind(raw)}")
        if raw < minimum:
            raise self.fail(key, f"must be at least {minimum}, got {raw}")
        if raw >= 2**63:
            raise self.fail(key, f"{raw} is too large")
        return raw

    def text(self, raw: Any, key: str) -> str:
        if not isinstance(raw, str) or not raw.strip():
            raise self.fail(key, f"expected non-empty text, got {_kind(raw)}")
        return raw.strip()

    def scalar(self, raw: Any, key: str, lists: bool = False) -> Value:
        """A parameter value: a number, a boolean, text, or (with ``lists``) a list of them as text."""
        if isinstance(raw, float) and not math.isfinite(raw):
            raise self.fail(key, f"{raw} is not a finite number")
        if isinstance(raw, bool | int | float | str):
            return raw
        if lists and isinstance(raw, list) and raw:
            return ",".join(_param_text(self.scalar(v, f"{key}[{i}]")) for i, v in enumerate(raw))
        raise self.fail(key, f"expected a number, a boolean or text, got {_kind(raw)}")

    def sweep(self, raw: Any, key: str, part: str, lists: bool) -> tuple[Axis, ...]:
        axes = []
        for param, values in self.table(raw, key, None).items():
            k = _join(key, param)
            if not isinstance(values, list) or not values:
                raise self.fail(k, f"expected a non-empty list of values to sweep, got {_kind(values)}")
            checked = tuple(self.scalar(v, f"{k}[{i}]", lists) for i, v in enumerate(values))
            for i, v in enumerate(checked):
                if checked.index(v) != i:
                    raise self.fail(f"{k}[{i}]", f"{v!r} is given twice")
            axes.append(Axis(f"{part}.{param}", checked))
        return tuple(axes)

    def experiment(self, raw: dict[str, Any], text: str) -> Experiment:
        self.table(raw, "file", _TOP_KEYS)
        name = self.text(raw["name"], "name") if "name" in raw else self.path.stem
        if not _NAME.match(name):
            raise self.fail("name", f"{name!r}: use letters, digits, '.', '_' and '-' (it names the result directory)")
        description = raw.get("description", "")
        if not isinstance(description, str):
            raise self.fail("description", f"expected text, got {_kind(description)}")
        seed = self.integer(raw.get("seed", 1), "seed", 0)
        n_seeds = self.integer(raw.get("seeds", 1), "seeds", 1)
        common_seeds = raw.get("common_seeds", False)
        if not isinstance(common_seeds, bool):
            raise self.fail("common_seeds", f"expected true or false, got {_kind(common_seeds)}")
        engine = raw.get("engine", ENGINES[0])
        if engine not in ENGINES:
            raise self.fail("engine", f"{engine!r} is not one of {', '.join(ENGINES)}")
        self.engine = engine
        packet = self.packet_options(raw.get("packet", ""), "packet")
        if "workload" not in raw:
            raise self.fail("workload", "missing (a generator or a trace to simulate)")
        workload, workload_axes = self.workload(raw["workload"])
        if "trace" in workload and n_seeds != 1:
            raise self.fail("seeds", f"a trace is one workload: seeds must be 1 with workload.trace, got {n_seeds}")
        topology, topology_axes = self.topology(raw.get("topology"))
        if "schedulers" not in raw:
            raise self.fail("schedulers", "missing (a list of scheduler specs, see `coflowkit schedulers`)")
        schedulers = self.schedulers(raw["schedulers"])
        baseline, schedulers = self.baseline(raw.get("baseline"), schedulers)
        metrics = self.metrics(raw.get("metrics", DEFAULT_METRICS))
        grid = raw.get("grid", "product")
        if grid not in GRIDS:
            raise self.fail("grid", f"{grid!r} is not one of {', '.join(GRIDS)}")
        bins = self.bins(raw.get("bins", {}))
        missed = raw.get("missed", MISSED[0])
        if missed not in MISSED:
            raise self.fail("missed", f"{missed!r} is not one of {', '.join(MISSED)}")
        if engine != "flow" and missed != MISSED[0]:
            raise self.fail("missed", f"{missed!r}: dropping late flows is an option of the flow-level engine")
        decompose = raw.get("decompose", "")
        if not isinstance(decompose, str):
            raise self.fail("decompose", f"expected text like 'cluster=2000,combine=max', got {_kind(decompose)}")
        link_tasks = self.integer(raw.get("link_tasks", 1), "link_tasks", 1)
        for key, given in (("decompose", decompose != ""), ("link_tasks", "link_tasks" in raw)):
            if given and engine != "decomposed":
                raise self.fail(key, 'an option of the decomposed engine: set engine = "decomposed"')
        try:
            _core.check_decomposed_options(decompose)
        except ValueError as e:
            raise self.fail("decompose", _one_line(e)) from None
        exp = Experiment(
            missed=missed,
            engine=engine,
            packet=packet,
            decompose=decompose,
            link_tasks=link_tasks,
            path=self.path,
            name=name,
            description=description.strip(),
            seed=seed,
            n_seeds=n_seeds,
            common_seeds=common_seeds,
            baseline=baseline,
            schedulers=tuple(schedulers),
            workload=workload,
            workload_axes=workload_axes,
            topology=topology,
            topology_axes=topology_axes,
            metrics=tuple(metrics),
            plot={},
            text=text,
            grid=grid,
            bins=bins,
        )
        plot = self.plot(raw.get("plot", {}), exp.axes())
        exp = dataclasses.replace(exp, plot=plot)
        exp.points()  # duplicate simulations are an error of the file
        return exp

    def workload(self, raw: Any) -> tuple[dict[str, Any], tuple[Axis, ...]]:
        if isinstance(raw, str):
            raw = {"generator": raw}
        t = self.table(raw, "workload", None)
        if "trace" in t:
            if "generator" in t or "preset" in t:
                raise self.fail("workload.trace", "give a trace or a generator, not both")
            extra = [k for k in t if k != "trace"]
            if extra:
                raise self.fail(_join("workload", extra[0]), "a trace has no parameters (sweeps need a generator)")
            trace = self.text(t["trace"], "workload.trace")
            path = _resolve(self.path, trace)
            if not path.is_file():
                raise self.fail("workload.trace", f"{path}: no such file")
            if path.suffix.lower() not in (".txt", ".csv", ".parquet"):
                raise self.fail("workload.trace", f"{trace}: a trace is .txt, .csv or .parquet")
            return {"trace": trace, "trace_path": path}, ()
        if "generator" not in t:
            raise self.fail("workload", "give generator = NAME (see `coflowkit generate --help`) or trace = PATH")
        generator = self.text(t["generator"], "workload.generator")
        preset = self.text(t["preset"], "workload.preset") if "preset" in t else None
        if generator == "default":
            if preset not in (None, _DEFAULT_WORKLOAD[1]):
                raise self.fail("workload.preset", "'default' is coflow-benchmark with preset aalo")
            generator, preset = _DEFAULT_WORKLOAD
        known = {g["name"]: g for g in _core.generators()}
        if generator not in known:
            raise self.fail("workload.generator", f"unknown workload {generator!r} (workloads: {', '.join(known)})")
        presets = [p for p, _ in known[generator]["presets"]]
        if preset is None:
            preset = presets[0]
        elif preset not in presets:
            raise self.fail("workload.preset", f"{generator} has no preset {preset!r} (presets: {', '.join(presets)})")
        params = {}
        for k, v in t.items():
            if k in _WORKLOAD_KEYS:
                continue
            if k == "seed":
                raise self.fail("workload.seed", "the generator's seed is derived per point: set `seed` at the top")
            params[k] = self.scalar(v, f"workload.{k}", lists=True)
        # Together: parameters depend on each other (n_hosts and the mix of wide coflows).
        self.check_generator(generator, preset, params, "workload", named=params)
        axes = self.sweep(t.get("sweep", {}), "workload.sweep", "workload", lists=True)
        for axis in axes:
            if axis.param == "seed":
                raise self.fail("workload.sweep.seed", "sweep replicates with `seeds = N` at the top")
            if axis.param in params:
                raise self.fail(f"workload.sweep.{axis.param}", f"also set as workload.{axis.param}: give it once")
            for i, v in enumerate(axis.values):
                self.check_generator(generator, preset, {**params, axis.param: v}, f"workload.sweep.{axis.param}[{i}]")
        for combo in _combos(axes):
            self.check_generator(generator, preset, {**params, **combo}, "workload", combo)
        return {"generator": generator, "preset": preset, "params": params}, axes

    def check_generator(
        self,
        name: str,
        preset: str,
        params: dict[str, Value],
        key: str,
        combo: dict[str, Value] | None = None,
        named: dict[str, Value] | None = None,
    ) -> None:
        """Check a generator's parameters in the core; the error names ``key``, or
        ``workload.<param>`` when the core names one of ``named``."""
        try:
            _core.check_generator(name, preset, [(k, _param_text(v)) for k, v in params.items()])
        except ValueError as e:
            text = _one_line(e)
            # The core says "<generator>: <param>: <message>" or "<generator>: unknown parameter "<param>" ...".
            m = re.match(rf'^{re.escape(name)}: (?:unknown parameter "([^"]+)"|([A-Za-z0-9_]+): )', text)
            param = m and (m.group(1) or m.group(2))
            if named is not None and param in named:
                key = f"workload.{param}"
            where = key if not combo else f"{key} ({', '.join(f'{k}={v}' for k, v in combo.items())})"
            raise self.fail(where, text) from None

    def topology(self, raw: Any) -> tuple[str | None, tuple[Axis, ...]]:
        if raw is None:
            return None, ()
        if isinstance(raw, str):
            raw = {"spec": raw}
        t = self.table(raw, "topology", _TOPOLOGY_KEYS)
        if "spec" not in t:
            raise self.fail("topology.spec", "missing (a spec such as fat-tree:k=4, or a .toml/.yaml file)")
        spec = self.text(t["spec"], "topology.spec")
        axes = self.sweep(t.get("sweep", {}), "topology.sweep", "topology", lists=False)
        if _is_file(spec):
            if axes:
                raise self.fail("topology.sweep", "a topology file cannot be swept; sweep a spec string's parameters")
            path = _resolve(self.path, spec)
            if not path.is_file():
                raise self.fail("topology.spec", f"{path}: no such file")
            self.check_topology(str(path), "topology.spec")
            return spec, ()
        given = _spec_keys(spec, ",")
        for axis in axes:
            if axis.param in given:
                raise self.fail(f"topology.sweep.{axis.param}", f"also set in topology.spec {spec!r}: give it once")
            for i, v in enumerate(axis.values):
                self.check_topology(_with_params(spec, ":", ",", {axis.param: v}), f"topology.sweep.{axis.param}[{i}]")
        for combo in _combos(axes):
            self.check_topology(_with_params(spec, ":", ",", combo), "topology.spec")
        return spec, axes

    def check_topology(self, spec: str, key: str) -> None:
        try:
            _core.topology_info(spec, 1)
        except (ValueError, OSError) as e:
            raise self.fail(key, _one_line(e)) from None

    def schedulers(self, raw: Any) -> list[SchedulerEntry]:
        if isinstance(raw, str):
            raw = [s for s in raw.split(",") if s.strip()]
        if not isinstance(raw, list) or not raw:
            raise self.fail("schedulers", f"expected a non-empty list of scheduler specs, got {_kind(raw)}")
        entries: list[SchedulerEntry] = []
        for i, item in enumerate(raw):
            key = f"schedulers[{i}]"
            if isinstance(item, str):
                item = {"spec": item}
            t = self.table(item, key, _SCHEDULER_KEYS)
            if "spec" not in t:
                raise self.fail(f"{key}.spec", "missing (e.g. 'fair' or 'fifo-lm:threshold=p90')")
            spec = self.text(t["spec"], f"{key}.spec")
            label = self.text(t["label"], f"{key}.label") if "label" in t else spec
            axes = self.sweep(t.get("sweep", {}), f"{key}.sweep", "scheduler", lists=False)
            self.check_scheduler(spec, f"{key}.spec")
            packet = self.packet_options(t.get("packet", ""), f"{key}.packet")
            given = _spec_keys(spec, ";")
            for axis in axes:
                k = f"{key}.sweep.{axis.param}"
                if axis.param in given:
                    raise self.fail(k, f"also set in {key}.spec {spec!r}: give it once")
                for j, v in enumerate(axis.values):
                    self.check_scheduler(_with_params(spec, ":", ";", {axis.param: v}), f"{k}[{j}]")
            entry = SchedulerEntry(spec, label, axes, packet)
            for other in entries:
                if other.label == label:
                    raise self.fail(f"{key}.label" if "label" in t else key, f"{label!r} is given twice")
            entries.append(entry)
        return entries

    def check_scheduler(self, spec: str, key: str) -> None:
        if self.engine != "flow" and spec in _core.packet_transports():
            return  # a transport alone, no scheduler
        try:
            if self.engine == "decomposed":
                check_decomposed_run(spec)
            _core.check_scheduler(spec)
        except ValueError as e:
            raise self.fail(key, _one_line(e)) from None

    def packet_options(self, raw: Any, key: str) -> str:
        """Packet engine options (``key=value,...``, or a table of them), checked by the engine."""
        if isinstance(raw, dict):
            raw = ",".join(f"{k}={_param_text(self.scalar(v, _join(key, k)))}" for k, v in raw.items())
        if not isinstance(raw, str):
            raise self.fail(key, f"expected text like 'buffer=100p,ecn_k=30KB' or a table, got {_kind(raw)}")
        if raw and self.engine == "flow":
            raise self.fail(key, "options of the packet engine: set engine = \"packet\" or \"decomposed\"")
        try:
            _core.check_packet_options(raw)
        except ValueError as e:
            raise self.fail(key, _one_line(e)) from None
        return raw

    def baseline(self, raw: Any, entries: list[SchedulerEntry]) -> tuple[str, list[SchedulerEntry]]:
        if raw is None:
            base = entries[0]
        else:
            text = self.text(raw, "baseline")
            found = [e for e in entries if text in (e.label, e.spec)]
            if found:
                base = found[0]
            else:
                self.check_scheduler(text, "baseline")
                base = SchedulerEntry(text, text)
                entries = [base, *entries]
        if base.axes:
            swept = ", ".join(a.param for a in base.axes)
            raise self.fail("baseline", f"{base.label} sweeps {swept}; the baseline must be one scheduler spec")
        return base.label, entries

    def metrics(self, raw: Any) -> list[str]:
        if not isinstance(raw, list):
            raise self.fail("metrics", f"expected a list of metric names, got {_kind(raw)}")
        out = []
        for i, m in enumerate(raw):
            name = self.text(m, f"metrics[{i}]")
            if name not in METRICS:
                raise self.fail(f"metrics[{i}]", f"unknown metric {name!r} (known: {', '.join(METRICS)})")
            if name in out:
                raise self.fail(f"metrics[{i}]", f"{name!r} is given twice")
            out.append(name)
        return out

    def bins(self, raw: Any) -> dict[str, int]:
        t = self.table(raw, "bins", _BINS_KEYS)
        out = dict(DEFAULT_BINS)
        if "short_below" in t:
            v = t["short_below"]
            if isinstance(v, bool) or not isinstance(v, int | str):
                raise self.fail("bins.short_below", f"expected a size (10MiB, 5MB or bytes), got {_kind(v)}")
            try:
                out["short_below"] = _core.parse_bytes(str(v))
            except ValueError as e:
                raise self.fail("bins.short_below", _one_line(e)) from None
            if out["short_below"] < 1:
                raise self.fail("bins.short_below", "must be at least 1 byte")
        if "narrow_up_to" in t:
            out["narrow_up_to"] = self.integer(t["narrow_up_to"], "bins.narrow_up_to", 1)
        return out

    def plot(self, raw: Any, axes: list[Axis]) -> dict[str, Any]:
        t = self.table(raw, "plot", _PLOT_KEYS)
        at: dict[str, Value] = {}
        for given, value in self.table(t.get("at", {}), "plot.at", None).items():
            axis = _find_axis(axes, given)
            if axis is None:
                names = ", ".join(a.name for a in axes) or "none"
                raise self.fail(f"plot.at.{given}", f"not a swept parameter (axes: {names})")
            if value not in axis.values:
                raise self.fail(f"plot.at.{given}", f"{value!r} is not among the swept values {list(axis.values)}")
            at[axis.name] = value
        for axis in axes:
            # Default slice: the middle value of each axis.
            at.setdefault(axis.name, axis.values[(len(axis.values) - 1) // 2])
        bars = t.get("bars", "improvement")
        if bars not in BARS:
            raise self.fail("plot.bars", f"{bars!r} is not one of {', '.join(BARS)}")
        labels = {}
        for given, text in self.table(t.get("labels", {}), "plot.labels", None).items():
            axis = _find_axis(axes, given)
            if axis is None:
                raise self.fail(f"plot.labels.{given}", "not a swept parameter")
            labels[axis.name] = self.text(text, f"plot.labels.{given}")
        ticks: dict[str, dict[str, str]] = {}
        for given, names in self.table(t.get("ticks", {}), "plot.ticks", None).items():
            axis = _find_axis(axes, given)
            if axis is None:
                raise self.fail(f"plot.ticks.{given}", "not a swept parameter")
            known = {_param_text(v): v for v in axis.values}
            ticks[axis.name] = {}
            for value, text in self.table(names, f"plot.ticks.{given}", None).items():
                if value not in known:
                    raise self.fail(f"plot.ticks.{given}.{value}", f"not among the swept values {list(axis.values)}")
                ticks[axis.name][value] = self.text(text, f"plot.ticks.{given}.{value}")
        return {"at": at, "bars": bars, "labels": labels, "ticks": ticks}


def _find_axis(axes: list[Axis], name: str) -> Axis | None:
    """An axis by its full name, or by its parameter's name when that is unambiguous."""
    full = [a for a in axes if a.name == name]
    if full:
        return full[0]
    short = [a for a in axes if a.param == name]
    return short[0] if len(short) == 1 else None


def _combos(axes: Iterable[Axis]) -> list[dict[str, Value]]:
    """Every combination of the axes' values, the first axis slowest."""
    axes = list(axes)
    return [dict(zip((a.param for a in axes), vs, strict=True)) for vs in itertools.product(*(a.values for a in axes))]


def _with_params(spec: str, colon: str, sep: str, params: Mapping[str, Value]) -> str:
    """``spec`` with ``key=value`` pairs appended (``fifo-lm`` -> ``fifo-lm:threshold=p90``)."""
    if not params:
        return spec
    added = sep.join(f"{k}={_param_text(v)}" for k, v in params.items())
    if colon not in spec:
        return f"{spec}{colon}{added}"
    head, rest = spec.split(colon, 1)
    rest = rest.strip()
    return f"{head}{colon}{rest}{sep}{added}" if rest else f"{head}{colon}{added}"


def _spec_keys(spec: str, sep: str) -> set[str]:
    """The keys a spec string sets (``tree:pods=2,racks=3`` -> {pods, racks})."""
    _, _, rest = spec.partition(":")
    return {kv.split("=", 1)[0].strip() for kv in rest.split(sep) if "=" in kv}


def _param_text(value: Value) -> str:
    """A value as the text the core parses (``True`` -> ``true``, 0.5 -> ``0.5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _is_file(spec: str) -> bool:
    return spec.strip().lower().endswith(_TOPOLOGY_FILE)


def _resolve(experiment: Path, path: str) -> Path:
    """A path from the file: ``~`` and ``$VARS`` expanded, relative to the file's directory."""
    p = Path(os.path.expandvars(os.path.expanduser(path)))
    return p if p.is_absolute() else (experiment.parent / p).resolve()


def _hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _join(key: str, sub: str) -> str:
    return sub if key == "file" else f"{key}.{sub}"


def _kind(raw: Any) -> str:
    if isinstance(raw, bool):
        return f"a boolean ({str(raw).lower()})"
    if isinstance(raw, int | float):
        return f"a number ({raw})"
    if isinstance(raw, str):
        return f"text ({raw!r})"
    if isinstance(raw, list):
        return "a list"
    if isinstance(raw, dict):
        return "a table"
    return type(raw).__name__


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())
