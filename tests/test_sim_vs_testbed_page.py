"""The testbed report's table of repeated runs (examples/testbed/sim_vs_testbed.py), by hand."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "testbed"))
import sim_vs_testbed as svt  # noqa: E402


def test_repeated_runs_rank_by_their_mean_and_name_the_pairs_every_run_ordered_against_the_simulator():
    # rows: (policy, simulated spec, testbed mean, simulated mean, testbed p95, simulated p95, wall)
    rows = [("a", "", 1.0, 1.0, 0, 0, 0), ("b", "", 2.0, 2.0, 0, 0, 0), ("c", "", 3.0, 3.0, 0, 0, 0)]
    # a's runs all below b's (the simulator's order); c's overlap both a's and b's, and c's mean (1.2) puts
    # it before b, against the simulator.
    repeats = {"a": [1.0, 1.2], "b": [1.5, 2.5], "c": [0.8, 1.6], "fair-rt": [9.0, 9.0]}
    rows.append(("fair-rt", "", 9.0, 9.0, 0, 0, 0))
    text = "\n".join(svt.repeated(rows, repeats))
    assert "| a | 1.0000, 1.2000 s | 1.1000 s | 1.0000-1.2000 s | 1.0000 s |" in text
    # fair-rt is a control: in the table, not in the ranking.
    assert "testbed a < c < b; simulated a < b < c: 2 of 3 pairs in the same order" in text
    assert "In 1 pairs the runs' ranges do not overlap" in text
    assert "1 of them in the simulator's order; the other 2 pairs are within what the runs moved" in text


def test_a_policy_replayed_once_adds_nothing():
    rows = [("a", "", 1.0, 1.0, 0, 0, 0)]
    assert svt.repeated(rows, {"a": [1.0]}) == []
