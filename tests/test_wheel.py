"""The wheel carries every command: built by maturin (the dev profile, reusing the cargo target directory of
`make test`'s build), installed into a fresh venv, it runs `coflowkit coordinator|agent|replay --help`, and a
coordinator, an agent and a client transfer on loopback, with no `coflowkit-runtime` binary on PATH, no
$COFLOWKIT_RUNTIME and no checkout in sight (the working directory is a temporary one).

The venv gets the wheel alone (`pip install --no-deps`); its third-party dependencies (numpy, pandas, click,
...) are this test environment's, seen through a `.pth` line, so the test downloads nothing. The package and
its extension are the wheel's: the test checks where `coflowkit` is imported from."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_runtime_client import _free_port, _listening, _stop, _wait

ROOT = Path(__file__).resolve().parents[1]

# One worker builds the wheel: `make test` hands out tests with `--dist loadgroup`, and two maturin builds in
# one target directory race on the file they stage (target/maturin/lib_core.so).
pytestmark = pytest.mark.xdist_group("wheel")


@dataclass(frozen=True)
class Venv:
    """A fresh venv with the wheel installed, and what to run its commands with."""

    root: Path
    work: Path
    env: dict[str, str]

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Runs one of the venv's commands (``coflowkit``, ``python``) in the temporary directory."""
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]], capture_output=True, text=True, cwd=self.work, env=self.env,
            timeout=timeout,
        )  # fmt: skip

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [str(self.bin / args[0]), *args[1:]], cwd=self.work, env=self.env, stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip


def _maturin() -> str:
    here = Path(sys.executable).parent / "maturin"
    return str(here) if here.exists() else "maturin"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    tmp = tmp_path_factory.mktemp("wheel")
    wheels = tmp / "wheels"
    build = subprocess.run(
        [_maturin(), "build", "--out", str(wheels)], cwd=ROOT, capture_output=True, text=True, timeout=1800
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = wheels.glob("coflowkit-*.whl")
    root = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # The dependencies from this environment (after the venv's own site-packages on sys.path, so the wheel's
    # coflowkit comes first; a path added this way has its own .pth files, say an editable coflowkit, unread).
    Path(purelib, "_deps_from_the_test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("COFLOWKIT_RUNTIME", "VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{root / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin"
    env["RUST_LOG"] = "warn"
    return Venv(root, work, env)


def test_the_wheel_imports_its_own_package(venv: Venv) -> None:
    proc = venv.run("python", "-c", "import coflowkit, coflowkit._core as c; print(coflowkit.__file__, c.__file__)")
    assert proc.returncode == 0, proc.stderr
    for path in proc.stdout.split():
        assert Path(path).is_relative_to(venv.root), path


@pytest.mark.parametrize("command", ["coordinator", "agent", "replay"])
def test_every_command_has_its_help(venv: Venv, command: str) -> None:
    proc = venv.run("coflowkit", command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout


# Host 0's application: a coflow, 2 MB through a CoflowWriter to a receiver on loopback, every byte checked.
CLIENT = """
import hashlib, socket, sys, threading
import coflowkit
agent = coflowkit.AgentClient(sys.argv[1])
coflow = agent.register()
data = bytes(range(256)) * 8192
server = socket.create_server(("127.0.0.1", 0))
got = hashlib.sha256()
def receive():
    conn, _ = server.accept()
    with conn:
        while chunk := conn.recv(1 << 16):
            got.update(chunk)
t = threading.Thread(target=receive)
t.start()
with socket.create_connection(server.getsockname()) as s:
    with agent.writer(s, coflow, dst_host=1, size_hint=len(data)) as w:
        w.sendall(data)
        assert w.scheduled and w.bytes_written == len(data), (w.scheduled, w.bytes_written)
    s.shutdown(socket.SHUT_WR)
t.join(60)
assert got.hexdigest() == hashlib.sha256(data).hexdigest(), "the receiver got other bytes"
agent.unregister(coflow)
print("transferred", len(data))
"""


def test_a_coordinator_an_agent_and_a_transfer_on_loopback(venv: Venv) -> None:
    token = venv.work / "token"
    token.write_text("a-wheel-token\n")
    token.chmod(0o600)
    port = _free_port()
    sock = venv.work / "agent.sock"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        coord = venv.start("coflowkit", "coordinator", "--hosts", "2", "--host-rate", "10Gbps", "--scheduler",
                           "fair", "--listen", f"127.0.0.1:{port}", "--token-file", str(token))  # fmt: skip
        procs.append(coord)
        _wait("the coordinator", lambda: _listening(port), coord, timeout=60)
        agent = venv.start("coflowkit", "agent", "--host", "0", "--coordinator", f"http://127.0.0.1:{port}",
                           "--socket", str(sock), "--socket-mode", "600", "--token-file", str(token))  # fmt: skip
        procs.append(agent)
        _wait("the agent", sock.exists, agent, timeout=60)
        client = venv.run("python", "-c", CLIENT, str(sock))
        assert client.returncode == 0, client.stderr
        assert client.stdout.strip() == f"transferred {256 * 8192}"
    finally:
        for p in reversed(procs):
            _stop(p)
    # Both stopped cleanly on SIGINT, as the binary does.
    assert [p.returncode for p in procs] == [0, 0], [p.stderr.read().decode() if p.stderr else "" for p in procs]

