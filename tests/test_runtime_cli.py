"""`coflowkit coordinator|agent` run the runtime the extension carries (`_core.runtime_main`), in their own
process; `python -m coflowkit.runtime` runs it as a child process; $COFLOWKIT_RUNTIME names a binary
to run instead."""

from __future__ import annotations

import subprocess
import sys

import pytest

from coflowkit import runtime as _runtime
from conftest import Cli


def test_coordinator_and_agent_run_the_packaged_runtime(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COFLOWKIT_RUNTIME", raising=False)
    for role, option in [("coordinator", "--hosts"), ("agent", "--socket")]:
        proc = cli(role, "--help")
        assert proc.returncode == 0, proc.stderr
        assert option in proc.stdout
        assert f"Usage: coflowkit {role}" in proc.stdout
    # The runtime's own checks speak for it: a missing token file is named.
    proc = cli("coordinator", "--hosts", "2", "--token-file", "/nonexistent/token")
    assert proc.returncode == 1
    assert "/nonexistent/token" in proc.stderr
    # A usage error is the runtime's (clap's) own, with its exit code.
    proc = cli("agent", "--no-such-option")
    assert proc.returncode == 2
    assert "--no-such-option" in proc.stderr


def test_the_child_process_command_needs_no_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COFLOWKIT_RUNTIME", raising=False)
    command = _runtime.runtime_command()
    assert command == [sys.executable, "-m", "coflowkit.runtime"]
    proc = subprocess.run([*command, "coordinator", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "Usage: coflowkit-runtime coordinator" in proc.stdout
    monkeypatch.setenv("COFLOWKIT_RUNTIME", "/opt/x/coflowkit-runtime")
    assert _runtime.runtime_command() == ["/opt/x/coflowkit-runtime"]


def test_a_missing_binary_is_named(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COFLOWKIT_RUNTIME", "/nonexistent/coflowkit-runtime")
    proc = cli("agent", "--host", "0")
    assert proc.returncode == 1
    assert "/nonexistent/coflowkit-runtime" in proc.stderr


def test_a_runtime_variable_naming_coflowkit_itself_is_refused_not_looped(
        cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    # A script that runs `coflowkit` with its arguments, as the venv's console script does.
    itself = tmp_path / "coflowkit"
    itself.write_text(f"#!/bin/sh\nexec {sys.executable} -m coflowkit \"$@\"\n")
    itself.chmod(0o755)
    monkeypatch.setenv("COFLOWKIT_RUNTIME", str(itself))
    proc = cli("agent", "--host", "0", timeout=60)
    assert proc.returncode == 1
    assert f"$COFLOWKIT_RUNTIME names {itself}, which ran `coflowkit agent` again" in proc.stderr
