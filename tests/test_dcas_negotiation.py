"""D-CAS's negotiation in the replay (`--policy dcas`), with no coordinator: the sender's and the
receiver's rules by hand (Pseudocode 1 and 2, Psi = Phi = max, expiry, lost and late replies), the
control datagrams, and a loopback replay (one address, a port per host) where two senders of one
coflow negotiate over UDP and the one with fewer bytes left takes the other's priority."""

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
from coflowkit.testbed.replay.plans import Flow
from coflowkit.testbed.replay.worker import (
    ANNOUNCE,
    REPLY,
    Dcas,
    Worker,
    combine,
    decode_control,
    encode_control,
    make_policy,
)
from test_runtime_client import _free_port


def _policy(host: int = 0, negotiate: bool = True) -> Dcas:
    # threshold 1,000 bytes: <1, P> is queue 4 below 4,000, 5 below 16,000, 6 below 64,000, else 7.
    return Dcas(threshold=1000, quantum_s=0.1, delta_s=0.01, starve_s=0.5, t0=100.0, negotiate=negotiate,
                expiry_s=0.04, wait_s=0.005, host=host)  # fmt: skip


def _sent(p: Dcas) -> list[tuple[int, int, int, int, int, int]]:
    """The entries ``p`` sent (flushed) since the last call: (to, kind, from, number, coflow, value)."""
    p.flush()
    out = []
    for dst, msg in p.outbox:
        m = decode_control(msg, 16)
        assert not isinstance(m, str)
        kind, host, entries = m
        out += [(dst, kind, host, *e) for e in entries]
    p.outbox.clear()
    return out


def test_dcas_keep_own_negotiates_but_keeps_the_senders_own_priority() -> None:
    """The diagnostic ``keep_own``: the same messages and counts, the sender's own ``<1, d>``."""
    s = Dcas(threshold=1000, quantum_s=0.1, delta_s=0.01, starve_s=0.5, t0=100.0, negotiate=True,
             expiry_s=0.04, wait_s=0.005, keep_own=True)  # fmt: skip
    s.clock(100.05)
    s.start(Flow(id=1, src=0, dst=2, size=10_000, start_s=0.0, coflow_rank=3, coflow_arrival_s=0.0))
    assert _sent(s) == [(2, ANNOUNCE, 0, 1, 3, 10_000)] and s.queue(1) == 5
    # Host 2 replies 70,000 (another sender's): counted as raising the value, but the queue stays 5.
    assert s.reply(100.051, receiver=2, number=1, c=3, value=70_000) == []
    assert s.queue(1) == 5 and s.stats["negotiated"] == 1 and s.stats["raised_value"] == 1
    assert make_policy({"name": "dcas", "threshold": 1000, "quantum_s": 0.1, "delta_s": 0.01, "starve_s": 0.5,
                        "negotiate": True, "keep_own": True}).keep_own  # fmt: skip


def test_dcas_receiver_replies_the_max_of_the_cached_senders_and_forgets_expired_ones() -> None:
    r = _policy(host=5)
    r.announce(100.000, sender=1, number=1, c=7, value=3000)
    assert _sent(r) == [(1, REPLY, 5, 1, 7, 3000)]  # alone: its own value
    r.announce(100.001, sender=2, number=1, c=7, value=9000)
    assert _sent(r) == [(2, REPLY, 5, 1, 7, 9000)]
    r.announce(100.002, sender=1, number=2, c=7, value=2500)  # the latest per sender replaces the older
    assert _sent(r) == [(1, REPLY, 5, 2, 7, 9000)]  # Psi = max over both senders
    assert r.cache[7] == {1: (2500, 100.002), 2: (9000, 100.001)}
    r.announce(100.003, sender=3, number=1, c=8, value=100_000)  # another coflow does not count
    assert _sent(r) == [(3, REPLY, 5, 1, 8, 100_000)]
    # Sender 2's entry (at 100.001) expires 40 ms later: kept 1 ms before, gone 1 ms after.
    r.announce(100.040, sender=1, number=3, c=7, value=2000)
    assert _sent(r)[0][-1] == 9000
    r.announce(100.042, sender=1, number=4, c=7, value=2000)
    assert _sent(r)[0][-1] == 2000 and set(r.cache[7]) == {1}
    r.tick(100.2)  # the receiver's sweep forgets every coflow whose entries all expired
    assert r.cache == {} and r.stats["replies_sent"] == 6


def test_dcas_sender_negotiates_with_its_receivers_and_takes_the_max() -> None:
    s = _policy(host=0)
    # coflow 3: 10,000 bytes to host 2 and 2,000 to host 4
    a = Flow(id=1, src=0, dst=2, size=10_000, start_s=0.0, coflow_rank=3, coflow_arrival_s=0.0)
    b = Flow(id=2, src=0, dst=4, size=2_000, start_s=0.0, coflow_rank=3, coflow_arrival_s=0.0)
    s.clock(100.05)
    s.start(a)
    # A new large subcoflow announces d = 10,000 to host 2 and keeps <1, d> (queue 5) meanwhile.
    assert _sent(s) == [(2, ANNOUNCE, 0, 1, 3, 10_000)] and s.queue(1) == 5
    s.start(b)  # the same subcoflow: no new round until the next tick
    assert _sent(s) == [] and s.queue(2) == 5
    assert s.tick(100.06) == []  # round 1 is past its wait with no reply: <1, d>, as it was
    assert s.stats["fallback"] == 1 and s.stats["replies_missing"] == 1
    assert _sent(s) == [(2, ANNOUNCE, 0, 2, 3, 12_000), (4, ANNOUNCE, 0, 2, 3, 12_000)]
    assert s.reply(100.061, receiver=2, number=2, c=3, value=12_000) == []  # waits for host 4
    # Host 4 caches another sender of coflow 3 with 70,000 bytes left: max -> <1, 70,000>, queue 7.
    assert s.reply(100.062, receiver=4, number=2, c=3, value=70_000) == [1, 2]
    assert (s.queue(1), s.queue(2)) == (7, 7)
    assert s.stats["negotiated"] == 1 and s.stats["changed_queue"] == 1
    assert s.raised == [(100.062, 3, 12_000, 70_000, 7)]
    # Round 1 fell back when the 100.06 tick found it past its wait (here nothing settled it sooner);
    # round 2 was decided at its second reply, 2 ms after it was announced at that tick.
    assert [round(t, 6) for t in s.rounds] == [0.01, 0.002]
    assert s.reply(100.063, receiver=4, number=2, c=3, value=1) == []  # decided: late, ignored
    assert s.reply(100.063, receiver=4, number=1, c=3, value=1) == []  # an older round: late
    assert s.stats["replies_late"] == 2 and s.queue(1) == 7
    # Next tick: only host 2 answers before the wait is over: Phi of what came.
    s.tick(100.07)
    assert len(_sent(s)) == 2
    s.reply(100.071, receiver=2, number=3, c=3, value=15_000)
    assert s.settle(100.074) == [] and s.queue(1) == 7  # not yet (the wait is 5 ms)
    assert s.settle(100.075) == [1, 2] and s.queue(1) == 5  # <1, 15,000>
    assert s.stats["replies_missing"] == 2 and s.stats["negotiated"] == 2


def test_dcas_lost_replies_keep_the_senders_own_priority_and_off_is_todays_rule() -> None:
    s = _policy(host=1)
    big = Flow(id=1, src=1, dst=0, size=20_000, start_s=0.0, coflow_rank=0, coflow_arrival_s=0.0)
    s.start(big)
    assert s.queue(1) == 6 and len(_sent(s)) == 1
    for k in range(1, 4):  # every reply lost: the round falls back on <1, d> each time
        s.tick(100.0 + 0.01 * k)
        assert s.queue(1) == 6 and len(_sent(s)) == 1
    s.settle(100.1)
    assert s.stats["fallback"] == 4 and s.stats["negotiated"] == 0 and s.stats["replies_missing"] == 4
    # The subcoflow ends with a round open: dropped, and its reply is late.
    s.tick(100.11)
    assert len(_sent(s)) == 1
    assert s.finish(big) == [] and s.open == {} and s.stats["dropped_rounds"] == 1
    assert s.reply(100.111, receiver=0, number=5, c=0, value=99_999) == [] and s.stats["replies_late"] == 1
    # Small subcoflows (FIFO) and starving ones (<1, 0>) do not negotiate.
    small = Flow(id=2, src=1, dst=0, size=500, start_s=0.0, coflow_rank=1, coflow_arrival_s=0.0)
    s.clock(100.2)
    s.start(small)
    assert s.queue(2) == 1 and _sent(s) == []  # two quanta old: FIFO, queue 3 - 2
    off = _policy(negotiate=False)
    off.start(big)
    assert off.tick(100.01) == [] and off.queue(1) == 6 and off.outbox == [] and off.open == {}
    spec = {"name": "dcas", "threshold": 1000, "quantum_s": 0.1, "delta_s": 0.01, "starve_s": 0.02}
    assert not make_policy(spec).negotiate  # plans without the key: today's rule
    on = make_policy({**spec, "negotiate": True, "expiry_s": 0.04, "wait_s": 0.005})
    assert isinstance(on, Dcas) and on.negotiate and (on.expiry, on.wait) == (0.04, 0.005)
    assert [combine(h, [3, 4]) for h in ("max", "min", "mean")] == [4, 3, 4]  # the mean's half rounds up
    assert combine("mean", [1, 1, 2]) == 1
    mean = make_policy({**spec, "negotiate": True, "psi": "mean", "phi": "min"})
    assert isinstance(mean, Dcas)
    mean.announce(1.0, sender=1, number=1, c=0, value=3000)
    mean.announce(1.0, sender=2, number=1, c=0, value=6001)
    assert _sent(mean)[-1][-1] == 4501  # Psi = mean
    with pytest.raises(ValueError, match="dcas phi 'median': max, min or mean"):
        rp.policy_spec("dcas", _two_hosts(), phi="median")
    with pytest.raises(ValueError, match="unknown combination 'median'"):
        make_policy({**spec, "negotiate": True, "phi": "median"})
    with pytest.raises(ValueError, match=r"wait_s 0.02 must be positive and shorter than delta_s 0.01"):
        make_policy({**spec, "negotiate": True, "wait_s": 0.02})  # a round must end before the next tick


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


def test_dcas_counts_bytes_left_and_service_on_the_wire() -> None:
    """A subcoflow's bytes left include those in its sockets not yet acknowledged, and it is served
    when its receivers acknowledge bytes, not when the socket takes them (``count="wire"``, the
    default); ``count="written"`` counts at the socket, as the replay did before."""
    flow = Flow(id=1, src=0, dst=2, size=10_000, start_s=0.0, coflow_rank=3, coflow_arrival_s=0.0)
    wire = Dcas(threshold=1000, quantum_s=0.1, delta_s=0.01, starve_s=0.5, t0=100.0)
    written = Dcas(threshold=1000, quantum_s=0.1, delta_s=0.01, starve_s=0.5, t0=100.0, count="written")
    for p in (wire, written):
        p.unacked = lambda fid: 9_000  # the socket holds 9,000 bytes of the 9,500 written
        p.clock(100.0)
        p.start(flow)
        assert p.queue(1) == 5  # 10,000 left: <1, 10,000> is queue 5 (4,000 to 16,000)
        p.sent(flow, 9_500)
        p.tick(100.01)
    assert wire.queue(1) == 5  # 500 to write + 9,000 in the socket: still large
    assert written.queue(1) == 3  # 500 left at the socket: short, FIFO by age (queues 0-3)
    # Nothing acknowledged since 100.01 (500 bytes then): starved after T = 0.5 s, <1, 0> is queue 4.
    wire.tick(100.3)
    assert wire.queue(1) == 5
    wire.tick(100.52)
    assert wire.queue(1) == 4
    wire.unacked = lambda fid: 8_000  # 1,000 more acknowledged: served again
    wire.tick(100.53)
    assert wire.queue(1) == 5
    # Coflow 3 decided as large at its start and at four ticks, once as starving; never as short.
    assert wire.runs == {3: [5, 1]} and written.runs == {3: [1, 0]}
    with pytest.raises(ValueError, match="count 'acked' must be 'wire' or 'written'"):
        make_policy({"name": "dcas", "threshold": 1000, "quantum_s": 0.1, "delta_s": 0.01, "starve_s": 0.5,
                     "count": "acked"})  # fmt: skip


def test_dcas_batches_a_ticks_messages_one_datagram_per_destination() -> None:
    """A sender's announcements of one tick to one receiver go in one datagram, and so do a
    receiver's replies to one sender; past 64 entries, another datagram."""
    s = _policy()
    s.clock(100.0)
    for fid, c in enumerate((3, 4, 5)):  # three subcoflows to receivers 2 (all) and 6 (coflow 3)
        s.start(Flow(id=fid, src=0, dst=2, size=10_000, start_s=0.0, coflow_rank=c, coflow_arrival_s=0.0))
    s.start(Flow(id=9, src=0, dst=6, size=10_000, start_s=0.0, coflow_rank=3, coflow_arrival_s=0.0))
    s.outbox.clear()
    s.tick(100.01)
    sent = _sent(s)
    assert sorted((d, c) for d, k, _, _, c, _ in sent) == [(2, 3), (2, 4), (2, 5), (6, 3)]
    s.tick(100.02)
    s.flush()
    assert sorted((dst, len(decode_control(m, 16)[2])) for dst, m in s.outbox) == [(2, 3), (6, 1)]
    r = _policy(host=2)
    for n in range(70):
        r.announce(100.0, sender=1, number=1, c=n, value=5000)
    r.flush()
    assert [len(decode_control(m, 16)[2]) for _, m in r.outbox] == [64, 6]
    assert r.stats["datagrams"] == 2 and r.stats["replies_sent"] == 70


def _udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    assert spec["negotiate"] and spec["expiry_s"] == 0.04
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
            while w.policy.stats["replies_sent"] == 0 and time.time() < deadline:  # type: ignore[attr-defined]
                w.control()
                time.sleep(0.01)
            assert decode_control(peer.recv(100), 2) == (REPLY, 1, [(4, 0, 7000)])
            assert w.ctl_bad == {"size": 1, "source": 1, "host": 1}
            assert w.policy.stats["replies_late"] == 1  # type: ignore[attr-defined]
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


def _two_hosts() -> _core.Workload:
    return _core.workload_from_columns(
        np.array([1], np.uint64), np.array([0], np.uint64), np.array([0], np.uint32), np.array([1], np.uint32),
        np.array([10_000], np.uint64), n_hosts=2, source="one flow",
    )  # fmt: skip


def test_dcas_timers_are_the_papers_at_the_replays_time_scale() -> None:
    w = _core.workload_from_columns(
        np.array([1], np.uint64), np.array([0], np.uint64), np.array([0], np.uint32), np.array([1], np.uint32),
        np.array([5_000], np.uint64), n_hosts=2, source="one flow",
    )  # fmt: skip
    # FB2010's usual x0.02: T 20 ms, expiry 40 ms, delta 2 ms raised to a Python timer's 10 ms.
    s = rp.policy_spec("dcas", w, heavy=1000)
    assert (s["delta_s"], s["starve_s"], s["expiry_s"]) == (0.01, 0.02, 0.04)
    # D-CAS's own mix at 25 Mbit/s with sizes x0.01 runs at 0.4 of the paper's times: 40 ms, 400 ms, 800 ms.
    s = rp.policy_spec("dcas", w, heavy=1000, time_scale=0.4)
    assert s["delta_s"] == pytest.approx(0.04) and s["starve_s"] == pytest.approx(0.4)
    assert s["expiry_s"] == pytest.approx(0.8)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="dcas time_scale"):
            rp.policy_spec("dcas", w, time_scale=bad)


def test_dcas_bands_cut_the_negotiated_priority_into_queues_4_to_7() -> None:
    base = {"name": "dcas", "threshold": 1000, "quantum_s": 0.1, "delta_s": 0.01, "starve_s": 0.5}
    # The default: the threshold times 4, 16 and 64.
    assert [make_policy(base)._large(v) for v in (1000, 3999, 4000, 16_000, 63_999, 64_000)] == [4, 4, 5, 6, 6, 7]
    p = make_policy({**base, "bands": [2000, 50_000, 1_000_000]})
    assert [p._large(v) for v in (1999, 2000, 49_999, 50_000, 999_999, 1_000_000)] == [4, 5, 5, 6, 6, 7]
    # Equal bounds too: the simulator's desired=bands takes strictly ascending ones only.
    for bad in ([2000, 1000, 3000], [1, 2], [0, 1, 2], [1000, 1000, 2000]):
        with pytest.raises(ValueError, match="bands"):
            make_policy({**base, "bands": bad})
    w = _core.workload_from_columns(
        np.array([1], np.uint64), np.array([0], np.uint64), np.array([0], np.uint32), np.array([1], np.uint32),
        np.array([5_000], np.uint64), n_hosts=2, source="one flow",
    )  # fmt: skip
    assert "bands" not in rp.policy_spec("dcas", w, heavy=1000)
    assert rp.policy_spec("dcas", w, heavy=1000, bands=[2000, 50_000, 1_000_000])["bands"] == [2000, 50_000, 1_000_000]
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
