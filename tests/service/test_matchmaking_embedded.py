"""Matchmaking on the embedded log: Quick Play for a crowd, private codes, bad requests, and
a restart mid-queue that loses and duplicates nobody."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path

from schemas import lobby as lb
from services.matchmaking.lobby import allowed_gap
from services.matchmaking.service import MatchmakingService
from services.runtime.embedded import EmbeddedLog
from tests.service.lobby_client import answer, seated_once, send, starts, until
from tests.service.logs import started


def opened(directory: Path) -> contextlib.AbstractAsyncContextManager[EmbeddedLog]:
    return started(EmbeddedLog(directory))


_REAL0 = time.monotonic()


def fast_now() -> int:
    """A clock ten times faster than real time: the rating window widens in seconds."""
    return 1_700_000_000_000 + int((time.monotonic() - _REAL0) * 10_000)


@contextlib.asynccontextmanager
async def matchmaking(log: EmbeddedLog) -> AsyncIterator[MatchmakingService]:
    service = MatchmakingService(log, now_ms=fast_now)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    await asyncio.wait_for(service.ready.wait(), 10)
    try:
        yield service
    finally:
        stop.set()
        await task


def quick(player: str, rating: float) -> lb.JoinQueue:
    return lb.JoinQueue(player=player, request_id=f"q-{player}", rating=rating)


def test_a_hundred_quick_play_players_are_each_seated_once_at_tables_of_four(
    tmp_path: Path,
) -> None:
    rng = random.Random(3)
    players = {f"p{i:03}": rng.gauss(1500, 120) for i in range(100)}

    async def go() -> None:
        async with opened(tmp_path) as log, matchmaking(log):
            await asyncio.gather(*(send(log, quick(p, r)) for p, r in players.items()))
            events = await until(
                log, lambda es: sum(isinstance(e, lb.TableStarted) for e in es) == 25, 90
            )
            deals = await starts(log)
        where = seated_once(events, list(players))
        joined = {e.player: e.at_ms for e in events if isinstance(e, lb.QueueJoined)}
        for e in events:
            if isinstance(e, lb.TableStarted):
                ratings = [players[p] for p in e.players]
                gap = min(allowed_gap(e.at_ms - joined[p]) for p in e.players)
                assert max(ratings) - min(ratings) <= gap
                assert e.rated and e.clock == "standard" and not e.computer_seats
        assert len({d.table_id for d in deals}) == 25 == len(set(where.values()))

    asyncio.run(go())


def test_a_private_table_is_joined_only_with_its_code(tmp_path: Path) -> None:
    async def go() -> None:
        async with opened(tmp_path) as log, matchmaking(log):
            await send(
                log,
                lb.CreateTable(
                    player="ann", request_id="c1", options=lb.TableOptions(public=False)
                ),
            )
            opened_ = await answer(log, "c1")
            assert isinstance(opened_, lb.TableOpened) and opened_.code
            table, code = opened_.table_id, opened_.code
            await send(log, lb.JoinTable(player="bob", request_id="j1", table_id=table))
            await send(
                log, lb.JoinTable(player="cid", request_id="j2", table_id=table, code="nope")
            )
            await send(log, lb.JoinTable(player="dan", request_id="j3", table_id=table, code=code))
            no_code, wrong, right = [await answer(log, r) for r in ("j1", "j2", "j3")]
        assert isinstance(no_code, lb.RequestRefused) and no_code.code == "no_such_table"
        assert isinstance(wrong, lb.RequestRefused) and wrong.code == "no_such_table"
        assert isinstance(right, lb.SeatTaken) and right.player == "dan"

    asyncio.run(go())


def test_bad_requests_are_refused_with_a_code_and_change_nothing(tmp_path: Path) -> None:
    async def go() -> None:
        async with opened(tmp_path) as log, matchmaking(log):
            untimed = lb.TableOptions(rated=True, clock=None)
            await send(log, lb.CreateTable(player="ann", request_id="u", options=untimed))
            await send(log, lb.CreateTable(player="bob", request_id="ok"))
            await send(log, lb.CreateTable(player="bob", request_id="twice"))
            refusal, ok, twice = [await answer(log, r) for r in ("u", "ok", "twice")]
            await send(log, quick("bob", 1500))
            busy = await answer(log, "q-bob")
        assert isinstance(refusal, lb.RequestRefused) and refusal.code == "rated_needs_clock"
        assert isinstance(ok, lb.TableOpened)
        assert isinstance(twice, lb.RequestRefused) and twice.code == "already_seated"
        assert isinstance(busy, lb.RequestRefused) and busy.code == "already_seated"

    asyncio.run(go())


def test_a_restart_mid_queue_loses_and_seats_twice_nobody(tmp_path: Path) -> None:
    players = [f"p{i:02}" for i in range(40)]

    async def go() -> None:
        async with opened(tmp_path) as log:
            async with matchmaking(log) as service:
                await send(log, *(quick(p, 1500) for p in players[:14]))
                await until(log, lambda es: sum(isinstance(e, lb.TableStarted) for e in es) >= 3)
                assert len(service.lobby.queue) == 2
            # Down: requests pile up; a new instance rebuilds the queue from the log.
            await send(log, *(quick(p, 1500) for p in players[14:]))
            probe = MatchmakingService(log)
            await probe._recover()
            assert list(probe.lobby.queue) == ["p12", "p13"]
            async with matchmaking(log):
                events = await until(
                    log, lambda es: sum(isinstance(e, lb.TableStarted) for e in es) == 10
                )
        seated_once(events, players)

    asyncio.run(go())
