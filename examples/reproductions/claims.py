"""Every headline claim of the five seed papers in one table: docs/reproductions/README.md.

The claims, the paper's numbers, the level each paper measured at and where our numbers stand
are declared in examples/reproductions/claims.toml. Our numbers are read from the generated
reproduction pages (docs/reproductions/*.md, docs/lab/testbed-vs-simulation*.md), which each paper's
`make repro-*` writes from its result store: a page regenerated moves the table with it, and
tests/test_claims.py fails until the table is written again (`make repro-claims`).

A claim is *within 1.5x* when our improvement factor and the paper's are within 1.5x of each
other at the level the paper itself used (a reduction r counts as the factor 1 / (1 - r); a bound
counts as met when ours is on its side of it). A claim outside 1.5x names one measured cause and
links its decomposition; the script refuses a table in which one does not.

    python examples/reproductions/claims.py            # writes docs/reproductions/README.md
    python examples/reproductions/claims.py --check    # exit 1 if the file is out of date
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CLAIMS = ROOT / "examples" / "reproductions" / "claims.toml"
OUT = DOCS / "reproductions" / "README.md"

LEVELS = ("flow", "packet", "testbed")
KINDS = ("reduction", "factor", "time_ratio", "value", "at_most", "at_least", "range")
PAPERS = ("Baraat", "Aalo", "Karuna", "PIAS", "TAFE", "D-CAS")
WITHIN = 1.5

# A number in a cell: sign, digits with thousands commas, decimals; the unit right after it.
NUMBER = re.compile(r"(?<![\w.])([-+]?\d+(?:,\d{3})*(?:\.\d+)?)\s*(%|x|ms|s|us)?")


class ClaimError(ValueError):
    """A claim whose declaration or source cannot be read; the message names the claim."""


@dataclass(frozen=True)
class Table:
    """One Markdown table of a page: its header cells and body rows."""

    page: str
    header: list[str]
    rows: list[list[str]]


def cells(line: str) -> list[str]:
    """The cells of a Markdown table line."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(page: str, cache: dict[str, list[Table]]) -> list[Table]:
    """Every table of the page `page` (relative to docs/)."""
    if page not in cache:
        path = DOCS / page
        if not path.is_file():
            raise ClaimError(f"page docs/{page} does not exist")
        found: list[Table] = []
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            if (
                lines[i].startswith("|")
                and i + 1 < len(lines)
                and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip())
            ):
                header = cells(lines[i])
                j = i + 2
                rows = []
                while j < len(lines) and lines[j].startswith("|"):
                    rows.append(cells(lines[j]))
                    j += 1
                found.append(Table(page, header, rows))
                i = j
            else:
                i += 1
        cache[page] = found
    return cache[page]


def anchors(path: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them (lower case, punctuation
    dropped, spaces as hyphens)."""
    out = set()
    for line in path.read_text().splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(slug)
    return out


def numbers(cell: str, unit: str | None) -> list[float]:
    """The numbers of a cell in order (percentages as fractions; "N% higher" negative), only
    those followed by `unit` if given."""
    out = []
    for m in NUMBER.finditer(cell):
        if unit is not None and m.group(2) != unit:
            continue
        v = float(m.group(1).replace(",", ""))
        if m.group(2) == "%":
            v /= 100
            if cell[m.end() :].lstrip().startswith("higher"):
                v = -v
        out.append(v)
    return out


def read(src: dict[str, Any], where: str, cache: dict[str, list[Table]]) -> float | str:
    """The number a source names, or the reason there is none (a `none` source)."""
    if "none" in src:
        return str(src["none"])
    if "div" in src:
        a, b = (read(s, where, cache) for s in src["div"])
        if isinstance(a, str) or isinstance(b, str):
            raise ClaimError(f"{where}: a `div` source cannot hold `none`")
        return a / b
    for key in ("page", "row", "col"):
        if key not in src:
            raise ClaimError(f"{where}: a source needs `{key}` (or `none`, or `div`)")
    row = src["row"] if isinstance(src["row"], list) else [src["row"]]
    hits: list[tuple[list[str], int]] = []
    for t in tables(src["page"], cache):
        if src["col"] not in t.header or ("table" in src and src["table"] not in t.header):
            continue
        c = t.header.index(src["col"])
        hits += [(r, c) for r in t.rows if r[: len(row)] == row and c < len(r)]
    if len(hits) != 1:
        what = "no" if not hits else f"{len(hits)}"
        raise ClaimError(
            f"{where}: {what} rows {row!r} under a column {src['col']!r}"
            + (f" in a table with {src['table']!r}" if "table" in src else "")
            + f" in docs/{src['page']}"
        )
    r, c = hits[0]
    nums = numbers(r[c], src.get("unit"))
    picks = src.get("pick", 0)
    picks = picks if isinstance(picks, list) else [picks]
    if not nums or max(picks) >= len(nums):
        raise ClaimError(f"{where}: cell {r[c]!r} of docs/{src['page']} has no number {max(picks)}")
    return sum(nums[p] for p in picks) / len(picks)


def factor(kind: str, v: float) -> float:
    """An improvement factor from a number of kind `kind` (above 1: the scheme is faster)."""
    if kind == "reduction":
        return math.inf if v >= 1 else 1 / (1 - v)
    if kind == "time_ratio":
        return math.inf if v <= 0 else 1 / v
    return v


def off_by(kind: str, paper: Any, ours: float) -> float:
    """How far ours is from the paper's claim, as a factor of at least 1 (1: met)."""
    if kind == "at_most":
        return max(1.0, ours / paper)
    if kind == "at_least":
        return math.inf if ours <= 0 else max(1.0, paper / ours)
    if kind == "range":
        lo, hi = paper
        return math.inf if ours <= 0 else max(1.0, lo / ours, ours / hi)
    a, b = factor(kind, ours), factor(kind, paper)
    if a <= 0 or b <= 0 or math.isinf(a) or math.isinf(b):
        return math.inf
    return max(a / b, b / a)


def show(kind: str, v: Any, unit: str) -> str:
    """A number as the table prints it."""
    if isinstance(v, list):
        return f"{v[0]:g}-{v[1]:g}x"
    if kind == "reduction" or unit == "%":
        s = f"{100 * v:.1f}".rstrip("0").rstrip(".")
        s = "0" if s == "-0" else s
        return f"{s}%"
    if kind in ("factor", "range") or unit == "x":
        return f"{v:.2f}x"
    return f"{v:.3g}{(' ' + unit) if unit else ''}"


@dataclass
class Row:
    """One claim, read."""

    claim: dict[str, Any]
    ours: dict[str, float | str]
    off: dict[str, float | None]

    @property
    def level(self) -> str:
        return str(self.claim["level"])

    @property
    def verdict(self) -> float | None:
        return self.off[self.level]

    @property
    def within(self) -> bool:
        v = self.verdict
        return v is not None and v <= WITHIN

    def within_anywhere(self) -> bool:
        return any(v is not None and v <= WITHIN for v in self.off.values())


def load(path: Path = CLAIMS) -> list[Row]:
    """Every claim of `path`, its numbers read from the pages; raises ClaimError naming the
    claim on anything malformed."""
    with path.open("rb") as f:
        doc = tomllib.load(f)
    cache: dict[str, list[Table]] = {}
    out = []
    seen: set[str] = set()
    for i, c in enumerate(doc.get("claim", [])):
        where = f"{path.name}: claim {c.get('id', f'#{i + 1}')}"
        for key in ("id", "paper", "where", "claim", "kind", "paper_value", "level", *LEVELS):
            if key not in c:
                raise ClaimError(f"{where}: missing `{key}`")
        if c["id"] in seen:
            raise ClaimError(f"{where}: the id is used twice")
        seen.add(c["id"])
        if c["kind"] not in KINDS:
            raise ClaimError(f"{where}: kind {c['kind']!r} is not one of {', '.join(KINDS)}")
        if c["paper"] not in PAPERS:
            raise ClaimError(f"{where}: paper {c['paper']!r} is not one of {', '.join(PAPERS)}")
        if c["level"] not in LEVELS:
            raise ClaimError(f"{where}: level {c['level']!r} is not one of {', '.join(LEVELS)}")
        ours = {lv: read(c[lv], f"{where}, {lv}", cache) for lv in LEVELS}
        off = {
            lv: None if isinstance(v, str) else off_by(c["kind"], c["paper_value"], v)
            for lv, v in ours.items()
        }
        row = Row(c, ours, off)
        if not row.within and not (c.get("cause") and c.get("link")):
            raise ClaimError(
                f"{where}: outside {WITHIN}x at its level ({c['level']}) but without a `cause` "
                "and a `link` to its decomposition"
            )
        if c.get("link"):
            page, _, anchor = c["link"].partition("#")
            target = DOCS / "reproductions" / page
            if not target.is_file():
                raise ClaimError(f"{where}: link {c['link']!r}: no page docs/reproductions/{page}")
            if anchor and anchor not in anchors(target):
                raise ClaimError(f"{where}: link {c['link']!r}: docs/reproductions/{page} has no heading #{anchor}")
        out.append(row)
    return out


def unit_of(c: dict[str, Any]) -> str:
    if c["kind"] in ("at_most", "at_least", "value"):
        return str(c.get("unit", "%" if c["paper_value"] < 1 and c["kind"] != "value" else ""))
    return ""


def cell(row: Row, level: str) -> str:
    v = row.ours[level]
    if isinstance(v, str):
        return "-"
    return show(row.claim["kind"], v, unit_of(row.claim))


def paper_cell(c: dict[str, Any]) -> str:
    s = show(c["kind"], c["paper_value"], unit_of(c))
    return {"at_most": "at most ", "at_least": "at least "}.get(c["kind"], "") + s


def render(rows: list[Row]) -> str:
    """The page."""
    n = len(rows)
    within = sum(r.within for r in rows)
    anywhere = sum(r.within_anywhere() for r in rows)
    out = [
        "# The seed papers' claims, reproduced or not",
        "",
        "Every headline claim of the five papers (their abstracts and the main numbers of their",
        "evaluations), the paper's number beside ours at each level, and whether ours is within",
        f"{WITHIN}x of it at the level the paper itself measured at. This page is generated from",
        "[`examples/reproductions/claims.toml`](../../examples/reproductions/claims.toml), which says",
        "where in the reproduction pages each of our numbers stands; do not edit it by hand:",
        "",
        "```sh",
        "make repro-claims   # rewrites this page from the reproduction pages (seconds; no simulation)",
        "```",
        "",
        "Each paper's `make repro-*` rewrites its page from its result store and then this table.",
        "",
        "**Rules.** A reduction r counts as the improvement factor 1 / (1 - r), a ratio of times x",
        "(ours / theirs) as 1 / x; ours and the paper's factors are compared as",
        "max(ours / paper, paper / ours). A bound (\"below 5.8%\", \"within 15%\") is met when ours is",
        f"on its side, and otherwise off by ours / bound. **Within** means off by at most {WITHIN}x",
        "at the paper's level. Every claim outside names its measured cause and links the page",
        "that decomposes it; `-` is a level where the claim was not run (the reason is in",
        "claims.toml).",
        "",
        "## Counts",
        "",
        f"- **{within} of {n}** claims within {WITHIN}x at the paper's own level;"
        f" {anywhere} of {n} at some level.",
    ]
    for p in PAPERS:
        mine = [r for r in rows if r.claim["paper"] == p]
        if mine:
            out.append(
                f"- {p}: {sum(r.within for r in mine)} of {len(mine)} at its level"
                f" ({sum(r.within_anywhere() for r in mine)} at some level)."
            )
    figs = [
        r for r in rows if r.claim["paper"] == "Baraat" and r.claim["where"].endswith(("Fig. 8", "Fig. 9"))
    ]
    if figs:
        out.append(
            f"- Baraat's Figs. 8-9 (p95 against four schemes): {sum(r.within for r in figs)} of "
            f"{len(figs)} at packet level, {sum((r.off['flow'] or math.inf) <= WITHIN for r in figs)}"
            f" of {len(figs)} at flow level."
        )
    out += [
        "",
        "## Every claim",
        "",
        "| # | paper | where | claim | paper's number | flow level | packet level | testbed | paper's level | off by | within |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(rows, 1):
        c = r.claim
        v = r.verdict
        off = "-" if v is None else ("inf" if math.isinf(v) else f"{v:.2f}x")
        out.append(
            f"| {i} | {c['paper']} | {c['where']} | {c['claim']} | {paper_cell(c)} | "
            f"{cell(r, 'flow')} | {cell(r, 'packet')} | {cell(r, 'testbed')} | {c['level']} | "
            f"{off} | {'yes' if r.within else '**no**'} |"
        )
    misses = [(i, r) for i, r in enumerate(rows, 1) if not r.within]
    out += ["", "## Why each miss", ""]
    for i, r in misses:
        c = r.claim
        out.append(f"{i}. **{c['paper']}, {c['where']}** ({c['id']}): {c['cause']} ([decomposition]({c['link']}))")
    out += [
        "",
        "## Which level, and why",
        "",
        "| # | claim | paper's level | the paper's words |",
        "|---|---|---|---|",
    ]
    for i, r in enumerate(rows, 1):
        out.append(f"| {i} | {r.claim['id']} | {r.level} | {r.claim['level_why']} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    ap.add_argument("--out", type=Path, default=OUT, help="the page to write")
    a = ap.parse_args(argv)
    try:
        page = render(load())
    except ClaimError as e:
        print(f"claims: {e}", file=sys.stderr)
        return 2
    if a.check:
        if not a.out.is_file() or a.out.read_text() != page:
            print(f"claims: {a.out} is out of date: run `make repro-claims`", file=sys.stderr)
            return 1
        return 0
    a.out.write_text(page)
    print(f"claims: wrote {a.out.relative_to(ROOT) if a.out.is_relative_to(ROOT) else a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
