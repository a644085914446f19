"""The decomposed engine from Python and the CLI: the other engines' tables from one packet-level
simulation per link, near the full packet engine on a small fabric; what it cannot run is refused
in one line naming the engines that can."""

from __future__ import annotations

from typing import Any

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


def test_link_simulations_run_elsewhere_give_the_same_run() -> None:
    """What a Dask point does (`link_tasks`): the run is prepared once, each packet-level run (a
    link's simulation, a path's times alone) is sent as bytes, run in shards by code that has
    neither workload nor plan, and the results, put back in order, make the threaded run."""
    w = _workload()
    (whole,) = _core.simulate_decomposed(w, ["pias"], "", None, None, False, TOPOLOGY, None, 2, "cluster=40")
    sent: list[list[bytes]] = []

    def ship(parts: list[bytes]) -> list[tuple[list[int], int]]:
        sent.append(parts)
        out: list[Any] = [None] * len(parts)
        for k in range(3):
            out[k::3] = _core.decomposed_run_parts(parts[k::3], "pias")
        return out

    (apart,) = _core.simulate_decomposed(w, ["pias"], "", None, None, False, TOPOLOGY, None, 1, "cluster=40", ship)
    d = whole["decomposed"]
    assert len(sent) == 1 and len(sent[0]) == d["link_sims"] + d["alone_paths"]
    assert list(apart["flows"]["finish_s"]) == list(whole["flows"]["finish_s"])
    assert apart["decomposed"]["packets"] == whole["decomposed"]["packets"]
    parts = sent[0]
    ran = _core.decomposed_run_parts(parts, "pias")

    def run_with(got: Any) -> None:
        _core.simulate_decomposed(w, ["pias"], "", None, None, False, TOPOLOGY, None, 1, "cluster=40", lambda _: got)

    # What cannot be the results of the simulations sent: one line naming it.
    for bad, says in [
        (ran[1:], f"run_parts: {len(ran) - 1} results for {len(ran)} parts sent"),
        ([(r[0][1:], r[1]) for r in ran], "completion times for its .* flows|a path's times alone: .* given for"),
        ("nonsense", "run_parts: returned what is not a list"),
    ]:
        with pytest.raises(ValueError, match=says):
            run_with(bad)
    with pytest.raises(ValueError, match="run_parts: runs one transport's"):
        _core.simulate_decomposed(w, ["pias", "dctcp"], "", None, None, False, TOPOLOGY, None, 1, "", ship)
    # What is not a part, or a scheduler the engine does not run, is refused naming it.
    with pytest.raises(ValueError, match=r"parts\[1\]: a decomposition's job \(3 B\) is not one"):
        _core.decomposed_run_parts([parts[0], b"\x00\x01\x02"], "pias")
    with pytest.raises(ValueError, match="central coordinator"):
        _core.decomposed_run_parts(parts[:1], "aalo")

    # An error of the callable itself reaches the caller as it is.
    def lost(_: list[bytes]) -> Any:
        raise RuntimeError("worker lost")

    with pytest.raises(RuntimeError, match="worker lost"):
        _core.simulate_decomposed(w, ["pias"], "", None, None, False, TOPOLOGY, None, 1, "", lost)
