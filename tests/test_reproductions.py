"""The reproductions' experiment files are valid, and the workload pieces they rely on
mean what the pages say (small cases only: the runs themselves are `make repro-aalo`)."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pandas as pd
import pytest

import coflowkit
from conftest import ROOT

REPRO = ROOT / "examples" / "reproductions"
# Every experiment file; claims.toml is the claims table's declaration (claims.py), not an experiment.
FILES = sorted(p for p in REPRO.rglob("*.toml") if p.name != "claims.toml")
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
    split = coflowkit.generate("multi-wave", stage_as="waves", **params)
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


@pytest.fixture
def karuna_scripts(monkeypatch):
    """The Karuna page's scripts (regenerate.py imports packet.py by name, as baraat's does), taken
    out of sys.modules again afterwards."""
    names = ("regenerate", "packet", "split")
    monkeypatch.syspath_prepend(str(REPRO / "karuna"))
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    regenerate = importlib.import_module("regenerate")
    yield regenerate, importlib.import_module("packet")
    for name in names:
        sys.modules.pop(name, None)


def test_karuna_bursts_group_the_deadline_flows_at_the_same_share(karuna_scripts):
    # Fig. 2's bursts: a Poisson process of queries, each answered by k deadline flows from one
    # sender at one instant with one deadline; burst=1 is the page's Poisson draw unchanged.
    regenerate, _ = karuna_scripts
    one = regenerate.mixed(3, 5000, 0.08, None, n_background=40)
    same = regenerate.mixed(3, 5000, 0.08, None, n_background=40, burst=1)
    for key in ("arrival_ns", "src", "bytes", "flow_deadline_ns"):
        np.testing.assert_array_equal(np.asarray(one.columns()[key]), np.asarray(same.columns()[key]))
    bursty = regenerate.mixed(3, 5000, 0.08, None, n_background=40, burst=8)
    c = bursty.columns()
    is1 = np.asarray(c["flow_deadline_ns_valid"])
    t1 = pd.DataFrame({k: np.asarray(c[k])[is1] for k in ("arrival_ns", "src", "dst", "flow_deadline_ns", "bytes")})
    queries = t1.groupby("arrival_ns")
    assert (queries.size() % 8 == 0).all()
    assert (queries[["src", "dst", "flow_deadline_ns"]].nunique() == 1).all().all()
    assert (t1["bytes"] == 5000).all()
    n_one = int(np.asarray(one.columns()["flow_deadline_ns_valid"]).sum())
    assert len(queries) > 100
    assert abs(len(t1) / n_one - 1) < 0.15  # the same share of the link, within Poisson noise


def test_karuna_edf_over_sjf_classes_on_dctcp(karuna_scripts):
    # EDF over SJF as strict queues: every deadline flow in class 0, the others in karuna's
    # classes by size (class 1 for the short ones, never decreasing with size).
    regenerate, packet = karuna_scripts
    w = regenerate.mixed(1, 5000, 0.04, None, n_background=40)
    c = w.columns()
    classes = np.array(packet.sjf_classes(w))
    is1 = np.asarray(c["flow_deadline_ns_valid"])
    size = np.asarray(c["bytes"])
    assert is1.any() and (classes[is1] == 0).all()
    t2 = ~is1
    assert (classes[t2 & (size < 100_000)] == 1).all()
    assert classes[t2].max() > 1
    order = np.argsort(size[t2], kind="stable")
    assert (np.diff(classes[t2][order]) >= 0).all()


def test_karuna_split_fifo_nic_keeps_no_class_apart(karuna_scripts):
    # Fig. 1's split: with the sender's NIC one FIFO (`host_prio=fifo`) the deadline flows, in the
    # classes of SJF by size, wait behind the background's windows at the sender; with the NIC's own
    # strict classes they do not. And the split's share of a gap closed.
    regenerate, packet = karuna_scripts
    import split

    w = regenerate.mixed(1, 13000, 0.02, 10.0, deadlines=False, n_background=40)
    is1 = np.asarray(regenerate.mixed(1, 13000, 0.02, 10.0, n_background=40).columns()["flow_deadline_ns_valid"])
    queues = packet.Scheme("karuna:split=mining", "karuna:split=mining")
    strict = packet.run_packet(w, queues, packet.TWO_HOSTS)[1]["fct_s"].to_numpy()[is1]
    fifo = packet.run_packet(w, queues, packet.TWO_HOSTS, "host_prio=fifo")[1]["fct_s"].to_numpy()[is1]
    assert is1.sum() > 10
    assert fifo.mean() > 10 * strict.mean()
    assert (fifo > 0.010).any() and not (strict > 0.010).any()
    assert split._closed(10.0, 7.0, 4.0) == "50%"
    assert split._closed(10.0, 12.0, 6.0) == "-50%"
    assert split._closed(5.0, 4.0, 5.0) == "-"
