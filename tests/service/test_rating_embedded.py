"""The rating service on the embedded log with the embedded (SQLite) store: results applied
in log order as the pure fold applies them, unrated and repeated results ignored, failed and
uncertain transactions, restarts, recompute and the command line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import pytest

from schemas.rating import RatedHandResult, encode_result
from services.cli import main
from services.rating.embedded import EmbeddedRatingStore
from services.rating.read import leaderboard, profile
from services.rating.service import RatingService, recompute
from services.rating.store import Batch
from services.runtime.embedded import EmbeddedLog
from services.runtime.topics import RATING_RESULTS, TOPICS
from tests.service.rating_results import (
    board_sample,
    check_board,
    expected,
    fold_of,
    produce,
    run_until,
    sample,
    standings,
)

ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def opened(directory: Path) -> AsyncIterator[tuple[EmbeddedLog, EmbeddedRatingStore]]:
    log = EmbeddedLog(directory)
    await log.start()
    await log.create_topics(TOPICS)
    store = EmbeddedRatingStore(directory)
    await store.start()
    try:
        yield log, store
    finally:
        await store.close()
        await log.close()


def _tables(directory: Path) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(directory / "ratings.sqlite3")
    try:
        return {
            t: db.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3").fetchall()
            for t in ("ratings", "history", "hands")
        }
    finally:
        db.close()


def test_service_applies_results_in_log_order_as_the_fold_does(tmp_path: Path) -> None:
    results = sample(240, unrated_every=7)

    async def go() -> None:
        async with opened(tmp_path) as (log, store):
            service = RatingService(log, store, max_batch=50)
            task_stop = asyncio.Event()
            task = asyncio.create_task(service.run(task_stop))
            await asyncio.wait_for(service.ready.wait(), 10)
            await produce(log, results[:100])  # while it runs: woken by the log
            await produce(log, results[100:])
            async with asyncio.timeout(30):
                while service.position < len(results):
                    await asyncio.sleep(0.02)
            task_stop.set()
            await task
            fold = fold_of(results)
            assert await standings(store, fold) == expected(fold)
            assert fold.reasons == {"casual": 9, "computer_seats": 9, "untimed": 8, "practice": 8}
            position = await store.position(RATING_RESULTS)
            assert (position.next_offset, position.applied, position.ignored) == (240, 206, 34)
            # The read side: a profile with its history, newest first, and the leaderboard.
            player = fold.rating_rows()[0][1]
            found = await profile(store, player, history=1000)
            mine = [row for row in fold.history if row[1] == player]
            assert [h.seq for h in found.history] == [row[2] for row in reversed(mine)]
            assert found.history[0].rating_after == found.rating
            assert all(h.rating_after == h.rating_before + h.delta for h in found.history)
            board = await leaderboard(store, limit=100)
            want = sorted(
                (row for row in fold.rating_rows() if not row[4]), key=lambda r: (-r[2], r[1])
            )
            assert [(r.rank, r.standing.player) for r in board] == [
                (i + 1, row[1]) for i, row in enumerate(want)
            ]
            newcomer = await profile(store, "nobody")
            assert (newcomer.rating, newcomer.provisional, newcomer.history) == (1500.0, True, [])

    asyncio.run(go())


def test_unrated_results_change_nothing_through_the_service(tmp_path: Path) -> None:
    rated = sample(1, seed=5)[0]
    changes: list[dict[str, object]] = [
        {"rated": False},
        {"computer_seats": [0, 1]},
        {"clock": None},
        {"practice": True},
    ]
    unrated = [
        msgspec.structs.replace(rated, hand_id=f"x{i}", **flags) for i, flags in enumerate(changes)
    ]

    async def go() -> None:
        async with opened(tmp_path) as (log, store):
            await produce(log, unrated)
            service = RatingService(log, store)
            await service.catch_up()
            assert service.position == 4 and service.applied == 0 and service.ignored == 4
            assert _tables(tmp_path) == {"ratings": [], "history": [], "hands": []}
            await produce(log, [rated])
            await service.catch_up()
            assert {p: r.rated_hands for p in rated.players if (r := await store.rating(p))} == {
                p: 1 for p in rated.players
            }

    asyncio.run(go())


def test_redelivered_results_change_nothing(tmp_path: Path) -> None:
    results = sample(60, seed=2)

    async def go() -> None:
        async with opened(tmp_path) as (log, store):
            await produce(log, results)
            service = RatingService(log, store)
            await service.catch_up()
            before = _tables(tmp_path)
            # The same hands again at later offsets (a producer that sent twice).
            await produce(log, results[10:30])
            await service.catch_up()
            assert _tables(tmp_path) == before
            position = await store.position(RATING_RESULTS)
            assert (position.next_offset, position.applied, position.ignored) == (80, 60, 20)
            # The same records again at their own offsets (a reader that read twice): the
            # stored position refuses them.
            again = Batch.decode(
                [(r.offset, r.value) for r in await log.read(RATING_RESULTS, 0, 0, 60)]
            )
            assert await store.apply(RATING_RESULTS, 0, 60, again) is None
            assert _tables(tmp_path) == before

    asyncio.run(go())


class FailingOnce(EmbeddedRatingStore):
    """Fails one apply: inside its transaction (nothing commits) or after it committed."""

    def __init__(self, directory: Path, after_commit: bool) -> None:
        super().__init__(directory)
        self.after_commit = after_commit
        self.failed = False

    async def apply(self, topic, start, next_offset, batch):  # type: ignore[no-untyped-def]
        if self.failed or start == 0:
            return await super().apply(topic, start, next_offset, batch)
        self.failed = True
        if self.after_commit:
            await super().apply(topic, start, next_offset, batch)
            raise ConnectionError("the commit's answer was lost")
        original = self._write

        def broken(*args: object, **kwargs: object) -> None:
            original(*args, **kwargs)  # type: ignore[arg-type]
            raise OSError("disk full")

        self._write = broken  # type: ignore[method-assign]
        try:
            return await super().apply(topic, start, next_offset, batch)
        finally:
            self._write = original  # type: ignore[method-assign]


@pytest.mark.parametrize("after_commit", [False, True], ids=["rolled-back", "committed"])
def test_a_failed_batch_is_applied_exactly_once(tmp_path: Path, after_commit: bool) -> None:
    results = sample(90, seed=3)

    async def go() -> None:
        log = EmbeddedLog(tmp_path)
        await log.start()
        await log.create_topics(TOPICS)
        store = FailingOnce(tmp_path, after_commit)
        await store.start()
        try:
            await produce(log, results)
            service = RatingService(log, store, max_batch=30, retry_s=0.01)
            await run_until(service, len(results))
            assert store.failed
            fold = fold_of(results)
            assert await standings(store, fold) == expected(fold)
            assert len(_tables(tmp_path)["history"]) == 4 * len(results)
        finally:
            await store.close()
            await log.close()

    asyncio.run(go())


def test_restart_resumes_without_double_applying(tmp_path: Path) -> None:
    results = sample(150, seed=4)

    async def go() -> None:
        async with opened(tmp_path) as (log, store):
            await produce(log, results[:70])
            await run_until(RatingService(log, store, max_batch=20), 70)
        async with opened(tmp_path) as (log, store):
            await produce(log, results[70:])
            service = RatingService(log, store, max_batch=20)
            await run_until(service, 150)
            assert service.applied == 80  # only what came after the restart
            fold = fold_of(results)
            assert await standings(store, fold) == expected(fold)
            assert len(_tables(tmp_path)["history"]) == 600

    asyncio.run(go())


def test_recompute_equals_live_and_catches_any_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = sample(200, seed=6, unrated_every=9)

    async def fill() -> None:
        async with opened(tmp_path) as (log, store):
            await produce(log, results)
            await RatingService(log, store).catch_up()
            report = await recompute(log, store)
            assert report.ok, report.summary()
            assert report.rows["history"] == (4 * report.folded.fold.applied,) * 2

    asyncio.run(fill())
    assert main(["ratings", "recompute", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "IDENTICAL" in out and "200 results" in out
    # One ulp off in one rating is a difference.
    db = sqlite3.connect(tmp_path / "ratings.sqlite3")
    (player, rating) = db.execute("SELECT player, rating FROM ratings LIMIT 1").fetchone()
    db.execute(
        "UPDATE ratings SET rating = ? WHERE player = ?", (math.nextafter(rating, 0), player)
    )
    db.commit()
    db.close()
    assert main(["ratings", "recompute", "--data", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "ratings" in out and "1 rows DIFFER" in out and "DIFFERENT" in out


def test_cli_show_and_leaderboard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = sample(80, seed=7, players=6)

    async def fill() -> None:
        async with opened(tmp_path) as (log, store):
            await produce(log, results)
            await RatingService(log, store).catch_up()

    asyncio.run(fill())
    assert main(["ratings", "show", "p1", "--data", str(tmp_path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    fold = fold_of(results)
    assert shown["rating"] == expected(fold)["p1"][0]
    assert shown["provisional"] is False and len(shown["history"]) == 20
    assert main(["ratings", "leaderboard", "--data", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and lines[0].lstrip().startswith("1.")
    assert main(["ratings", "show", "p1", "--data", str(tmp_path)]) == 0
    assert "established" in capsys.readouterr().out


def test_rating_process_applies_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    results = sample(40, seed=8)

    async def fill() -> None:
        async with opened(tmp_path) as (log, _):
            await produce(log, results)

    asyncio.run(fill())
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "rating", "--data", str(tmp_path)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(sqlite3.Error):
                db = sqlite3.connect(tmp_path / "ratings.sqlite3")
                row = db.execute("SELECT next_offset FROM positions").fetchone()
                db.close()
                if row and row[0] == 40:
                    break
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err.decode()
    log_text = err.decode()
    assert "rating service started" in log_text and "rating service stopped" in log_text
    assert "applied batch: offsets=0..39 applied=40" in log_text


async def _applied(store: EmbeddedRatingStore, results: list[RatedHandResult]) -> None:
    records = [(seq, encode_result(r)) for seq, r in enumerate(results)]
    assert await store.apply(RATING_RESULTS, 0, len(records), Batch.decode(records)) is not None


def test_leaderboard_lists_established_then_provisional_players_and_ranks_each(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        store = EmbeddedRatingStore(tmp_path)
        await store.start()
        try:
            results = board_sample()
            await _applied(store, results)
            await check_board(store, fold_of(results))
        finally:
            await store.close()

    asyncio.run(go())


def test_a_rating_that_did_not_move_shows_a_change_of_plus_zero(tmp_path: Path) -> None:
    """a beats b three times, then a hand of four equal scores: c and d, at 1500 between
    1500 ± x, keep their rating exactly while the formula's figure is -1.18e-15 (it read
    "-0.0" in the rating history)."""
    win = {"players": ["a", "b", "c", "d"], "rated": True, "clock": "standard"}
    results = [
        RatedHandResult(table_id="t", hand_id=f"t#{k}", points=points, **win)  # type: ignore[arg-type]
        for k, points in enumerate([[1, -1, 0, 0]] * 3 + [[0, 0, 0, 0]])
    ]

    async def go() -> None:
        store = EmbeddedRatingStore(tmp_path)
        await store.start()
        try:
            await _applied(store, results)
            stored = (await store.history("c", limit=1))[0]
            assert stored.rating_after == stored.rating_before and stored.delta < 0
            shown = (await profile(store, "c")).history[0]
            assert shown.delta == 0.0 and math.copysign(1.0, shown.delta) == 1.0
            # Every change shown is the one the rating made, exactly.
            for h in (await profile(store, "a")).history:
                assert h.rating_before + h.delta == h.rating_after
        finally:
            await store.close()

    asyncio.run(go())
