"""What TAFE's packet-level runs (tafe_packet.py) run and the page's packet-level section
(tafe_packet_page.py) reads back: the schedulers at both levels, the slices and their seeds, the
one-change settings (deadlines, the whole distributions, more flows per task, both together, FIFO
ports) and the names the tables give them. Both modules read them, so they live apart from either."""

from __future__ import annotations

#: fifo's coordinator at packet level decides this often (its default, 10 ms, is longer than a
#: task of 1-100 KB).
COORDINATOR_INTERVAL = "100us"
N_TASKS = 100
#: label -> (flow-level spec, packet-level spec, packet options)
SCHEMES = {
    "fifo": ("fifo", "fifo", f"coordinator_interval={COORDINATOR_INTERVAL}"),
    "fifo-lm": ("fifo-lm:threshold=p80", "fifo-lm:threshold=p80", None),
    "d2tcp": ("d2tcp", "d2tcp", None),
    "tafe": ("tafe", "tafe", None),
}
#: Fig. 2's extra row: FIFO between tasks enforced by strict priority at packet level.
FIFO_BY_CLASS = "FIFO, task k in class k-1 (packet: DCTCP)"
#: The slices of V-C/V-D: (min_task, max_task).
SLICES = {"small": ("1KB", "100KB"), "large": ("10MB", "1TB")}
#: Seeds per slice (the large tasks take far longer to simulate packet by packet).
SLICE_SEEDS = {"small": (1, 2, 3), "large": (1, 2)}
#: The task-size distributions, as the tables name them.
SIZE_NAME = {"websearch": "web search", "datamining": "data mining"}


# -- why TAFE does not beat D2TCP here: one change at a time --------------------------------------

#: (a) every flow's deadline, a multiple of its ideal time (`with_deadlines`).
DEADLINE_K = 2.0
#: (c) flows per task (base: 2), one server each.
FLOWS_PER_TASK = (8, 16, 40)
#: (b) TAFE on the whole distributions, with thresholds that split them.
TAFE_FULL = "tafe:thresholds=p50/p90"
#: (b) and (c) together: the whole distributions (`TAFE_FULL`) with this many flows per task.
COMBINED_FLOWS = 40
#: The statistic each slice's claims use, with the paper's TAFE / D2TCP.
SLICE_CLAIMS = {"small": (("p99", 0.64, "Fig. 7"),),
                "large": (("mean", 0.55, "Fig. 8"), ("max", 4 / 6, "Fig. 9")),
                "full": (("mean", 0.55, "Fig. 8's"), ("p99", 0.64, "Fig. 7's"), ("max", 4 / 6, "Fig. 9's"))}


def settings() -> list[tuple[str, str, str, int]]:
    """The runs of `causes`: (setting, slice, sizes, flows per task), one change each from the
    base (2 flows per task, no deadlines, the paper's thresholds, a slice)."""
    out = [("deadlines", sl, z, 2) for sl in SLICES for z in SIZE_NAME]
    out += [("full", "full", z, 2) for z in SIZE_NAME]
    out += [(f"{n} flows", sl, z, n) for n in FLOWS_PER_TASK for sl, z in
            (("small", "websearch"), ("small", "datamining"), ("large", "websearch"))]
    return out


def combined_settings() -> list[tuple[str, str, str, int]]:
    """The runs of (b) and (c) together, as `settings`: the whole distributions with
    `COMBINED_FLOWS` flows per task."""
    return [(COMBINED, "full", z, COMBINED_FLOWS) for z in SIZE_NAME]


COMBINED = f"full, {COMBINED_FLOWS} flows"


#: TAFE with FIFO packet queues inside each class (`tafe_service=fifo`): the same host policy and
#: marking, the flows of a class interleaved instead of served one after the other.
FIFO_PORTS = "tafe fifo"


def service_settings() -> list[tuple[str, str, str, int]]:
    """The runs of `service`, as `settings`: the base slices, `FLOWS_PER_TASK[-1]` flows per task
    and (b) and (c) together."""
    many = FLOWS_PER_TASK[-1]
    out = [("base", sl, z, 2) for sl in SLICES for z in SIZE_NAME]
    out += [(f"{many} flows", sl, z, many) for sl, z in
            (("small", "websearch"), ("small", "datamining"), ("large", "websearch"))]
    return out + combined_settings()


def more_service_settings() -> list[tuple[str, str, str, int]]:
    """The other settings of `causes` but deadlines (whose TAFE runs are the base's): the whole
    distributions with two flows per task, and the other flow counts."""
    out = [("full", "full", z, 2) for z in SIZE_NAME]
    return out + [(f"{n} flows", sl, z, n) for n in FLOWS_PER_TASK[:-1] for sl, z in
                  (("small", "websearch"), ("small", "datamining"), ("large", "websearch"))]


#: The size groups of `by_size`: task bytes against the 50th and 90th percentiles of the run's.
SIZE_GROUPS = ("below p50", "p50-p90", "above p90")
