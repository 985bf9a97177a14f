"""Computer seats played by the bots service on the embedded log: a table of computers and a
matchmaking table with computer seats both play to the end, casual, and audit clean."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec

from schemas import events as ev
from schemas import lobby as lb
from schemas.table import CommandEnvelope, StartHand, decode_event, encode
from services.audit import audit_hand
from services.bots.service import BotService
from services.clock.service import ClockService
from services.matchmaking.service import MatchmakingService
from services.rules.hand import pending_seats
from services.rules.state import HandState, apply
from services.rules.timeouts import default_command
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import EventLog, Outgoing, partition_for
from services.runtime.topics import RATING_RESULTS, TABLE_COMMANDS, TABLE_EVENTS, TOPICS
from services.table.service import TableService
from tests.service.lobby_client import answer, send, until
from tests.service.logs import assert_exactly_once, hand_logs, records


@contextlib.asynccontextmanager
async def platform(directory: Path) -> AsyncIterator[tuple[EmbeddedLog, BotService]]:
    log = EmbeddedLog(directory)
    await log.start()
    await log.create_topics(TOPICS)
    bots = BotService(log, pace="instant")
    services = [TableService(log), ClockService(log), MatchmakingService(log), bots]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(s.run(stop)) for s in services]
    await asyncio.gather(*(asyncio.wait_for(s.ready.wait(), 10) for s in services))
    try:
        yield log, bots
    finally:
        stop.set()
        await asyncio.gather(*tasks)
        await log.close()


async def ended(
    log: EmbeddedLog, prefix: str, n: int, limit_s: float = 120
) -> list[list[ev.Event]]:
    for _ in range(int(limit_s * 5)):
        hands = [v for k, v in (await hand_logs(log)).items() if k[0].startswith(prefix)]
        done = [h for h in hands if isinstance(h[-1], ev.HandEnded)]
        if len(done) >= n:
            return done
        await asyncio.sleep(0.2)
    raise AssertionError("the computers did not finish")


async def answer_for(log: EventLog, table_id: str, humans: set[str], since: int = 0) -> None:
    """Play the human seats like a client that sends the §8 default at once, reading the
    table's partition of ``table.events`` from offset ``since`` on, until the table's hands
    stop (the last one ended and no next one started)."""
    partition = partition_for(table_id, await log.partition_count(TABLE_EVENTS))
    position, state, quiet = since, None, 0
    while quiet < 40:  # two seconds without a hand in play: the table is done
        records = await log.read(TABLE_EVENTS, partition, position, 1000)
        for r in records:
            if r.key == table_id:
                e = decode_event(r.value)
                state = HandState() if isinstance(e, ev.HandStarted) else state
                if state is not None:
                    apply(state, e)
        position = records[-1].offset + 1 if records else position
        if state is None or state.phase == "ended":
            quiet += 0 if records else 1
            await asyncio.sleep(0.05)
            continue
        quiet = 0
        out = []
        for seat in pending_seats(state):
            if state.players[seat] in humans:
                c = msgspec.structs.replace(
                    default_command(state, seat),
                    table_id=table_id,
                    hand_id=state.hand_id,
                    decision_seq=state.decision_seq,
                    command_id=f"h:{state.hand_id}:{state.decision_seq}:{seat}",
                )
                out.append(Outgoing(TABLE_COMMANDS, table_id, encode(CommandEnvelope(command=c))))
        if out:
            await log.produce(out)
        await asyncio.sleep(0.02)


def test_four_computer_seats_play_a_hand_to_the_end(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as (log, bots):
            players = [
                f"computer:{s}:{i}" for i, s in enumerate(["easy", "normal", "strong", "normal"])
            ]
            start = StartHand(
                table_id="bots-1",
                players=players,
                computer_seats=[0, 1, 2, 3],
                pace="instant",
                command_id="s1",
            )
            await log.produce(
                [Outgoing(TABLE_COMMANDS, "bots-1", encode(CommandEnvelope(command=start)))]
            )
            await ended(log, "bots-1", 1)
            # The table's next hand, as matchmaking deals it: the seats moved on by one.
            again = msgspec.structs.replace(
                start, players=players[1:] + players[:1], command_id="s2"
            )
            await log.produce(
                [Outgoing(TABLE_COMMANDS, "bots-1", encode(CommandEnvelope(command=again)))]
            )
            hands = await ended(log, "bots-1", 2)
            assert bots.decisions > 0
        for events in hands:
            assert audit_hand(events).ok
        assert [e.seats for e in (h[0] for h in hands) if isinstance(e, ev.HandStarted)][
            1
        ] == players[1:] + players[:1]

    asyncio.run(go())


def test_a_lobby_table_with_computer_seats_starts_finishes_and_stays_casual(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as (log, _):
            options = lb.TableOptions(computers="normal", pace="instant", clock="blitz")
            await send(log, lb.CreateTable(player="ann", request_id="c", options=options))
            opened = await answer(log, "c")
            assert isinstance(opened, lb.TableOpened)
            await send(log, lb.JoinTable(player="bob", request_id="j", table_id=opened.table_id))
            await answer(log, "j")
            await send(
                log, lb.FillWithComputers(player="ann", request_id="f", table_id=opened.table_id)
            )
            found = await answer(log, "f")
            assert isinstance(found, lb.TableFound) and not found.rated
            for p in ("ann", "bob"):  # their clients open the table: the hand is dealt
                arrival = lb.ArriveAtTable(player=p, request_id=f"a-{p}", table_id=found.table_id)
                await send(log, arrival)
            await answer_for(log, opened.table_id, {"ann", "bob"})
            await until(log, lambda es: any(isinstance(e, lb.HandFinished) for e in es))
            for p in ("ann", "bob"):  # a casual table stays for Play again until they leave
                leave = lb.LeaveTable(player=p, request_id=f"l-{p}", table_id=found.table_id)
                await send(log, leave)
            events = await until(log, lambda es: any(isinstance(e, lb.TableClosed) for e in es))
            hands = [v for k, v in (await hand_logs(log)).items() if k[0] == opened.table_id]
            results = await records(log, RATING_RESULTS)
        closed = next(e for e in events if isinstance(e, lb.TableClosed))
        assert closed.reason == "finished"
        (hand,) = hands
        assert_exactly_once({("t", "h"): hand})
        assert audit_hand(hand).ok
        first = hand[0]
        assert (
            isinstance(first, ev.HandStarted) and not first.rated and len(first.computer_seats) == 2
        )
        assert results == []  # casual: no rating moves

    asyncio.run(go())
