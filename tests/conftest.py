"""Shared fixtures: where the shared conformance material lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# Speed is measured by the benchmarks (tests/bench), never timed in tests: hypothesis's
# per-example deadline would only make a property fail on a busy machine.
settings.register_profile("mahjong", deadline=None)
settings.load_profile("mahjong")

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("MAHJONG_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    """The shared folder beside the checkout; CI always has it, so its absence fails."""
    if not (SHARED / "conformance").is_dir():
        pytest.fail(f"shared conformance material not found at {SHARED} (set MAHJONG_SHARED)")
    return SHARED
