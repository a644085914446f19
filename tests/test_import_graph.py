"""No cycle between the files of a crate: the module import graph of every crate under crates/.

An edge runs from a file to each module file it names, by `use` (of a path from `crate`, `super`,
`self` or a child module) or by an inline `crate::`, `super::` or `self::` path (outside `#[cfg(test)]` and comments); a path resolves to the longest prefix that is a
module file (`a/b.rs` or `a/b/mod.rs`). No edge runs from a module to one inside it: a parent holds its
children (declares them, re-exports their items, is split into them), and a child that uses its parent is
a part of it. A cycle is a strongly connected component of more than one file: modules none of which
holds another, each reaching the others.

``KNOWN`` lists the cycles still to break (issue 68): a cycle not inside one of them fails, and so does
a known one that is gone (take it off the list).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE = re.compile(r"\buse\s+(crate|super|self)::([^;]*);", re.S)
#: `use child::...`: a path relative to the current module (2018 edition), a child module's name first.
REL_USE = re.compile(r"\buse\s+([a-z_][a-z0-9_]*)::([^;]*);", re.S)


def modules(src: Path) -> dict[tuple[str, ...], Path]:
    """Each module's path (``()`` for the crate root) and its file; ``src/bin`` is not the library."""
    out = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] in ("lib", "main") and len(parts) == 1:
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        if parts and parts[0] == "bin":
            continue
        out[tuple(parts)] = f
    return out


def _code(text: str) -> str:
    """``text`` with comments removed and string and character literals emptied, by one scan (a
    regular expression cannot tell a `//` inside a string from a comment)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif (m := re.match(r'b?r(#*)"', text[i:i + 260])) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            out.append('""')
            i = n if j < 0 else j + len(end)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif c == "'" and (m := re.match(r"'(?:\\.[^']*|[^\\'])'", text[i:i + 12])):
            out.append("' '")
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip(text: str) -> str:
    """``text`` without comments, string contents and ``#[cfg(test)]`` items (a test module's imports
    are not the library's)."""
    text = _code(text)
    while (i := text.find("#[cfg(test)]")) >= 0:
        j = i + len("#[cfg(test)]")
        semi, brace = text.find(";", j), text.find("{", j)
        if brace < 0 or 0 <= semi < brace:
            text = text[:i] + text[semi + 1:]
            continue
        depth, k = 0, brace
        while k < len(text):
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            if depth == 0:
                break
            k += 1
        text = text[:i] + text[k + 1:]
    return text


def expand(tree: str) -> list[list[str]]:
    """`a::{b, c::d}` -> [[a, b], [a, c, d]] (enough for resolution: the leading segments)."""
    tree = tree.strip()
    m = re.match(r"^([A-Za-z0-9_:]*?)(?:::)?\{(.*)\}$", tree, re.S)
    if not m:
        return [[s for s in tree.split(" as ")[0].split("::") if s]]
    head = [s for s in m.group(1).split("::") if s]
    body, depth, cur, parts = m.group(2), 0, "", []
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.strip():
            for tail in expand(p):
                out.append(head + tail)
    return out or [head]


def resolve(mods: dict[tuple[str, ...], Path], here: tuple[str, ...], root: str,
            segs: list[str]) -> tuple[str, ...] | None:
    """The module file a path names from module ``here``: its longest prefix that is one."""
    if root == "crate":
        base: tuple[str, ...] = ()
    elif root == "super":
        base = here[:-1]
    else:
        base = here
    while segs and segs[0] == "super":
        base = base[:-1]
        segs = segs[1:]
    full = base + tuple(s for s in segs if s != "self")
    for n in range(len(full), -1, -1):
        if full[:n] in mods:
            return full[:n]
    return None


def graph(src: Path) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Each module of the crate under ``src`` and the modules it names."""
    mods = modules(src)
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in mods}
    for m, f in mods.items():
        text = strip(f.read_text())
        found: list[tuple[str, list[str]]] = []
        for u in USE.finditer(text):
            for segs in expand(u.group(2)):
                found.append((u.group(1), segs))
        for u in REL_USE.finditer(text):
            if u.group(1) not in ("crate", "super", "self") and (*m, u.group(1)) in mods:
                found.extend(("self", [u.group(1), *segs]) for segs in expand(u.group(2)))
        for p in PATH.finditer(text):
            found.append((p.group(1), [s for s in p.group(2).split("::") if s]))
        for root, segs in found:
            t = resolve(mods, m, root, segs)
            if t is not None and t[: len(m)] != m:
                edges[m].add(t)
    return edges


def sccs(edges: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[list[tuple[str, ...]]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    on: set[tuple[str, ...]] = set()
    out: list[list[tuple[str, ...]]] = []
    i = [0]

    def visit(v: tuple[str, ...]) -> None:
        index[v] = low[v] = i[0]
        i[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def cycles(src: Path) -> list[frozenset[str]]:
    """The cycles of the crate whose sources are under ``src``, each as its files' module paths."""
    edges = graph(src)
    return [frozenset("::".join(c) or "lib" for c in comp) for comp in sccs(edges)]


#: Cycles still to break, per crate (none remain: a new one fails the test).
KNOWN: dict[str, list[frozenset[str]]] = {
}

CRATES = sorted(p.name for p in (ROOT / "crates").iterdir() if (p / "src").is_dir())


@pytest.mark.parametrize("crate", CRATES)
def test_no_new_cycle_between_a_crates_files(crate: str) -> None:
    found = cycles(ROOT / "crates" / crate / "src")
    known = KNOWN.get(crate, [])
    new = [sorted(c) for c in found if not any(c <= k for k in known)]
    assert not new, f"crates/{crate}: files that import each other in a circle: {new}"
    gone = [sorted(k) for k in known if not any(c <= k for c in found)]
    assert not gone, f"crates/{crate}: known cycles no longer there (take them off KNOWN): {gone}"


def test_the_graph_finds_a_cycle_and_resolves_paths(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "lib.rs").write_text("mod a;\nmod b;\nmod c;\npub use c::h;\n")
    (src / "a" / "mod.rs").write_text("use crate::b::{B, inner::X};\n")
    (src / "b.rs").write_text('pub fn f() { super::a::g(); let _ = ("http://x", \'"\'); }\n// use crate::c::C;\n'
                             'fn k<\'a>(_: &\'a str) { crate::a::g(); }\n')
    (src / "c.rs").write_text('const S: &str = "crate::a::x";\n#[cfg(test)]\nmod t { use crate::a::A; }\n'
                             '#[cfg(test)]\nuse crate::a::Y;\npub fn h() { crate::b::f(); }\n')
    assert cycles(src) == [frozenset({"a", "b"})]
    assert graph(src)[()] == set(), "the crate root holds every module: its `pub use c::h` is no edge"
    assert graph(src)[("c",)] == {("b",)}, "an inline path is an edge; a test module's and a comment's are not"
