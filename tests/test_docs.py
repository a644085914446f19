"""The docs read as a manual: no table row wider than a screen, no relative link to nowhere, and
no machine path or dated run in a manual page.

Every docs/*.md page and docs/reproductions/*.md page is checked, and README.md's links too.
A page left out is in `WIDE_ROWS_EXCEPT` with the reason.

Manual pages against the notebook. docs/ is the manual (what is true today); docs/lab/ is the
notebook (validation runs, investigations, the benchmark history, dated). Every docs/**/*.md
outside docs/lab/ is a manual page, and in a manual page, code blocks included:

* no line holds a machine path: `MACHINE_PATH`, an absolute path under /work, /tmp, /home, /root or
  /Users (a path in a command is relative to the clone, or a placeholder such as OUT);
* a date (`DATE`, YYYY-MM-DD) appears only where the date is the point:
  - docs/benchmarks.md, in the last cell of a table row (the "measured" column: when that
    number was made);
  - a reproduction page (docs/reproductions/*.md), as a stamp: a parenthesis opened by the date
    that holds, before it closes, the command in backquotes that made the numbers, e.g.
    "Measured (2026-11-27, `python examples/reproductions/baraat/gap.py`)"; the stamp may wrap onto
    the next lines. "On 2026-11-23 we tried ..." is a diary, not a stamp.
  Everything else dated belongs in docs/lab/.

Pages written by a script that still break the rule are in `NOTEBOOK_EXCEPT`, with the script that
writes them: the fix is in the script, and the entry goes when the page passes (a test says so).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: The widest table row a page may hold, in characters: a screen.
MAX_ROW = 200

#: Pages whose table rows are not checked (yet), relative to the repository, and why.
WIDE_ROWS_EXCEPT: dict[str, str] = {
    "docs/reproductions/karuna.md": "written by `make repro-karuna` (examples/reproductions/karuna/regenerate.py)",
    "docs/reproductions/aalo.md": "written by `make repro-aalo` (examples/reproductions/aalo/regenerate.py)",
    "docs/reproductions/dcas.md": "written by `make repro-dcas` (examples/reproductions/dcas.py)",
    "docs/reproductions/README.md": "written by `make repro-claims` (examples/reproductions/claims.py)",
}

# [text](target) and [text](<target>), not images' URLs only: both resolve the same way.
LINK = re.compile(r"\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


#: An absolute path on the machine that wrote the page (not `/run/...` or `/opt/...` in a deployment
#: example, and not a URL's path: the character before the slash is no word character or dot).
MACHINE_PATH = re.compile(r"(?<![\w.:/])/(work|tmp|home|root|Users)/")
DATE = re.compile(r"20\d\d-\d\d-\d\d")
#: A reproduction page's stamp: "(DATE[, time][, words], `command ...`": the date opens the parenthesis,
#: a code span starts before it closes (newlines allowed: a stamp may wrap).
STAMP = re.compile(r"\((20\d\d-\d\d-\d\d)[^()`]*`")

#: Manual pages written by scripts (the lead's examples/) that still hold dated runs or machine paths,
#: and what their script must change. Each goes when its page passes.
NOTEBOOK_EXCEPT: dict[str, str] = {
}


def pages() -> list[Path]:
    return sorted([*DOCS.glob("*.md"), *DOCS.glob("reproductions/*.md")])


def manual_pages() -> list[Path]:
    """Every docs/**/*.md outside docs/lab/."""
    return sorted(p for p in DOCS.rglob("*.md") if DOCS / "lab" not in p.parents)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, line) of a Markdown file outside fenced code blocks."""
    out, fenced = [], False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, line))
    return out


def test_the_exceptions_are_pages() -> None:
    for page in WIDE_ROWS_EXCEPT:
        assert (ROOT / page).is_file(), f"WIDE_ROWS_EXCEPT names {page}, which is gone: drop it"


@pytest.mark.parametrize("page", pages(), ids=rel)
def test_no_table_row_wider_than_a_screen(page: Path) -> None:
    if rel(page) in WIDE_ROWS_EXCEPT:
        pytest.skip(f"{rel(page)}: {WIDE_ROWS_EXCEPT[rel(page)]}")
    wide = [
        f"{rel(page)}:{n}: a table row of {len(line)} characters (at most {MAX_ROW}): {line[:60]}..."
        for n, line in prose_lines(page)
        if line.lstrip().startswith("|") and len(line) > MAX_ROW
    ]
    assert not wide, "\n".join(wide)


@pytest.mark.parametrize("page", [ROOT / "README.md", *pages()], ids=rel)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for n, line in prose_lines(page):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL or an anchor in the same page
            path = target.split("#", 1)[0]
            if not (page.parent / path).exists():
                broken.append(f"{rel(page)}:{n}: link to {target}, which does not exist")
    assert not broken, "\n".join(broken)


def notebook_lines(text: str, name: str) -> list[str]:
    """The lines of manual page `name` (e.g. "docs/benchmarks.md") holding `text` that break the rule
    of the module doc, as "name:line: why"."""
    lines = text.splitlines()
    bad = [
        f"{name}:{n}: a machine path ({m.group(0)}...): make it relative or a placeholder"
        for n, line in enumerate(lines, 1)
        if (m := MACHINE_PATH.search(line))
    ]
    allowed: set[int] = set()  # offsets of dates that are the point
    if name == "docs/benchmarks.md":
        offset = 0
        for line in lines:
            cells = line.rstrip().rstrip("|").split("|")
            if line.lstrip().startswith("|") and len(cells) > 1 and DATE.fullmatch(cells[-1].strip()):
                allowed.add(offset + line.rindex(cells[-1].strip()))
            offset += len(line) + 1
    if name.startswith("docs/reproductions/"):
        allowed |= {m.start(1) for m in STAMP.finditer(text)}
    for m in DATE.finditer(text):
        if m.start() not in allowed:
            n = text.count("\n", 0, m.start()) + 1
            bad.append(
                f"{name}:{n}: a date ({m.group(0)}) outside benchmarks.md's date column and a "
                "reproduction's stamp: a dated run belongs in docs/lab/"
            )
    return bad


def test_the_notebook_exceptions_are_pages_that_still_need_them() -> None:
    for page, why in NOTEBOOK_EXCEPT.items():
        assert (ROOT / page).is_file(), f"NOTEBOOK_EXCEPT names {page}, which is gone: drop it"
        assert notebook_lines((ROOT / page).read_text(encoding="utf-8"), page), f"{page} passes now ({why}): drop it from NOTEBOOK_EXCEPT"


@pytest.mark.parametrize("page", manual_pages(), ids=rel)
def test_no_machine_path_or_dated_run_in_a_manual_page(page: Path) -> None:
    if rel(page) in NOTEBOOK_EXCEPT:
        pytest.skip(f"{rel(page)}: {NOTEBOOK_EXCEPT[rel(page)]}")
    bad = notebook_lines(page.read_text(encoding="utf-8"), rel(page))
    assert not bad, "\n".join(bad)


def test_the_rule_tells_a_stamp_from_a_diary() -> None:
    text = (
        "Measured (2026-11-27,\n  `python gap.py --seed 1`): 3%.\n"  # a stamp, wrapped
        "On 2026-11-23 the files took 41 minutes.\n"  # a diary
        "Written to /tmp/out (`coflowkit run`).\n"  # a machine path
    )
    bad = [line.split(": ", 1)[1] for line in notebook_lines(text, "docs/reproductions/x.md")]
    assert len(bad) == 2, bad
    assert bad[0].startswith("a machine path") and "2026-11-23" in bad[1]
    # the same stamp outside a reproduction page is a dated run; benchmarks.md's date column is not
    assert len(notebook_lines(text, "docs/x.md")) == 3
    assert not notebook_lines("| 1 | a | 2 s | | 1 | 2026-11-29 |\n", "docs/benchmarks.md")


#: A source path a manual page names: `crates/...rs`, `python/coflowkit/...py`, `examples/...`, `tests/...py`.
SOURCE = re.compile(r"(crates/[\w/.-]+\.rs|python/coflowkit/[\w/.-]+\.py|examples/[\w/.-]+\.(?:py|toml)|tests/[\w/.-]+\.py)")


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_source_paths_a_page_names_exist(page: Path) -> None:
    """A manual page that names a source file names one that exists, so a file moved takes its
    mentions with it (the lab's pages keep the paths of their day)."""
    text = page.read_text()
    missing = [f"line {text[:m.start()].count(chr(10)) + 1}: {m.group(1)}" for m in SOURCE.finditer(text)
               if not (ROOT / m.group(1)).exists()]
    assert not missing, f"{page.relative_to(ROOT)} names files that do not exist: {missing}"
