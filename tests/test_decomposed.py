"""The decomposed engine from Python and the CLI: the other engines' tables from one packet-level
simulation per link, near the full packet engine on a small fabric; what it cannot run is refused
in one line naming the engines that can."""

from __future__ import annotations

import pytest

import coflowkit
from coflowkit import _core
from coflowkit.sim import RequestError
from conftest import Cli, assert_one_line_error

TOPOLOGY = "leaf-spine:leaves=2,spines=2,hosts=4,rate=10Gbps"


def _workload() -> coflowkit.Workload:
    return coflowkit.generate("websearch", n_hosts=8, n_flows=60, load=0.3, capacity_bps=10e9, seed=3)


def test_a_decomposed_run_writes_the_other_engines_tables_near_the_packet_engine() -> None:
    w = _workload()
    dec = coflowkit.simulate(w, "dctcp", engine="decomposed", topology=TOPOLOGY, progress=False)
    pkt = coflowkit.simulate(w, "dctcp", engine="packet", topology=TOPOLOGY, progress=False)
    a, b = pkt.flows("dctcp"), dec.flows("dctcp")
    assert len(a) == len(b) == w.n_flows
    # The flow engine's columns (the packet engine adds its counters).
    assert set(b.columns) <= set(a.columns)
    # At load 0.3 on an idle-ish fabric most flows meet little: the decomposition's mean FCT is near.
    assert b["fct_s"].mean() == pytest.approx(a["fct_s"].mean(), rel=0.25)
    assert (b["fct_s"] > 0).all()


def test_the_decomposed_run_reports_its_links() -> None:
    (run,) = _core.simulate_decomposed(_workload(), ["pias"], "", None, None, False, TOPOLOGY, None, 1)
    d = run["decomposed"]
    assert d["link_sims"] == len(d["links"]["name"]) > 0
    assert d["packets"] == int(d["links"]["packets"].sum())


def test_a_coordinator_scheduler_is_refused_naming_the_engines_that_run_it(cli: Cli) -> None:
    with pytest.raises(RequestError, match="needs a central coordinator.*engine 'flow' or 'packet'"):
        coflowkit.simulate(_workload(), "aalo", engine="decomposed", topology=TOPOLOGY)
    line = assert_one_line_error(
        cli("simulate", "--engine", "decomposed", "-s", "varys", "--topology", TOPOLOGY), 2, "--scheduler"
    )
    assert "central coordinator" in line


def test_classes_are_refused() -> None:
    with pytest.raises(RequestError, match="classes"):
        coflowkit.simulate(_workload(), "dctcp", engine="decomposed", topology=TOPOLOGY, classes=[0] * 60)


def test_link_simulations_run_in_shards_give_the_same_run() -> None:
    """What Dask workers do for one point (`link_tasks`): each shard prepares the same plan and runs
    its share of the link simulations; the gathered results, finished, are the threaded run."""
    w = _workload()
    args = ("pias", "", None, None, TOPOLOGY, None, "cluster=40")
    (whole,) = _core.simulate_decomposed(w, ["pias"], "", None, None, False, TOPOLOGY, None, 2, "cluster=40")
    parts = [_core.decomposed_link_runs(w, args[0], k, 3, *args[1:]) for k in range(3)]
    assert {n for n, _ in parts} == {whole["decomposed"]["link_sims"]}
    runs = [r for _, rs in parts for r in rs]
    (apart,) = _core.simulate_decomposed(w, ["pias"], "", None, None, False, TOPOLOGY, None, 1, "cluster=40", runs)
    assert list(apart["flows"]["finish_s"]) == list(whole["flows"]["finish_s"])
    assert apart["decomposed"]["packets"] == whole["decomposed"]["packets"]
    # A shard out of range, a simulation missing, repeated or unknown: one line naming it.
    # The same with the pacing found once and handed to every shard (what a Dask point does).
    paces = _core.decomposed_paces(w, *args)
    assert paces is not None and any(paces)
    parts = [_core.decomposed_link_runs(w, args[0], k, 3, *args[1:], paces) for k in range(3)]
    runs = [r for _, rs in parts for r in rs]
    (handed,) = _core.simulate_decomposed(
        w, ["pias"], "", None, None, False, TOPOLOGY, None, 1, "cluster=40", runs, paces
    )
    assert list(handed["flows"]["finish_s"]) == list(whole["flows"]["finish_s"])
    assert _core.decomposed_paces(w, "pias", "", None, None, TOPOLOGY, None, "fluid=off") is None
    with pytest.raises(ValueError, match="paces: 3 link crossings given"):
        _core.decomposed_link_runs(w, "pias", 0, 3, *args[1:], b"\x00\x01\x02")
    with pytest.raises(ValueError, match="paces: given with link_runs only"):
        _core.simulate_decomposed(w, ["pias"], "", None, None, False, TOPOLOGY, None, 1, "", None, paces)
    with pytest.raises(ValueError, match="shard: 3 of 3"):
        _core.decomposed_link_runs(w, "pias", 3, 3, topology=TOPOLOGY)
    for bad, says in [
        (runs[1:], f"simulation {runs[0][0]} of {len(runs)} missing"),
        (runs + runs[:1], f"simulation {runs[0][0]} given twice"),
        (runs + [(len(runs), [], 0)], f"simulation {len(runs)}, but the run has {len(runs)}"),
    ]:
        with pytest.raises(ValueError, match=says):
            _core.simulate_decomposed(w, ["pias"], "", None, None, False, TOPOLOGY, None, 1, "cluster=40", bad)
