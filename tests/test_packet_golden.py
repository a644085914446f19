"""The packet engine's own numbers on the ns-3 validation scenarios, pinned.

bench/ns3/golden/<scenario>/scenario.json are the scenarios the ns-3
cross-check runs (bench/ns3/README.md); ns-3 is not installed here, so this
test pins coflowkit's side: every flow's FCT in ns, drops, ECN marks,
retransmissions and timeouts, and the run's per-hop packet and event counts,
against tests/golden/packet/<scenario>.csv. The engine is deterministic, so
they must match exactly; a change to the engine that moves them is either a
bug or a model change, and then the golden files are rewritten on purpose:

    COFLOWKIT_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_packet_golden.py

and the commit says why the numbers moved (and bench/ns3/crosscheck.py is
run again against ns-3's golden results).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from coflowkit.sim.scenario import load_scenario, run_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "bench" / "ns3" / "golden").glob("*/scenario.json"))
GOLDEN = ROOT / "tests" / "golden" / "packet"
# The columns of flows.csv that are the engine's numbers (not the inputs).
COLUMNS = ("flow", "fct_ns", "drops", "ecn_marks", "retransmits", "timeouts")


def pinned(out: Path, packets: int, events: int) -> str:
    """The numbers this test pins, as CSV text."""
    lines = (out / "flows.csv").read_text().splitlines()
    head = lines[0].split(",")
    keep = [head.index(c) for c in COLUMNS]
    rows = [",".join(COLUMNS)]
    for line in lines[1:]:
        cells = line.split(",")
        rows.append(",".join(cells[i] for i in keep))
    rows.append(f"# packets={packets} events={events}")
    return "\n".join(rows) + "\n"


def test_every_validation_scenario_is_pinned() -> None:
    assert len(SCENARIOS) >= 16, "bench/ns3/golden lost scenarios"
    names = {p.parent.name for p in SCENARIOS}
    stale = sorted(p.stem for p in GOLDEN.glob("*.csv") if p.stem not in names)
    assert not stale, f"golden files without a scenario: {stale}"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[p.parent.name for p in SCENARIOS])
def test_packet_engine_numbers_are_unchanged(scenario: Path, tmp_path: Path) -> None:
    res = run_scenario(load_scenario(scenario), tmp_path, progress=False)
    got = pinned(tmp_path, res.packets(), res.n_events())
    golden = GOLDEN / f"{scenario.parent.name}.csv"
    if os.environ.get("COFLOWKIT_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got)
    assert golden.exists(), f"{golden} missing: run with COFLOWKIT_UPDATE_GOLDEN=1 to write it"
    want = golden.read_text()
    if got != want:
        diff = [
            f"  line {i}: want {w!r}, got {g!r}"
            for i, (w, g) in enumerate(zip(want.splitlines(), got.splitlines()), 1)
            if w != g
        ]
        pytest.fail(f"{scenario.parent.name}: the engine's numbers moved\n" + "\n".join(diff[:10]))
