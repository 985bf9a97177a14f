"""Every service is a ``Service`` (run, ready, probe) and ``/readyz`` reads its ``probe()``;
the consumers that store their position share one loop (issue 18)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from services.bots.service import BotService
from services.clock.service import ClockService
from services.history.service import HistoryService
from services.history.store import open_store as open_history_store
from services.matchmaking.projection import LobbyProjection
from services.matchmaking.service import MatchmakingService
from services.rating.service import RatingService
from services.rating.store import open_store as open_rating_store
from services.runtime.backoff import Backoff
from services.runtime.embedded import EmbeddedLog
from services.runtime.ops import Probe
from services.runtime.service import Health, Service, Stall, run_stored
from services.table.service import TableService


def test_ready_means_started_holding_its_assignment_and_not_stalled() -> None:
    assert not Health(started=False).ready and Health(started=False).reason == "starting"
    assert Health(started=True).ready and Health(started=True).reason == ""
    idle_member = Health(started=True, partitions=frozenset())
    assert not idle_member.ready and idle_member.reason == "holds no partition"
    assert Health(started=True, partitions=frozenset({3})).ready
    stalled = Health(started=True, stall=Stall("rating.results", 61.0, True, "stuck at 7"))
    assert not stalled.ready and stalled.reason == "stuck at 7"
    moving = Health(started=True, stall=Stall("rating.results", 0.0, False, ""))
    assert moving.ready


def test_every_service_answers_readyz_from_its_probe(tmp_path: Path) -> None:
    event_log = EmbeddedLog(tmp_path)
    services: dict[str, Service] = {
        "table": TableService(event_log),
        "clock": ClockService(event_log),
        "bots": BotService(event_log),
        "matchmaking": MatchmakingService(event_log),
        "rating": RatingService(event_log, open_rating_store(None, tmp_path)),
        "history": HistoryService(event_log, open_history_store(None, tmp_path)),
        "lobby-projector": LobbyProjection(event_log, "postgresql://nowhere/none"),
    }
    for name, service in services.items():
        health = service.probe()
        assert not health.ready, f"{name} is ready before it ran"
        status = Probe(name, service).status()
        assert status["service"] == name and status["ready"] is False
        assert health.lag is not None, f"{name} reports no lag"
    for name in ("table", "clock", "bots", "matchmaking"):
        assert Probe(name, services[name]).status()["partitions"] == []


def test_the_stored_loop_reconnects_when_away_and_retries_a_failed_step() -> None:
    async def go() -> list[object]:
        stop, ready = asyncio.Event(), asyncio.Event()
        calls: list[object] = []
        steps: list[int | Exception] = [OSError("away"), 1, 0, ValueError("bad batch"), 0]

        async def connect() -> None:
            calls.append("connect")

        async def step() -> int:
            if not steps:
                stop.set()
                return 0
            item = steps.pop(0)
            if isinstance(item, Exception):
                raise item
            return item

        async def lost(exc: BaseException, delay: float) -> None:
            calls.append(("lost", type(exc).__name__, ready.is_set()))

        async def failed(exc: Exception, backoff: Backoff) -> None:
            calls.append(("failed", type(exc).__name__, backoff.pause_s(), ready.is_set()))

        async def idle() -> None:
            calls.append("idle")

        await run_stored(
            stop,
            ready,
            step,
            idle=idle,
            connect=connect,
            step_failed=failed,
            step_backoff=lambda: Backoff(0.25, 1.0),
            reconnect_on=(OSError,),
            lost=lost,
            backoff=Backoff(0.001, 0.002),
        )
        return calls

    assert asyncio.run(go()) == [
        "connect",
        ("lost", "OSError", False),
        "connect",
        "idle",
        ("failed", "ValueError", 0.25, True),
        "idle",
        "idle",
    ]


def test_a_fatal_error_ends_the_stored_loop() -> None:
    async def go() -> None:
        async def step() -> int:
            raise LookupError("a stored position beyond the end")

        async def idle() -> None:
            pass

        await run_stored(
            asyncio.Event(),
            asyncio.Event(),
            step,
            idle=idle,
            reconnect_on=(Exception,),
            fatal=(LookupError,),
        )

    with pytest.raises(LookupError):
        asyncio.run(go())
