"""Matchmaking on a real Kafka broker with the lobby projected into a real PostgreSQL: a
hundred Quick Play players, private codes, a computer table played to the end, and a
``kill -9`` of the matchmaking service mid-queue."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from schemas import events as ev
from schemas import lobby as lb
from services.audit import audit_hand
from services.bots.service import BotService
from services.matchmaking.projection import LobbyProjection
from services.matchmaking.service import MatchmakingService
from services.runtime.log import partition_for
from services.runtime.topics import TABLE_EVENTS
from services.table.service import TableService
from tests.integration.test_table_kafka import GROUP, kafka
from tests.service.lobby_client import answer, seated_once, send, until
from tests.service.logs import hand_logs
from tests.service.test_bots_service import answer_for

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]
ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def running(*services: object) -> AsyncIterator[None]:
    stop = asyncio.Event()
    tasks = [asyncio.create_task(s.run(stop)) for s in services]  # type: ignore[attr-defined]
    await asyncio.gather(*(asyncio.wait_for(s.ready.wait(), 60) for s in services))  # type: ignore[attr-defined]
    try:
        yield
    finally:
        stop.set()
        await asyncio.gather(*tasks)


def _matchmaking_process(bootstrap: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", "matchmaking", "--kafka", bootstrap],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def test_a_hundred_quick_play_players_are_seated_once_and_the_lobby_lands_in_postgres(
    kafka_bootstrap: str, postgres_dsn: str
) -> None:
    run = uuid.uuid4().hex[:6]
    rng = random.Random(9)
    players = {f"qp-{run}-{i:03}": rng.gauss(1500, 60) for i in range(100)}

    async def go() -> None:
        async with kafka(kafka_bootstrap) as log:
            projection = LobbyProjection(log, postgres_dsn)
            async with running(MatchmakingService(log), projection):
                private = lb.CreateTable(
                    player=f"host-{run}",
                    request_id=f"p-{run}",
                    options=lb.TableOptions(public=False),
                )
                public = lb.CreateTable(player=f"open-{run}", request_id=f"o-{run}")
                await send(log, private, public)
                await asyncio.gather(
                    *(
                        send(log, lb.JoinQueue(player=p, request_id=f"q-{p}", rating=r))
                        for p, r in players.items()
                    )
                )
                events = await until(
                    log,
                    lambda es: (
                        sum(
                            isinstance(e, lb.TableStarted) and e.players[0].startswith(f"qp-{run}")
                            for e in es
                        )
                        == 25
                    ),
                    180,
                )
                opened = await answer(log, f"o-{run}")
                for _ in range(300):
                    if projection.position >= await log.end_offset("lobby.events", 0):
                        break
                    await asyncio.sleep(0.1)
                listed = {t["table_id"] for t in await projection.public_tables()}
        seated_once(events, list(players))
        assert isinstance(opened, lb.TableOpened) and opened.table_id in listed
        hidden = next(
            e for e in events if isinstance(e, lb.TableOpened) and e.request_id == f"p-{run}"
        )
        assert hidden.table_id not in listed

    asyncio.run(go())


def test_a_private_table_on_kafka_is_joined_only_with_its_code(kafka_bootstrap: str) -> None:
    run = uuid.uuid4().hex[:6]

    async def go() -> None:
        async with kafka(kafka_bootstrap) as log, running(MatchmakingService(log)):
            options = lb.TableOptions(public=False)
            await send(
                log, lb.CreateTable(player=f"a-{run}", request_id=f"c-{run}", options=options)
            )
            table = await answer(log, f"c-{run}")
            assert isinstance(table, lb.TableOpened) and table.code
            guess = lb.JoinTable(player=f"b-{run}", request_id=f"g-{run}", table_id=table.table_id)
            right = lb.JoinTable(
                player=f"c-{run}", request_id=f"r-{run}", table_id=table.table_id, code=table.code
            )
            await send(log, guess, right)
            refused, seated = await answer(log, f"g-{run}"), await answer(log, f"r-{run}")
        assert isinstance(refused, lb.RequestRefused) and refused.code == "no_such_table"
        assert isinstance(seated, lb.SeatTaken)

    asyncio.run(go())


def test_a_computer_table_on_kafka_starts_finishes_and_stays_casual(kafka_bootstrap: str) -> None:
    run = uuid.uuid4().hex[:6]

    async def go() -> None:
        async with kafka(kafka_bootstrap) as log:
            services = (
                TableService(log, group=GROUP),
                MatchmakingService(log),
                BotService(log, pace="instant"),
            )
            async with running(*services):
                options = lb.TableOptions(computers="strong", pace="instant", clock=None)
                host = f"host-{run}"
                await send(log, lb.CreateTable(player=host, request_id=f"c-{run}", options=options))
                table = await answer(log, f"c-{run}")
                assert isinstance(table, lb.TableOpened)
                await send(
                    log, lb.LeaveTable(player=host, request_id=f"l-{run}", table_id=table.table_id)
                )
                await answer(log, f"l-{run}")
                # An empty table closed; a table of computers needs its host to start it.
                await send(log, lb.CreateTable(player=host, request_id=f"d-{run}", options=options))
                table = await answer(log, f"d-{run}")
                assert isinstance(table, lb.TableOpened)
                partition = partition_for(table.table_id, await log.partition_count(TABLE_EVENTS))
                since = await log.end_offset(TABLE_EVENTS, partition)
                await send(
                    log,
                    lb.FillWithComputers(
                        player=host, request_id=f"f-{run}", table_id=table.table_id
                    ),
                )
                found = await answer(log, f"f-{run}")
                assert isinstance(found, lb.TableFound) and not found.rated
                tid = table.table_id
                # The host's client opens the table: the hand is dealt. The host plays too:
                # an untimed table waits for its human.
                await send(log, lb.ArriveAtTable(player=host, request_id=f"a-{run}", table_id=tid))
                await answer_for(log, tid, {host}, since)

                def finished(n: int) -> Callable[[list[lb.Event]], bool]:
                    return lambda es: (
                        sum(isinstance(e, lb.HandFinished) and e.table_id == tid for e in es) == n
                    )

                await until(log, finished(1), 300)
                # A casual table: another hand only when its human asks for it.
                await send(log, lb.PlayAgain(player=host, request_id=f"p-{run}", table_id=tid))
                await answer_for(log, tid, {host}, since)
                await until(log, finished(2), 300)
                await send(log, lb.LeaveTable(player=host, request_id=f"x-{run}", table_id=tid))
                await until(
                    log,
                    lambda es: any(isinstance(e, lb.TableClosed) and e.table_id == tid for e in es),
                    60,
                )
            hands = [v for k, v in (await hand_logs(log)).items() if k[0] == table.table_id]
        assert len(hands) == 2
        for hand in hands:
            first = hand[0]
            assert isinstance(first, ev.HandStarted) and not first.rated
            assert len(first.computer_seats) == 3
            assert isinstance(hand[-1], ev.HandEnded) and audit_hand(hand).ok

    asyncio.run(go())


def test_matchmaking_killed_mid_queue_loses_and_seats_twice_nobody(kafka_bootstrap: str) -> None:
    run = uuid.uuid4().hex[:6]
    players = [f"k-{run}-{i:02}" for i in range(40)]

    async def go() -> None:
        async with kafka(kafka_bootstrap) as log:
            proc = _matchmaking_process(kafka_bootstrap)
            try:
                for i, p in enumerate(players):
                    await send(log, lb.JoinQueue(player=p, request_id=f"q-{p}", rating=1500))
                    if i == 17:
                        await asyncio.sleep(1.0)
                        proc.send_signal(signal.SIGKILL)
                        proc.wait()
                        proc = _matchmaking_process(kafka_bootstrap)
                    await asyncio.sleep(0.05)
                events = await until(
                    log,
                    lambda es: (
                        sum(
                            isinstance(e, lb.TableStarted) and e.players[0].startswith(f"k-{run}")
                            for e in es
                        )
                        == 10
                    ),
                    180,
                )
            finally:
                proc.terminate()
                proc.wait(timeout=60)
        seated_once(events, players)

    asyncio.run(go())
