"""docs/reproductions/README.md, the table of every seed-paper claim, is current with the
reproduction pages it reads (examples/reproductions/claims.py), and the script's rules hold:
a claim outside 1.5x at its level names a cause and a link, and a source that names no number
is refused with the claim's id."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def claims() -> ModuleType:
    spec = importlib.util.spec_from_file_location("claims", ROOT / "examples" / "reproductions" / "claims.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["claims"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_table_is_current() -> None:
    c = claims()
    page = c.render(c.load())
    assert (ROOT / "docs" / "reproductions" / "README.md").read_text() == page, (
        "docs/reproductions/README.md is out of date with the reproduction pages or claims.toml: "
        "run `make repro-claims`"
    )


def test_every_paper_has_its_claims_and_every_miss_its_cause() -> None:
    c = claims()
    rows = c.load()
    assert {r.claim["paper"] for r in rows} == set(c.PAPERS)
    for r in rows:
        if not r.within:
            assert r.claim["cause"] and r.claim["link"], r.claim["id"]


@pytest.mark.parametrize(
    ("kind", "paper", "ours", "off"),
    [
        ("reduction", 0.5, 0.5, 1.0),
        ("reduction", 0.5, 0.0, 2.0),  # factors 2 and 1
        ("reduction", 0.4, -1.0, 1 / 0.6 * 2),  # factors 1.667 and 0.5
        ("factor", 2.7, 1.8, 1.5),
        ("time_ratio", 0.5, 1.0, 2.0),
        ("at_most", 0.058, 0.05, 1.0),
        ("at_most", 0.05, 0.1, 2.0),
        ("at_least", 0.4, 0.0, math.inf),
        ("range", [1.4, 4.0], 2.0, 1.0),
        ("range", [1.4, 4.0], 8.0, 2.0),
    ],
)
def test_off_by(kind: str, paper: object, ours: float, off: float) -> None:
    assert claims().off_by(kind, paper, ours) == pytest.approx(off)


def test_numbers_in_a_cell() -> None:
    c = claims()
    assert c.numbers("-78%", None) == [pytest.approx(-0.78)]
    assert c.numbers("48% higher", None) == [pytest.approx(-0.48)]
    assert c.numbers("1.53x (strict queues 1.59x)", None) == [1.53, 1.59]
    assert c.numbers("1 level: 1.05x, 0.46x", "x") == [1.05, 0.46]
    assert c.numbers("22,517 timeouts", None) == [22517.0]


def test_a_source_that_names_nothing_is_refused_with_the_claim(tmp_path: Path) -> None:
    c = claims()
    bad = tmp_path / "claims.toml"
    bad.write_text(
        '[[claim]]\nid = "x"\npaper = "Aalo"\nwhere = "7"\nclaim = "c"\nkind = "factor"\n'
        'paper_value = 2.0\nlevel = "flow"\nlevel_why = "w"\n'
        'flow = { page = "reproductions/aalo.md", row = "no such row", col = "ours" }\n'
        'packet = { none = "-" }\ntestbed = { none = "-" }\n'
    )
    with pytest.raises(c.ClaimError, match=r"claim x, flow: no rows \['no such row'\]"):
        c.load(bad)


def test_a_miss_without_a_cause_is_refused(tmp_path: Path) -> None:
    c = claims()
    bad = tmp_path / "claims.toml"
    bad.write_text(
        '[[claim]]\nid = "x"\npaper = "Aalo"\nwhere = "7"\nclaim = "c"\nkind = "factor"\n'
        'paper_value = 20.0\nlevel = "flow"\nlevel_why = "w"\n'
        'flow = { page = "reproductions/aalo.md", row = "FB2010: Aalo over per-flow fairness, mean CCT (Fig. 8)", '
        'col = "ours" }\npacket = { none = "-" }\ntestbed = { none = "-" }\n'
    )
    with pytest.raises(c.ClaimError, match="claim x: outside 1.5x at its level"):
        c.load(bad)
