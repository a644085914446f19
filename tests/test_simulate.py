"""Simulations from Python: tables, summaries, comparisons, determinism, threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import coflowkit
from coflowkit import _core


def test_two_schedulers_pandas_and_polars_agree(small: coflowkit.Workload) -> None:
    pl = pytest.importorskip("polars")
    res = coflowkit.simulate(small, ["varys", "fair"], progress=False)
    assert res.schedulers == ["varys", "fair"]
    pd_frame = res.to_pandas()
    pl_frame = res.to_polars()
    assert isinstance(pl_frame, pl.DataFrame)
    assert pl_frame.columns == list(pd_frame.columns)
    assert pl_frame.height == len(pd_frame) == 2 * small.n_coflows
    for col in pd_frame.columns:
        left = pd_frame[col]
        right = pl_frame[col]
        # Nullable columns: the same missing rows, the same values elsewhere.
        np.testing.assert_array_equal(left.isna().to_numpy(), right.is_null().to_numpy(), err_msg=col)
        keep = ~left.isna().to_numpy()
        left = left.astype(str) if col in ("bin", "scheduler") else left
        np.testing.assert_array_equal(
            np.asarray(left[keep], dtype=object), right.to_numpy()[keep].astype(object), err_msg=col
        )
    for s in res.schedulers:
        one = res.coflows(s)
        pd.testing.assert_frame_equal(
            one.reset_index(drop=True),
            pd_frame[pd_frame["scheduler"] == s].drop(columns="scheduler").reset_index(drop=True),
        )


def test_results_tables_are_consistent(small: coflowkit.Workload) -> None:
    res = coflowkit.simulate(small, "varys", baseline="fair", per_flow=True, progress=False)
    assert res.schedulers == ["varys", "fair"] and res.baseline == "fair"
    for s in res.schedulers:
        c = res.coflows(s)
        assert list(c.columns) == coflowkit.sim.results.COFLOW_COLUMNS
        assert len(c) == small.n_coflows and c["coflow_id"].is_unique
        # No parents: every coflow is released at its arrival.
        assert (c["release_s"] == c["arrival_s"]).all()
        np.testing.assert_allclose(c["cct_s"], c["finish_s"] - c["release_s"], atol=1e-9)
        assert c["job_id"].isna().all() and c["deadline_met"].isna().all()
        f = res.flows(s)
        assert list(f.columns) == coflowkit.sim.results.FLOW_COLUMNS
        assert len(f) == small.n_flows
        assert (f.groupby("coflow_id")["finish_s"].max().loc[c["coflow_id"]].to_numpy() == c["finish_s"]).all()
        np.testing.assert_allclose(f["fct_s"], f["finish_s"] - f["start_s"], atol=1e-9)
        assert (f["slowdown"] >= 1 - 1e-9).all() and (f["kind"] == "net").all()
        assert (f["karuna_type"] == 2).all()
        jobs = res.jobs(s)
        assert list(jobs.columns) == coflowkit.sim.results.JOB_COLUMNS and len(jobs) == small.n_coflows
        assert res.n_events(s) > 0
    summary = res.summary()
    assert list(summary["bin"].astype(str)) == coflowkit.BINS * 2
    varys = summary[summary["scheduler"] == "varys"].set_index("bin")
    counts = res.coflows("varys")["bin"].value_counts()
    assert varys.loc["All", "count"] == small.n_coflows
    for b in coflowkit.BINS[1:]:
        assert varys.loc[b, "count"] == counts.get(b, 0)
    assert varys.loc["All", "mean"] == pytest.approx(res.coflows("varys")["cct_s"].mean())
    cmp = res.compare()
    fair = cmp[(cmp["scheduler"] == "fair") & (cmp["count"] > 0)]
    assert (fair["improvement_mean"] == 1.0).all() and (fair["norm_p95"] == 1.0).all()
    v = cmp[(cmp["scheduler"] == "varys") & (cmp["count"] > 0)]
    np.testing.assert_allclose(v["improvement_mean"] * v["norm_mean"], 1.0)
    with pytest.raises(ValueError, match="several schedulers"):
        res.coflows()
    with pytest.raises(ValueError, match="did not run"):
        res.compare("srpt")


def test_an_uncontended_flow_finishes_at_size_over_rate() -> None:
    one = _core.workload_from_columns(
        coflow_id=np.array([1], np.uint64),
        arrival_ns=np.array([1000], np.uint64),
        src=np.array([0], np.uint32),
        dst=np.array([1], np.uint32),
        bytes=np.array([1 << 20], np.uint64),
    )
    for gbps in (1.0, 10.0):
        res = coflowkit.simulate(one, ["fair", "varys"], capacity_gbps=gbps, progress=False)
        for s in res.schedulers:
            c = res.coflows(s)
            assert c["cct_s"].iloc[0] == pytest.approx(8 * (1 << 20) / (gbps * 1e9), abs=1e-9)


def test_same_input_same_bytes(small: coflowkit.Workload, tmp_path: Path) -> None:
    runs = [coflowkit.simulate(small, ["fair", "varys"], baseline="fair", progress=False) for _ in range(2)]
    # One scheduler at a time must give what the parallel batch gave.
    alone = coflowkit.simulate(small, "varys", progress=False)
    pd.testing.assert_frame_equal(alone.coflows("varys"), runs[0].coflows("varys"))
    dirs = [r.write(tmp_path / f"run{i}") for i, r in enumerate(runs)]
    files = sorted(p.relative_to(dirs[0]) for p in dirs[0].rglob("*.csv"))
    assert len(files) == 7  # two coflow and two job tables, summary, metrics, compare
    for rel in files:
        assert (dirs[0] / rel).read_bytes() == (dirs[1] / rel).read_bytes(), rel


def _spins_during(fn: Callable[[], object]) -> tuple[int, float, float]:
    """(spins of a Python thread during fn(), its spins per second alone, fn's seconds)."""
    count = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal count
        while not stop.is_set():
            count += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.1)
        c0, t0 = count, time.perf_counter()
        time.sleep(0.2)
        rate = (count - c0) / (time.perf_counter() - t0)
        c0, t0 = count, time.perf_counter()
        fn()
        elapsed = time.perf_counter() - t0
        return count - c0, rate, elapsed
    finally:
        stop.set()
        t.join()


@pytest.mark.serial  # compares a thread's spin rate alone and during a run: timing
def test_the_gil_is_released_while_simulating() -> None:
    # Grow the workload until a run lasts long enough to tell (a few tenths of a second).
    n_coflows = 100
    while True:
        w = coflowkit.synthetic(n_hosts=30, n_coflows=n_coflows, seed=2)
        spins, rate, elapsed = _spins_during(lambda w=w: coflowkit.simulate(w, "fair", progress=False))
        if elapsed >= 0.3 or n_coflows >= 3200:
            break
        n_coflows *= 2
    # Holding the GIL would leave the spinner one switch interval (5 ms) at most: under 0.02 of its rate
    # over 0.3 s. Released, it shares a core with the simulation at worst (a loaded 2-core machine):
    # about half. 0.1 holds either way with a margin of 5.
    assert spins > 0.1 * rate * elapsed, (spins, rate, elapsed)


def _columns(**cols: list[int]) -> dict[str, np.ndarray]:
    kinds = {"src": np.uint32, "dst": np.uint32, "stage_id": np.uint32}
    return {k: np.array(v, kinds.get(k, np.uint64)) for k, v in cols.items()}


def test_jobs_deadlines_and_metrics() -> None:
    # fifo on one port: coflows 1 and 2 (job 7, 1 s each at 1 Gbit/s) done at 1
    # and 2 s; coflow 3 (no job) on other ports, done at 1 s. Deadlines of 1.5 s
    # after arrival: coflow 1 meets it, coflow 2 misses it.
    unit = 125_000_000
    w = _core.workload_from_columns(
        **_columns(coflow_id=[1, 2, 3], arrival_ns=[0, 0, 0], src=[0, 0, 2], dst=[1, 1, 3], bytes=[unit] * 3),
        job_id=np.array([7, 7, 0], np.uint64),
        job_id_valid=np.array([True, True, False]),
        stage_id=np.array([0, 1, 0], np.uint32),
        stage_id_valid=np.array([True, True, False]),
        deadline_ns=np.array([1_500_000_000] * 3, np.uint64),
        deadline_ns_valid=np.array([True, True, False]),
    )
    res = coflowkit.simulate(w, "fifo", progress=False)
    c = res.coflows()
    assert c["deadline_met"].tolist() == [True, False, pd.NA]
    assert c["job_id"].tolist() == [7, 7, pd.NA]
    jobs = res.jobs()
    assert jobs["job_id"].tolist() == [7, pd.NA]
    assert jobs["jct_s"].tolist() == [2.0, 1.0]
    m = res.metrics().iloc[0]
    assert (m.coflow_deadlines, m.coflow_deadline_misses, m.coflow_deadline_miss_rate) == (2, 1, 0.5)
    assert m.flow_deadlines == 0 and np.isnan(m.flow_deadline_miss_rate)
    assert (m.n_jobs, m.jct_mean_s, m.jct_max_s) == (2, 1.5, 2.0)
    assert m.slowdown_mean == pytest.approx((1 + 2 + 1) / 3)


def test_link_util_of_a_lone_flow() -> None:
    # 1.5 s of data at 1 Gbit/s from host 0 to host 1, 1 s bins.
    w = _core.workload_from_columns(
        **_columns(coflow_id=[1], arrival_ns=[0], src=[0], dst=[1], bytes=[187_500_000]),
    )
    for s in ("fair", "srpt", "varys"):
        res = coflowkit.simulate(w, s, progress=False, link_util_bin=1.0)
        u = res.link_util()
        assert list(u.columns) == coflowkit.sim.results.LINK_UTIL_COLUMNS
        by = u.set_index(["link_name", "bin_start_s"])["utilization"]
        assert by[("Uplink(HostId(0))", 0.0)] == 1.0 and by[("Uplink(HostId(0))", 1.0)] == 0.5
        assert by[("Downlink(HostId(1))", 1.0)] == 0.5 and by[("Uplink(HostId(1))", 0.0)] == 0.0
    with pytest.raises(ValueError, match="link_util_bin"):
        coflowkit.simulate(w, "fair", progress=False).link_util()
    with pytest.raises(ValueError, match="link_util_bin"):
        coflowkit.simulate(w, "fair", progress=False, link_util_bin=0)


def test_missed_deadlines_finish_or_drop() -> None:
    # Karuna's mixed web-search flows at a load where some deadlines are missed.
    w = coflowkit.generate(
        "websearch", seed=3, load=0.9, n_hosts=8, n_flows=300, type1_fraction=0.3, type3_fraction=0.3
    )
    runs = {m: coflowkit.simulate(w, "karuna,pfabric-edf,fair", progress=False, per_flow=True, missed=m)
            for m in ("finish", "drop")}
    for s in ("karuna", "pfabric-edf", "fair"):
        fin = runs["finish"].metrics().set_index("scheduler").loc[s]
        drop = runs["drop"].metrics().set_index("scheduler").loc[s]
        assert fin.flow_deadline_drops == 0
        # Dropping: every miss is a drop, at the deadline instant.
        assert drop.flow_deadline_drops == drop.flow_deadline_misses
        flows = runs["drop"].flows(s)
        gone = flows[flows["dropped"]]
        assert len(gone) == drop.flow_deadline_drops
        assert (gone["fct_s"] - gone["deadline_s"]).abs().max() < 1e-9 if len(gone) else True
        assert not gone["deadline_met"].any()
        # The Karuna metrics: flows without a deadline, and the short ones.
        typed = runs["finish"].flows(s)
        rest = typed[typed["karuna_type"] != 1]
        assert fin.n_flows_no_deadline == len(rest)
        assert fin.fct_no_deadline_mean_s == pytest.approx(rest["fct_s"].mean())
        assert fin.n_short_no_deadline == (rest["bytes"] < 100_000).sum()
    assert runs["finish"].metrics().set_index("scheduler").loc["fair"].flow_deadline_misses > 0
    with pytest.raises(ValueError, match="missed"):
        coflowkit.simulate(w, "fair", progress=False, missed="keep")


def test_karuna_thresholds_from_a_distribution() -> None:
    for sizes in ("websearch", "datamining"):
        for kind in ("sieve", "split"):
            t = _core.karuna_thresholds(sizes, 0.8, 6, kind)
            assert len(t) == 6 and all(a < b for a, b in zip(t, t[1:], strict=False))
    with pytest.raises(ValueError, match="kind"):
        _core.karuna_thresholds("websearch", 0.8, 6, "sift")
    with pytest.raises(ValueError, match="load"):
        _core.karuna_thresholds("websearch", 1.2, 6, "sieve")


def test_baraat_over_its_budget_is_refused_up_front() -> None:
    """`baraat` refuses a workload whose estimated CPU time is above its `budget`, in one line
    with the estimate, before simulating; `refusals` tells the CLI which to leave out."""
    from coflowkit.sim import synthetic

    w = synthetic()
    refused = dict(_core.refusals(w, ["fair", "baraat:budget=1ms", "baraat:budget=inf"]))
    assert list(refused) == ["baraat:budget=1ms"]
    assert "over its budget" in refused["baraat:budget=1ms"]
    with pytest.raises(ValueError, match="parameter 'budget': refused: on this workload baraat computes") as e:
        coflowkit.simulate(w, "baraat:budget=1ms", progress=False)
    assert "\n" not in str(e.value)
