"""A coordinator of 2 hosts and host 0's agent on loopback, for the runtime benchmarks (``runtime_*.py``).

    with one_host("1Gbps", "aalo") as sock:   # the agent's socket, once it is there
        client = coflowkit.AgentClient(sock)

The processes are ``coflowkit coordinator|agent`` (the runtime the extension carries, or ``COFLOWKIT_RUNTIME``), with
a token in a temporary folder; both are stopped (SIGINT) when the block ends, also on an error.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def _runtime() -> list[str]:
    exe = os.environ.get("COFLOWKIT_RUNTIME")
    return [exe] if exe else [sys.executable, "-m", "coflowkit"]


@contextlib.contextmanager
def one_host(host_rate: str, scheduler: str) -> Iterator[Path]:
    """Runs the coordinator (2 hosts at ``host_rate`` under ``scheduler``) and host 0's agent; yields its socket."""
    with tempfile.TemporaryDirectory() as tmp:
        token = Path(tmp) / "token"
        token.write_text("bench-token\n")
        token.chmod(0o600)
        sock = Path(tmp) / "agent.sock"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        run = _runtime()
        coord = subprocess.Popen(
            [*run, "coordinator", "--hosts", "2", "--host-rate", host_rate, "--scheduler", scheduler,
             "--listen", f"127.0.0.1:{port}", "--token-file", str(token)]
        )  # fmt: skip
        procs = [coord]
        try:
            time.sleep(1.0)
            procs.insert(0, subprocess.Popen(
                [*run, "agent", "--host", "0", "--coordinator", f"http://127.0.0.1:{port}",
                 "--socket", str(sock), "--socket-mode", "600", "--token-file", str(token)]
            ))  # fmt: skip
            for _ in range(100):
                if sock.exists():
                    break
                time.sleep(0.1)
            yield sock
        finally:
            for p in procs:
                p.send_signal(signal.SIGINT)
                p.wait(timeout=10)
