"""A consumer's progress: stalled only while it has work and does not advance; poison
records told from a store that is away."""

from __future__ import annotations

import asyncio
import sqlite3

import asyncpg
from asyncpg.exceptions import _base

from services.runtime.dead_letters import is_poison
from services.runtime.ops import Probe
from services.runtime.progress import Progress
from services.runtime.service import Health, Stall


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_consumer_that_keeps_failing_stalls_after_the_threshold() -> None:
    clock = Clock()
    progress = Progress("rating.results", stall_after_s=60, clock=clock)
    progress.advanced(7)
    clock.now += 59
    progress.failed("OverflowError: value out of int32 range")
    assert not progress.stalled
    clock.now += 2
    assert progress.stalled
    assert "past offset 7 for 61 s" in progress.reason()
    assert "int32" in progress.reason()


def test_an_idle_consumer_with_nothing_to_read_never_stalls() -> None:
    clock = Clock()
    progress = Progress("lobby.events", stall_after_s=60, clock=clock)
    for _ in range(10):
        clock.now += 30
        progress.caught_up()
    assert not progress.stalled and progress.stalled_s() == 0


def test_advancing_clears_a_stall() -> None:
    clock = Clock()
    progress = Progress("rating.results", stall_after_s=1, clock=clock)
    clock.now += 5
    assert progress.stalled
    progress.advanced(8)
    assert not progress.stalled and progress.error == ""


def test_a_stalled_service_is_not_ready_and_says_why() -> None:
    class Service:
        def __init__(self) -> None:
            self.progress = Progress("rating.results", stall_after_s=0)
            self.ready = asyncio.Event()
            self.ready.set()

        async def run(self, stop: asyncio.Event) -> None:
            await stop.wait()

        def probe(self) -> Health:
            return Health(started=self.ready.is_set(), stall=Stall.of(self.progress))

    probe = Probe("rating", Service())
    status = probe.status()
    assert status["ready"] is False and "rating.results" in status["reason"]


def test_data_errors_are_poison_and_an_absent_store_is_not() -> None:
    assert is_poison(OverflowError("value out of int32 range"))
    assert is_poison(asyncpg.exceptions.CharacterNotInRepertoireError("0x00"))
    assert is_poison(asyncpg.exceptions.CheckViolationError("refuse"))
    assert is_poison(_base.DataError("invalid input for query argument $1"))
    assert is_poison(sqlite3.IntegrityError("constraint"))
    assert not is_poison(ConnectionRefusedError())
    assert not is_poison(asyncpg.exceptions.ConnectionDoesNotExistError("closed"))
    assert not is_poison(asyncpg.exceptions.AdminShutdownError("terminating"))
    assert not is_poison(asyncpg.exceptions.SerializationError("retry"))
    assert not is_poison(sqlite3.OperationalError("database is locked"))
    assert not is_poison(TimeoutError())
    assert not is_poison(AttributeError("a bug stalls, it does not empty the input"))
