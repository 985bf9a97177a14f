"""The fuzz counts for the report: the fuzz and view-leak suites run once, inputs counted.

``tests/fuzz/tally.py`` counts what each fuzzer fed; this runs the suites in a pytest of
their own (``MAHJONG_FUZZ_SCALE`` scales them, as in ``make test``) and sums the counts.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.fuzz.tally import TALLY_ENV, read

ROOT = Path(__file__).resolve().parents[2]
SUITES = ("tests/fuzz", "tests/security")


def run_all() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mp-fuzz-") as tmp:
        tally = Path(tmp) / "tally.jsonl"
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITES],
            cwd=ROOT,
            env={**os.environ, TALLY_ENV: str(tally)},
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - began
        counts = read(tally)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    passed = re.search(r"(\d+) passed", summary)
    failed = re.search(r"(\d+) failed", summary)
    return {
        **{k: counts[k] for k in sorted(counts)},
        "tests_passed": int(passed.group(1)) if passed else 0,
        "tests_failed": int(failed.group(1)) if failed else 0,
        "exit_code": done.returncode,
        "seconds": round(seconds, 1),
    }


if __name__ == "__main__":
    for name, value in run_all().items():
        print(f"{name:<28} {value:>12,}")
