"""How many inputs the fuzzers fed, for ``make bench``'s report.

Each process counts in memory and, when ``MAHJONG_FUZZ_TALLY`` names a file, appends its
counts there as one JSON line at exit (pytest-xdist workers are processes of their own).
"""

from __future__ import annotations

import atexit
import json
import os
from collections import Counter
from pathlib import Path

COUNTS: Counter[str] = Counter()
TALLY_ENV = "MAHJONG_FUZZ_TALLY"


def add(kind: str, n: int = 1) -> None:
    """Count ``n`` inputs of ``kind`` (e.g. ``decoder_inputs``)."""
    COUNTS[kind] += n


def read(path: Path) -> Counter[str]:
    """The counts every process appended to ``path``, summed."""
    total: Counter[str] = Counter()
    if path.exists():
        for line in path.read_text().splitlines():
            total.update(json.loads(line))
    return total


@atexit.register
def _write() -> None:
    target = os.environ.get(TALLY_ENV)
    if target and COUNTS:
        with open(target, "a") as f:
            f.write(json.dumps(dict(COUNTS)) + "\n")
