"""Experiments: a declared sweep of workloads, fabrics and schedulers
(:mod:`.experiment`), run locally or on a Dask cluster (:mod:`.runner`) into a
result store (:mod:`.store`), then read (:mod:`.analysis`), drawn
(:mod:`.plots`) and written up (:mod:`.report`). See docs/experiments.md.

Plots and reports import matplotlib, so they are not imported here.
"""

from __future__ import annotations

from .experiment import Experiment, ExperimentError, load_experiment
from .runner import run_experiment

__all__ = ["Experiment", "ExperimentError", "load_experiment", "run_experiment"]
