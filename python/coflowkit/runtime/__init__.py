"""The runtime (the ``coflowkit-runtime`` binary: coordinator and agents,
docs/runtime.md): where its binary is, for the ``coordinator`` and ``agent``
commands and for replays through it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["RuntimeNotFoundError", "runtime_binary"]


class RuntimeNotFoundError(RuntimeError):
    """The ``coflowkit-runtime`` binary is nowhere to be found; the message says how to get it."""


def runtime_binary() -> str:
    """The ``coflowkit-runtime`` binary: $COFLOWKIT_RUNTIME, then PATH, then
    this checkout's cargo build (release first)."""
    if env := os.environ.get("COFLOWKIT_RUNTIME"):
        return env
    if found := shutil.which("coflowkit-runtime"):
        return found
    root = Path(__file__).resolve().parents[3]
    for profile in ("release", "debug"):
        candidate = root / "target" / profile / "coflowkit-runtime"
        if candidate.is_file():
            return str(candidate)
    raise RuntimeNotFoundError(
        "the runtime binary coflowkit-runtime was not found: build it with "
        "`cargo build --release -p coflowkit-runtime`, or set COFLOWKIT_RUNTIME"
    )
