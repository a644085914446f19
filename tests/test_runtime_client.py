"""The Python client of the runtime (`coflowkit.AgentClient`, a binding of the Rust client) against a real
coordinator and agent (`coflowkit coordinator|agent`) on loopback: every byte written through a `CoflowWriter`
arrives intact and is counted; errors name what is wrong."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import coflowkit


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(what: str, ready: object, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if callable(ready) and ready():
            return
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode}: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.05)
    raise AssertionError(f"{what} not ready after {timeout} s")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def agent_socket(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A coordinator (2 hosts, `fair`) and host 0's agent, as the CLI runs them; yields the agent's socket."""
    tmp = tmp_path_factory.mktemp("runtime")
    token = tmp / "token"
    token.write_text("a-test-token\n")
    token.chmod(0o600)
    port = _free_port()
    sock = tmp / "agent.sock"
    run = [sys.executable, "-m", "coflowkit"]
    env = {**os.environ, "RUST_LOG": "warn"}
    coord = subprocess.Popen(
        [*run, "coordinator", "--hosts", "2", "--host-rate", "10Gbps", "--scheduler", "fair",
         "--listen", f"127.0.0.1:{port}", "--token-file", str(token)],
        stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    procs = [coord]
    try:
        _wait("the coordinator", lambda: _listening(port), coord)
        agent = subprocess.Popen(
            [*run, "agent", "--host", "0", "--coordinator", f"http://127.0.0.1:{port}",
             "--socket", str(sock), "--socket-mode", "600", "--token-file", str(token)],
            stderr=subprocess.PIPE, env=env,
        )  # fmt: skip
        procs.append(agent)
        _wait("the agent", sock.exists, agent)
        yield sock
    finally:
        for p in reversed(procs):
            _stop(p)


class _Receiver:
    """Accepts one connection on loopback and keeps the SHA-256 and length of everything it reads."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.digest = hashlib.sha256()
        self.n = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            while chunk := conn.recv(1 << 16):
                self.digest.update(chunk)
                self.n += len(chunk)
        self.server.close()

    def done(self) -> tuple[int, str]:
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "the receiver did not see the end of the stream"
        return self.n, self.digest.hexdigest()


def _pattern(n: int, seed: int) -> bytes:
    """`n` bytes that differ at every offset from a shifted copy (a lost or repeated chunk shows)."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{i}".encode()).digest()
        i += 1
    return bytes(out[:n])


def _send_through(client: coflowkit.AgentClient, coflow: int, data: bytes, timeout: float | None) -> tuple[int, bool]:
    rx = _Receiver()
    with socket.create_connection(("127.0.0.1", rx.port)) as s:
        s.settimeout(timeout)
        with client.writer(s, coflow, dst_host=1, size_hint=len(data)) as w:
            scheduled = w.scheduled
            # Every bytes-like kind, a write() that may send part, and sendall() of the rest.
            third = len(data) // 3
            w.sendall(data[:third])
            view = memoryview(bytearray(data[third : 2 * third]))
            while view:
                view = view[w.write(view) :]
            w.sendall(memoryview(data)[2 * third :])
            written = w.bytes_written
            assert written == len(data)
        assert w.closed
        with pytest.raises(ValueError, match="closed CoflowWriter"):
            w.sendall(b"x")
        s.shutdown(socket.SHUT_WR)
    n, digest = rx.done()
    assert n == len(data)
    assert digest == hashlib.sha256(data).hexdigest()
    return written, scheduled


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["blocking", "with-timeout"])
def test_every_byte_written_through_the_python_writer_arrives_and_is_counted(
    agent_socket: Path, timeout: float | None
) -> None:
    client = coflowkit.AgentClient(agent_socket)
    assert client.connected
    assert client.socket == str(agent_socket)
    shuffle = client.register()
    reduce = client.register(parents=[shuffle])
    assert shuffle != reduce and shuffle > 0
    data = _pattern(3_000_001, seed=1)
    written, scheduled = _send_through(client, shuffle, data, timeout)
    assert scheduled
    assert written == len(data)
    client.unregister(shuffle)
    client.unregister(reduce)


def test_the_writer_follows_the_agents_schedule(agent_socket: Path) -> None:
    client = coflowkit.AgentClient(agent_socket, delta_ms=5)
    coflow = client.register()
    rx = _Receiver()
    with socket.create_connection(("127.0.0.1", rx.port)) as s, client.writer(s, coflow, dst_host=1) as w:
        rate, klass = w.schedule
        # Starts at once at an even share of the host's 10 Gbit/s, then the coordinator's rate.
        assert rate is not None and 0 < rate <= 10e9
        assert klass >= 0
        w.sendall(b"x" * 1000)
        assert "coflow=" in repr(w) and w.coflow == coflow and w.dst_host == 1 and w.fileno() == s.fileno()
        s.shutdown(socket.SHUT_WR)
    assert rx.done()[0] == 1000
    client.unregister(coflow)


def test_refusals_and_a_missing_agent_are_named(agent_socket: Path, tmp_path: Path) -> None:
    client = coflowkit.AgentClient(agent_socket)
    with pytest.raises(ValueError, match=r"register\(parents=\[0\]\): the agent refused"):
        client.register(parents=[0])
    with pytest.raises(ValueError, match="0 is reserved"):
        client.writer(0, 0, dst_host=1)
    with pytest.raises(ValueError, match="fileno"):
        client.writer("not a socket", 5, dst_host=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="delta_ms"):
        coflowkit.AgentClient(agent_socket, delta_ms=0)

    missing = tmp_path / "no-agent.sock"
    lone = coflowkit.AgentClient(missing)
    assert not lone.connected
    with pytest.raises(ConnectionError, match=str(missing)):
        lone.register()
    with pytest.raises(ConnectionError, match="unregister"):
        lone.unregister(7)
    # Without an agent a writer is plain TCP: unthrottled, every byte still delivered.
    data = _pattern(200_000, seed=2)
    _, scheduled = _send_through(lone, 7, data, None)
    assert not scheduled


def test_a_closed_socket_is_named_not_written_to_another_descriptor(agent_socket: Path) -> None:
    client = coflowkit.AgentClient(agent_socket)
    coflow = client.register()
    rx = _Receiver()
    s = socket.create_connection(("127.0.0.1", rx.port))
    w = client.writer(s, coflow, dst_host=1)
    s.close()
    with pytest.raises(OSError, match="was closed"):
        w.sendall(b"data")
    w.close()
    w.close()  # twice is fine
    client.unregister(coflow)


def test_a_flow_the_agent_refuses_is_a_value_error_naming_the_field(agent_socket: Path) -> None:
    client = coflowkit.AgentClient(agent_socket)
    coflow = client.register()
    with socket.socket() as s:
        with pytest.raises(ValueError, match=r"writer\(coflow=\d+, dst_host=0\): the agent refused: .*dst_host"):
            client.writer(s, coflow, dst_host=0)  # host 0 is this agent's own
        with pytest.raises(ValueError, match="dst_host"):
            client.writer(s, coflow, dst_host=9)  # the cluster has 2 hosts
    client.unregister(coflow)
