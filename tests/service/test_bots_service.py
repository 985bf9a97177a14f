"""Computer seats played by the bots service on the embedded log: a table of computers and a
matchmaking table with computer seats both play to the end, casual, and audit clean; a paused
practice hand stops the computers until it is resumed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import msgspec

from schemas import commands as cmd
from schemas import events as ev
from schemas import lobby as lb
from schemas.table import CommandEnvelope, StartHand, decode_event, encode
from services.audit import audit_hand
from services.bots.pace import PACES, Pace
from services.bots.service import BotService
from services.clock.service import ClockService
from services.matchmaking.service import MatchmakingService
from services.rules.hand import apply, replay
from services.rules.state import HandState, pending_seats
from services.rules.timeouts import default_command
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import EventLog, Outgoing, partition_for
from services.runtime.topics import RATING_RESULTS, TABLE_COMMANDS, TABLE_EVENTS, TOPICS
from services.table.service import TableService
from tests.service.lobby_client import answer, send, until
from tests.service.logs import assert_exactly_once, hand_logs, records, replies, started


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


# --- a paused practice hand ---------------------------------------------------------------------

PRACTICE = ["ann", "computer:normal:1", "computer:easy:2", "computer:strong:3"]


def command(c: cmd.HandCommand) -> Outgoing:
    return Outgoing(TABLE_COMMANDS, c.table_id, encode(CommandEnvelope(command=c)))


async def hand_of(log: EventLog, table_id: str) -> list[ev.Event]:
    return [e for k, h in (await hand_logs(log)).items() if k[0] == table_id for e in h]


async def hand_until(
    log: EventLog, table_id: str, done: Callable[[list[ev.Event]], bool], limit_s: float = 20
) -> list[ev.Event]:
    for _ in range(int(limit_s * 20)):
        events = await hand_of(log, table_id)
        if done(events):
            return events
        await asyncio.sleep(0.05)
    raise AssertionError(f"{table_id}: not reached in {limit_s} s")


def chose(events: list[ev.Event]) -> set[int]:
    return {e.seat for e in events if isinstance(e, ev.ExchangeChosen)}


def test_computers_do_not_decide_while_a_practice_hand_is_paused(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as (log, bots):
            # Slow enough that the pause is in before any computer answers the exchange.
            bots.pace_override = Pace("test", 0.5, 0.6)
            start = StartHand(table_id="p-1", players=PRACTICE, computer_seats=[1, 2, 3])
            await log.produce([command(start)])  # type: ignore[arg-type]
            await hand_until(log, "p-1", lambda es: len(es) >= 6)
            await log.produce([command(cmd.Pause(seat=0, table_id="p-1", command_id="pause"))])
            paused = await hand_until(
                log, "p-1", lambda es: any(isinstance(e, ev.HandPaused) for e in es)
            )
            assert chose(paused) == set(), "a computer answered before the pause"
            await asyncio.sleep(2.5)  # every computer's planned answer came due meanwhile
            assert await hand_of(log, "p-1") == paused
            assert bots.decisions == 3
            await log.produce([command(cmd.Resume(seat=0, table_id="p-1", command_id="resume"))])
            resumed = await hand_until(log, "p-1", lambda es: chose(es) == {1, 2, 3})
            assert bots.decisions == 6  # each pending decision planned again after the resume
            # The human answers the decision pending since before the pause, by its old seq.
            state = replay(resumed)
            assert not state.paused and state.decision_seq == 6
            mine = msgspec.structs.replace(
                default_command(state, 0), table_id="p-1", decision_seq=6, command_id="ann-x"
            )
            bots.pace_override = PACES["instant"]
            await log.produce([command(mine)])
            await answer_for(log, "p-1", {"ann"})
            (hand,) = [h for k, h in (await hand_logs(log)).items() if k[0] == "p-1"]
        assert isinstance(hand[-1], ev.HandEnded)
        assert [type(e) for e in hand].count(ev.HandPaused) == 1
        assert audit_hand(hand).ok

    asyncio.run(go())


def test_a_computer_refused_while_paused_answers_after_the_resume(tmp_path: Path) -> None:
    """The bots service (re)started while the hand is paused plans nothing; a computer command
    that arrived during the pause was refused, and the same command after the resume counts."""

    async def go() -> None:
        async with started(EmbeddedLog(tmp_path)) as log:
            table = TableService(log)
            stop = asyncio.Event()
            tasks = [asyncio.create_task(table.run(stop))]
            await asyncio.wait_for(table.ready.wait(), 10)
            start = StartHand(table_id="p-2", players=PRACTICE, computer_seats=[1, 2, 3])
            await log.produce([command(start)])  # type: ignore[arg-type]
            await hand_until(log, "p-2", lambda es: len(es) >= 6)
            await log.produce([command(cmd.Pause(seat=0, table_id="p-2", command_id="pause"))])
            paused = await hand_until(log, "p-2", lambda es: len(es) == 7)
            state = replay(paused)
            # What the bots service sends for seat 1 (its command id names the decision).
            early = msgspec.structs.replace(
                default_command(state, 1),
                table_id="p-2",
                hand_id=state.hand_id,
                decision_seq=state.decision_seq,
                command_id=f"bot:{state.hand_id}:{state.decision_seq}:1",
            )
            await log.produce([command(early)])
            for _ in range(100):
                refused = [r.rejected for r in await replies(log)]
                if refused:
                    break
                await asyncio.sleep(0.05)
            assert [(r.command_id, r.code) for r in refused] == [(early.command_id, "hand_paused")]
            bots = BotService(log, pace="instant")
            tasks.append(asyncio.create_task(bots.run(stop)))
            await asyncio.wait_for(bots.ready.wait(), 10)
            await asyncio.sleep(1)
            assert bots.decisions == 0 and await hand_of(log, "p-2") == paused
            await log.produce([command(cmd.Resume(seat=0, table_id="p-2", command_id="resume"))])
            resumed = await hand_until(log, "p-2", lambda es: chose(es) == {1, 2, 3})
            stop.set()
            await asyncio.gather(*tasks)
        again = next(e for e in resumed if isinstance(e, ev.ExchangeChosen) and e.seat == 1)
        assert again.command_id == early.command_id and again.seq > paused[-1].seq

    asyncio.run(go())
