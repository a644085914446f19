"""The reproductions' experiment files are valid, and the workload pieces they rely on
mean what the pages say (small cases only: the runs themselves are `make repro-aalo`)."""

from __future__ import annotations

import numpy as np
import pytest

import coflowkit
from conftest import ROOT

REPRO = ROOT / "examples" / "reproductions"
FILES = sorted(REPRO.rglob("*.toml"))
TRACE = ROOT.parent / "shared" / "data" / "FB2010-1Hr-150-0.txt"


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(REPRO)) for p in FILES])
def test_experiment_files_validate(path):
    if "trace" in path.read_text() and not TRACE.exists():
        pytest.skip(f"{TRACE} is not here")
    exp = coflowkit.load_experiment(path)
    assert exp.points(), path


def test_there_are_reproduction_files():
    assert {p.stem for p in FILES} >= {"fb2010", "sensitivity", "uniform", "fixed", "dag", "waves"}


def test_waves_as_coflows_finish_each_stage_when_the_whole_coflow_would():
    # Per-flow fairness ignores what a coflow is, and a wave declared as a coflow
    # Starts-After the previous one is released when that wave's flows are done, as
    # the group was: so each stage's job completion time equals the whole coflow's CCT.
    params = {"n_coflows": 30, "n_hosts": 12, "max_waves": 3, "seed": 4}
    whole = coflowkit.generate("multi-wave", **params)
    split = coflowkit.generate("multi-wave", waves_as_coflows=True, **params)
    assert split.n_flows == whole.n_flows
    assert split.n_coflows > whole.n_coflows
    cct = coflowkit.simulate(whole, "fair").coflows("fair").set_index("coflow_id")["cct_s"]
    jobs = coflowkit.simulate(split, "fair").jobs("fair").set_index("job_id")["jct_s"]
    assert len(jobs) == len(cct)
    np.testing.assert_allclose(jobs.loc[cct.index].to_numpy(), cct.to_numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize(("law", "size"), [("uniform", "20MiB"), ("fixed", "11MiB")])
def test_uniform_and_fixed_coflow_sizes(law, size):
    w = coflowkit.generate("coflow-benchmark", n_coflows=40, size_law=law, coflow_size=size)
    coflows = coflowkit.simulate(w, "fair").coflows("fair")
    totals = coflows["total_bytes"].to_numpy()
    limit = 20 << 20 if law == "uniform" else 11 << 20
    assert (coflows["width"] <= limit).all()  # else a flow's 1-byte floor could exceed the total
    assert (totals <= limit).all()
    if law == "fixed":
        assert (totals == limit).all()
    else:
        assert len(set(totals.tolist())) > 30
