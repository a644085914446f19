"""The Facebook 2010 coflow-benchmark trace (skipped when it is absent)."""

from __future__ import annotations

from pathlib import Path

import coflowkit
from conftest import Cli


def test_trace_info_counts(cli: Cli, fb2010: Path) -> None:
    proc = cli("trace", "info", fb2010)
    assert proc.returncode == 0, proc.stderr
    assert "coflows        526\n" in proc.stdout
    assert "flows          706397\n" in proc.stdout
    assert "hosts          150\n" in proc.stdout


def test_stats_dict_matches(fb2010: Path) -> None:
    w = coflowkit.load_trace(fb2010)
    s = w.stats()
    assert (s["n_hosts"], s["n_coflows"], s["n_flows"]) == (150, 526, 706397)
    assert sum(b["n_coflows"] for b in s["bins"]) == 526
    assert (w.n_coflows, w.n_flows) == (526, 706397)
