"""What the testbed report (sim_vs_testbed.py) compares: each workload's page, figure and default
scales, the testbed's policies with the simulated scheduler each stands for and those that run through
the runtime, and the thresholds by which the page calls a gap or an order. The runs and the page
(sim_vs_testbed_page.py) both read them, so they live apart from either."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TRACE = ROOT.parent / "shared" / "data" / "FB2010-1Hr-150-0.txt"
FIGURES = ROOT / "docs" / "testbed"
#: Each workload's page and figure.
PAGES = {
    "fb2010": (ROOT / "docs" / "lab" / "testbed-vs-simulation.md", FIGURES / "cct-scatter.png"),
    "dcas": (ROOT / "docs" / "lab" / "testbed-vs-simulation-dcas.md", FIGURES / "cct-scatter-dcas.png"),
}
#: Each workload's default sizes and times scale. FB2010 at 100 Mbit/s: a replay of about 80 s. The D-CAS mix is
#: generated for the testbed's port rate, so scaling sizes and times alike keeps its load: x0.01 makes its
#: largest flow 5 MiB, a replay of about 50 s with 200 coflows.
SCALES = {"fb2010": (0.0002, 0.02), "dcas": (0.01, 0.01)}
#: D-CAS V-A's thresholdVolume (bytes; 1 MB): a subcoflow with less left is sent FIFO, not negotiated.
DCAS_THRESHOLD = 1_000_000
#: D-CAS V-A's hosts' rate (bit/s), which its delta, T and expiry refer to.
DCAS_RATE = 1e9
#: The sender policies that are the Rust host policies: each is simulated with the spec the replay
#: runs (``replay.policy_spec``; the host keys are the simulator's to ignore), so no table pairs them.
#: ``dcas-local``: D-CAS with no negotiation (each sender keeps its own desired priority; ``loss=1``).
HOST_POLICIES = ("pias", "fifo-lm", "tafe", "karuna", "dcas", "dcas-local")
#: The simulated scheduler each of the other runs stands for.
SIMULATED = {
    "plain": "fair",
    # The runtime's agents send a coflow the coordinator has not scheduled yet in the switches' top class
    # (docs/runtime.md), ahead of every scheduled flow: D-CLAS with `local=first` (docs/schedulers.md).
    "aalo": "aalo:local=first",
    "varys": "varys",
    # Per-flow fairness through the runtime (the coordinator's `fair`): what
    # the runtime's own machinery costs against `plain`, which has none.
    "fair-rt": "fair",
    # D-CLAS with strict priority between its queues, as the switches' queues are.
    "aalo-strict": "aalo:queues=strict;local=first",
    # D-CLAS's rates alone: every flow in the top queue, so the switches'
    # strict priorities do not serve the queues strictly on top of the
    # weighted rates, nor a new coflow ahead of the others (coordinator --classes off).
    "aalo-rates": "aalo",
}
#: Runtime options of the policies that need them.
RUNTIME_OPTIONS: dict[str, dict[str, bool]] = {"aalo-rates": {"classes": False}}
#: What runs through the runtime's coordinator and agents rather than as a sender policy, with the
#: coordinator's scheduler (D-CLAS as Pseudocode 1 has it: the agents' local decisions are the runtime's).
RUNTIME = {
    "aalo": "aalo",
    "varys": "varys",
    "fair-rt": "fair",
    "aalo-strict": "aalo:queues=strict",
    "aalo-rates": "aalo",
}
#: Diagnostic runs through the runtime that stand for a scheduler already compared (not ranked).
CONTROLS = ("fair-rt", "aalo-strict", "aalo-rates")
#: A gap to explain: testbed and simulated average CCT differ by more than this.
GAP = 0.25
#: Two schedulers whose simulated mean CCTs differ by less than this (relative to the smaller) are
#: closer than the testbed resolves: one policy's mean CCT moves by 3-11% between two runs on this
#: machine (the repeated runs of docs/lab/testbed-vs-simulation.md), so the page counts their order apart.
SIM_CLOSE = 0.05
