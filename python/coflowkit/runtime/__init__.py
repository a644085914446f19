"""The runtime (the ``coflowkit-runtime`` binary: coordinator and agents,
docs/runtime.md): where its binary is, for the ``coordinator`` and ``agent``
commands and for replays through it."""
