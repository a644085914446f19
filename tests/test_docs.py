"""The docs read as a manual: no table row wider than a screen, and no relative link to nowhere.

Every docs/*.md page and docs/reproductions/*.md page is checked, and README.md's links too.
A page left out is in `WIDE_ROWS_EXCEPT` with the reason.
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


def pages() -> list[Path]:
    return sorted([*DOCS.glob("*.md"), *DOCS.glob("reproductions/*.md")])


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
