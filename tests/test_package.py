"""The package's shape: every module imports on its own, no two modules import
each other (directly or round a loop), no module reaches for another's
private name, and the public API the README shows is importable from
``coflowkit``."""

from __future__ import annotations

import ast
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import coflowkit

PACKAGE = Path(coflowkit.__file__).resolve().parent

#: The binding's extension module: private to the package, imported by the
#: modules that call the Rust core (its names are its own API, ``_core.pyi``).
BINDING = "coflowkit._core"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(importer: str, node: ast.ImportFrom, modules: dict[str, Path]) -> str:
    """The absolute module an ``import from`` names."""
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not _is_package(importer, modules):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_only(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every import of ``name``,
    at the top or inside a function, but not under ``if TYPE_CHECKING``."""
    out: list[tuple[str, list[str], int]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            return
        if isinstance(node, ast.Import):
            out.extend((a.name, [], node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.append((_resolve(name, node, modules), [a.name for a in node.names], node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return out


def _graph() -> dict[str, set[str]]:
    """Module -> the package's modules it makes Python import (a submodule taken
    with ``from pkg import sub``, and the packages above a module that are not
    already above the importer)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        for target, names, _ in _imports(name, path, modules):
            if not target.startswith("coflowkit"):
                continue
            wanted = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules] or [target]
            for w in wanted:
                parts = w.split(".")
                for i in range(1, len(parts) + 1):
                    m = ".".join(parts[:i])
                    if m in modules and m not in own and m != name:
                        graph[name].add(m)
    return graph


def test_no_module_imports_itself_round_a_loop() -> None:
    graph = _graph()
    done: set[str] = set()
    path: list[str] = []

    def walk(m: str) -> None:
        if m in path:
            loop = path[path.index(m) :] + [m]
            raise AssertionError(f"import cycle: {' -> '.join(loop)}")
        if m in done:
            return
        path.append(m)
        for n in sorted(graph.get(m, ())):
            walk(n)
        path.pop()
        done.add(m)

    for m in sorted(graph):
        walk(m)


def test_no_module_takes_a_private_name_from_another() -> None:
    modules = _modules()
    found = []
    for name, path in modules.items():
        for target, names, line in _imports(name, path, modules):
            if not target.startswith("coflowkit"):
                continue
            bad = [n for n in names if n.startswith("_") and not n.startswith("__") and f"{target}.{n}" != BINDING]
            if target != BINDING and any(part.startswith("_") for part in target.split(".")):
                bad.append(target)
            found += [f"{path.relative_to(PACKAGE.parent)}:{line}: {b}" for b in bad]
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_every_module_imports_alone() -> None:
    """Each module imported first in a fresh interpreter: an import that works
    only after another module was imported shows here."""

    def import_alone(module: str) -> str | None:
        r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
        return f"{module}: {(r.stderr.strip().splitlines() or ['exit ' + str(r.returncode)])[-1]}" if r.returncode else None

    names = [m for m in _modules() if not m.endswith("__main__")]
    with ThreadPoolExecutor(max_workers=4) as pool:
        bad = [b for b in pool.map(import_alone, names) if b is not None]
    assert not bad, "\n".join(bad)


def test_the_readme_api_is_importable_from_the_package() -> None:
    for name in coflowkit.__all__:
        assert hasattr(coflowkit, name), name
    from coflowkit import (  # noqa: F401
        AgentClient,
        CoflowWriter,
        Results,
        SimulationError,
        Workload,
        generate,
        generators,
        load_experiment,
        load_trace,
        run_experiment,
        schedulers,
        simulate,
        synthetic,
        topology_info,
        write_trace,
    )
