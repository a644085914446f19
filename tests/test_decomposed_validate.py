"""The decomposed engine's validation command (examples/decomposed/validate.py) on a tiny grid: one
8-host fabric, one load, a few flows, into a temporary directory; the table has a row per size bin,
the packet engine's run is stored and reused, and the page's section is filled between its markers."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _validate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("validate", ROOT / "examples" / "decomposed" / "validate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ARGS = [
    "--fabric",
    "tiny=leaf-spine:leaves=2,spines=1,hosts=4,rate=10Gbps,spine_rate=40Gbps;4",
    "--loads",
    "0.5",
    "--mixes",
    "websearch",
    "--schemes",
    "dctcp",
    "--flows",
    "30",
]


def test_a_tiny_grid_fills_the_table_the_stores_and_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v = _validate()
    page = tmp_path / "page.md"
    page.write_text(f"# A page\n\nProse.\n\n{v.BEGIN}\nold\n{v.END}\n\nAfter.\n")
    results = tmp_path / "results"
    assert v.main([*ARGS, "--results", str(results), "--page", str(page)]) == 0
    table = pd.read_csv(results / "cells.csv")
    assert list(table["cell"]) == ["tiny/websearch/0.5/dctcp"] * 3
    assert list(table["bin"]) == [b for _, _, b in v.BINS]
    for col in ("p50_pkt", "p50_dec", "p50_err", "p99_pkt", "p99_dec", "p99_err", "packet_wall_s", "decomposed_wall_s"):
        assert col in table.columns
    assert table["flows"].sum() == 30
    stored = sorted(p.name for p in (results / "packet").glob("*.json"))
    assert len(stored) == 1 and stored[0].startswith("tiny-websearch-0.5-dctcp-30-")
    text = page.read_text()
    assert text.startswith("# A page\n\nProse.\n\n") and text.endswith("\n\nAfter.\n")
    section = text[text.index(v.BEGIN) : text.index(v.END)]
    assert "old" not in section
    rows = [line for line in section.splitlines() if line.startswith("| tiny |")]
    assert len(rows) == 1 and rows[0].startswith("| tiny | web search | 0.5 | DCTCP | 30 |")
    summary = r"every size bin: [01] of 1 cells measured \(1 in the grid\); in [0-3] of [0-3] size bins"
    assert re.search(summary, section)
    assert (tmp_path / "page" / "validation.png").stat().st_size > 0
    out = capsys.readouterr().out
    assert "of 1 cells measured (1 in the grid)" in out

    # Again: the packet engine's runs are read back, not rerun; the numbers are the same.
    first = table
    mtimes = {p: p.stat().st_mtime_ns for p in (results / "packet").iterdir()}
    assert v.main([*ARGS, "--results", str(results), "--reuse-decomposed"]) == 0
    assert {p: p.stat().st_mtime_ns for p in (results / "packet").iterdir()} == mtimes
    again = pd.read_csv(results / "cells.csv")
    cols = ["cell", "bin", "flows", "p50_pkt", "p50_dec", "p99_pkt", "p99_dec", "p99_err_lo", "p99_err_hi"]
    pd.testing.assert_frame_equal(again[cols], first[cols])
