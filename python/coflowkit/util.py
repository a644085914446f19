"""Writing files so that nothing already written is lost.

Every output goes to a hidden temporary file beside its destination and is
renamed onto it (``os.replace``, atomic on one file system) only once it is
complete: an error or an interrupt half way leaves the old file as it was
and no partial file behind.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        yield tmp
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: str | os.PathLike[str], obj: object, indent: int | None = None) -> None:
    """Write ``obj`` as JSON to ``path`` through :func:`atomic_path`: readers
    see the old file or the whole new one, never a partial one."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=indent))
