"""`make fuzz` (tests/fuzz.py) runs every property test with fresh seeds, but only the files its
suite list names: a file with property tests that no suite lists would never be explored. Checked
here so that `make test` says so when the file is added, not the next `make fuzz`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_property_test_file_belongs_to_a_fuzz_suite() -> None:
    spec = importlib.util.spec_from_file_location("fuzz_driver", ROOT / "tests" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    fuzz = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = fuzz  # its dataclasses look their module up
    spec.loader.exec_module(fuzz)
    assert fuzz.uncovered_sources() == []
