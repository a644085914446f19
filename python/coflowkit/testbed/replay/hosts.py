"""The hosts of a replay through the runtime on machines of their own: the
hosts file (:func:`load_hosts`: each host's address, data port and agent
socket) and the launcher that runs each host's workers on its machine
(:func:`launcher`, say over ssh).
"""

from __future__ import annotations

import os
import shlex
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .plans import DATA_PORT


@dataclass(frozen=True)
class RuntimeHost:
    """One host of a replay through the runtime: the address (and data port) its
    receiver listens on and senders connect to, and its agent's socket."""

    address: str
    port: int
    agent_socket: str


def load_hosts(path: str | os.PathLike[str]) -> list[RuntimeHost]:
    """A hosts file: one host a line, ``INDEX ADDRESS[:PORT] AGENT_SOCKET``
    (port :data:`DATA_PORT` when not given), ``#`` starts a comment; indices
    0 .. n-1, each once. Raises ``ValueError`` naming the file and line."""
    hosts: dict[int, RuntimeHost] = {}
    text = Path(path).read_text()
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}:{no}"
        parts = line.split()
        if len(parts) != 3:
            raise ValueError(f"{where}: expected 'INDEX ADDRESS[:PORT] AGENT_SOCKET', got {line!r}")
        index, addr, sock = parts
        if not index.isdigit():
            raise ValueError(f"{where}: host index {index!r} is not a non-negative integer")
        h = int(index)
        if h in hosts:
            raise ValueError(f"{where}: host {h} given twice")
        port = DATA_PORT
        if ":" in addr:
            addr, _, p = addr.rpartition(":")
            if not p.isdigit() or not 0 < int(p) < 65536:
                raise ValueError(f"{where}: port {p!r} is not a port number (1-65535)")
            port = int(p)
        hosts[h] = RuntimeHost(addr, port, sock)
    if not hosts:
        raise ValueError(f"{path}: no hosts")
    missing = sorted(set(range(max(hosts) + 1)) - set(hosts))
    if missing:
        raise ValueError(f"{path}: hosts are numbered 0..{max(hosts)}, missing {missing}")
    taken: dict[tuple[str, int], int] = {}
    for h in sorted(hosts):
        key = (hosts[h].address, hosts[h].port)
        if key in taken:
            raise ValueError(f"{path}: hosts {taken[key]} and {h} both listen on {key[0]}:{key[1]}")
        taken[key] = h
    return [hosts[h] for h in sorted(hosts)]


#: The placeholders of a launcher template (:func:`launcher`).
LAUNCH_PLACEHOLDERS = ("index", "address")


def launcher(template: str, hosts: list[RuntimeHost]) -> Callable[[int, list[str]], list[str]]:
    """The ``wrap`` of :func:`replay_on_runtime` that runs host ``h``'s
    workers through a launcher, say ``ssh -o BatchMode=yes {address}``:
    ``template`` split as a shell would (:func:`shlex.split`), ``{index}``
    and ``{address}`` in it replaced by the host's index and its address in
    the hosts file, then the worker's command as ONE argument, quoted for a
    shell (:func:`shlex.join`): ssh joins its arguments with spaces and the
    remote user's shell splits them again, so each of the worker's arguments
    arrives as it was. Raises ``ValueError`` for a template that is empty,
    does not parse, or names another placeholder, before anything runs."""
    try:
        parts = shlex.split(template)
    except ValueError as e:
        raise ValueError(f"launcher {template!r}: {e}") from None
    if not parts:
        raise ValueError("launcher: empty (give a command, say 'ssh -o BatchMode=yes {address}')")
    known = ", ".join(f"{{{k}}}" for k in LAUNCH_PLACEHOLDERS)
    for part in parts:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(part) if f is not None]
        except ValueError as e:
            raise ValueError(f"launcher {template!r}: {e} (a literal brace is written {{{{ or }}}})") from None
        for f in fields:
            if f not in LAUNCH_PLACEHOLDERS:
                shown = f"{{{f}}}" if f else "{}"
                raise ValueError(f"launcher {template!r}: unknown placeholder {shown} (known: {known})")
        try:
            part.format(index=0, address=hosts[0].address if hosts else "")
        except (ValueError, IndexError, KeyError, AttributeError) as e:
            raise ValueError(f"launcher {template!r}: {part!r}: {e}") from None

    def wrap(h: int, argv: list[str]) -> list[str]:
        return [part.format(index=h, address=hosts[h].address) for part in parts] + [shlex.join(argv)]

    return wrap
