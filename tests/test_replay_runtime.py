"""`coflowkit replay --hosts` through the runtime on loopback (not the emulated testbed): a
coordinator and 3 agents on 127.0.0.1, a tiny trace, every flow sent through a CoflowWriter (so the
coordinator's scheduler schedules it), every byte checked, results in the simulator's format."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import coflowkit
from coflowkit import _core
from coflowkit.testbed import replay as rp
from coflowkit.sim.results import COFLOW_COLUMNS, FLOW_COLUMNS
from conftest import Cli
from test_runtime_client import _free_port, _listening, _stop, _wait

N_HOSTS = 3

#: A stand-in for ssh: ``fake_ssh.py ADDRESS COMMAND`` (the command one argument, as a launcher
#: is given it) logs its arguments and runs COMMAND with ``sh -c`` in a fresh, empty directory,
#: as a remote shell would on another machine; it fails if the command left a file there.
FAKE_SSH = """
import json, os, subprocess, sys, tempfile
if len(sys.argv) != 3:
    sys.exit(f"fake ssh: expected ADDRESS COMMAND, got {sys.argv[1:]!r}")
with open(LOG, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
with tempfile.TemporaryDirectory() as d:
    rc = subprocess.call(["sh", "-c", sys.argv[2]], cwd=d)
    left = os.listdir(d)
if left:
    sys.exit(f"fake ssh: the command left {left} in its directory")
sys.exit(rc)
"""


def _assert_all_scheduled(out: Path) -> None:
    """Every one of the 7 flows went through its host's agent (scheduled), none as plain TCP."""
    sent = {}
    for h in range(N_HOSTS):
        sent.update(json.loads((out / "work" / f"host{h}.sent.json").read_text())["sent"])
    assert len(sent) == 7 and all(s[6] for s in sent.values())


def _tiny() -> _core.Workload:
    # coflow, arrival (ns), src, dst, bytes: 4 coflows on 3 hosts, up to 600 KB.
    rows = [
        (1, 0, 0, 1, 200_000),
        (1, 0, 0, 2, 100_000),
        (2, 10_000_000, 1, 2, 300_000),
        (2, 10_000_000, 2, 0, 50_000),
        (3, 20_000_000, 1, 0, 600_000),
        (4, 20_000_000, 2, 1, 10_000),
        (4, 20_000_000, 0, 1, 20_000),
    ]
    c, a, s, d, b = (list(x) for x in zip(*rows, strict=True))
    return _core.workload_from_columns(
        np.array(c, np.uint64), np.array(a, np.uint64), np.array(s, np.uint32), np.array(d, np.uint32),
        np.array(b, np.uint64), n_hosts=N_HOSTS, source="tiny",
    )  # fmt: skip


@pytest.fixture(scope="module", params=["aalo", "fair"])
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A coordinator (3 hosts, the scheduler) and an agent per host on loopback; yields the scheduler
    and a hosts file (distinct data ports and agent sockets)."""
    scheduler = request.param
    tmp = tmp_path_factory.mktemp(f"rt-{scheduler}")
    token = tmp / "token"
    token.write_text("a-test-token\n")
    token.chmod(0o600)
    port = _free_port()
    run = [sys.executable, "-m", "coflowkit"]
    env = {**os.environ, "RUST_LOG": "warn"}
    coord = subprocess.Popen(
        [*run, "coordinator", "--hosts", str(N_HOSTS), "--host-rate", "1Gbps", "--scheduler", scheduler,
         "--listen", f"127.0.0.1:{port}", "--token-file", str(token)],
        stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    procs = [coord]
    lines = []
    try:
        _wait("the coordinator", lambda: _listening(port), coord)
        for h in range(N_HOSTS):
            sock = tmp / f"agent{h}.sock"
            agent = subprocess.Popen(
                [*run, "agent", "--host", str(h), "--coordinator", f"http://127.0.0.1:{port}",
                 "--socket", str(sock), "--socket-mode", "600", "--token-file", str(token)],
                stderr=subprocess.PIPE, env=env,
            )  # fmt: skip
            procs.append(agent)
            _wait(f"agent {h}", sock.exists, agent)
            lines.append(f"{h} 127.0.0.1:{_free_port()} {sock}")
        hosts = tmp / "hosts"
        hosts.write_text("# index address:port agent-socket\n" + "\n".join(lines) + "\n")
        yield scheduler, hosts
    finally:
        for p in reversed(procs):
            _stop(p)


def test_replay_through_the_agents_checks_every_byte_and_writes_simulator_results(
    cluster: tuple[str, Path], tmp_path: Path
) -> None:
    scheduler, hosts = cluster
    trace = tmp_path / "tiny.csv"
    coflowkit.write_trace(_tiny(), trace)
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "coflowkit", "replay", "--trace", str(trace), "--hosts", str(hosts),
         "--label", scheduler, "--out", str(out), "--deadline", "60"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"runtime    {scheduler}: mean CCT" in r.stdout and "every byte checked" in r.stdout
    _assert_all_scheduled(out)
    # The simulator's format: its columns, one row per coflow / flow, all the bytes.
    coflows = pd.read_csv(out / scheduler / "coflows.csv")
    flows = pd.read_parquet(out / scheduler / "flows.parquet")
    sim = tmp_path / "sim"
    coflowkit.simulate(_tiny(), "fair", per_flow=True).write(sim)
    assert list(coflows.columns) == list(pd.read_csv(sim / "fair" / "coflows.csv").columns) == COFLOW_COLUMNS
    assert list(flows.columns) == list(pd.read_parquet(sim / "fair" / "flows.parquet").columns) == FLOW_COLUMNS
    assert sorted(coflows["coflow_id"]) == [1, 2, 3, 4]
    assert (coflows["cct_s"] > 0).all()
    assert int(flows["bytes"].sum()) == 1_280_000 and (flows["finish_s"] > flows["start_s"]).all()


def test_replay_with_a_launcher_shares_no_file_with_the_workers(cluster: tuple[str, Path], tmp_path: Path) -> None:
    """--launch runs every worker through a (fake) ssh in an empty directory of its own: plan, start
    and results go over its stdin and stdout, the command is one shell-quoted argument (the Python's
    path here has spaces and quotes), and the replay is as without a launcher."""
    scheduler, hosts = cluster
    log = tmp_path / "ssh.log"
    fake_ssh = tmp_path / "fake_ssh.py"
    fake_ssh.write_text(FAKE_SSH.replace("LOG", repr(str(log))))
    odd = tmp_path / "a dir with spaces & 'quotes'"
    odd.mkdir()
    python = odd / "python"
    python.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    python.chmod(0o755)
    trace = tmp_path / "tiny.csv"
    coflowkit.write_trace(_tiny(), trace)
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "coflowkit", "replay", "--trace", str(trace), "--hosts", str(hosts),
         "--label", scheduler, "--out", str(out), "--deadline", "60",
         "--launch", f"{shlex.quote(sys.executable)} {shlex.quote(str(fake_ssh))} {{address}}",
         "--remote-python", str(python)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"runtime    {scheduler}: mean CCT" in r.stdout and "every byte checked" in r.stdout
    # Each worker went through the launcher once, its command one argument naming no file of the
    # driver's (and the odd Python path arrived whole).
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 2 * N_HOSTS and all(address == "127.0.0.1" for address, _ in calls)
    argvs = [shlex.split(command) for _, command in calls]
    assert all(argv[0] == str(python) for argv in argvs)
    modules = ["coflowkit.testbed.replay.sender"] * 3 + ["coflowkit.testbed.replay.worker"] * 3
    assert sorted(argv[2] for argv in argvs) == modules
    assert not any(str(out) in command or str(hosts.parent) in command for _, command in calls)
    # The work dir holds only what the driver wrote: the plan, and each worker's result and stderr.
    assert sorted(os.listdir(out / "work")) == sorted(
        ["plan.json"]
        + [f"host{h}.{k}.{e}" for h in range(N_HOSTS) for k in ("sent", "received") for e in ("json", "log")]
    )
    _assert_all_scheduled(out)
    coflows = pd.read_csv(out / scheduler / "coflows.csv")
    flows = pd.read_parquet(out / scheduler / "flows.parquet")
    assert list(coflows.columns) == COFLOW_COLUMNS and list(flows.columns) == FLOW_COLUMNS
    assert sorted(coflows["coflow_id"]) == [1, 2, 3, 4] and (coflows["cct_s"] > 0).all()
    assert int(flows["bytes"].sum()) == 1_280_000 and (flows["finish_s"] > flows["start_s"]).all()


def test_a_launcher_that_fails_is_named_with_its_host_and_worker(cluster: tuple[str, Path], tmp_path: Path) -> None:
    _, hosts = cluster
    with pytest.raises(RuntimeError, match=r"the receiver of host 0 did not start: it exited with status 1"):
        rp.replay_on_runtime(_tiny(), rp.load_hosts(hosts), tmp_path / "work", deadline_s=5, launch="false")
    # A launcher that runs but whose worker cannot start: named, with the end of its stderr.
    with pytest.raises(
        RuntimeError,
        match=r"the receiver of host 0 did not start: it exited with status 127: .*"
        r"/nonexistent/python3: .*not found \(all of it: .*host0.received.log\)",
    ):
        rp.replay_on_runtime(_tiny(), rp.load_hosts(hosts), tmp_path / "work", deadline_s=5, launch="sh -c",
                             python="/nonexistent/python3")  # fmt: skip


def test_a_launcher_that_hangs_is_named_after_the_start_timeout(cluster: tuple[str, Path], tmp_path: Path) -> None:
    """A launcher that never runs the worker (it sleeps; the worker's command is only sh's $0) is
    named once the start timeout passes, and killed with what it started (its process group)."""
    _, hosts = cluster
    pids = tmp_path / "pids"
    launch = f"sh -c 'sleep 60 & echo $! >> {shlex.quote(str(pids))}; wait'"
    with pytest.raises(RuntimeError, match=r"the receiver of host 0 did not start: no 'ready' within 0.5 s"):
        rp.replay_on_runtime(
            _tiny(), rp.load_hosts(hosts), tmp_path / "work", deadline_s=5, launch=launch, start_timeout_s=0.5
        )

    def gone(pid: int) -> bool:  # or a zombie, not yet reaped by init
        try:
            return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True

    for pid in [int(p) for p in pids.read_text().split()] if pids.exists() else []:
        for _ in range(200):
            if gone(pid):
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"the launcher's child {pid} outlived the replay")


def test_a_worker_prints_only_the_protocol_and_stops_when_its_driver_goes(tmp_path: Path) -> None:
    """What a remote worker relies on: anything else it prints goes to stderr (not into the
    protocol), and once its stdin closes early (the driver or its ssh is gone) it stops at once
    instead of holding its port until the deadline."""
    code = "from coflowkit.testbed.replay.protocol import Channel; c = Channel(); print('noise'); c.ready()"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (0, "ready\n", "noise\n")
    plan = rp.make_plan(_tiny(), ["127.0.0.1"] * N_HOSTS)
    plan = dataclasses.replace(plan, ports=tuple(_free_port() for _ in range(N_HOSTS)))
    worker = subprocess.Popen(
        [sys.executable, "-m", "coflowkit.testbed.replay.worker", "--host", "1", "--receive-only", "--deadline", "600"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(plan.to_wire() + "\n")
    worker.stdin.flush()
    assert worker.stdout.readline() == "ready\n"
    worker.stdin.write(f"{time.time()!r}\n")  # t0; host 1 waits (600 s) for 3 flows that never come
    worker.stdin.close()
    assert worker.wait(timeout=60) == 3
    assert worker.stdout.read() == "" and "the driver went away" in (worker.stderr.read() if worker.stderr else "")


def test_launcher_templates(tmp_path: Path) -> None:
    hosts = [rp.RuntimeHost("10.0.0.1", rp.DATA_PORT, "/a"), rp.RuntimeHost("node-b", rp.DATA_PORT, "/b")]
    argv = ["python3", "-m", "coflowkit.testbed.replay.sender", "--host", "1", "a b", "it's", "$HOME", "x;y"]
    wrap = rp.launcher("ssh -o BatchMode=yes -o 'ProxyJump gw {index}' {address}", hosts)
    got = wrap(1, argv)
    assert got[:4] == ["ssh", "-o", "BatchMode=yes", "-o"] and got[4:6] == ["ProxyJump gw 1", "node-b"]
    # The worker's command is one argument that a shell splits back into exactly argv.
    assert len(got) == 7 and shlex.split(got[6]) == argv
    assert rp.launcher("ssh n{index:02d}", hosts)(1, ["true"]) == ["ssh", "n01", "true"]
    for template, match in [
        ("ssh {host}", r"unknown placeholder \{host\} \(known: \{index\}, \{address\}\)"),
        ("ssh {}", r"unknown placeholder \{\}"),
        ("ssh {address", r"brace"),
        ("ssh '{address}", r"quotation"),
        ("  ", r"empty"),
        ("ssh {index:q}", r"Unknown format code"),
    ]:
        with pytest.raises(ValueError, match=match):
            rp.launcher(template, hosts)


def test_hosts_files_name_what_is_wrong(tmp_path: Path) -> None:
    f = tmp_path / "hosts"
    f.write_text("0 10.0.0.1 /run/a0.sock\n1 10.0.0.2:6000 /run/a1.sock  # a comment\n")
    assert rp.load_hosts(f) == [
        rp.RuntimeHost("10.0.0.1", rp.DATA_PORT, "/run/a0.sock"),
        rp.RuntimeHost("10.0.0.2", 6000, "/run/a1.sock"),
    ]
    for text, match in [
        ("0 10.0.0.1\n", r"hosts:1: expected"),
        ("0 a /s\n0 b /t\n", r"hosts:2: host 0 given twice"),
        ("0 a /s\n2 b /t\n", r"missing \[1\]"),
        ("0 a:70000 /s\n", r"port '70000'"),
        ("0 a:1 /s\n1 a:1 /t\n", "hosts 0 and 1 both listen on a:1"),
        ("# nothing\n", "no hosts"),
    ]:
        f.write_text(text)
        with pytest.raises(ValueError, match=match):
            rp.load_hosts(f)


def test_an_agent_that_is_not_there_is_named(tmp_path: Path) -> None:
    hosts = [rp.RuntimeHost("127.0.0.1", _free_port(), str(tmp_path / f"none{h}.sock")) for h in range(N_HOSTS)]
    with pytest.raises(RuntimeError, match=r"host 0's agent at .*none0.sock cannot be reached"):
        rp.replay_on_runtime(_tiny(), hosts, tmp_path / "work", deadline_s=5)


def _loopback_replay(w: _core.Workload, plan: rp.Plan, tmp_path: Path) -> pd.DataFrame:
    """``plan`` (of ``w``, every host at 127.0.0.1) replayed by the plain replay's workers, a port per
    host; their results go to ``tmp_path/host*.json``."""
    plan = dataclasses.replace(plan, ports=tuple(_free_port() for _ in range(N_HOSTS)))
    workers = [
        rp.Job(f"the worker of host {h}", [sys.executable, "-m", "coflowkit.testbed.replay.worker", "--host", str(h),
                                            "--deadline", "60"], f"host{h}")
        for h in range(N_HOSTS)
    ]  # fmt: skip
    return rp.collect(plan, rp.run_workers(plan, workers, 60, tmp_path))


def test_the_testbed_workers_run_on_loopback_with_a_port_per_host(tmp_path: Path) -> None:
    """The plain replay's workers (what replay_on_testbed runs in each namespace), here with one address
    and a port per host: the driver's start protocol and the byte checks, without namespaces or root."""
    w = _tiny()
    flows = _loopback_replay(w, rp.make_plan(w, ["127.0.0.1"] * N_HOSTS), tmp_path)
    assert len(flows) == 7 and int(flows["bytes"].sum()) == 1_280_000
    coflows, _ = rp.tables(w, flows)
    assert coflows.num_rows == 4


def test_replay_with_hosts_refuses_what_it_cannot_do(cli: Cli, tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("0 127.0.0.1:1 /nonexistent/a0.sock\n1 127.0.0.1:2 /nonexistent/a1.sock\n")
    out = tmp_path / "out"
    for args, what in [
        (["--policy", "pias"], "'--policy': with --hosts or --scheduler the coordinator's scheduler decides"),
        (["--simulate", "fair"], "'--simulate': not with --hosts yet"),
        (["--scheduler", "aalo"], "'--scheduler': not with --hosts"),
    ]:
        proc = cli("replay", "--hosts", hosts, *args, "--out", out)
        assert proc.returncode == 2 and what in proc.stderr, proc.stderr
    proc = cli("replay", "--launch", "ssh {address}", "--out", out)
    assert proc.returncode == 2 and "'--launch': only with --hosts" in proc.stderr, proc.stderr
    proc = cli("replay", "--hosts", hosts, "--remote-python", "python3", "--out", out)
    assert proc.returncode == 2 and "'--remote-python': only with --launch" in proc.stderr, proc.stderr
    # A bad launcher is refused before anything starts (nothing written).
    proc = cli("replay", "--hosts", hosts, "--launch", "ssh {host}", "--out", out)
    assert proc.returncode == 2 and "unknown placeholder {host}" in proc.stderr, proc.stderr
    assert not out.exists()
    proc = cli("replay", "--label", "aalo", "--out", out)
    assert proc.returncode == 2 and "'--label': only with --hosts" in proc.stderr, proc.stderr
    proc = cli("replay", "--scheduler", "nosuch", "--out", out)
    assert proc.returncode == 2 and "nosuch" in proc.stderr, proc.stderr
    proc = cli("replay", "--scheduler", "aalo", "--policy", "pias", "--out", out)
    assert proc.returncode == 2 and "'--policy'" in proc.stderr, proc.stderr
    hosts.write_text("1 127.0.0.1:1 /s\n")
    proc = cli("replay", "--hosts", hosts, "--out", out)
    assert proc.returncode == 2 and "missing [0]" in proc.stderr, proc.stderr
    # No agent: named, not a traceback.
    hosts.write_text("0 127.0.0.1:1 /nonexistent/a0.sock\n1 127.0.0.1:2 /nonexistent/a1.sock\n")
    proc = cli("replay", "--hosts", hosts, "--max-coflows", 2, "--out", out)
    assert proc.returncode != 0 and "/nonexistent/a0.sock cannot be reached" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr



def test_the_runtime_sender_sets_the_plans_congestion_control(cluster: tuple[str, Path], tmp_path: Path) -> None:
    """The testbed's replays all send with its ``tcp_cc`` (CUBIC by default): the runtime's sender
    took the host's default instead (BBR on this machine, which collapses when starved behind a
    higher queue), so the runtime's schedulers ran on another TCP than plain TCP and the policies."""
    _, hosts = cluster
    flows = rp.replay_on_runtime(_tiny(), rp.load_hosts(hosts), tmp_path / "work", deadline_s=60, tcp_cc="reno")
    assert int(flows["bytes"].sum()) == 1_280_000
    for h in range(N_HOSTS):
        res = json.loads((tmp_path / "work" / f"host{h}.sent.json").read_text())
        assert res["tcp_cc"] == ["reno"] and res["errors"] == [], res
    # The flows that opened a connection say how long it waited for its receiver to take it (one clock:
    # the client's "connected" is read after its connect returns, so it may come a little after).
    wait = flows["accept_wait_s"].dropna()
    assert len(wait) > 0 and wait.between(-0.5, 5).all(), wait


def test_a_flow_whose_connection_breaks_is_sent_again_and_checked(tmp_path: Path) -> None:
    """A connection reset halfway through a flow (the sender's own, on purpose: ``inject_reset``)
    costs the flow a second attempt on another connection, not the run: every byte still arrives,
    checked, and the senders list each lost connection."""
    w = _tiny()
    plan = rp.make_plan(w, ["127.0.0.1"] * N_HOSTS)
    big = [f.id for f in plan.flows if f.size >= 200_000]  # the 200, 300 and 600 KB flows
    plan = dataclasses.replace(plan, inject_reset=tuple(big))
    flows = _loopback_replay(w, plan, tmp_path)
    assert len(flows) == 7 and int(flows["bytes"].sum()) == 1_280_000
    assert sorted(flows.loc[flows["attempts"] == 2, "flow"]) == sorted(big)
    assert (flows.loc[flows["attempts"] == 1, "flow"].isin(big)).sum() == 0
    results = [json.loads((tmp_path / f"host{h}.json").read_text()) for h in range(N_HOSTS)]
    broken = [b for r in results for b in r["broken"]]
    assert all(not r["errors"] for r in results)
    for fid in big:
        assert any(f"flow {fid} to host" in b and "sent again" in b for b in broken), broken
    # What a receiver lists depends on when it reads the reset (before the header, mid-flow, or
    # after its last flow arrived, when it no longer waits): crates/testbed/src/replay_receiver.rs's
    # tests check its lines.


def test_the_runtime_sender_sends_a_flow_again_when_its_connection_breaks(
    cluster: tuple[str, Path], tmp_path: Path
) -> None:
    """As the plain replay's workers: the native sender resets the 600 KB flow's first connection
    halfway (on purpose), sends it again through the runtime on another, and every byte arrives."""
    _, hosts = cluster
    w = _tiny()
    flows = rp.replay_on_runtime(w, rp.load_hosts(hosts), tmp_path / "work", deadline_s=60, inject_reset=[4])
    assert int(flows["bytes"].sum()) == 1_280_000
    assert flows.loc[flows["flow"] == 4, "attempts"].tolist() == [2]
    assert (flows.loc[flows["flow"] != 4, "attempts"] == 1).all()
    res = json.loads((tmp_path / "work" / "host1.sent.json").read_text())
    assert res["errors"] == [] and any("flow 4 to host 0, attempt 1" in b for b in res["broken"]), res


def test_a_process_that_fails_after_the_one_it_needs_exited_names_that_one(tmp_path: Path) -> None:
    """An agent that gives up because its coordinator exited is not the cause: the coordinator is named."""
    from coflowkit.testbed.replay.supervise import wait_until

    (tmp_path / "coord.log").write_text("unknown scheduler nosuch\n")
    (tmp_path / "agent.log").write_text("coordinator unreachable\n")
    coord = subprocess.Popen(["sh", "-c", "exit 2"])
    coord.wait()
    agent = subprocess.Popen(["sh", "-c", "exit 1"])
    agent.wait()
    needs = ("the coordinator (nosuch)", coord, tmp_path / "coord.log")
    with pytest.raises(RuntimeError, match=r"the coordinator \(nosuch\) exited with 2: unknown scheduler"):
        wait_until("the agent of host 0", lambda: False, agent, tmp_path / "agent.log", 5, needs=needs)
    # Without it, the agent's own exit is what is named.
    with pytest.raises(RuntimeError, match=r"the agent of host 0 exited with 1: coordinator unreachable"):
        wait_until("the agent of host 0", lambda: False, agent, tmp_path / "agent.log", 5)
