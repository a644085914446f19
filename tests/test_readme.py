"""The README runs: every ```python block and every `coflowkit ...` line of its Usage section.

The lines and blocks run in README order in one temporary directory (so that a block reading
`trace.parquet` finds what the `generate` line above it wrote), with a copy of `examples/`
beside them. A line that cannot run here is skipped with a reason printed by the test and
computed from the line itself (root, the FB2010 trace, a Dask cluster's placeholder address),
or named in `LONG` below; nothing is skipped silently.

One substitution, documented in the README under its Usage block: `examples/experiments/loads.toml`
(75 simulations of the 200-coflow workload, minutes) runs with `n_coflows = 20` and `seeds = 1`.
The test uses only the public API (`import coflowkit`, the `coflowkit` command).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: Usage lines (as written, comment stripped) that would run here but take too long, and why.
LONG: dict[str, str] = {}

#: How `loads.toml` is cut down (the README says so under its Usage block): each key is
#: replaced in the file's text, and the test fails if a key is no longer there.
LOADS_SUBSTITUTION = {
    'seeds = 3 ': "seeds = 1 ",
    'preset = "aalo"\n': 'preset = "aalo"\nn_coflows = 20\n',
}

TIMEOUT_S = 300


def readme_text() -> str:
    return README.read_text(encoding="utf-8")


def usage_section(text: str) -> str:
    """The text from `## Usage` to the next `## ` heading."""
    m = re.search(r"^## Usage\n(.*?)(?=^## )", text, re.M | re.S)
    assert m, "README.md: no '## Usage' section"
    return m.group(1)


def fenced(text: str, lang: str) -> list[str]:
    """The bodies of the ```lang blocks of `text`, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.M | re.S)


def usage_lines(text: str) -> list[str]:
    """Every `coflowkit ...` (or `sudo coflowkit ...`) line of the Usage section's sh blocks."""
    lines = []
    for block in fenced(usage_section(text), "sh"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["coflowkit"] or words[:2] == ["sudo", "coflowkit"]:
                lines.append(line)
    return lines


def command(line: str) -> list[str]:
    """A Usage line's words without its comment."""
    return shlex.split(line, comments=True)


def skip_reason(line: str) -> str | None:
    """Why a Usage line cannot run in the test, read from the line; None if it runs."""
    words = command(line)
    joined = " ".join(words)
    if words[0] == "sudo" or "testbed up" in joined:
        return "needs root (an emulated testbed: network namespaces, veth links, HTB)"
    if "FB2010" in joined:
        return "needs the FB2010 trace, which is not in the repository"
    if "tcp://HOST" in joined:
        return "needs a Dask cluster (HOST is a placeholder for its scheduler)"
    if joined in LONG:
        return LONG[joined]
    return None


def prepare(cwd: Path) -> None:
    """A copy of examples/ in `cwd`, with loads.toml cut down as the README says."""
    shutil.copytree(ROOT / "examples", cwd / "examples")
    loads = cwd / "examples" / "experiments" / "loads.toml"
    text = loads.read_text(encoding="utf-8")
    for old, new in LOADS_SUBSTITUTION.items():
        assert old in text, f"{loads}: the README's substitution expects {old!r}"
        text = text.replace(old, new, 1)
    loads.write_text(text, encoding="utf-8")


def run_line(words: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert words[0] == "coflowkit"
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, "-m", "coflowkit", *words[1:]],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=TIMEOUT_S,
    )


def run_block(code: str, cwd: Path, n: int) -> subprocess.CompletedProcess[str]:
    script = cwd / f"readme_block_{n}.py"
    script.write_text(code, encoding="utf-8")
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, script.name],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=TIMEOUT_S,
    )


def test_readme_parses() -> None:
    text = readme_text()
    assert len(fenced(text, "python")) >= 1, "README.md: no ```python block"
    lines = usage_lines(text)
    assert len(lines) >= 10, f"README.md: only {len(lines)} coflowkit lines in Usage"
    assert any(skip_reason(line) is None for line in lines)
    for key in LONG:
        assert key in (" ".join(command(line)) for line in lines), f"LONG names a line the README lacks: {key}"


def test_the_readme_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Usage lines in order, then the Python blocks in order, all in one directory."""
    text = readme_text()
    prepare(tmp_path)
    ran, skipped = [], []
    for line in usage_lines(text):
        words = command(line)
        reason = skip_reason(line)
        if reason is not None:
            skipped.append(f"{' '.join(words)}: {reason}")
            continue
        proc = run_line(words, tmp_path)
        assert proc.returncode == 0, f"README Usage line failed: {line.strip()}\n{proc.stdout}\n{proc.stderr}"
        ran.append(" ".join(words))
    for n, code in enumerate(fenced(text, "python")):
        proc = run_block(code, tmp_path, n)
        assert proc.returncode == 0, f"README python block {n} failed:\n{code}\n{proc.stdout}\n{proc.stderr}"
        ran.append(f"python block {n}")
    with capsys.disabled():
        print(f"\nREADME: {len(ran)} ran, {len(skipped)} skipped:")
        for s in skipped:
            print(f"  skipped: {s}")
    # What the lines say they write is there.
    assert (tmp_path / "results" / "loads" / "report.md").is_file()
    assert (tmp_path / "trace.parquet").is_file()
