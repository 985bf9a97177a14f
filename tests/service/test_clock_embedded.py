"""The clock service beside the table service on the embedded log: silent seats are timed
out with the RULES.md §8 defaults, and a restart of the clock loses and repeats nothing.

Time runs 50 times faster here (both services read the same injected clock), so a silent
bullet hand takes seconds; the real-time run is the Kafka integration test.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

from schemas import commands as cmd
from schemas import events as ev
from schemas.rating import decode_result
from schemas.table import CommandEnvelope, StartHand, decode_command, encode
from services.audit import audit_hand
from services.clock.service import ClockService
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import Outgoing
from services.runtime.topics import RATING_RESULTS, TABLE_COMMANDS, TOPICS
from services.table.service import TableService
from tests.service.logs import assert_exactly_once, hand_logs, records, replies


def synchronously(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test on its own event loop (the suite has no asyncio plugin)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


SPEED = 50
_REAL0 = time.monotonic()
_VIRTUAL0 = 1_700_000_000_000


def fast_now() -> int:
    """Milliseconds of a clock that runs ``SPEED`` times faster than real time."""
    return _VIRTUAL0 + int((time.monotonic() - _REAL0) * 1000 * SPEED)


@contextlib.asynccontextmanager
async def table_service(directory: Path) -> AsyncIterator[EmbeddedLog]:
    log = EmbeddedLog(directory)
    await log.start()
    await log.create_topics(TOPICS)
    service = TableService(log, now_ms=fast_now)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    await asyncio.wait_for(service.ready.wait(), 10)
    try:
        yield log
    finally:
        stop.set()
        await task
        await log.close()


def clock_service(log: EmbeddedLog) -> tuple[ClockService, asyncio.Event, asyncio.Task[None]]:
    clock = ClockService(log, now_ms=fast_now, max_wait_s=0.005, retry_ms=2_000 * SPEED)
    stop = asyncio.Event()
    return clock, stop, asyncio.create_task(clock.run(stop))


async def start_hand(
    log: EmbeddedLog, table: str, clock: str | None = "bullet", rated: bool = False
) -> None:
    start = StartHand(
        table_id=table, players=["a", "b", "c", "d"], clock=clock, rated=rated, command_id="s"
    )
    await log.produce([Outgoing(TABLE_COMMANDS, table, encode(CommandEnvelope(command=start)))])


async def until_ended(log: EmbeddedLog, tables: list[str], limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        hands = await hand_logs(log)
        ended = {k[0] for k, events in hands.items() if isinstance(events[-1], ev.HandEnded)}
        if set(tables) <= ended:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("hands did not end")


async def timeout_commands(log: EmbeddedLog) -> Counter[str]:
    sent: Counter[str] = Counter()
    for r in await records(log, TABLE_COMMANDS):
        c = decode_command(r.value)
        if isinstance(c, cmd.Timeout):
            sent[c.command_id] += 1
    return sent


def timed_out(events: list[ev.Event]) -> list[ev.ClockStopped]:
    return [e for e in events if isinstance(e, ev.ClockStopped) and e.timeout]


@synchronously
async def test_silent_bullet_hands_finish_by_timeouts_alone(tmp_path: Path) -> None:
    async with table_service(tmp_path) as log:
        clock, stop, task = clock_service(log)
        tables = [f"silent-{i}" for i in range(3)]
        for t in tables:
            await start_hand(log, t)
        await until_ended(log, tables)
        stop.set()
        await task
        hands = await hand_logs(log)
        assert_exactly_once(hands)
        sent = await timeout_commands(log)
    for events in hands.values():
        assert audit_hand(events).ok
        decisions = [e for e in events if getattr(e, "timeout", False)]
        assert decisions and all(e.command_id.startswith("timeout:") for e in decisions)
    assert set(sent.values()) == {1}, "a timeout was sent twice"
    assert clock.delays_ms and max(clock.delays_ms) < 1_000 * SPEED


@synchronously
async def test_an_untimed_hand_is_never_timed_out(tmp_path: Path) -> None:
    async with table_service(tmp_path) as log:
        _, stop, task = clock_service(log)
        await start_hand(log, "casual", clock=None)
        await asyncio.sleep(1.0)  # 50 s of game time
        stop.set()
        await task
        assert await timeout_commands(log) == Counter()
        (events,) = (await hand_logs(log)).values()
    assert not any(isinstance(e, (ev.ClockStarted, ev.ClockStopped)) for e in events)


@synchronously
async def test_a_clock_restart_mid_hand_loses_no_timeout_and_fires_none_twice(
    tmp_path: Path,
) -> None:
    async with table_service(tmp_path) as log:
        clock, stop, task = clock_service(log)
        await start_hand(log, "restart")
        while clock.fired < 12:  # into the play phase
            await asyncio.sleep(0.01)
        stop.set()
        await task
        await asyncio.sleep(0.5)  # 25 s pass with no clock: deadlines go by unwatched
        clock, stop, task = clock_service(log)
        await until_ended(log, ["restart"])
        stop.set()
        await task
        (events,) = (await hand_logs(log)).values()
        sent = await timeout_commands(log)
    assert audit_hand(events).ok
    assert set(sent.values()) == {1}, "a timeout was sent twice"
    fired = {e.command_id for e in events if getattr(e, "timeout", False)}
    assert fired <= set(sent)
    # The deadline that passed while no clock ran fired at once on restart, not a retry later.
    assert max(clock.delays_ms) >= 400 * SPEED // 2


@synchronously
async def test_an_early_timeout_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    async with table_service(tmp_path) as log:
        await start_hand(log, "early")
        await asyncio.sleep(0.3)
        (before,) = (await hand_logs(log)).values()
        opened = next(e for e in before if isinstance(e, ev.ClockStarted))
        early = cmd.Timeout(
            seat=0, table_id="early", command_id="x", decision_seq=opened.decision_seq
        )
        await log.produce(
            [Outgoing(TABLE_COMMANDS, "early", encode(CommandEnvelope(command=early)))]
        )
        await asyncio.sleep(0.3)
        (after,) = (await hand_logs(log)).values()
        rejected = await replies(log)
    assert after == before
    assert [r.rejected.code for r in rejected] == ["not_due"]


@synchronously
async def test_only_a_rated_hand_leaves_a_result_for_the_ratings(tmp_path: Path) -> None:
    async with table_service(tmp_path) as log:
        _, stop, task = clock_service(log)
        await start_hand(log, "rated", rated=True)
        await start_hand(log, "casual")
        await until_ended(log, ["rated", "casual"])
        stop.set()
        await task
        results = [decode_result(r.value) for r in await records(log, RATING_RESULTS)]
        (rated,) = [v for k, v in (await hand_logs(log)).items() if k[0] == "rated"]
    assert [r.table_id for r in results] == ["rated"]
    (result,) = results
    ended = rated[-1]
    assert isinstance(ended, ev.HandEnded)
    assert result.points == ended.scores and result.rated and result.clock == "bullet"
    assert result.players == ["a", "b", "c", "d"] and result.hand_id == ended.hand_id


@synchronously
async def test_a_tables_next_hand_is_dealt_by_its_own_start_and_runs_its_clocks_from_it(
    tmp_path: Path,
) -> None:
    # One-hand games: the next hand is dealt when its players asked for it (matchmaking
    # sends its start_hand), so its clocks start at once: no hidden pause in which a player
    # reading the result loses time.
    async with table_service(tmp_path) as log:
        _, stop, task = clock_service(log)
        for number in (1, 2):
            start = StartHand(
                table_id="again",
                players=["a", "b", "c", "d"],
                clock="bullet",
                command_id=f"s{number}",
            )
            dealt_ms = fast_now()
            await log.produce(
                [Outgoing(TABLE_COMMANDS, "again", encode(CommandEnvelope(command=start)))]
            )
            hand = await _until_hand_ended(log, ("again", f"again#{number}"))
        stop.set()
        await task
    opened = next(e for e in hand if isinstance(e, ev.ClockStarted))
    assert opened.at_ms >= dealt_ms
    assert audit_hand(hand).ok, audit_hand(hand).problems


async def _until_hand_ended(log: EmbeddedLog, key: tuple[str, str]) -> list[ev.Event]:
    for _ in range(1_200):
        hand = (await hand_logs(log)).get(key, [])
        if hand and isinstance(hand[-1], ev.HandEnded):
            return hand
        await asyncio.sleep(0.05)
    raise AssertionError(f"{key} did not end")


@synchronously
async def test_a_timeout_sent_over_a_second_late_is_counted_and_logged_with_its_table(
    tmp_path: Path, caplog: Any
) -> None:
    from services.clock.service import LATE_TIMEOUTS, Deadline

    log = EmbeddedLog(tmp_path)
    await log.start()
    await log.create_topics(TOPICS)
    clock = ClockService(log, now_ms=fast_now)
    due = fast_now()

    def deadline(table: str) -> Deadline:
        return Deadline(table, 0, f"{table}#1", seat=2, decision_seq=7, due_ms=due, fire_at_ms=due)

    before = LATE_TIMEOUTS._value.get()
    try:
        with caplog.at_level("WARNING", logger="mahjong.clock"):
            await clock._send([deadline("t-on-time")], due + 900)  # late, but within the second
            await clock._send([deadline("t-late")], due + 1_500)
        sent = await timeout_commands(log)
    finally:
        await log.close()
    assert len(sent) == 2  # both were sent; one of them late
    assert LATE_TIMEOUTS._value.get() == before + 1
    [late] = [r for r in caplog.records if r.getMessage().startswith("late_timeout")]
    assert (late.table_id, late.hand_id, late.seat) == ("t-late", "t-late#1", 2)
