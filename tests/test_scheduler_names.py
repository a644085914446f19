"""What differs per scheduler is in its descriptor: no crate tests a scheduler's name outside its folder.

A scheduler lives in `crates/sched/src/<module>` (a folder with `mod.rs`, or one file) that holds its
logic, its host policy and its `SchedulerDescriptor`; the registry lists the descriptors. A driver
(the flow engine, the packet engine, the runtime, the binding) reads what it needs from the
descriptor (`Parts`: host policy, switch kind, coordinator defaults, preflight, local classes; its
cost), so a comparison of a spec's name with a scheduler's name anywhere else is a descriptor field
missing. This test finds such comparisons in every crate's library code (tests excluded):
`name == "x"`, `name != "x"` and match arms `"x" =>` of a `match` on a name, for every registered
name `x`. docs/architecture.md's list of what adding a scheduler touches says the same; the second
test holds that list to the registry's layout.

The testbed's Python (python/coflowkit/testbed) holds to the same rule: what differs per replay policy
is its `ReplayPolicy` in the one table of testbed/replay/modes.py (`REPLAY_POLICIES`), and what is the
scheduler's own is read from the binding (the host policy's `negotiates`, the descriptor's `parts`).
Its scan reads the syntax tree: a comparison (`==`, `!=`, `in`, `not in`, `is`) of anything with a
string literal that is a scheduler's or a replay policy's name, or a `case` of such a literal, is a
table field or a binding getter missing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from test_import_graph import strip

ROOT = Path(__file__).resolve().parents[1]
SCHED = ROOT / "crates" / "sched" / "src"
TESTBED = ROOT / "python" / "coflowkit" / "testbed"


def homes() -> dict[str, Path]:
    """Each registered scheduler's name and the folder (or file) that defines its descriptor."""
    out: dict[str, Path] = {}
    for f in SCHED.rglob("*.rs"):
        text = f.read_text()
        for m in re.finditer(r"SchedulerDescriptor = SchedulerDescriptor \{", text):
            name = re.search(r'\n    name: "([^"]+)"', text[m.end():])
            assert name, f"{f}: a descriptor without a name"
            out[name.group(1)] = f
        for m in re.finditer(r'size_ordered\(\n\s*"([^"]+)"', text):
            out[m.group(1)] = f
    return {n: (f.parent if f.name == "mod.rs" else f) for n, f in out.items()}


def literal_code(text: str) -> str:
    """``text`` without comments and ``#[cfg(test)]`` items, its string literals kept (numbered
    placeholders put back after `strip`, which empties them)."""
    lits: list[str] = []

    def keep(m: re.Match[str]) -> str:
        lits.append(m.group(0))
        return f"__LIT{len(lits) - 1}__"

    # Literals first (a `//` inside one is not a comment); a literal inside a comment is then
    # dropped with it.
    marked = re.sub(r'"(?:[^"\\\n]|\\.)*"', keep, text)
    code = strip(marked)
    return re.sub(r"__LIT(\d+)__", lambda m: lits[int(m.group(1))], code)


def name_tests(code: str, names: list[str]) -> list[tuple[int, str]]:
    """Each (line, name) where ``code`` compares a name with a scheduler's name."""
    alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    out = []
    for m in re.finditer(rf'\bname\b[\w.()]*\s*(?:==|!=)\s*"({alt})"', code):
        out.append((code[: m.start()].count("\n") + 1, m.group(1)))
    for m in re.finditer(r"match\s+[^{;]*\bname\b[^{;]*\{", code):
        depth, k = 1, m.end()
        while k < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[k], 0)
            k += 1
        for arm in re.finditer(rf'"({alt})"\s*(?:=>|\|)', code[m.end():k]):
            out.append((code[: m.end() + arm.start()].count("\n") + 1, arm.group(1)))
    return out


def test_no_crate_tests_a_schedulers_name_outside_its_folder() -> None:
    where = homes()
    assert len(where) >= 20, sorted(where)
    found = []
    for f in sorted((ROOT / "crates").glob("*/src/**/*.rs")):
        for line, name in name_tests(literal_code(f.read_text()), list(where)):
            home = where[name]
            if f == home or home in f.parents:
                continue
            found.append(f"{f.relative_to(ROOT)}:{line}: tests the name '{name}'")
    assert not found, "a descriptor field is missing:\n" + "\n".join(found)


def test_the_scan_finds_a_name_test() -> None:
    code = literal_code(
        'fn f(spec: &S) { if spec.name == "aalo" { } // name == "tafe"\n'
        '  match spec.name.as_str() { "pias" | "karuna" => 1, _ => 0 };\n'
        '  let q = match kind { "fifo" => 1, _ => 0 }; }\n'
        '#[cfg(test)]\nmod tests { fn g(n: &str) -> bool { n.name == "fair" } }\n'
    )
    assert name_tests(code, ["aalo", "tafe", "pias", "karuna", "fifo", "fair"]) == [
        (1, "aalo"),
        (2, "pias"),
        (2, "karuna"),
    ]


def replay_policy_names() -> list[str]:
    """The names of the replay's policies: the first argument of each `ReplayPolicy(...)` in the
    table of testbed/replay/modes.py (read from its source: no build needed)."""
    tree = ast.parse((TESTBED / "replay" / "modes.py").read_text())
    return [
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "ReplayPolicy"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ]


def _literals(node: ast.expr) -> list[str]:
    """The string literals ``node`` is (a constant) or holds (a tuple, list or set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for e in node.elts for s in _literals(e)]
    return []


def _case_literals(pattern: ast.pattern) -> list[str]:
    """The string literals a ``case`` pattern matches."""
    if isinstance(pattern, ast.MatchValue):
        return _literals(pattern.value)
    if isinstance(pattern, ast.MatchOr):
        return [s for p in pattern.patterns for s in _case_literals(p)]
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return _case_literals(pattern.pattern)
    return []


_COMPARE = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)


def python_name_tests(source: str, names: list[str]) -> list[tuple[int, str]]:
    """Each (line, name) where Python ``source`` compares something with the literal ``name`` (one of
    ``names``) or has a ``case`` of it."""
    known = set(names)
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if isinstance(op, _COMPARE):
                    for side in (sides[i], sides[i + 1]):
                        out += [(node.lineno, s) for s in _literals(side) if s in known]
        elif isinstance(node, ast.match_case):
            out += [(node.pattern.lineno, s) for s in _case_literals(node.pattern) if s in known]
    return sorted(set(out))


def test_no_testbed_module_tests_a_policy_name() -> None:
    policies = replay_policy_names()
    assert {"plain", "pias", "dcas"} <= set(policies), policies
    names = sorted({*homes(), *policies})
    found = []
    for f in sorted(TESTBED.rglob("*.py")):
        for line, name in python_name_tests(f.read_text(), names):
            found.append(f"{f.relative_to(ROOT)}:{line}: tests the name '{name}'")
    assert not found, "a ReplayPolicy field (or a getter of the binding) is missing:\n" + "\n".join(found)


def test_the_python_scan_finds_a_name_test() -> None:
    source = (
        "def f(name, r, p, spec, how):\n"
        "    if name == 'plain': pass\n"
        "    x = 'dcas' != p.name\n"
        "    y = r.policy in ('pias', 'tafe', 'max')\n"
        "    match spec:\n"
        "        case 'karuna' | 'other': pass\n"
        "        case 'fifo-lm' as n: pass\n"
        "    ok = [ReplayPolicy('fair', 'help'), spec.get('name', 'plain'), how == 'max', {'srpt': 1}['srpt']]\n"
        "    # if name == 'aalo'\n"
        "    doc = \"name == 'varys'\"\n"
    )
    names = ["plain", "dcas", "pias", "tafe", "karuna", "fifo-lm", "fair", "srpt", "aalo", "varys"]
    assert python_name_tests(source, names) == [
        (2, "plain"),
        (3, "dcas"),
        (4, "pias"),
        (4, "tafe"),
        (6, "karuna"),
        (7, "fifo-lm"),
    ]


def test_architecture_lists_what_adding_a_scheduler_touches() -> None:
    """The list in docs/architecture.md names the registry's layout as it is: the descriptor type
    and its `Parts`, the registry's `SCHEDULERS`, and every scheduler module it names exists."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index("Adding a scheduler touches")
    section = text[start: text.index("No CLI, binding or runtime code changes", start)]
    registry = (SCHED / "registry.rs").read_text()
    assert "pub const SCHEDULERS" in registry and "`SCHEDULERS`" in section
    descriptor = (SCHED / "descriptor.rs").read_text()
    for field in re.findall(r"\n    pub (\w+): ", descriptor[descriptor.index("pub struct Parts"):descriptor.index("impl Parts")]):
        assert f"`{field}`" in section, f"architecture.md's list does not name Parts::{field}"
    for module in re.findall(r"&crate::(\w+)::[A-Z_]+,", registry):
        assert (SCHED / module / "mod.rs").exists() or (SCHED / f"{module}.rs").exists(), module


def test_every_packet_part_with_knobs_is_in_the_knob_table() -> None:
    """Every transport (a file under transport/ that declares `RULES`) has its line in
    `transports::ALL` with its own knobs (`<module>::KNOBS`, or none when it declares none); every
    other part that declares `KNOBS` has its line in `knobs::PARTS`. The knob table `--packet help`,
    scenario files and the knob checks read is assembled from these two lists alone."""
    src = ROOT / "crates" / "packet" / "src"
    parts = (src / "knobs.rs").read_text()
    listed = (src / "transports.rs").read_text()
    listed = listed[listed.index("pub const ALL"):]
    listed = listed[: listed.index("];")]
    missing = []
    for f in sorted(src.rglob("*.rs")):
        text = f.read_text()
        module = "::".join(f.relative_to(src).with_suffix("").parts)
        has_knobs = re.search(r"^pub const KNOBS: &\[Knob\]", text, re.M)
        if f.parent.name == "transport" and re.search(r"^pub const RULES: Rules", text, re.M):
            kind = re.search(r"pub const (\w+): TransportKind = TransportKind\(&RULES\)", text)
            knobs = f"{f.stem}::KNOBS" if has_knobs else "&[]"
            line = rf"kind: TransportKind::{kind.group(1) if kind else '?'},\s*knobs: {re.escape(knobs)},"
            if not re.search(line, listed):
                missing.append(f"{module}: no line `kind: ..., knobs: {knobs}` in transports::ALL")
        elif has_knobs and f"crate::{module}::KNOBS" not in parts:
            missing.append(f"{module}: not in knobs::PARTS")
    assert not missing, "\n".join(missing)


def test_architecture_lists_what_adding_a_transport_touches() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index("Adding a transport to the packet engine touches")
    section = text[start: text.index("Adding a queue kind", start)]
    for name in ("`RULES`", "`option`", "`KNOBS`", "`transports::ALL`", "`pub mod`"):
        assert name in section, name
    rules = (ROOT / "crates" / "packet" / "src" / "transport.rs").read_text()
    assert "pub option: bool" in rules
