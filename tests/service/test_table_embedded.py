"""The table service on the embedded log: full hands, duplicates, stale and illegal commands,
malformed messages, and restarts that lose nothing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from schemas import commands as cmd
from schemas import events as ev
from schemas.table import CommandEnvelope, StartHand, encode
from services.rules.hand import replay
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import Outgoing
from services.runtime.topics import TABLE_COMMANDS, TABLE_EVENTS, TABLE_PARTITIONS, TOPICS
from services.simulate import simulate
from services.table.service import TableService
from tests.service.logs import assert_exactly_once, dead_letters, hand_logs, replies

ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def running(directory: Path) -> AsyncIterator[tuple[EmbeddedLog, TableService]]:
    log = EmbeddedLog(directory)
    await log.start()
    await log.create_topics(TOPICS)
    service = TableService(log)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    await asyncio.wait_for(service.ready.wait(), 10)
    try:
        yield log, service
    finally:
        stop.set()
        await task
        await log.close()


async def send(log: EmbeddedLog, *commands: cmd.HandCommand | StartHand, raw: bytes = b"") -> None:
    out = [
        Outgoing(TABLE_COMMANDS, c.table_id, encode(CommandEnvelope(command=c)))  # type: ignore[arg-type]
        for c in commands
    ]
    await log.produce(out)


async def settle(log: EmbeddedLog, service: TableService, handled: int) -> None:
    for _ in range(200):
        if service.commands_handled >= handled:
            await asyncio.sleep(0.05)
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the service handled {service.commands_handled}, not {handled}")


def test_simulated_hands_run_to_the_end_exactly_once(tmp_path: Path) -> None:
    async def go() -> None:
        async with running(tmp_path) as (log, _):
            result = await simulate(log, hands=30, tables=6, deadline_s=120)
            assert result.hands == 30 and result.rejections == 0
            hands = await hand_logs(log)
        assert len(hands) == 30
        assert_exactly_once(hands)
        for events in hands.values():
            assert isinstance(events[-1], ev.HandEnded)
            assert replay(events).scores == events[-1].scores

    asyncio.run(go())


async def _started(log: EmbeddedLog, service: TableService, table: str) -> ev.Event:
    await send(log, StartHand(table_id=table, players=list("abcd"), command_id="start-1"))
    await settle(log, service, 1)
    return (await hand_logs(log))[(table, f"{table}#1")][-1]


def test_a_duplicate_command_is_answered_and_not_applied_twice(tmp_path: Path) -> None:
    async def go() -> None:
        async with running(tmp_path) as (log, service):
            await _started(log, service, "t1")
            state = replay((await hand_logs(log))[("t1", "t1#1")])
            tiles = [t for t in range(27) for _ in range(state.counts[0][t])]
            from services.rules.tiles import NAMES

            suit = min(range(3), key=lambda s: -sum(state.counts[0][s * 9 : s * 9 + 9]))
            pick = [NAMES[t] for t in tiles if t // 9 == suit][:3]
            choose = cmd.ChooseExchange(seat=0, tiles=pick, table_id="t1", command_id="c-1")
            await send(log, choose, choose)
            await send(log, StartHand(table_id="t1", players=list("abcd"), command_id="start-1"))
            await settle(log, service, 4)
            events = (await hand_logs(log))[("t1", "t1#1")]
            answers = [r.rejected for r in await replies(log)]
        assert sum(isinstance(e, ev.ExchangeChosen) for e in events) == 1
        assert [(a.command_id, a.code) for a in answers] == [
            ("c-1", "duplicate"),
            ("start-1", "duplicate"),
        ]

    asyncio.run(go())


def test_stale_and_illegal_commands_are_rejected_with_reasons(tmp_path: Path) -> None:
    async def go() -> None:
        async with running(tmp_path) as (log, service):
            await _started(log, service, "t2")
            await send(
                log,
                cmd.Discard(seat=0, tile="1m", table_id="t2", command_id="x1"),
                cmd.DeclareMissing(seat=1, suit="m", table_id="t2", command_id="x2"),
                cmd.Pass(seat=2, table_id="t2", command_id="x3", decision_seq=1),
                cmd.Pass(seat=2, table_id="nowhere", command_id="x4"),
            )
            await settle(log, service, 5)
            answers = {r.rejected.command_id: r.rejected for r in await replies(log)}
            events = (await hand_logs(log))[("t2", "t2#1")]
        assert answers["x1"].code == "opening_not_done"
        assert answers["x2"].code == "not_missing_phase"
        assert answers["x3"].code == "stale_decision"
        assert answers["x4"].code == "no_hand"
        assert all(a.reason for a in answers.values())
        assert len(events) == 6  # started, four deals, the wall: nothing else

    asyncio.run(go())


def test_malformed_messages_go_to_the_dead_letter_topic(tmp_path: Path) -> None:
    async def go() -> None:
        async with running(tmp_path) as (log, service):
            await log.produce(
                [
                    Outgoing(TABLE_COMMANDS, "t3", b"not json"),
                    Outgoing(TABLE_COMMANDS, "t3", b'{"command": {"type": "fly"}, "v": 1}'),
                    Outgoing(
                        TABLE_COMMANDS,
                        "t3",
                        encode(CommandEnvelope(command=StartHand(table_id="other", players=[]))),
                    ),
                ]
            )
            await send(log, StartHand(table_id="t3", players=list("abcd")))
            await settle(log, service, 1)
            letters = await dead_letters(log)
            hands = await hand_logs(log)
        assert len(letters) == 3 and all(letter.reason for letter in letters)
        assert "key 't3' is not table 'other'" in letters[2].reason
        assert ("t3", "t3#1") in hands  # the service kept going

    asyncio.run(go())


def test_restarts_in_the_middle_of_hands_lose_nothing(tmp_path: Path) -> None:
    """The service is stopped and started again and again while hands are played."""

    async def go() -> None:
        log = EmbeddedLog(tmp_path)
        await log.start()
        await log.create_topics(TOPICS)
        done = asyncio.Event()

        async def churn() -> int:
            restarts = 0
            while not done.is_set():
                stop = asyncio.Event()
                service = TableService(log)
                task = asyncio.create_task(service.run(stop))
                await asyncio.sleep(0.03 + 0.04 * (restarts % 3))
                if restarts % 2:
                    stop.set()
                    await task
                else:
                    task.cancel()  # an abrupt end, possibly mid-transaction
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                restarts += 1
            return restarts

        churner = asyncio.create_task(churn())
        try:
            result = await simulate(log, hands=40, tables=5, deadline_s=120)
        finally:
            done.set()
            restarts = await churner
        hands = await hand_logs(log)
        await log.close()
        assert result.hands == 40 and restarts >= 5
        assert_exactly_once(hands)
        assert all(isinstance(events[-1], ev.HandEnded) for events in hands.values())

    asyncio.run(go())


def test_kill_9_of_the_table_service_process_loses_nothing(tmp_path: Path) -> None:
    """A separate `mahjong-planet table` process is killed with SIGKILL and started again."""
    cli = [sys.executable, "-m", "services.cli"]
    data = str(tmp_path)
    subprocess.run([*cli, "topics", "--data", data], check=True, cwd=ROOT, capture_output=True)

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [*cli, "table", "--data", data],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    async def go() -> None:
        log = EmbeddedLog(tmp_path)
        await log.start()
        proc = start()
        kills = 0
        done = asyncio.Event()
        lifetimes = random.Random(5)

        async def written() -> int:
            counts = [await log.end_offset(TABLE_EVENTS, p) for p in range(TABLE_PARTITIONS)]
            return sum(counts)

        async def killer() -> None:
            nonlocal proc, kills
            while not done.is_set():
                # A process's life of 1 to 3 s, and at least until it has written something:
                # short enough to kill it mid-hand many times, and never so short that a busy
                # machine (slow to import and start) lets no process get anything done.
                before = await written()
                await asyncio.sleep(lifetimes.uniform(1.0, 3.0))
                while await written() == before and not done.is_set():
                    await asyncio.sleep(0.1)
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                proc = start()

        task = asyncio.create_task(killer())
        try:
            result = await simulate(log, hands=12, tables=4, deadline_s=420)
        finally:
            done.set()
            await task
            proc.terminate()
            proc.wait(timeout=30)
        hands = await hand_logs(log)
        await log.close()
        assert result.hands == 12 and kills >= 2
        assert_exactly_once(hands)

    asyncio.run(go())


@pytest.mark.parametrize("hands", [5])
def test_simulate_command_then_audit_in_embedded_mode(tmp_path: Path, hands: int) -> None:
    cli = [sys.executable, "-m", "services.cli"]
    out = subprocess.run(
        [*cli, "simulate", "--data", str(tmp_path), "--hands", str(hands)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"{hands} hands in" in out.stdout
