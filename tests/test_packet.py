"""The packet engine from Python and the command line: tables, options,
scenario files and their errors (the engine itself is tested in
crates/packet)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import coflowkit
from coflowkit.sim.scenario import load_scenario, run_scenario
from conftest import Cli, assert_one_line_error


def incast(tmp_path: Path, n: int = 4, **extra: object) -> Path:
    doc = {
        "name": "incast",
        "topology": f"bigswitch:hosts={n + 1},rate=1Gbps",
        "transport": "dctcp",
        "switch_buffer_bytes": 100_000,
        "ecn_k_bytes": 30_000,
        "queue_sample_ns": 100_000,
        "queue_ports": [f"to-host-{n}"],
        "flows": [{"src": h, "dst": n, "start_ns": 1000 * h, "bytes": 50_000, "prio": 0} for h in range(n)],
        **extra,
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    return path


def test_packet_runs_keep_packet_columns_and_tables(tmp_path: Path) -> None:
    w = coflowkit.synthetic(n_hosts=8, n_coflows=6, seed=3)
    res = coflowkit.simulate(w, "dctcp,tcp", engine="packet", packet="buffer=50p,queue_trace=1ms", progress=False)
    assert res.schedulers == ["dctcp", "tcp"]
    flows = res.flows("dctcp")
    assert list(flows.columns[-22:]) == [
        "drops",
        "ecn_marks",
        "retransmits",
        "timeouts",
        "timeouts_lost",
        "timeouts_spurious",
        "timeouts_host_queued",
        "timeouts_switch_queued",
        "class_changes",
        "promotions",
        "reordered",
        "fast_retransmits",
        "fast_retransmits_spurious",
        "stalled_s",
    ] + [f"bytes_class{c}" for c in range(8)]
    # Every payload byte sent (new and again) is counted in one class.
    sent = flows[[f"bytes_class{c}" for c in range(8)]].sum(axis=1)
    assert (sent >= flows["bytes"]).all()
    assert (flows["stalled_s"] >= 0).all()
    assert len(flows) == w.n_flows
    assert (flows["fct_s"] > 0).all()
    ports = res.ports("tcp")
    assert ports["tx_packets"].sum() == res.packets("tcp") > 0
    assert len(res.queue_trace("tcp")) > 0
    res.write(tmp_path)
    assert (tmp_path / "tcp" / "ports.csv").exists()
    assert pq.read_table(tmp_path / "dctcp" / "queue_trace.parquet").num_rows > 0
    with (tmp_path / "tcp" / "flows.csv").open() as f:
        head = next(csv.reader(f))
    assert {"retransmits", "class_changes", "fast_retransmits_spurious", "stalled_s", "bytes_class7"} <= set(head)


def test_pfabric_runs_from_python_and_scenario_files(tmp_path: Path) -> None:
    w = coflowkit.synthetic(n_hosts=8, n_coflows=4, seed=5)
    res = coflowkit.simulate(w, "pfabric,dctcp", engine="packet", packet="pfabric_rto=45us", progress=False)
    assert res.schedulers == ["pfabric", "dctcp"]
    assert len(res.flows("pfabric")) == w.n_flows
    assert res.ports("pfabric")["marks"].sum() == 0
    out = tmp_path / "out"
    run_scenario(load_scenario(incast(tmp_path, transport="pfabric")), out, progress=False)
    with (out / "flows.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 4


def test_packet_errors_name_what_is_wrong() -> None:
    w = coflowkit.synthetic(n_hosts=8, n_coflows=2, seed=1)
    with pytest.raises(ValueError, match="'nope' is neither a transport of the packet engine"):
        coflowkit.simulate(w, "nope", engine="packet")
    with pytest.raises(ValueError, match="nope"):
        coflowkit.simulate(w, "pias:nope=1", engine="packet")
    with pytest.raises(ValueError, match="classes: a scheduler's runs"):
        coflowkit.simulate(w, "pias", engine="packet", classes=[0] * w.n_flows)
    with pytest.raises(ValueError, match="packet option 'bufer': unknown option"):
        coflowkit.simulate(w, engine="packet", packet="bufer=10p")
    with pytest.raises(ValueError, match="packet option 'mtu': 40 bytes leave no payload"):
        coflowkit.simulate(w, engine="packet", packet={"mtu": 40})
    with pytest.raises(ValueError, match=r"classes\[0\]"):
        coflowkit.simulate(w, engine="packet", classes=[9] * w.n_flows)
    with pytest.raises(ValueError, match="options of engine='packet'"):
        coflowkit.simulate(w, "fair", packet="buffer=10p")
    with pytest.raises(ValueError, match="engine: expected"):
        coflowkit.simulate(w, engine="fluid")


def test_scenario_runs_and_writes_the_ns3_layout(tmp_path: Path) -> None:
    s = load_scenario(incast(tmp_path))
    assert "ecn_k=30000B" in s.options and s.classes == [0, 0, 0, 0]
    run_scenario(s, tmp_path / "out", progress=False)
    with (tmp_path / "out" / "flows.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [int(r["flow"]) for r in rows] == [0, 1, 2, 3]
    assert all(int(r["fct_ns"]) > 400_000 for r in rows)
    with (tmp_path / "out" / "queues.csv").open() as f:
        q = list(csv.DictReader(f))
    assert q and {r["port"] for r in q} == {"to-host-4"}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["packets"] > 0


def test_scenario_host_queue_with_bound_and_threshold(tmp_path: Path) -> None:
    s = load_scenario(incast(tmp_path, host_queue={"kind": "droptail_ecn", "packets": 166, "k_packets": 65}))
    assert "host_queue=droptail:166+ecn:65" in s.options


def test_scenario_options_reach_the_engine(tmp_path: Path) -> None:
    # Four 50 KB flows paced at 100 Mbit/s each: 4 ms apiece, where the
    # 1 Gbit/s port alone would finish all four in 1.6 ms.
    s = load_scenario(incast(tmp_path, options={"pacing": "100Mbps", "init_cwnd": 4}))
    assert "pacing=100Mbps" in s.options and "init_cwnd=4" in s.options
    run_scenario(s, tmp_path / "out", progress=False)
    with (tmp_path / "out" / "flows.csv").open() as f:
        fct = [int(r["fct_ns"]) for r in csv.DictReader(f)]
    assert all(4_000_000 <= t < 4_200_000 for t in fct), fct


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"bufer": 1}, "bufer: unknown field"),
        ({"flows": [{"src": 0, "dst": 1, "bytes": 5}]}, "flows[0].start_ns: missing"),
        ({"flows": [{"src": 0, "dst": 1, "start_ns": 0, "bytes": 5, "prio": 8}]}, "flows[0].prio"),
        ({"flows": [{"src": 2, "dst": 2, "start_ns": 0, "bytes": 5}]}, "flows[0]: src and dst are both host 2"),
        ({"flows": [{"src": 0, "dst": 1, "start_ns": 0, "bytes": 0}]}, "flows[0].bytes: expected a whole number of at least 1, got 0"),
        ({"host_queue": {"kind": "red"}}, "host_queue.kind"),
        ({"host_queue": {"kind": "droptail_ecn", "packets": 65, "k_packets": 65}}, "host_queue.k_packets: 65 would never mark"),
        ({"host_queue": {"kind": "droptail_ecn", "k_packets": 65}}, "host_queue.packets"),
        ({"queue_ports": ["port-9"]}, "queue_ports: 'port-9'"),
        ({"mtu": 30}, "packet option 'mtu'"),
        ({"options": {"pacing": "fast"}}, "options: packet option 'pacing'"),
        ({"options": {"transport": "tcp"}}, "options.transport: set the transport with the transport field"),
        ({"options": {"pacing": "1Gbps,buffer=1p"}}, "options.pacing: '1Gbps,buffer=1p' may not contain"),
        ({"options": ["pacing=1Gbps"]}, "options: expected an object"),
    ],
)
def test_scenario_errors(tmp_path: Path, extra: dict[str, object], needle: str) -> None:
    with pytest.raises(ValueError) as e:
        s = load_scenario(incast(tmp_path, **extra))
        run_scenario(s, tmp_path / "out", progress=False)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)


def test_cli_packet(cli: Cli, tmp_path: Path) -> None:
    proc = cli("simulate", "--engine", "packet", "--packet", "help")
    assert proc.returncode == 0 and "ecn_k" in proc.stdout
    proc = cli("simulate", "--engine", "packet", "--scenario", str(incast(tmp_path)), "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "flows.csv").exists()
    assert_one_line_error(
        cli("simulate", "--engine", "packet", "--packet", "buffer=0", "--no-progress"), 2, "'buffer'"
    )
    assert_one_line_error(cli("simulate", "--packet", "buffer=10p"), 2, "--engine packet")
    assert_one_line_error(
        cli("simulate", "--engine", "packet", "--scheduler", "nope"), 2, "neither a transport"
    )
    assert_one_line_error(
        cli("simulate", "--engine", "packet", "--scheduler", "pias:thresholds=x"), 2, "thresholds"
    )


def leaf_spine(tmp_path: Path, **extra: object) -> Path:
    """Two 2 MB flows from leaf 0 to leaf 1 over 1 Gbit/s spine links."""
    doc = {
        "topology": "leaf-spine:leaves=2,spines=2,hosts=2,rate=1Gbps,spine_rate=1Gbps",
        "flows": [
            {"src": 0, "dst": 2, "start_ns": 0, "bytes": 2_000_000, "spine": 0},
            {"src": 1, "dst": 3, "start_ns": 0, "bytes": 2_000_000, "spine": 1},
        ],
        **extra,
    }
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(doc))
    return path


def fcts(out: Path) -> list[int]:
    with (out / "flows.csv").open() as f:
        return [int(r["fct_ns"]) for r in csv.DictReader(f)]


def test_scenario_spine_pins_flows_like_ns3(tmp_path: Path) -> None:
    # ns-3's check in bench/ns3/README.md: 16.5 ms each apart; 27.0 and
    # 32.9 ms on one spine.
    s = load_scenario(leaf_spine(tmp_path))
    assert s.paths == [0, 1]
    run_scenario(s, tmp_path / "apart", progress=False)
    assert all(16_000_000 < t < 17_000_000 for t in fcts(tmp_path / "apart"))
    doc = json.loads(leaf_spine(tmp_path).read_text())
    doc["flows"][1]["spine"] = 0
    (tmp_path / "ls.json").write_text(json.dumps(doc))
    run_scenario(load_scenario(tmp_path / "ls.json"), tmp_path / "together", progress=False)
    assert max(fcts(tmp_path / "together")) > 30_000_000
    # The seed reaches the topology spec.
    assert load_scenario(leaf_spine(tmp_path, ecmp_seed=7)).topology.endswith(",ecmp_seed=7")


def test_paths_from_python_and_their_errors(tmp_path: Path) -> None:
    w = load_scenario(leaf_spine(tmp_path)).workload
    topo = "leaf-spine:leaves=2,spines=2,hosts=2,rate=1Gbps,spine_rate=1Gbps"
    res = coflowkit.simulate(w, engine="packet", topology=topo, paths=[1, 1], progress=False)
    ports = res.ports("dctcp")
    assert int(ports.loc[ports["name"] == "leaf 0 -> spine 0", "tx_packets"].iloc[0]) == 0
    with pytest.raises(ValueError, match=r"coflow 1 flow 0: path 2 is out of range: .* \(0 to 1\)"):
        coflowkit.simulate(w, engine="packet", topology=topo, paths=[None, 2], progress=False)
    with pytest.raises(ValueError, match="paths: 1 given for 2 flows"):
        coflowkit.simulate(w, engine="packet", topology=topo, paths=[0], progress=False)
    with pytest.raises(ValueError, match=r"paths\[0\]"):
        coflowkit.simulate(w, engine="packet", topology=topo, paths=[-1, 0], progress=False)
    with pytest.raises(ValueError, match="options of engine='packet'"):
        coflowkit.simulate(w, paths=[0, 0])


def test_d2tcp_and_shared_buffer_from_a_scenario(tmp_path: Path) -> None:
    # Two 10 MB flows into one port; the first with a 13 ms deadline meets
    # it under D2TCP only (crates/packet/tests/engine.rs has the numbers).
    flows = [
        {"src": 0, "dst": 2, "start_ns": 0, "bytes": 10_000_000, "deadline_ns": 13_000_000},
        {"src": 1, "dst": 2, "start_ns": 0, "bytes": 10_000_000, "deadline_ns": 40_000_000},
    ]
    for transport in ("dctcp", "d2tcp"):
        doc = {
            "topology": "bigswitch:hosts=3,rate=10Gbps",
            "transport": transport,
            "options": {"buffer": "1MB"},
            "flows": flows,
        }
        (tmp_path / "d.json").write_text(json.dumps(doc))
        run_scenario(load_scenario(tmp_path / "d.json"), tmp_path / transport, progress=False)
    assert fcts(tmp_path / "dctcp")[0] > 13_000_000 > fcts(tmp_path / "d2tcp")[0]
    w = coflowkit.synthetic(n_hosts=8, n_coflows=4, seed=2)
    res = coflowkit.simulate(w, "d2tcp", engine="packet", packet="buffer=shared:1MB,dt_alpha=2", progress=False)
    assert (res.flows("d2tcp")["fct_s"] > 0).all()
    with pytest.raises(ValueError, match="a shared pool is sized in bytes"):
        coflowkit.simulate(w, engine="packet", packet="buffer=shared:10p")


PIAS = "pias:thresholds=100KB/500KB/2MB/3MB/4MB/5MB/6MB"


def one_flow(n_bytes: int) -> coflowkit.Workload:
    table = pa.table(
        {"coflow_id": [0], "arrival_ns": [0], "src": [0], "dst": [1], "bytes": [n_bytes]},
    )
    return coflowkit.workload_from_table(table, n_hosts=2)


def test_pias_on_the_packet_engine_demotes_at_its_thresholds() -> None:
    # One 1 MB flow alone: 100,000 payload bytes leave in queue 0, 400,000
    # in queue 1, 500,000 in queue 2 (crates/packet/tests/hosts.rs).
    res = coflowkit.simulate(one_flow(1_000_000), PIAS, engine="packet", packet="buffer=1MB", progress=False)
    assert res.schedulers == [PIAS]
    ports = res.ports(PIAS).set_index("name")
    nic = ports.loc["host 0 uplink"]
    got = [int(nic[f"class{q}_bytes"]) for q in range(8)]
    assert got == [100_000, 400_000, 500_000, 0, 0, 0, 0, 0]
    assert res.scheduler_stats(PIAS)["marking_changes"] == 2
    plain = coflowkit.simulate(one_flow(1_000_000), "dctcp", engine="packet", packet="buffer=1MB", progress=False)
    assert plain.scheduler_stats("dctcp") == {}
    assert int(plain.ports("dctcp")["class0_bytes"].iloc[0]) in (0, 1_000_000)


def test_baraat_on_the_packet_engine_asks_its_ports_for_rates() -> None:
    # Two tasks of one flow each into host 2: FIFO by task id at the port
    # (crates/packet/tests/baraat.rs has the numbers by hand).
    table = pa.table(
        {
            "coflow_id": [0, 1],
            "arrival_ns": [0, 100_000],
            "src": [0, 1],
            "dst": [2, 2],
            "bytes": [200_000, 200_000],
        },
    )
    w = coflowkit.workload_from_table(table, n_hosts=3)
    res = coflowkit.simulate(w, "baraat:threshold=inf", engine="packet", packet="buffer=1MB", progress=False)
    flows = res.flows("baraat:threshold=inf").sort_values("coflow_id")
    finish = list(flows["start_s"] + flows["fct_s"])
    assert finish[0] < finish[1]
    stats = res.scheduler_stats("baraat:threshold=inf")
    assert stats["spc_requests"] > 0 and stats["spc_lost"] == 0 and stats["spc_expired"] == 0


def test_coordinator_schedulers_run_on_the_packet_engine() -> None:
    w = coflowkit.synthetic(n_hosts=6, n_coflows=4, seed=2, mix=(0.5, 0.5, 0.0, 0.0))
    res = coflowkit.simulate(
        w,
        "aalo,varys,fair",
        engine="packet",
        packet="transport=tcp,coordinator_interval=1ms,coordinator_delay=100us",
        progress=False,
    )
    assert res.schedulers == ["aalo", "varys", "fair"]
    for s in res.schedulers:
        assert len(res.flows(s)) == w.n_flows
        assert res.scheduler_stats(s)["coordinator_ticks"] > 0


def test_cli_schedulers_engine_packet(cli: Cli, tmp_path: Path) -> None:
    proc = cli("schedulers", "--engine", "packet")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()}
    assert "host policy" in rows["pias"] and "host policy" in rows["baraat"]
    assert "via coordinator" in rows["aalo"] and "via coordinator" in rows["varys"]
    trace = tmp_path / "small.txt"  # two coflows on 4 hosts (coflow-benchmark format)
    trace.write_text("4 2\n1 0 1 0 1 1:1\n2 5 1 2 1 3:0.5\n")
    proc = cli("simulate", "--engine", "packet", "--trace", trace, "--scheduler", "pias,baraat,dctcp", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "pias" in proc.stdout and "baraat" in proc.stdout


def test_a_dcas_run_reports_its_negotiation_in_scheduler_stats() -> None:
    w = coflowkit.synthetic(n_hosts=8, n_coflows=6, seed=3)
    spec = "dcas:threshold=10000;delta=1ms;t=20ms;expiry=4ms"
    s = coflowkit.simulate(w, spec, engine="packet", progress=False).scheduler_stats(spec)
    # Every announcement answered and each its own packet (no drops in a short run).
    assert s["dcas_announcements"] > 0
    assert s["dcas_announcements"] + s["dcas_replies_sent"] == s["control_sent"]
    assert s["dcas_decided_large"] >= s["dcas_decided_starving"]
    assert not any(k.startswith("dcas_") for k in coflowkit.simulate(w, "pias", engine="packet", progress=False).scheduler_stats("pias"))
