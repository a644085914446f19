"""The testbed's sender policies are the Rust host policies (crates/sched/src/host): the same
decisions driven through the binding as the replay worker drives them (``_core.HostPolicy``) as
driven in Rust (``_core.host_policy_replay``, the packet engine's way), on one event trace per
policy; and the worker's policy spec is the simulator's scheduler spec."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import coflowkit
from coflowkit import _core
from coflowkit.testbed import replay as rp
from coflowkit.testbed.replay.run import OptionError, ReplayRequest, run_replay
from coflowkit.testbed.replay.worker import _tos, make_policy

MS = 1_000_000

Event = tuple[str, int, list[int | None]]


def _trace() -> list[Event]:
    """Two coflows at one host (host 0 of 4): flows to hosts 2 and 3, one with a deadline and one
    of unknown size, bytes sent in steps, a wake every 10 ms (with bytes held in the sockets),
    control messages both ways, and finishes."""
    ev: list[Event] = [
        ("start", 0, [1, 0, 0, 2, 200_000, 1, None]),
        ("start", 1 * MS, [2, 0, 0, 3, 30_000, 0, None]),
        ("start", 5 * MS, [3, 1, 4 * MS, 2, 900_000, 1, 400 * MS]),
        ("receive", 6 * MS, [2, 1, 1, 5, 70_000]),  # an announcement from host 2 about coflow 5
    ]
    t = 5 * MS
    for step in range(1, 60):
        t += 3 * MS
        for fid, n in ((1, 4_000), (2, 1_000), (3, 15_000)):
            ev.append(("sent", t, [fid, n]))
        if step % 3 == 0:
            ev.append(("wake", t + MS, [1, 3_000, 2, 0, 3, 10_000 if step < 30 else 0]))
        if step == 4:
            ev.append(("receive", t + 2 * MS, [2, 2, 2, 0, 500_000]))  # a reply to coflow 0's round 2
            ev.append(("receive", t + 2 * MS, [3, 2, 2, 0, 9_000]))
        if step % 5 == 0:  # Baraat's switches answer a flow's rate request (least AR, NR)
            fid = 1 + step // 5 % 3
            ev.append(("feedback", t + MS // 2, [fid, 300_000_000 + step * 7_000_000, 400_000_000, fid, 20_000]))
        if step == 20:
            ev.append(("finish", t, [2]))
    ev.append(("finish", t + MS, [1]))
    ev.append(("wake", t + 20 * MS, []))
    ev.append(("finish", t + 21 * MS, [3]))
    return ev


def _as_worker(spec: str, events: Sequence[Event]) -> list[object]:
    """Drives ``_core.HostPolicy`` as the replay worker does (start, sent, finish, receive, wake
    with its view of unacknowledged bytes), reading every active flow's marking and limit after
    each call."""
    p = _core.HostPolicy(spec, 0, 4, 1e9, 100_000)
    active: set[int] = set()
    out: list[object] = []
    for name, now, a in events:
        if name == "start":
            fid, coflow, arrival, dst, size, known, deadline = a
            assert fid is not None and coflow is not None and arrival is not None and dst is not None
            assert size is not None and known is not None
            active.add(fid)
            changed, sends = p.start(now, fid, coflow, arrival, dst, size, bool(known), deadline)
        elif name == "sent":
            changed, sends = p.sent(now, *(int(x or 0) for x in a))
        elif name == "finish":
            changed, sends = p.finish(now, int(a[0] or 0))
            active.discard(int(a[0] or 0))
        elif name == "receive":
            changed, sends = p.receive(now, *(int(x or 0) for x in a))
        elif name == "feedback":
            held = {int(a[i] or 0): int(a[i + 1] or 0) for i in range(3, len(a), 2)}
            fid, ar, nr = (int(x or 0) for x in a[:3])
            changed, sends = p.feedback(now, fid, ar, nr, lambda f: held.get(f, 0))
        else:
            held = {int(a[i] or 0): int(a[i + 1] or 0) for i in range(0, len(a), 2)}
            changed, sends = p.wake(now, lambda fid: held.get(fid, 0))
        flows = [(f, *p.marking(f), p.limit(f), p.task(f), p.demand(f)) for f in sorted(active)]
        out.append((changed, sends, flows, p.wake_at()))
    return out


SPECS = [
    "pias:thresholds=10000/50000/100000",
    "fifo-lm:threshold=60000;age=7ms",
    "tafe:thresholds=100000/400000;age=9ms",
    "karuna:split=1000/2000/5000/50000/100000/500000;sieve=2000/8000/16000/20000/25000/28000;repace=10ms;"
    "starvation=20ms",
    "dcas:threshold=50000;delta=10ms;t=20ms;expiry=40ms;wait=4ms;age=30ms",
    "dcas:threshold=50000;delta=10ms;t=20ms;expiry=40ms;wait=4ms;age=30ms;loss=1;count=written",
    "dcas:threshold=50000;delta=10ms;wait=4ms;psi=mean;phi=min;desired=bands:60000/200000/800000;keep_own=yes",
    "baraat:threshold=300000;rtt=2ms",
]


@pytest.mark.parametrize("spec", SPECS)
def test_the_binding_decides_as_the_policy_driven_in_rust(spec: str) -> None:
    events = _trace()
    reference = _core.host_policy_replay(spec, 0, 4, 1e9, 100_000, events)
    worker = _as_worker(spec, events)
    assert len(worker) == len(reference) == len(events)
    for i, (w, r) in enumerate(zip(worker, reference, strict=True)):
        assert w == r, f"{spec}: event {i} {events[i]}"
    # The trace makes each policy decide something: markings move, and D-CAS talks.
    assert sum(len(step[0]) for step in reference) > 0, spec
    if spec.startswith("dcas") and "loss=1" not in spec:
        assert sum(len(step[1]) for step in reference) > 0
    if spec.startswith("baraat"):  # the task tags, heavy flags and demands move too
        flows = [f for step in reference for f in step[2]]
        assert {f[5][1] for f in flows if f[5] is not None} == {False, True}
        assert len({f[6] for f in flows}) > 2


def test_a_host_policy_is_built_from_the_schedulers_spec_and_refuses_bad_keys() -> None:
    p = _core.HostPolicy("pias:thresholds=100/1000/5000", 0, 2, 1e9, 100_000)
    assert p.name == "pias" and not p.negotiates and p.dcas_report() is None
    assert p.start(0, 7, 0, 0, 1, 10_000, False) == ([], [])
    assert p.marking(7) == (0, None, "default") and p.limit(7) == 100
    assert p.sent(1, 7, 99) == ([], []) and p.sent(2, 7, 1) == ([7], [])
    assert p.marking(7)[0] == 1 and p.limit(7) == 900
    assert p.finish(3, 7) == ([], []) and p.marking(7) == (7, None, "default")
    assert [_tos(q) for q in (0, 3, 7)] == [0xE0, 0x80, 0]
    d = _core.HostPolicy("dcas:threshold=1000;delta=10ms;wait=5ms", 1, 4, 1e9, 100_000)
    assert d.negotiates
    changed, sends = d.start(0, 1, 3, 0, 2, 10_000)
    assert sends == [(2, 1, 1, 3, 10_000)] and d.marking(1)[0] == 5
    report = d.dcas_report()
    assert report is not None and report["counts"]["announcements"] == 1 and report["runs"] == {3: [1, 0]}
    for spec, says in (
        ("varys", "'varys' has no host policy"),
        ("pias:nope=1", "nope"),
        ("dcas:delta=10ms;wait=10ms", "a round must end before the next tick"),
        ("fifo-lm:age=0ms", "'age': must be above 0"),
    ):
        with pytest.raises(ValueError, match=says):
            _core.HostPolicy(spec, 0, 2, 1e9, 100_000)
    with pytest.raises(ValueError, match="control kind 3"):
        d.receive(1, 0, 3, 1, 1, 1)


def _workload() -> _core.Workload:
    rows = [(1, 0, 0, 1, 10_000), (1, 0, 1, 0, 30_000), (2, 5_000_000, 0, 1, 200_000), (3, 9_000_000, 1, 0, 4_000)]
    c, a, s, d, b = (list(x) for x in zip(*rows, strict=True))
    return _core.workload_from_columns(
        np.array(c, np.uint64), np.array(a, np.uint64), np.array(s, np.uint32), np.array(d, np.uint32),
        np.array(b, np.uint64), n_hosts=2, source="tiny",
    )  # fmt: skip


def test_the_replays_policy_spec_is_the_simulators_scheduler_spec() -> None:
    w = _workload()
    for name in rp.POLICIES:
        spec = rp.policy_spec(name, w)
        assert spec["name"] == name
        policy = make_policy(spec, 0, 2)
        if name == "plain":
            assert policy is None and "spec" not in spec
            continue
        assert policy is not None and policy.name == name
        # The simulator runs the same spec (its host keys ignored there).
        assert _core.check_scheduler(spec["spec"]) == name
        assert coflowkit.simulate(w, [spec["spec"]]).schedulers == [spec["spec"]]
    assert rp.policy_spec("pias", w, thresholds=[5, 5, 9])["spec"] == "pias:thresholds=5/6/9"
    assert rp.policy_spec("fifo-lm", w, heavy=1000, quantum_s=0.1)["spec"] == "fifo-lm:threshold=1000;age=100000000ns;mux=last;per=sender"
    karuna = rp.policy_spec("karuna", w, thresholds=[6, 5, 4, 3, 2, 1])["spec"]
    assert karuna == "karuna:split=1/2/3/4/5/6;sieve=1/2/3/4/5/6;repace=10ms"
    with pytest.raises(ValueError, match="karuna thresholds"):
        rp.policy_spec("karuna", w, thresholds=[1, 2])
    with pytest.raises(ValueError, match="the plan carries no scheduler 'spec'"):
        make_policy({"name": "pias", "thresholds": [1]})
    # Baraat has a host policy, but its rates come from switches the testbed does not have: refused,
    # with where to run it instead.
    with pytest.raises(ValueError, match="'baraat'.*Linux bridge answers none.*--engine packet"):
        rp.policy_spec("baraat", w)


def test_every_replay_policy_builds_as_its_table_entry_says() -> None:
    """Each entry of the one table of replay policies (``rp.REPLAY_POLICIES``): its spec builds, the
    Rust policy of its name, or none for the one without keys; whether the workers negotiate is the
    Rust policy's say (``HostPolicy.negotiates``), and ``POLICIES`` is the table's help."""
    w = _workload()
    assert list(rp.POLICIES) == list(rp.REPLAY_POLICIES)
    for name, p in rp.REPLAY_POLICIES.items():
        assert p.name == name and rp.POLICIES[name] == p.help
        spec = rp.policy_spec(name, w)
        policy = make_policy(spec, 0, 2)
        if p.keys is None:
            assert spec == {"name": name} and policy is None and not rp.negotiates(spec)
            assert not p.takes_thresholds and not p.native_clock
            continue
        assert policy is not None and policy.name == name
        assert rp.negotiates(spec) == policy.negotiates
        variants = [rp.with_keys(spec), rp.policy_spec(name, w, negotiate=False)]
        if policy.negotiates:
            variants += [rp.with_keys(spec, loss="1"), rp.with_keys(spec, keep_own="yes")]
        for variant in variants:
            assert rp.negotiates(variant) == _core.HostPolicy(variant["spec"], 0, 2, 1e9, 100_000).negotiates
    # What the table declares, as the code it replaced decided it by name.
    assert [n for n, p in rp.REPLAY_POLICIES.items() if p.takes_thresholds] == ["pias", "tafe", "karuna"]
    assert [n for n, p in rp.REPLAY_POLICIES.items() if p.native_clock] == ["dcas"]
    assert [n for n in rp.REPLAY_POLICIES if rp.negotiates(rp.policy_spec(n, w))] == ["dcas"]
    assert not rp.negotiates(rp.policy_spec("dcas", w, negotiate=False))


def test_every_host_policy_is_a_replay_policy_or_refused_by_its_switches() -> None:
    """A scheduler with a host policy (the descriptor's ``parts``) is a replay policy, or its switches
    do what the testbed's bridge cannot (``rp.SWITCH_REFUSALS``) and ``policy_spec`` says where to run
    it; a scheduler without one is refused naming the policies there are."""
    w = _workload()
    for d in _core.scheduler_descriptors():
        name, parts = d["name"], d["parts"]
        if name in rp.REPLAY_POLICIES:
            assert parts["host"], name
            continue
        with pytest.raises(ValueError) as e:
            rp.policy_spec(name, w)
        if parts["switch"] in rp.SWITCH_REFUSALS:
            assert f"--engine packet --scheduler {name})" in str(e.value)
        else:
            assert not parts["host"], f"{name} has a host policy but is no replay policy"
            assert str(e.value) == f"replay policy {name!r}: known policies are {', '.join(rp.POLICIES)}"
    with pytest.raises(ValueError) as e:
        rp.policy_spec("baraat", w)
    assert str(e.value) == (
        "replay policy 'baraat': its rates come from switches that answer each flow's request every RTT "
        "(Algorithm 1), and the testbed's Linux bridge answers none; run it in the packet engine "
        "(coflowkit simulate --engine packet --scheduler baraat)"
    )


@pytest.mark.parametrize("name", [n for n, p in rp.REPLAY_POLICIES.items() if p.keys is not None] + ["baraat"])
def test_a_bad_policy_parameter_names_the_option_that_carries_it(name: str, tmp_path: Path) -> None:
    """``coflowkit replay``'s error for a bad parameter names ``--thresholds`` for a policy that takes
    them (``ReplayPolicy.takes_thresholds``), else ``--policy``; it comes before anything runs."""
    request = ReplayRequest(out_dir=tmp_path / "out", policy=name, thresholds="0", heavy=-1)
    with pytest.raises(OptionError) as e:
        run_replay(_workload(), 2, request, lambda _: None)
    assert e.value.option == ("'--thresholds'" if name in ("pias", "tafe", "karuna") else "'--policy'")
    assert not (tmp_path / "out").exists()
