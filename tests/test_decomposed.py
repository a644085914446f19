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
