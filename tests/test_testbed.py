"""The emulated testbed, for real: namespaces, veth links, HTB ports, real TCP.

These tests need root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2, as CI
has; elsewhere they are skipped with the reason. Each uses its own testbed
name and a temporary state directory, and always tears down.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coflowkit import testbed as tb
from conftest import Cli

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None,
    reason="the testbed needs root and iproute2 (ip, tc)",
)


def _leftovers(name: str) -> list[str]:
    return tb._our_namespaces(name) + tb._our_root_links(name)


def test_queue_marks() -> None:
    assert [tb.dscp_of_queue(q) for q in range(8)] == [56, 48, 40, 32, 24, 16, 8, 0]
    assert tb.tos_of_queue(0) == 0xE0 and tb.tos_of_queue(7) == 0
    assert tb.so_priority_of_queue(3) == 0x10013
    with pytest.raises(ValueError, match="queue 8"):
        tb.dscp_of_queue(8)


def test_plan_of_a_tree_and_refusals() -> None:
    p = tb.plan("tree:pods=1,racks=2,hosts=2,tor_oversub=2,rate=100Mbps", name="pl")
    assert p.host_ns == ["pl-h0", "pl-h1", "pl-h2", "pl-h3"] and len(p.switch_ns) == 3
    assert len(p.veths) == 4 + 2 and len(p.ports) == 12
    assert {port.capacity_bps for port in p.ports} == {100e6}
    assert p.host_switch[0] == p.host_switch[1] != p.host_switch[2]
    with pytest.raises(ValueError, match="path diversity"):
        tb.plan("leaf-spine:leaves=2,spines=2,hosts=2", name="pl")
    with pytest.raises(ValueError, match="testbed name 'Bad-Name'"):
        tb.plan("bigswitch:hosts=2", name="Bad-Name")


@pytest.fixture
def bed(tmp_path: Path) -> Iterator[tuple[tb.Plan, Path]]:
    name = f"t{os.getpid() % 10_000}"
    tb.down(name, tmp_path)
    p = tb.up("bigswitch:hosts=3,rate=100Mbps", name, state_dir=tmp_path)
    try:
        yield p, tmp_path
    finally:
        tb.down(name, tmp_path)
        assert _leftovers(name) == []


@needs_root
def test_ports_capacity_and_strict_priority(bed: tuple[tb.Plan, Path]) -> None:
    p, state_dir = bed
    st = tb.status(p.name, state_dir)
    assert st["up"] and st["missing_namespaces"] == []
    assert all(port["kernel_rate"] == "100Mbit" for port in st["ports"])
    # Every host's uplink and downlink, each with real TCP (goodput within 10%).
    for r in tb.check_capacity(p, seconds=1.5):
        assert abs(r["ratio"] - 1) <= 0.10, r
    # Queue 0 (DSCP CS7) against queue 7 (CS0) into one host port.
    r = tb.check_priority(p, hi=0, lo=1, dst=2, seconds=2.5)
    assert r["high_share"] >= 0.9, r
    assert abs(r["high_bps"] + r["low_bps"] - 100e6) <= 10e6, r


@needs_root
def test_management_network_reaches_hosts(bed: tuple[tb.Plan, Path]) -> None:
    p, _ = bed
    sink = subprocess.Popen(
        tb.ns_cmd(p, 1, [sys.executable, "-m", "coflowkit._tbtraffic", "sink", "--port", "47001"]),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection((p.mgmt_ip[1], 47001), timeout=1) as s:
                    s.sendall(b"x" * 1000)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        out, _ = sink.communicate(timeout=10)
        assert '"bytes": 1000' in out
    finally:
        sink.kill()


@needs_root
def test_down_cleans_up_after_a_crash(tmp_path: Path, cli: Cli) -> None:
    name = f"c{os.getpid() % 10_000}"
    args = f"testbed up --topology bigswitch:hosts=8,rate=50Mbps --name {name} --state-dir {tmp_path}"
    proc = subprocess.Popen([sys.executable, "-m", "coflowkit", *args.split()])
    # Kill it while it builds: after the state file is written, before it is done.
    state = tb.state_path(name, tmp_path)
    deadline = time.monotonic() + 20
    while not tb._our_namespaces(name) and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert state.exists()
    r = cli("testbed", "status", "--name", name, "--state-dir", tmp_path)
    assert "INCOMPLETE" in r.stdout or "up" in r.stdout
    r = cli("testbed", "down", "--name", name, "--state-dir", tmp_path)
    assert r.returncode == 0, r.stderr
    assert _leftovers(name) == [] and not state.exists()
    r = cli("testbed", "down", "--name", name, "--state-dir", tmp_path)
    assert r.returncode == 0 and "nothing to remove" in r.stdout


def test_cli_refuses_bad_input(cli: Cli) -> None:
    r = cli("testbed", "up", "--topology", "leaf-spine:leaves=2,spines=2,hosts=2")
    if os.geteuid() == 0:
        assert r.returncode == 2 and "path diversity" in r.stderr
    r = cli("testbed", "exec", "0", "true", "--name", "nosuch")
    assert r.returncode != 0 and "not up" in r.stderr
