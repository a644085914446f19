"""`coflowkit coordinator|agent` run the runtime's Rust binary (built by `cargo test` or `cargo build`)."""

from __future__ import annotations

import pytest

from coflowkit.runtime import RuntimeNotFoundError, runtime_binary
from conftest import Cli


def _binary() -> str:
    try:
        return runtime_binary()
    except RuntimeNotFoundError:
        pytest.skip("coflowkit-runtime is not built (cargo build -p coflowkit-runtime)")


def test_coordinator_and_agent_pass_their_arguments_to_the_binary(cli: Cli) -> None:
    _binary()
    for role, option in [("coordinator", "--hosts"), ("agent", "--socket")]:
        proc = cli(role, "--help")
        assert proc.returncode == 0, proc.stderr
        assert option in proc.stdout
    # The binary's own checks speak for it: a missing token file is named.
    proc = cli("coordinator", "--hosts", "2", "--token-file", "/nonexistent/token")
    assert proc.returncode != 0
    assert "/nonexistent/token" in proc.stderr


def test_a_missing_binary_is_named_with_how_to_build_it(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COFLOWKIT_RUNTIME", "/nonexistent/coflowkit-runtime")
    proc = cli("agent", "--host", "0")
    assert proc.returncode == 1
    assert "/nonexistent/coflowkit-runtime" in proc.stderr
