"""The analysis service on the embedded log: a review of every finished hand with a person
at it, practice only on request, duplicates and bad requests, exactly once through restarts
and a ``kill -9`` of its process mid-review."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from schemas import analysis as an
from services.analysis.review import Evaluate
from services.analysis.service import AnalysisService, auto_request_id
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import Outgoing
from services.runtime.topics import ANALYSIS_REQUESTS, ANALYSIS_RESULTS
from tests.service.analysis_support import (
    appended,
    dead_letters,
    edge_value,
    glacial_edge_value,
    hand,
    reviews,
    write_hands,
)
from tests.service.logs import started

ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def running(
    log: EmbeddedLog, evaluate: Evaluate = edge_value
) -> AsyncIterator[AnalysisService]:
    service = AnalysisService(log, evaluate=evaluate, worker="thread")
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    await asyncio.wait_for(service.ready.wait(), 30)
    try:
        yield service
    finally:
        stop.set()
        await task


async def until(check: Callable[[], Awaitable[bool]], seconds: float = 60) -> None:
    async with asyncio.timeout(seconds):
        while not await check():
            await asyncio.sleep(0.05)


async def request(log: EmbeddedLog, hand_id: str, seats: list[int], rid: str) -> None:
    q = an.ReviewRequest(
        request_id=rid, hand_id=hand_id, table_id=hand_id.split("#")[0], seats=seats
    )
    await log.produce([Outgoing(ANALYSIS_REQUESTS, hand_id, an.encode(q))])


def test_every_finished_hand_with_a_person_is_reviewed_once_for_its_human_seats(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            await write_hands(
                log,
                [
                    hand(1),
                    hand(2, computers=[1, 3]),
                    hand(3, computers=[0, 1, 2, 3]),  # computers only: nobody to review
                    hand(4, computers=[1, 2, 3]),  # practice: only on request
                ],
            )
            async with running(log):
                await until(lambda: _count(log, 2))
                await asyncio.sleep(0.5)
            found = await reviews(log)
            assert sorted(found) == ["t1#1", "t2#1"]
            assert [s.seat for s in found["t1#1"].seats] == [0, 1, 2, 3]
            assert [s.seat for s in found["t2#1"].seats] == [0, 2]
            assert found["t2#1"].request_id == auto_request_id("t2#1")
            assert await appended(log) == 2

    asyncio.run(go())


async def _count(log: EmbeddedLog, n: int) -> bool:
    return await appended(log) >= n


def test_a_practice_hand_is_reviewed_when_its_player_asks(tmp_path: Path) -> None:
    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            await write_hands(log, [hand(4, computers=[1, 2, 3])])
            async with running(log):
                await request(log, "t4#1", [0], "ask-1")
                await until(lambda: _count(log, 1))
            review = (await reviews(log))["t4#1"]
            assert review.request_id == "ask-1" and [s.seat for s in review.seats] == [0]

    asyncio.run(go())


def test_a_request_for_seats_already_reviewed_writes_nothing_and_more_seats_the_union(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            await write_hands(log, [hand(5, computers=[1, 2, 3])])
            async with running(log) as service:
                await request(log, "t5#1", [0], "a")
                await until(lambda: _count(log, 1))
            async with running(log) as service:  # the reviewed seats come from the results
                await request(log, "t5#1", [0], "b")
                await request(log, "t5#1", [2], "c")
                await until(lambda: _count(log, 2))
                await until(lambda: _true(service.reviewer.skipped == 1))
            assert await appended(log) == 2
            review = (await reviews(log))["t5#1"]
            assert review.request_id == "c" and [s.seat for s in review.seats] == [0, 2]

    asyncio.run(go())


async def _true(value: bool) -> bool:
    return value


def test_a_request_for_a_hand_that_does_not_exist_or_has_not_ended_is_a_dead_letter(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            unfinished = hand(6)[:-1]
            await write_hands(log, [unfinished])
            async with running(log):
                await request(log, "nowhere#1", [0], "x")
                await request(log, "t6#1", [0], "y")
                await log.produce([Outgoing(ANALYSIS_REQUESTS, "junk", b"{not json")])
                await until(lambda: _letters(log, 3))
            letters = sorted(reason.split(":")[0] for reason in await dead_letters(log))
            assert letters == ["hand_not_ended", "no_such_hand", "unreadable request"]
            assert await appended(log, ANALYSIS_RESULTS) == 0

    asyncio.run(go())


async def _letters(log: EmbeddedLog, n: int) -> bool:
    return len(await dead_letters(log)) >= n


def broken(view: object, options: object) -> list[tuple[object, float]]:
    raise RuntimeError("a bug in the evaluator")


def test_a_review_that_fails_is_tried_again_and_writes_nothing_meanwhile(tmp_path: Path) -> None:
    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            await write_hands(log, [hand(7)])
            async with running(log, broken) as service:  # type: ignore[arg-type]
                await until(lambda: _true(service.probe().counters["reviews"] == 0))
                await asyncio.sleep(2.5)  # two tries at least (1 s, then 2 s apart)
                assert service.ready.is_set()
            assert await appended(log) == 0 and await dead_letters(log) == []
            async with running(log):  # fixed: the same request is reviewed, once
                await until(lambda: _count(log, 1))
                await asyncio.sleep(0.5)
            assert await appended(log) == 1

    asyncio.run(go())


def test_reviews_survive_a_restart_and_no_hand_is_reviewed_twice(tmp_path: Path) -> None:
    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            await write_hands(log, [hand(n) for n in range(10, 13)])
            async with running(log):
                await until(lambda: _count(log, 3))
        async with started(EmbeddedLog(tmp_path)) as log:
            assert sorted(await reviews(log)) == ["t10#1", "t11#1", "t12#1"]
            await write_hands(log, [hand(n) for n in range(13, 15)])
            async with running(log):
                await until(lambda: _count(log, 5))
                await asyncio.sleep(1.0)
            assert await appended(log) == 5
            assert len(await reviews(log)) == 5

    asyncio.run(go())


def test_kill_9_of_the_analysis_process_mid_review_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    """A separate process reviews (about a second a hand) and is killed again and again."""
    hands = 8

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.service.analysis_support", str(tmp_path)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            await write_hands(log, [hand(n) for n in range(20, 20 + hands)])
        lifetimes = random.Random(9)
        kills = 0
        proc = start()
        try:
            async with started(EmbeddedLog(tmp_path)) as log:
                async with asyncio.timeout(240):
                    while await appended(log) < hands:
                        await asyncio.sleep(lifetimes.uniform(1.5, 3.0))
                        if await appended(log) < hands:
                            proc.send_signal(signal.SIGKILL)
                            proc.wait()
                            kills += 1
                            proc = start()
                await asyncio.sleep(2.0)  # anything written twice would be by now
                assert await appended(log) == hands
                assert sorted(await reviews(log)) == [f"t{n}#1" for n in range(20, 20 + hands)]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        assert kills >= 2

    asyncio.run(go())


def test_a_stop_during_a_review_cuts_it_off_and_the_restart_reviews_the_hand_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A review takes tens of seconds on a busy machine: stopping waits for none of it (a
    supervisor's stop timeout would kill the whole service), writes nothing, and the review
    is done again from scratch after the restart."""

    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            await write_hands(log, [hand(30)])
            service = AnalysisService(log, evaluate=glacial_edge_value, worker="process")
            stop = asyncio.Event()
            task = asyncio.create_task(service.run(stop))
            await asyncio.wait_for(service.ready.wait(), 30)
            await until(lambda: _requested(log, 1))
            await asyncio.sleep(5)  # the worker has started and is a few decisions in
            began = time.monotonic()
            stop.set()
            await asyncio.wait_for(task, 30)
            assert time.monotonic() - began < 10
            assert "left for the restart" in caplog.text
            assert await appended(log) == 0
            async with running(log):
                await until(lambda: _count(log, 1))
                await asyncio.sleep(0.5)
            assert await appended(log) == 1
            assert list(await reviews(log)) == ["t30#1"]

    with caplog.at_level(logging.INFO, logger="mahjong.analysis"):
        asyncio.run(go())


async def _requested(log: EmbeddedLog, n: int) -> bool:
    return await appended(log, ANALYSIS_REQUESTS) >= n


def test_the_review_worker_runs_below_the_services_cpu_priority(tmp_path: Path) -> None:
    """Reviews take the CPU the table, clock and gateway leave over (``make run`` and a small
    cluster share the machine): the worker process is ``nice``-d."""
    from services.analysis.service import REVIEW_NICENESS

    service = AnalysisService(EmbeddedLog(tmp_path), evaluate=edge_value, worker="process")
    reviewer = service.reviewer
    reviewer._open_pool()
    try:
        assert reviewer.pool is not None
        worker_niceness = reviewer.pool.submit(os.nice, 0).result(60)
    finally:
        reviewer._close_pool()
    assert worker_niceness == min(19, os.nice(0) + REVIEW_NICENESS)
