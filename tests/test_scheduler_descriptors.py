"""The schedulers' descriptors from Python: `coflowkit schedulers`, its
`--markdown` tables (docs/schedulers.md holds them) and spec checks by the
declared needs."""

from __future__ import annotations

from pathlib import Path

import pytest

import coflowkit
from coflowkit import _core
from conftest import Cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "schedulers.md"


def test_descriptors_are_the_registry_and_print_one_line_each(cli: Cli) -> None:
    descriptors = _core.scheduler_descriptors()
    assert [d["name"] for d in descriptors] == [n for n, _ in coflowkit.schedulers()]
    fifo_lm = next(d for d in descriptors if d["name"] == "fifo-lm")
    assert fifo_lm["needs"]["hints"] == ["coflow sizes"]
    assert {"key": "threshold", "default": "p80"}.items() <= fifo_lm["params"][0].items()
    proc = cli("schedulers")
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("fifo-lm "))
    assert "threshold=p80" in line and "Baraat" in line


def test_descriptors_carry_their_parts() -> None:
    """``parts``: what differs for the drivers, as the registry declares it; a scheduler has a host
    policy exactly when the packet engine runs it by one."""
    descriptors = {d["name"]: d for d in _core.scheduler_descriptors()}
    keys = {"host", "switch", "coordinated", "preflight", "local_thresholds"}
    assert all(set(d["parts"]) == keys for d in descriptors.values())
    hosted = {name for name, how in _core.packet_schedulers() if how == "host policy"}
    assert {n for n, d in descriptors.items() if d["parts"]["host"]} == hosted
    assert {d["parts"]["switch"] for d in descriptors.values()} == {"plain", "smart-priority-classes", "task-marking"}
    baraat, aalo = descriptors["baraat"]["parts"], descriptors["aalo"]["parts"]
    assert baraat["switch"] == "smart-priority-classes" and baraat["preflight"] and baraat["host"]
    assert aalo["coordinated"] == [("delta", "0")] and aalo["local_thresholds"] and not aalo["host"]


def test_markdown_is_the_docs_section(cli: Cli) -> None:
    proc = cli("schedulers", "--markdown")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == _core.scheduler_markdown()
    assert proc.stdout in DOC.read_text()


def test_specs_needing_the_workload_pass_the_check_and_bad_values_do_not() -> None:
    for spec in ("fifo-lm", "baraat", "tafe", "karuna:split=auto@0.8", "tafe:thresholds=p50/p90"):
        assert _core.check_scheduler(spec) == spec.split(":")[0]
    with pytest.raises(ValueError, match=r"parameter 'mux': 'first' is not next, last or link"):
        _core.check_scheduler("fifo-lm:mux=first")
    with pytest.raises(ValueError, match=r"unknown parameter 'x' \(valid: solver\)"):
        _core.check_scheduler("fair:x=1")
