"""coflowkit: a coflow-scheduling simulator with a Rust core.

Load a trace or generate a workload, simulate it under one or more
schedulers, and read the results as pandas (or polars) tables::

    import coflowkit
    w = coflowkit.synthetic(n_coflows=100, seed=7)
    # or any workload of the seed papers (see coflowkit.generators()):
    # w = coflowkit.generate("baraat", seed=1, load=0.8, workflow="single-stage", n_tasks=1000)
    res = coflowkit.simulate(w, ["fair", "varys"], baseline="fair")
    res.summary()            # CCT per scheduler and bin
    res.metrics()            # FCT, slowdown, job completion, deadline misses
    res.compare()            # improvement over the baseline
    res.write("results/")    # CSV and Parquet per scheduler
    coflowkit.simulate(w, "fair", topology="fat-tree:k=8")   # a multi-hop fabric

    # A declared sweep (docs/experiments.md), locally or on a Dask cluster:
    exp = coflowkit.load_experiment("examples/experiments/loads.toml")
    coflowkit.run_experiment(exp, "results/loads")            # cluster="tcp://host:8786"

Real traffic goes through the runtime's client (docs/runtime.md)::

    agent = coflowkit.AgentClient("/run/coflowkit/agent.sock")
    shuffle = agent.register(parents=[])
    with agent.writer(sock, shuffle, dst_host=2) as w:    # sock: a connected TCP socket
        w.sendall(data)                                   # paced, marked, paused as scheduled
    agent.unregister(shuffle)

The simulation itself runs in Rust (``coflowkit._core``) with the GIL
released, several schedulers in parallel threads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _core
from ._core import AgentClient, CoflowWriter, SimulationError, Workload
from .sim import (
    BINS,
    Results,
    generate,
    generators,
    load_trace,
    schedulers,
    simulate,
    synthetic,
    topology_info,
    workload_from_table,
    workload_to_table,
    write_trace,
)

if TYPE_CHECKING:
    from .experiments.experiment import Experiment, ExperimentError, load_experiment
    from .experiments.runner import run_experiment

__version__: str = _core.__version__

# The experiment runner (and the pyarrow it needs) loads on first use, so that
# `import coflowkit` and `coflowkit simulate` do not pay for it.
_LAZY = {
    "Experiment": "experiment",
    "ExperimentError": "experiment",
    "load_experiment": "experiment",
    "run_experiment": "runner",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".experiments.{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "AgentClient",
    "BINS",
    "CoflowWriter",
    "Experiment",
    "ExperimentError",
    "Results",
    "SimulationError",
    "Workload",
    "generate",
    "generators",
    "load_experiment",
    "load_trace",
    "run_experiment",
    "schedulers",
    "simulate",
    "synthetic",
    "topology_info",
    "workload_from_table",
    "workload_to_table",
    "write_trace",
    "__version__",
]
