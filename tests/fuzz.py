"""Fresh random exploration of every randomized test suite: `make fuzz [SEEDS=N]`.

`make test` runs the property and differential tests with one fixed seed
(`PROPTEST_RNG_SEED`, 20261121; Hypothesis derandomized), so that the same
commit gets the same verdict everywhere. This driver runs them again with
fresh seeds, one seed at a time: every proptest suite of the Rust crates
(the reference simulator against the engine for every scheduler, big switch
and multi-hop; the allocators against the slow max-min; the trace, topology
and rate parsers; the runtime's wire messages) in a release build, and the
Hypothesis round trips of the Python package. For each failure it prints
the seed, the test and the command that replays it; the minimal case is in
the test's own output (the reference suite prints it as Rust code, ready to
become a named regression test). Failure persistence is off here: a case
found is kept by writing it as a named test, not by a file the next run
happens to read.

    python tests/fuzz.py --seeds 30              # 30 fresh seeds, every suite
    python tests/fuzz.py --seeds 5 --only reference
    python tests/fuzz.py --seed 123 --only reference   # replay one seed

Exit status: 0 when every seed passed, 1 when some failed, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Suite:
    """One test binary with property tests: how cargo names it and how to replay it."""

    name: str
    package: str
    #: `lib` for a crate's unit tests, else the integration test's name.
    target: str
    #: The source files whose `proptest!` blocks this binary runs.
    sources: tuple[str, ...]

    def cargo_args(self) -> list[str]:
        return ["-p", self.package, "--lib"] if self.target == "lib" else ["-p", self.package, "--test", self.target]


SUITES = (
    Suite("reference", "coflowkit-sim", "reference", ("crates/sim/tests/reference/main.rs",)),
    Suite("sim-greedy-matching", "coflowkit-sim", "greedy_matching", ("crates/sim/tests/greedy_matching.rs",)),
    Suite("alloc-differential", "coflowkit-alloc", "differential", ("crates/alloc/tests/differential.rs",)),
    Suite("alloc-incremental", "coflowkit-alloc", "incremental", ("crates/alloc/tests/incremental.rs",)),
    Suite("alloc-lib", "coflowkit-alloc", "lib", ("crates/alloc/src/bipartite.rs",)),
    Suite("packet", "coflowkit-packet", "engine", ("crates/packet/tests/engine.rs",)),
    Suite("packet-hosts", "coflowkit-packet", "hosts", ("crates/packet/tests/hosts.rs",)),
    Suite("packet-baraat", "coflowkit-packet", "baraat", ("crates/packet/tests/baraat.rs",)),
    Suite(
        "packet-lib",
        "coflowkit-packet",
        "lib",
        (
            "crates/packet/src/port.rs",
            "crates/packet/src/engine/queued.rs",
            "crates/packet/src/engine/events.rs",
            "crates/packet/src/packet.rs",
        ),
    ),
    Suite("decomposed-job", "coflowkit-decomposed", "job", ("crates/decomposed/tests/job.rs",)),
    Suite("model", "coflowkit-model", "lib", ("crates/model/src/topology/tests.rs",)),
    Suite(
        "workload-parsers",
        "coflowkit-workload",
        "lib",
        ("crates/workload/src/benchmark.rs", "crates/workload/src/native/tests.rs"),
    ),
    Suite(
        "topology-config",
        "coflowkit-topology-config",
        "lib",
        ("crates/topology-config/src/config.rs", "crates/topology-config/src/rate.rs"),
    ),
    Suite(
        "runtime-wire",
        "coflowkit-runtime",
        "lib",
        ("crates/runtime/src/coordinator/tests.rs", "crates/runtime/src/agent/tests.rs", "crates/runtime/src/wire.rs"),
    ),
)

#: The Python suites with Hypothesis tests.
HYPOTHESIS_FILES = ("tests/test_roundtrip.py", "tests/test_replay_plans.py")


def uncovered_sources() -> list[str]:
    """Files with property tests that no suite above runs (a new suite must be listed)."""
    covered = {s for suite in SUITES for s in suite.sources}
    found = []
    for path in sorted((ROOT / "crates").rglob("*.rs")):
        rel = path.relative_to(ROOT).as_posix()
        if "/target/" not in rel and "proptest! {" in path.read_text() and rel not in covered:
            found.append(rel)
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if "from hypothesis import" in path.read_text() and rel not in HYPOTHESIS_FILES:
            found.append(rel)
    return found


def declared_cases(suite: Suite) -> int:
    """Random cases one seed of `suite` draws, as its sources declare them
    (`with_cases(N)` for each test of a `proptest!` block, and the counts of
    the reference's `differential!` lists); 256, proptest's default, where
    no count is given."""
    total = 0
    for rel in suite.sources:
        text = (ROOT / rel).read_text()
        for block in re.finditer(r"proptest! \{(.*?)\n\s*\}\n", text, re.S):
            body = block.group(1)
            n = re.search(r"with_cases\((\d+)\)", body)
            total += (int(n.group(1)) if n else 256) * body.count("#[test]")
        for block in re.finditer(r"differential! \{(.*?)\n\}", text, re.S):
            total += sum(int(n) for n in re.findall(r",\s*(\d+);", block.group(1)))
    return total


def build(suites: list[Suite]) -> dict[str, str]:
    """Builds the suites' test binaries in release; their paths by suite name."""
    args = ["cargo", "test", "--release", "--no-run", "--message-format=json-render-diagnostics"]
    for p in sorted({s.package for s in suites}):
        args += ["-p", p]
    proc = subprocess.run(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"fuzz: `{' '.join(args)}` failed (exit {proc.returncode})")
    exes: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable") or not msg["profile"]["test"]:
            continue
        # e.g. "path+file:///work/main/crates/sim#coflowkit-sim@0.1.0"
        # (older cargo: "coflowkit-sim 0.1.0 (path+file://...)")
        pid = msg["package_id"]
        package = pid.rsplit("#", 1)[-1].split("@", 1)[0] if "#" in pid else pid.split(" ", 1)[0]
        target, kind = msg["target"]["name"], msg["target"]["kind"]
        for s in suites:
            if s.package != package:
                continue
            if (s.target == "lib" and "lib" in kind) or (s.target == target and "test" in kind):
                exes[s.name] = msg["executable"]
    missing = [s.name for s in suites if s.name not in exes]
    if missing:
        sys.exit(f"fuzz: cargo built no test binary for {', '.join(missing)}")
    return exes


@dataclass
class Failure:
    seed: int
    suite: str
    tests: list[str]
    replay: str
    output: str


@dataclass
class Tally:
    runs: int = 0
    cases: int = 0
    failures: list[Failure] = field(default_factory=list)


def run_rust(suite: Suite, exe: str, seed: int, tally: Tally) -> None:
    env = dict(os.environ, PROPTEST_RNG_SEED=str(seed), PROPTEST_DISABLE_FAILURE_PERSISTENCE="1")
    # Only the property tests: the unit tests around them do not depend on the seed.
    proc = subprocess.run([exe, "-q"], cwd=ROOT / "crates" / suite.package.removeprefix("coflowkit-"),
                          env=env, capture_output=True, text=True)
    tally.runs += 1
    tally.cases += declared_cases(suite)
    if proc.returncode != 0:
        out = proc.stdout + proc.stderr
        tests = re.findall(r"^---- (\S+) stdout ----$", out, re.M) or ["(no test named: see the output)"]
        replay = " ".join(
            [f"PROPTEST_RNG_SEED={seed}", "cargo", "test", "--release", *suite.cargo_args(), "--", *tests[:1]]
        )
        tally.failures.append(Failure(seed, suite.name, tests, replay, out))


def run_hypothesis(seed: int, tally: Tally) -> None:
    env = dict(os.environ, COFLOWKIT_HYPOTHESIS_PROFILE="fuzz")
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--hypothesis-seed={seed}",
            *HYPOTHESIS_FILES]
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    tally.runs += 1
    if proc.returncode != 0:
        out = proc.stdout + proc.stderr
        tests = re.findall(r"^FAILED (\S+)", out, re.M) or ["(see the output)"]
        replay = f"COFLOWKIT_HYPOTHESIS_PROFILE=fuzz .venv/bin/python -m pytest --hypothesis-seed={seed} {tests[0]}"
        tally.failures.append(Failure(seed, "hypothesis", tests, replay, out))


def main(argv: list[str] | None = None) -> int:
    names = [s.name for s in SUITES] + ["hypothesis"]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="tests/fuzz.py")
    p.add_argument("--seeds", type=int, default=10, help="fresh seeds to run (default 10)")
    p.add_argument("--seed", type=int, action="append", default=[], help="run this seed (repeatable); no fresh ones")
    p.add_argument("--only", action="append", default=[], choices=names, metavar="SUITE",
                   help=f"run only this suite (repeatable): {', '.join(names)}")
    p.add_argument("--stop", action="store_true", help="stop at the first failing seed")
    a = p.parse_args(argv)
    if a.seeds < 1 and not a.seed:
        p.error(f"--seeds must be at least 1, got {a.seeds}")
    stray = uncovered_sources()
    if stray:
        print(f"fuzz: property tests in {', '.join(stray)} belong to no suite: list them in tests/fuzz.py",
              file=sys.stderr)
        return 2
    only = set(a.only or names)
    suites = [s for s in SUITES if s.name in only]
    seeds = a.seed or [secrets.randbelow(2**63) for _ in range(a.seeds)]
    exes = build(suites) if suites else {}
    tally = Tally()
    t0 = time.monotonic()
    for i, seed in enumerate(seeds, 1):
        failed_before = len(tally.failures)
        for s in suites:
            run_rust(s, exes[s.name], seed, tally)
        if "hypothesis" in only:
            run_hypothesis(seed, tally)
        new = tally.failures[failed_before:]
        verdict = "ok" if not new else "FAILED in " + ", ".join(f.suite for f in new)
        print(f"seed {i}/{len(seeds)} = {seed}: {verdict} ({time.monotonic() - t0:.0f} s)", flush=True)
        for f in new:
            print(f"  {f.suite}: {', '.join(f.tests)}\n  replay: {f.replay}", flush=True)
            log = ROOT / "target" / "fuzz" / f"{f.suite}-{f.seed}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(f.output)
            print(f"  output: {log.relative_to(ROOT)}", flush=True)
        if new and a.stop:
            break
    wall = time.monotonic() - t0
    print(
        f"fuzz: {len(seeds)} seeds, {tally.runs} suite runs, {tally.cases} declared Rust cases, "
        f"{len(tally.failures)} failures, {wall:.0f} s"
    )
    for f in tally.failures:
        print(f"  seed {f.seed} {f.suite} {', '.join(f.tests)}\n    replay: {f.replay}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
