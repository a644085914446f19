"""Transparent enforcement on the testbed: flows the runtime does not write, named by their address,
held by the sending host's agent to their scheduled rate and class with tc (`--transparent-dev`).

These need root and iproute2, as CI has; elsewhere they are skipped with the reason. Each test uses
its own testbed name and a temporary state directory, and always tears down.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coflowkit import _core
from coflowkit.testbed import memcached as mc
from coflowkit.testbed import net as tb

# Alone in `make test`'s serial pass, as the other testbed tests.
pytestmark = pytest.mark.serial

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None,
    reason="the testbed needs root and iproute2 (ip, tc)",
)

RATE = 100e6


@pytest.fixture
def bed(tmp_path: Path) -> Iterator[tb.Plan]:
    name = f"x{os.getpid() % 10_000}"
    tb.down(name, tmp_path)
    p = tb.up(f"bigswitch:hosts=3,rate={RATE:.0f}bps", name, state_dir=tmp_path)
    try:
        yield p
    finally:
        tb.down(name, tmp_path)


def _watched_transfers(
    p: tb.Plan, agents: dict[int, str], flows: list[tuple[int, int, float]], seconds: float
) -> list[dict[str, Any]]:
    """Each of ``flows`` (src host, dst host, start offset s) a coflow of its own, registered at the
    sender's agent and its one TCP flow named there by address (a fixed source port), then sent by an
    unmodified process (`coflowkit.testbed.traffic source`) for ``seconds``; the sinks' samples."""
    port0 = 41_000 + os.getpid() % 5_000
    clients = {h: _core.AgentClient(agents[h]) for h in {f[0] for f in flows}}
    sinks = [tb._traffic(p, dst, "sink", "--port", str(port0 + k), "--timeout", str(seconds + 20))
             for k, (_s, dst, _o) in enumerate(flows)]  # fmt: skip
    time.sleep(0.3)
    sources = []
    t0 = time.monotonic()
    for k, (src, dst, offset) in enumerate(flows):
        while time.monotonic() - t0 < offset:
            time.sleep(0.01)
        coflow = clients[src].register()
        clients[src].watch(coflow, dst, port0 + 500 + k, p.host_ip[dst], port0 + k)
        time.sleep(0.05)  # the class is made by the agent's next pass
        args = f"source --dst {p.host_ip[dst]} --port {port0 + k} --seconds {seconds} --cc {p.tcp_cc}"
        sources.append(tb._traffic(p, src, *args.split(), "--src-port", str(port0 + 500 + k)))
    out = []
    for k in range(len(flows)):
        sent = tb._finish(sources[k], f"source {k}", seconds + 30)
        got = tb._finish(sinks[k], f"sink {k}", 30)
        assert got["bytes"] == sent["bytes"] and got["sha256"] == sent["sha256"]
        out.append(got)
    return out


@needs_root
def test_a_flow_named_by_address_is_held_to_its_rate(bed: tb.Plan, tmp_path: Path) -> None:
    # The coordinator believes the NICs run at 40 Mbit/s: `fair` gives the lone flow 40 Mbit/s, which
    # only the agent's HTB class can hold it to (the port runs at 100 Mbit/s, and the sender is a
    # plain socket).
    with mc.runtime_on_testbed(bed, "fair", tmp_path / "rt", host_rate=40e6) as agents:
        [r] = _watched_transfers(bed, agents, [(0, 1, 0.0)], seconds=3.0)
    first, last = r["samples"][0][0], r["samples"][-1][0]
    bps = tb.goodput_bps(r["samples"], first + 0.5, last)
    print(f"held to 40 Mbit/s: measured {bps / 1e6:.1f} Mbit/s")
    assert abs(bps / 40e6 - 1) <= 0.10, bps


@needs_root
def test_a_work_conserving_flow_borrows_the_idle_link(bed: tb.Plan, tmp_path: Path) -> None:
    # The same 40 Mbit/s schedule, with `--transparent-ceil line`: the class is guaranteed its 40 Mbit/s
    # and borrows the rest of the idle 100 Mbit/s port.
    with mc.runtime_on_testbed(bed, "fair", tmp_path / "rt", host_rate=40e6, ceiling="line") as agents:
        [r] = _watched_transfers(bed, agents, [(0, 1, 0.0)], seconds=2.0)
    first, last = r["samples"][0][0], r["samples"][-1][0]
    bps = tb.goodput_bps(r["samples"], first + 0.5, last)
    print(f"scheduled 40 Mbit/s, borrowing: measured {bps / 1e6:.1f} Mbit/s")
    assert bps >= 0.85 * RATE, bps


def _older_share(old: dict[str, Any], young: dict[str, Any]) -> tuple[float, float]:
    """The older and the younger flow's goodput while both run (bits/s)."""
    a = max(old["samples"][0][0], young["samples"][0][0]) + 0.3
    b = min(old["samples"][-1][0], young["samples"][-1][0]) - 0.3
    assert b - a >= 0.5, (a, b)
    return tb.goodput_bps(old["samples"], a, b), tb.goodput_bps(young["samples"], a, b)


@needs_root
@pytest.mark.parametrize("ceiling", ["rate", "line"])
def test_flows_named_by_address_keep_the_schedules_priority_order(
    bed: tb.Plan, tmp_path: Path, ceiling: str
) -> None:
    # FIFO between tasks (no task turns heavy): the older flow takes the sender's port, the younger,
    # started a second later from the same host to another, waits in a lower class (held to a token
    # rate, or borrowing only what the older leaves).
    with mc.runtime_on_testbed(bed, "fifo-lm:threshold=1GiB", tmp_path / "rt", ceiling=ceiling) as agents:
        old, young = _watched_transfers(bed, agents, [(0, 1, 0.0), (0, 2, 1.0)], seconds=3.0)
    hi, lo = _older_share(old, young)
    print(f"{ceiling}: older {hi / 1e6:.1f} Mbit/s, younger {lo / 1e6:.1f} Mbit/s")
    assert hi / (hi + lo) >= 0.9, (hi, lo)
    assert abs(hi + lo - RATE) <= 0.15 * RATE, (hi, lo)


@needs_root
def test_a_host_policy_marks_flows_named_by_address_by_their_task_s_age(bed: tb.Plan, tmp_path: Path) -> None:
    # `--transparent-policy host`: each agent marks its watched flows with fifo-lm's host policy (a
    # task's class follows its age, one class per `age` quantum, so agents agree on the order without
    # the coordinator). Two senders, one receiver, the second task a second younger: the older is a
    # class above it at the switch's port to host 2 for the whole overlap, and takes that port.
    with mc.runtime_on_testbed(
        bed, "fifo-lm:threshold=1GiB;age=1s", tmp_path / "rt", ceiling="line", policy="host"
    ) as agents:
        old, young = _watched_transfers(bed, agents, [(0, 2, 0.0), (1, 2, 1.0)], seconds=3.0)
    hi, lo = _older_share(old, young)
    print(f"host policy: older {hi / 1e6:.1f} Mbit/s, younger {lo / 1e6:.1f} Mbit/s")
    assert hi / (hi + lo) >= 0.9, (hi, lo)


def _switch_queue_bytes(p: tb.Plan, host: int) -> list[int]:
    """Bytes sent by each of the eight queues of the switch port towards ``host``."""
    ns = p.switch_ns[p.host_switch[host]]
    out = subprocess.run(["ip", "netns", "exec", ns, "tc", "-s", "class", "show", "dev", f"h{host}"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    sent = [0] * tb.N_QUEUES
    for block in out.split("class htb ")[1:]:
        q = int(block.split()[0].split(":")[1]) - 10
        if 0 <= q < tb.N_QUEUES:
            sent[q] = int(block.split(" Sent ")[1].split()[0])
    return sent


@needs_root
def test_a_flows_class_reaches_the_switch_as_its_dscp(bed: tb.Plan, tmp_path: Path) -> None:
    # Two senders, one receiver: the bottleneck is the switch's port to host 2, which sees only the
    # packets' DSCP. The agents mark each watched flow's packets with its class's DSCP (an eBPF
    # classifier at the sender's egress), so the older flow's class 0 is the port's queue 0, the
    # younger's (paused, borrowing its own idle port) the best-effort queue 7, and FIFO between the
    # tasks holds at the switch.
    before = _switch_queue_bytes(bed, 2)
    with mc.runtime_on_testbed(bed, "fifo-lm:threshold=1GiB", tmp_path / "rt", ceiling="line") as agents:
        old, young = _watched_transfers(bed, agents, [(0, 2, 0.0), (1, 2, 1.0)], seconds=3.0)
    after = _switch_queue_bytes(bed, 2)
    hi, lo = _older_share(old, young)
    sent = [b - a for a, b in zip(before, after)]
    print(f"older {hi / 1e6:.1f} Mbit/s, younger {lo / 1e6:.1f} Mbit/s; switch queues' bytes {sent}")
    assert sent[0] >= 0.5 * sum(sent), sent
    assert hi / (hi + lo) >= 0.9, (hi, lo)


@needs_root
def test_an_agent_without_a_device_refuses_flows_named_by_address(bed: tb.Plan, tmp_path: Path) -> None:
    with mc.runtime_on_testbed(bed, "fair", tmp_path / "rt", transparent_dev=None) as agents:
        c = _core.AgentClient(agents[0])
        coflow = c.register()
        with pytest.raises(ValueError, match="--transparent-dev"):
            c.watch(coflow, 1, 40_000, bed.host_ip[1], 40_001)
        with pytest.raises(ValueError, match="dst_addr"):
            c.watch(coflow, 1, 40_000, "10.0.0.x", 40_001)


def _switch_queue_state(p: tb.Plan, host: int, queue: int) -> tuple[int, int]:
    """Queue ``queue`` of the switch port towards ``host`` (its bfifo): packets dropped so far, and
    the bytes it holds now."""
    ns = p.switch_ns[p.host_switch[host]]
    out = subprocess.run(["ip", "netns", "exec", ns, "tc", "-j", "-s", "qdisc", "show", "dev", f"h{host}"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    for q in json.loads(out):
        if q["handle"] == f"{10 + queue}:":
            return int(q["drops"]), int(q["backlog"])
    raise AssertionError(f"no queue {queue} on the switch port to host {host}: {out}")


#: A listener (its backlog takes the connections: the kernel completes a handshake without accept).
_LISTEN = (
    "import socket,sys,time\ns=socket.socket();s.bind(('0.0.0.0',int(sys.argv[1])));s.listen(128)\n"
    "time.sleep(float(sys.argv[2]))\n"
)
#: Best-effort UDP at ``rate`` bit/s (1,400-byte datagrams, unmarked) for ``seconds``.
_BLAST = (
    "import socket,sys,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);d=(sys.argv[1],int(sys.argv[2]))\n"
    "gap=1400*8/float(sys.argv[3]);end=time.monotonic()+float(sys.argv[4]);b=bytes(1400);t=time.monotonic()\n"
    "while t<end:\n  s.sendto(b,d);t+=gap\n  w=t-time.monotonic()\n  time.sleep(w) if w>0.002 else None\n"
)
#: ``n`` connections one after another, each one's connect time (s), as JSON.
_CONNECT = (
    "import json,socket,sys,time\nout=[]\nfor _ in range(int(sys.argv[3])):\n"
    "  s=socket.socket();s.settimeout(10);t=time.monotonic();s.connect((sys.argv[1],int(sys.argv[2])))\n"
    "  out.append(time.monotonic()-t);s.close();time.sleep(0.05)\nprint(json.dumps(out))\n"
)


@needs_root
def test_a_handshake_is_not_starved_behind_a_paused_flow(bed: tb.Plan, tmp_path: Path) -> None:
    # The client's downlink (the switch port to host 2) carries an older flow in queue 0 and, in
    # best-effort queue 7, a younger one, paused, that borrows its idle sender's port at line rate and
    # unnamed best-effort traffic from the same host (UDP at 20 Mbit/s: a paused TCP flow alone backs
    # off into its timeouts and leaves the queue, where many do not). Strict priority keeps queue 7
    # full. A new, unwatched connection from host 2 to host 1 must get its SYN-ACK through that port:
    # the agents' classifier puts every TCP packet without payload in queue 0 (CS7, and the host's
    # class 1:10), so each handshake waits behind queue 0 only, not TCP's 1 s initial timeout after a
    # SYN-ACK lost in queue 7.
    port = 43_000 + os.getpid() % 5_000
    result: dict[str, Any] = {}
    with mc.runtime_on_testbed(bed, "fifo-lm:threshold=1GiB", tmp_path / "rt", ceiling="line") as agents:

        def transfers() -> None:
            result["flows"] = _watched_transfers(bed, agents, [(0, 2, 0.0), (1, 2, 1.0)], seconds=5.0)

        th = threading.Thread(target=transfers)
        th.start()
        listener = subprocess.Popen(tb.ns_cmd(bed, 1, [sys.executable, "-c", _LISTEN, str(port), "60"]))
        time.sleep(1.5)
        blast = subprocess.Popen(tb.ns_cmd(bed, 1, [sys.executable, "-c", _BLAST, bed.host_ip[2], "9", "20e6", "2.5"]))
        time.sleep(1.0)  # both flows running, the younger paused, queue 7 full
        drops0, held = _switch_queue_state(bed, 2, 7)
        a = time.time()
        probe = subprocess.run(
            tb.ns_cmd(bed, 2, [sys.executable, "-c", _CONNECT, bed.host_ip[1], str(port), "20"]),
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        b = time.time()
        drops = _switch_queue_state(bed, 2, 7)[0] - drops0
        blast.wait(timeout=30)
        th.join()
        listener.kill()
        listener.wait(timeout=30)
    assert probe.returncode == 0, probe.stderr
    times = json.loads(probe.stdout)
    old, young = result["flows"]
    hi, lo = (tb.goodput_bps(f["samples"], a, b) for f in (old, young))
    took = [round(1e3 * t, 1) for t in times]
    print(f"meanwhile older {hi / 1e6:.1f} Mbit/s, younger {lo / 1e6:.1f} Mbit/s; queue 7 held {held} bytes and "
          f"dropped {drops} packets during the handshakes, which took (ms) {took}")  # fmt: skip
    assert hi >= 0.85 * RATE and lo <= 0.05 * RATE, (hi, lo)
    assert drops > 0 and held >= tb.default_buffer(RATE) - 2 * 1514, (drops, held)
    assert max(times) < 0.5, times
