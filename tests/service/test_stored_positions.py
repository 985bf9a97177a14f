"""A consumer whose stored position lies beyond the end of its topic stops and says so
(issue 17): the log is not the one its store was built from (a new broker, an old database),
and reading on would fold one history onto another."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from services.rating.embedded import EmbeddedRatingStore
from services.rating.service import RatingService
from services.runtime.embedded import EmbeddedLog
from services.runtime.position import PositionBeyondEnd, check_position
from services.runtime.topics import RATING_RESULTS, TOPICS
from tests.service.rating_results import produce, run_until, sample

ROOT = Path(__file__).resolve().parents[2]


async def _rated(directory: Path, n: int) -> None:
    """A store in ``directory`` that applied ``n`` results of the log beside it."""
    log = EmbeddedLog(directory)
    await log.start()
    await log.create_topics(TOPICS)
    store = EmbeddedRatingStore(directory)
    await store.start()
    try:
        await produce(log, sample(n))
        await run_until(RatingService(log, store), n)
    finally:
        await store.close()
        await log.close()


def test_a_position_within_the_log_passes_and_one_beyond_its_end_is_refused(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        log = EmbeddedLog(tmp_path)
        await log.start()
        await log.create_topics(TOPICS)
        try:
            await produce(log, sample(3))
            await check_position(log, RATING_RESULTS, 0, 3, "the store")
            with pytest.raises(PositionBeyondEnd, match=r"up to offset 4, but the log ends at 3"):
                await check_position(log, RATING_RESULTS, 0, 4, "the store")
        finally:
            await log.close()

    asyncio.run(go())


def test_the_rating_service_stops_on_a_log_shorter_than_its_store(tmp_path: Path) -> None:
    asyncio.run(_rated(tmp_path / "old", 5))

    async def on_a_new_log() -> None:
        log = EmbeddedLog(tmp_path / "new")  # a new, empty log; the old store
        await log.start()
        await log.create_topics(TOPICS)
        store = EmbeddedRatingStore(tmp_path / "old")
        await store.start()
        try:
            service = RatingService(log, store)
            with pytest.raises(PositionBeyondEnd, match="rating store"):
                await asyncio.wait_for(service.run(asyncio.Event()), 10)
            assert not service.ready.is_set()
        finally:
            await store.close()
            await log.close()

    asyncio.run(on_a_new_log())


def test_the_rating_command_exits_1_and_says_why(tmp_path: Path) -> None:
    asyncio.run(_rated(tmp_path, 5))
    for name in ("log.sqlite3", "log.sqlite3-wal", "log.sqlite3-shm"):
        (tmp_path / name).unlink(missing_ok=True)  # the log is gone; the ratings remain
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_BOOTSTRAP_SERVERS"}
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "rating", "--data", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "rating.results[0] was read up to offset 5, but the log ends at 0" in done.stderr
    assert "Traceback" not in done.stderr
