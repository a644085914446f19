"""D-CAS's negotiation in the replay (`--policy dcas`), with no coordinator: the control datagrams,
a worker's control socket, the spec the replay gives the Rust policy (its rules by hand are in
crates/sched/src/host/dcas/tests.rs), and a loopback replay (one address, a port per host) where two
senders of one coflow negotiate over UDP and the one with fewer bytes left takes the other's
priority."""

from __future__ import annotations

import dataclasses
import json
import socket
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from coflowkit import _core
from coflowkit.testbed import replay as rp
from coflowkit.testbed.replay.worker import (
    ANNOUNCE,
    REPLY,
    Worker,
    decode_control,
    encode_control,
)
from test_runtime_client import _free_port


def test_dcas_control_datagrams_name_what_is_wrong_and_never_raise() -> None:
    msg = encode_control(ANNOUNCE, 3, [(7, 42, 123_456)])
    assert len(msg) == 30 and decode_control(msg, 4) == (ANNOUNCE, 3, [(7, 42, 123_456)])
    two = encode_control(REPLY, 1, [(7, 42, 5), (8, 43, 6)])
    assert len(two) == 50 and decode_control(two, 4) == (REPLY, 1, [(7, 42, 5), (8, 43, 6)])
    assert decode_control(msg, 3) == "host"
    assert decode_control(msg[:-1], 4) == "size" and decode_control(b"", 4) == "size"
    assert decode_control(two[:-20], 4) == "size"  # fewer entries than the head says
    assert decode_control(msg[:8] + b"\x00\x00" + msg[10:], 4) == "size"  # no entry at all
    assert decode_control(b"XXXX" + msg[4:], 4) == "magic"
    assert decode_control(msg[:4] + b"\x01" + msg[5:], 4) == "version"  # one entry a datagram: before batching
    assert decode_control(msg[:5] + b"\x03" + msg[6:], 4) == "kind"
    with pytest.raises(ValueError, match="1 to 64 entries, not 65"):
        encode_control(ANNOUNCE, 0, [(1, 2, 3)] * 65)


def _udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.serial  # the negotiation needs both senders' flows under way at once: timing
def test_dcas_negotiates_between_the_workers_on_loopback(tmp_path: Path) -> None:
    """4 hosts on 127.0.0.1 (a data and a control port each), every flow paced at 20 MB/s (a link's
    rate on loopback). Coflow 1: host 0 sends 4 MB to host 2 (d0 = 4 MB: queue 6); host 1 sends
    1.2 MB to host 2 and 0.2 MB to host 3 (d1 = 1.4 MB: queue 5). Receiver 2 caches both and replies
    the max, so host 1 moves to host 0's queue 6."""
    rows = [  # coflow, arrival (ns), src, dst, bytes
        (1, 0, 0, 2, 4_000_000), (1, 0, 1, 2, 1_200_000), (1, 0, 1, 3, 200_000), (2, 5_000_000, 3, 0, 50_000),
    ]  # fmt: skip
    c, a, s, d, b = (list(x) for x in zip(*rows, strict=True))
    w = _core.workload_from_columns(
        np.array(c, np.uint64), np.array(a, np.uint64), np.array(s, np.uint32), np.array(d, np.uint32),
        np.array(b, np.uint64), n_hosts=4, source="two senders",
    )  # fmt: skip
    spec = rp.policy_spec("dcas", w, heavy=100_000)
    assert "loss=0;" in spec["spec"] and "expiry=40000000ns" in spec["spec"]
    plan = dataclasses.replace(
        rp.make_plan(w, ["127.0.0.1"] * 4, spec),
        ports=tuple(_free_port() for _ in range(4)),
        control_ports=tuple(_udp_port() for _ in range(4)),
        pace_bps=20_000_000,
    )
    workers = [
        rp.Job(f"the worker of host {h}", [sys.executable, "-m", "coflowkit.testbed.replay.worker", "--host", str(h),
                                            "--deadline", "60"], f"host{h}")
        for h in range(4)
    ]  # fmt: skip
    flows = rp.collect(plan, rp.run_workers(plan, workers, 60, tmp_path))  # raises on any byte wrong
    assert len(flows) == 4 and int(flows["bytes"].sum()) == 5_450_000
    ctl = {h: json.loads((tmp_path / f"host{h}.json").read_text())["control"] for h in range(4)}
    one = ctl[1]
    assert one["announcements"] >= 2 and one["replies_received"] >= 2 and one["negotiated"] >= 1
    # Host 1 took host 0's larger value through receiver 2: queue 6 instead of its own 5.
    assert one["changed_queue"] >= 1
    assert any(coflow == 0 and p > dd and q == 6 for _, coflow, dd, p, q in one["raised"]), one["raised"]
    assert ctl[2]["replies_sent"] >= 2
    assert all(x["ignored"] == {} and x["send_failed"] == 0 for x in ctl.values()), ctl
    total = rp.negotiation_summary(tmp_path, 4)
    assert total["announcements"] == sum(x["announcements"] for x in ctl.values())
    assert total["changed_queue"] >= 1 and total["ignored"] == {} and 0 < total["rtt_mean_s"] <= total["rtt_max_s"]
    # A round is decided at its last reply (or at the wait): no sooner than a reply's round trip.
    assert 0 < total["round_mean_s"] <= total["round_max_s"] and total["round_max_s"] >= total["rtt_mean_s"]


def test_a_worker_answers_announcements_and_ignores_bad_or_foreign_datagrams() -> None:
    """Host 1's control socket: an announcement from host 0's control port is answered there;
    garbage, a message claiming a host it does not come from, and a reply nobody waits for are
    counted, and the worker goes on."""
    ports = [_udp_port() for _ in range(2)]
    plan = rp.make_plan(_two_hosts(), ["127.0.0.1"] * 2, rp.policy_spec("dcas", _two_hosts(), heavy=1000))
    plan = dataclasses.replace(plan, control_ports=tuple(ports))
    w = Worker(plan, 1, 60.0, None)  # type: ignore[arg-type]
    udp = (socket.AF_INET, socket.SOCK_DGRAM)
    with socket.socket(*udp) as peer, socket.socket(*udp) as stranger:
        peer.bind(("127.0.0.1", ports[0]))  # host 0's control port
        peer.settimeout(5)
        try:
            w._open_control()
            assert w.ctl is not None
            to = ("127.0.0.1", ports[1])
            stranger.sendto(b"hello", to)
            stranger.sendto(encode_control(ANNOUNCE, 0, [(1, 0, 5000)]), to)  # claims host 0, from elsewhere
            stranger.sendto(encode_control(ANNOUNCE, 9, [(1, 0, 5000)]), to)  # no host 9
            peer.sendto(encode_control(REPLY, 0, [(1, 0, 5000)]), to)  # no round open here: late
            peer.sendto(encode_control(ANNOUNCE, 0, [(4, 0, 7000)]), to)
            deadline = time.time() + 5
            assert w.policy is not None

            def counts() -> dict[str, int]:
                report = w.policy.dcas_report() if w.policy is not None else None
                assert report is not None
                return dict(report["counts"])

            while counts()["replies_sent"] == 0 and time.time() < deadline:
                w.control()
                time.sleep(0.01)
            assert decode_control(peer.recv(100), 2) == (REPLY, 1, [(4, 0, 7000)])
            assert w.ctl_bad == {"size": 1, "source": 1, "host": 1}
            assert counts()["replies_late"] == 1
        finally:
            if w.ctl is not None:
                w.loop.remove_reader(w.ctl.fileno())
                w.ctl.close()
            w.loop.close()
    # a plan with no control port: named, not a crash later
    plan = dataclasses.replace(plan, control_port=None, control_ports=None)
    w = Worker(plan, 1, 60.0, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no control port"):
        w._open_control()
    w.loop.close()


def test_the_native_clock_ticks_on_the_grid_answers_and_ignores_as_the_loop_does() -> None:
    """The same datagrams to host 1 with its D-CAS clock run natively (``Worker.native_clock``): the
    announcement answered from the clock's thread, the rest counted by why as the event loop counts
    them; meanwhile the policy ticks on its ``delta`` grid with no event loop running."""
    ports = [_udp_port() for _ in range(2)]
    plan = rp.make_plan(_two_hosts(), ["127.0.0.1"] * 2, rp.policy_spec("dcas", _two_hosts(), heavy=1000))
    plan = dataclasses.replace(plan, control_ports=tuple(ports))
    delta_s = rp.seconds(rp.policy_keys(plan.policy)["delta"])
    w = Worker(plan, 1, 60.0, None)  # type: ignore[arg-type]
    assert w.policy is not None
    udp = (socket.AF_INET, socket.SOCK_DGRAM)
    with socket.socket(*udp) as peer, socket.socket(*udp) as stranger:
        peer.bind(("127.0.0.1", ports[0]))
        peer.settimeout(5)
        try:
            w._open_control()
            assert w.ctl is not None
            w.t0 = time.time()
            w.native_clock()
            assert w.native
            to = ("127.0.0.1", ports[1])
            stranger.sendto(b"hello", to)
            stranger.sendto(encode_control(ANNOUNCE, 0, [(1, 0, 5000)]), to)
            stranger.sendto(encode_control(ANNOUNCE, 9, [(1, 0, 5000)]), to)
            peer.sendto(encode_control(REPLY, 0, [(1, 0, 5000)]), to)
            peer.sendto(encode_control(ANNOUNCE, 0, [(4, 0, 7000)]), to)
            assert decode_control(peer.recv(100), 2) == (REPLY, 1, [(4, 0, 7000)])
            time.sleep(max(0.0, w.t0 + 30 * delta_s - time.time()))
        finally:
            w._stop_clock()
            if w.ctl is not None:
                w.ctl.close()
            w.loop.close()
    counts = w.policy.dcas_report()["counts"]  # type: ignore[index]
    assert w.ctl_bad == {"size": 1, "source": 1, "host": 1} and counts["replies_late"] == 1
    assert w.datagrams == 1 and w.clock_stats["wakeups"] >= counts["ticks"]
    # about one tick a grid point (a loaded test machine may miss one), each well within delta
    assert counts["ticks"] >= 25 and counts["ticks_late_ns"] / counts["ticks"] < delta_s * 1e9 / 2, counts


def _two_hosts() -> _core.Workload:
    return _core.workload_from_columns(
        np.array([1], np.uint64), np.array([0], np.uint64), np.array([0], np.uint32), np.array([1], np.uint32),
        np.array([10_000], np.uint64), n_hosts=2, source="one flow",
    )  # fmt: skip


def _keys(spec: dict[str, str]) -> dict[str, str]:
    """The ``key=value`` pairs of a policy's scheduler spec."""
    return dict(kv.split("=", 1) for kv in spec["spec"].split(":", 1)[1].split(";"))


def test_dcas_timers_are_the_papers_at_the_replays_time_scale() -> None:
    w = _core.workload_from_columns(
        np.array([1], np.uint64), np.array([0], np.uint64), np.array([0], np.uint32), np.array([1], np.uint32),
        np.array([5_000], np.uint64), n_hosts=2, source="one flow",
    )  # fmt: skip
    # FB2010's usual x0.02: T 20 ms, expiry 40 ms, delta 2 ms raised to a Python timer's 10 ms.
    k = _keys(rp.policy_spec("dcas", w, heavy=1000))
    assert (k["delta"], k["t"], k["expiry"], k["wait"]) == ("10000000ns", "20000000ns", "40000000ns", "8ms")
    assert (k["threshold"], k["loss"], k["psi"], k["phi"]) == ("1000", "0", "max", "max")
    # D-CAS's own mix at 25 Mbit/s with sizes x0.01 runs at 0.4 of the paper's times: 40 ms, 400 ms, 800 ms.
    k = _keys(rp.policy_spec("dcas", w, heavy=1000, time_scale=0.4))
    assert (k["delta"], k["t"], k["expiry"]) == ("40000000ns", "400000000ns", "800000000ns")
    # Without negotiation: every message lost, as the simulator's loss=1.
    assert _keys(rp.policy_spec("dcas", w, heavy=1000, negotiate=False))["loss"] == "1"
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="dcas time_scale"):
            rp.policy_spec("dcas", w, time_scale=bad)
    with pytest.raises(ValueError, match="dcas phi 'median': max, min or mean"):
        rp.policy_spec("dcas", _two_hosts(), phi="median")


def test_dcas_bands_cut_the_negotiated_priority_into_queues_4_to_7() -> None:
    w = _core.workload_from_columns(
        np.array([1], np.uint64), np.array([0], np.uint64), np.array([0], np.uint32), np.array([1], np.uint32),
        np.array([5_000], np.uint64), n_hosts=2, source="one flow",
    )  # fmt: skip
    # The default: the threshold times 4, 16 and 64.
    assert _keys(rp.policy_spec("dcas", w, heavy=1000))["desired"] == "bands:4000/16000/64000"
    spec = rp.policy_spec("dcas", w, heavy=1000, bands=[2000, 50_000, 1_000_000])
    assert _keys(spec)["desired"] == "bands:2000/50000/1000000"
    # A negotiated value of 49,999 bytes is queue 5, 50,000 queue 6.
    p = _core.HostPolicy(spec["spec"], 0, 2, 1e9, 100_000)
    p.start(0, 1, 0, 0, 1, 50_000)
    assert p.marking(1)[0] == 6
    p.start(0, 2, 1, 0, 1, 49_999)
    assert p.marking(2)[0] == 5
    with pytest.raises(ValueError, match=r"dcas bands \[3, 2, 1\]: give 3 ascending positive byte counts"):
        rp.policy_spec("dcas", w, bands=[3, 2, 1])


def test_dcas_runs_are_summed_over_hosts_by_coflow_id(tmp_path: Path) -> None:
    """Workers report Dcas.runs by the plan's coflow rank (FIFO order); the driver sums them by id."""
    w = _core.workload_from_columns(
        np.array([9, 4, 9], np.uint64), np.array([5, 7, 5], np.uint64), np.array([0, 1, 1], np.uint32),
        np.array([1, 0, 0], np.uint32), np.array([10, 20, 30], np.uint64), n_hosts=2, source="two coflows",
    )  # fmt: skip
    assert rp.coflow_ranks(w) == {9: 0, 4: 1}  # coflow 9 arrived first
    (tmp_path / "host0.json").write_text(json.dumps({"dcas_runs": {"0": [5, 1], "1": [2, 0]}}))
    (tmp_path / "host1.json").write_text(json.dumps({"dcas_runs": {"0": [3, 2]}}))
    assert rp.dcas_runs(tmp_path, w) == {9: [8, 3], 4: [2, 0]}
