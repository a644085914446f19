"""The testbed report's table of repeated runs (examples/testbed/sim_vs_testbed.py and its page,
sim_vs_testbed_page.py), by hand."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "testbed"))
import sim_vs_testbed as svt  # noqa: E402
import sim_vs_testbed_page as svp  # noqa: E402


def test_repeated_runs_rank_by_their_mean_and_name_the_pairs_every_run_ordered_against_the_simulator():
    # rows: (policy, simulated spec, testbed mean, simulated mean, testbed p95, simulated p95, wall)
    rows = [("a", "", 1.0, 1.0, 0, 0, 0), ("b", "", 2.0, 2.0, 0, 0, 0), ("c", "", 3.0, 3.0, 0, 0, 0)]
    # a's runs all below b's (the simulator's order); c's overlap both a's and b's, and c's mean (1.2) puts
    # it before b, against the simulator.
    repeats = {"a": [1.0, 1.2], "b": [1.5, 2.5], "c": [0.8, 1.6], "fair-rt": [9.0, 9.0]}
    rows.append(("fair-rt", "", 9.0, 9.0, 0, 0, 0))
    text = "\n".join(svp.repeated(rows, repeats))
    assert "| a | 1.0000, 1.2000 s | 1.1000 s | 1.0000-1.2000 s | 1.0000 s |" in text
    # fair-rt is a control: in the table, not in the ranking.
    assert "testbed a < c < b; simulated a < b < c: 2 of 3 pairs in the same order" in text
    assert "In 1 pairs the runs' ranges do not overlap" in text
    assert "1 of them in the simulator's order; the other 2 pairs are within what the runs moved" in text


def test_a_policy_replayed_once_adds_nothing():
    rows = [("a", "", 1.0, 1.0, 0, 0, 0)]
    assert svp.repeated(rows, {"a": [1.0]}) == []


def test_dcas_is_simulated_with_the_negotiation_the_replay_measured():
    spec = "dcas:threshold=100;delta=10ms;t=20ms;expiry=40ms"
    # 7 ms round trips: 3.5 ms a message; 19% of replies missed their round: each message lost with
    # probability 0.1 (1 - 0.9^2 = 0.19).
    n = {"announcements": 1000, "replies_missing": 190, "rtt_mean_s": 0.007}
    assert svt.negotiated(spec, n, 0.010) == spec + ";msg_delay=3500us;loss=0.1000"
    # A round trip longer than a round: the simulator's rounds must not overlap, so just under delta/2.
    assert svt.negotiated(spec, dict(n, rtt_mean_s=0.030), 0.010).endswith(";msg_delay=4950us;loss=0.1000")
    # Where the replay recorded its rounds, a message takes half the time a round took to be decided
    # (the slowest receiver's reply, or the wait), not half a reply's round trip.
    assert svt.negotiated(spec, dict(n, round_mean_s=0.008), 0.010) == spec + ";msg_delay=4000us;loss=0.1000"
    assert svt.negotiated(spec, dict(n, round_mean_s=float("nan")), 0.010).endswith(";msg_delay=3500us;loss=0.1000")
    # Nothing measured (no announcement): the simulator's own delays.
    assert svt.negotiated(spec, {"announcements": 0, "replies_missing": 0, "rtt_mean_s": float("nan")}, 0.01) == spec


def test_pairs_closer_than_the_testbed_resolves_are_counted_apart():
    sim = {"a": 1.00, "b": 1.02, "c": 2.0}
    tb = {"a": 0.5, "b": 0.4, "c": 0.3}
    text = svp.close_pairs([("a", "b"), ("a", "c"), ("b", "c")], tb, sim)
    # a/c and b/c: 100% and 96% apart, both reversed; a/b: 2% apart, reversed.
    assert text.startswith("Of the 2 pairs the simulator separates by 5% or more, 0 in the same order (against it: a/c, b/c)")
    assert text.endswith("closer than 5% in the simulator, within what the testbed resolves: a/b (2.0% apart, reversed on the testbed).")
    assert svp.close_pairs([("a", "c")], {"a": 0.1, "c": 0.2}, sim) == "Of the 1 pairs the simulator separates by 5% or more, 1 in the same order."


def test_every_counterpart_and_coordinator_scheduler_is_one_the_simulator_builds():
    import coflowkit

    specs = sorted({s for s in svt.SIMULATED.values()} | set(svt.RUNTIME.values()))
    w = coflowkit.synthetic(n_hosts=8, n_coflows=3, seed=1)
    assert coflowkit.simulate(w, specs, topology="bigswitch:hosts=8,rate=25Mbps").schedulers == specs
    # The coordinator runs D-CLAS as Pseudocode 1 has it; the agents' local decisions (a coflow the
    # coordinator has not scheduled, in the switches' top class) are the simulated counterpart's local=first.
    assert svt.RUNTIME["aalo"] == "aalo" and svt.SIMULATED["aalo"] == "aalo:local=first"
    # Without classes nothing goes ahead of the scheduled flows.
    assert svt.SIMULATED["aalo-rates"] == "aalo"
    assert set(svt.RUNTIME) <= set(svt.SIMULATED) and set(svp.CONTROLS) <= set(svt.RUNTIME)


def test_runs_of_different_workloads_are_not_put_on_one_page(tmp_path):
    import json

    import pytest

    page = {"command": "", "date": "", "source": "x", "n_coflows": 1, "n_flows": 1, "topology": "t", "buffer": None, "rto_max_ms": 1000}
    row = ["plain", "fair", 1.0, 1.0, 1.0, 1.0, 1.0]
    runs = []
    for i, extra in enumerate(({}, {"workload": "fb2010"}, {"workload": "dcas"})):
        out = tmp_path / f"r{i}"
        out.mkdir()
        (out / "page.json").write_text(json.dumps(dict(page, **extra, rows=[row], why={"plain": {}}, sim_s=0.1)))
        runs.append(out)
    # A run saved before the workloads had pages of their own replayed FB2010.
    saved, _ = svp.combine(runs[:2])
    assert saved["workload"] == "fb2010" and saved["repeats"] == {"plain": [1.0, 1.0]}
    with pytest.raises(SystemExit, match=r"r2: its workload 'dcas' is not the first run's 'fb2010'"):
        svp.combine(runs)
    # Each workload has its own page, figure, title and explanation.
    assert set(svt.PAGES) == set(svp.TITLES) == set(svp.EXPLANATIONS) == set(svt.SCALES)
    assert len({doc for doc, _ in svt.PAGES.values()}) == len({fig for _, fig in svt.PAGES.values()}) == len(svt.PAGES)


def test_runs_made_before_a_policys_replay_changed_are_not_pooled_with_those_after(tmp_path):
    import json

    page = {"command": "", "source": "x", "n_coflows": 1, "n_flows": 1, "topology": "t", "buffer": None, "rto_max_ms": 1000}
    since = svp.REPLAY_CHANGED["dcas"][0]
    old, new = "2026-11-24 06:45 UTC", "2026-11-24 11:00 UTC"
    assert old < since <= new

    def run(name, date, dcas, plain):
        out = tmp_path / name
        out.mkdir()
        rows = [["plain", "fair", plain, 1.0, 1.0, 1.0, 1.0], ["dcas", "dcas", dcas, 1.0, 1.0, 1.0, 1.0]]
        why = {"plain": {"run": name}, "dcas": {"run": name}}
        (out / "page.json").write_text(json.dumps(dict(page, date=date, rows=rows, why=why, sim_s=0.1)))
        return out

    a, b, c = run("a", old, 3.0, 2.0), run("b", new, 1.0, 2.2), run("c", old, 3.5, 2.1)
    saved, csvs = svp.combine([a, b, c])
    # plain's replay did not change: all three runs count, the last gives the row. dcas: only the run since.
    assert saved["repeats"] == {"plain": [2.0, 2.2, 2.1], "dcas": [1.0]}
    assert [r[0] for r in saved["rows"]] == ["plain", "dcas"] and saved["rows"][1][2] == 1.0
    assert csvs["dcas"] == b / "dcas-coflows.csv" and saved["why"]["dcas"] == {"run": "b"}
    assert saved["not_pooled"]["dcas"]["runs"] == [old, old] and "plain" not in saved["not_pooled"]
    # With no run since the change, the runs before are what there is.
    saved, _ = svp.combine([a, c])
    assert saved["repeats"]["dcas"] == [3.0, 3.5] and saved["not_pooled"] == {}


def test_resimulate_takes_one_saved_run_and_refuses_one_its_command_does_not_fit(tmp_path):
    import json

    import pandas as pd
    import pytest

    import coflowkit

    command = "--hosts 16 --rate 25Mbps --size-scale 0.00005 --max-coflows 6 --name svx --policies plain,pias"
    args = svt.parser().parse_args(command.split())
    fitted, mix = svt.workload_of(args)
    fw = fitted.workload
    assert mix == {} and svt.topology_of(args) == "bigswitch:hosts=16,rate=25Mbps"
    ids = fw.columns()["coflow_id"]
    ids = sorted(set(int(i) for i in ids))
    # A run as saved: the testbed's CCTs (made up here) beside simulated ones that today's code would not give.
    why = {p: {"load": 1.0, "rtos": 7} for p in ("plain", "pias")}
    rows = [["plain", "fair", 1.0, 99.0, 1.0, 99.0, 10.0], ["pias", "pias", 2.0, 99.0, 2.0, 99.0, 11.0]]
    for p in ("plain", "pias"):
        pd.DataFrame(
            {"coflow_id": ids, "cct_s_testbed": [0.5 + i for i in range(len(ids))], "punctual": True, "cct_s_sim": 99.0}
        ).to_csv(tmp_path / f"{p}-coflows.csv", index=False)
    page = {
        "workload": "fb2010", "command": command, "date": "2026-11-28 14:36 UTC", "source": fw.source,
        "n_coflows": fw.n_coflows, "n_flows": fw.n_flows, "local_flows_dropped": fitted.local_flows_dropped,
        "topology": "bigswitch:hosts=16,rate=25Mbps", "buffer": None, "rto_max_ms": 1000, "rows": rows, "why": why,
        "sim_s": 1.0,
    }  # fmt: skip
    (tmp_path / "page.json").write_text(json.dumps(page))
    svt.resimulate(tmp_path)
    again = json.loads((tmp_path / "page.json").read_text())
    sim = coflowkit.simulate(fw, ["fair", "pias"], topology="bigswitch:hosts=16,rate=25Mbps", progress=False)
    for row, s in zip(again["rows"], ["fair", "pias"], strict=True):
        # The testbed's side and wall as the run had them; the simulated side today's.
        assert row[2] == pytest.approx(0.5 + (len(ids) - 1) / 2) and row[6] in (10.0, 11.0)
        assert row[3] == pytest.approx(sim.coflows(s)["cct_s"].mean())
    assert again["why"]["plain"]["rtos"] == 7 and "large_sim" in again["why"]["plain"] and again["resimulated"]
    # The run's own page.json is kept once, not overwritten by a second --resimulate.
    assert json.loads((tmp_path / "page-as-run.json").read_text()) == page
    svt.resimulate(tmp_path)
    assert json.loads((tmp_path / "page-as-run.json").read_text()) == page
    # The second --resimulate stamps its own minute (a minute may turn between the two calls): the
    # combined page takes the stamp of the page.json it reads.
    latest = json.loads((tmp_path / "page.json").read_text())
    saved, _ = svp.combine([tmp_path])
    assert saved["resimulated"] == latest["resimulated"] and saved["resimulated_all"]
    # A command that now makes another workload than the one replayed is refused, naming what differs.
    (tmp_path / "page.json").write_text(json.dumps(dict(page, command=command.replace("--max-coflows 6", "--max-coflows 5"))))
    with pytest.raises(SystemExit, match=r"its command makes a workload whose (source|n_coflows) is .*, not the run's"):
        svt.resimulate(tmp_path)
    with pytest.raises(SystemExit, match=r"no page.json there"):
        svt.resimulate(tmp_path / "nowhere")
    with pytest.raises(SystemExit):
        svt.main(["--resimulate"])
