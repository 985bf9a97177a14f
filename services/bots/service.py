"""``BotService``: play the computer seats of every table whose ``table.events`` partition it
is assigned.

It follows the hand logs of tables that have computer seats, folds each into a hand state,
and when a computer seat has a decision pending it hands the bot that seat's ``SeatView``
(RULES.md §10, exactly what a human client gets) and sends the bot's ordinary command after
the table's pace. A bot's command id names its decision (``bot:<hand>:<decision>:<seat>``),
so a command sent again after a restart is answered as a duplicate, never applied twice.
While a practice hand is paused no computer decides; a command already on its way is refused
(``hand_paused``), so after ``hand_resumed`` every pending decision is planned again.
On assignment the state is rebuilt from the tails of the active hands, like the clock's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

import msgspec
from prometheus_client import Counter

from schemas import commands as cmd
from schemas import events as ev
from schemas.table import CommandEnvelope, decode_event, encode
from services.bots import make_bot
from services.bots.bot import Bot
from services.bots.botview import from_seat_view
from services.bots.pace import PACES, Pace
from services.rules import HandState, ReplayError, apply, pending_seats, seat_view
from services.runtime.log import EventLog, Outgoing, Processor, Record
from services.runtime.ops import RoundTrips
from services.runtime.topics import TABLE_COMMANDS
from services.table.tail import HandFollower

log = logging.getLogger("mahjong.bots")

DECISIONS = Counter("mahjong_bot_decisions", "Decisions made for computer seats", ["strength"])
SENT = Counter("mahjong_bot_commands_sent", "Bot commands sent to table.commands", ["paced"])


def strength_of(player: str) -> str:
    """``computer:<strength>:<n>`` → ``<strength>``."""
    return player.split(":")[1]


@dataclass(slots=True)
class TablePlay:
    """A table with computer seats, as the service follows it."""

    partition: int
    state: HandState
    bots: dict[int, Bot]
    pace: Pace
    asked: set[tuple[int, int]] = field(default_factory=set)  # (decision_seq, seat) answered
    pauses: int = 0  # hand_paused events seen: a command planned before one is not sent


class BotService(HandFollower[TablePlay]):
    """Computer players for every table with computer seats in its partitions."""

    def __init__(
        self,
        event_log: EventLog,
        *,
        group: str = "bots",
        pace: str | None = None,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(event_log, group)
        self.pace_override = None if pace is None else PACES[pace]
        self.rng = rng or random.Random()
        self.decisions = 0
        self._timers: set[asyncio.Task[None]] = set()
        self.round_trips = RoundTrips("bots")

    def counters(self) -> Mapping[str, int]:
        return {"decisions": self.decisions}

    async def handle(self, processor: Processor, batch: dict[int, list[Record]]) -> None:
        """Follow the hands, then decide for the computer seats of the tables touched."""
        touched: set[str] = set()
        for partition, records in batch.items():
            touched |= self._follow(partition, records)
        await self._play(touched)

    @contextlib.asynccontextmanager
    async def beside(self, stop: asyncio.Event) -> AsyncIterator[None]:
        """Commands sent after their pace, while the hands are followed."""
        try:
            yield
        finally:
            for timer in self._timers:
                timer.cancel()
            await asyncio.gather(*self._timers, return_exceptions=True)

    # --- following the hands -------------------------------------------------------------------

    def _fold(self, partition: int, record: Record) -> bool:
        """Fold one event; whether it belongs to a table with computer seats."""
        if record.key not in self.tables and b'"type":"hand_started"' not in record.value:
            return False
        event = decode_event(record.value)
        if event.command_id:
            self.round_trips.seen(event.command_id)
        if isinstance(event, ev.HandStarted):
            self.tables.pop(event.table_id, None)
            if not event.computer_seats:
                return False
            self.tables[event.table_id] = TablePlay(
                partition,
                HandState(),
                {s: make_bot(strength_of(event.seats[s])) for s in event.computer_seats},
                self.pace_override or PACES.get(event.pace, PACES["normal"]),
            )
        play = self.tables.get(event.table_id)
        if play is None:
            return False
        try:
            apply(play.state, event)
        except ReplayError:
            log.exception(
                "table %s: its log does not fold; leaving it",
                event.table_id,
                extra={"table_id": event.table_id, "hand_id": event.hand_id},
            )
            del self.tables[event.table_id]
            return False
        if isinstance(event, ev.HandEnded):
            del self.tables[event.table_id]
            return False
        if isinstance(event, ev.HandPaused):
            play.pauses += 1
        elif isinstance(event, ev.HandResumed):
            # What was planned or sent before the pause was dropped or refused: plan again.
            play.asked.clear()
        return True

    # --- deciding --------------------------------------------------------------------------------

    async def _play(self, table_ids: set[str]) -> None:
        now: list[Outgoing] = []
        for table_id in sorted(table_ids):
            play = self.tables.get(table_id)
            if play is None or play.state.paused:
                continue
            for seat in pending_seats(play.state):
                key = (play.state.decision_seq, seat)
                if seat not in play.bots or key in play.asked:
                    continue
                play.asked.add(key)
                view = from_seat_view(seat_view(play.state, seat))
                command = _addressed(play.bots[seat].decide(view), play.state)
                self.decisions += 1
                DECISIONS.labels(play.bots[seat].strength).inc()
                delay = play.pace.delay(view, self.rng)
                if delay <= 0:
                    now.append(_record(command))
                    self.round_trips.sent(command.command_id)
                else:
                    self._later(delay, table_id, key, command, play.pauses)
        if now:
            await self.log.produce(now)
            SENT.labels("no").inc(len(now))

    def _later(
        self,
        delay: float,
        table_id: str,
        key: tuple[int, int],
        command: cmd.HandCommand,
        pauses: int,
    ) -> None:
        async def send() -> None:
            await asyncio.sleep(delay)
            play = self.tables.get(table_id)
            if play is None or play.state.hand_id != command.hand_id:
                return
            if play.state.paused or play.pauses != pauses:
                return  # paused meanwhile: planned again on resume
            if play.state.decision_seq != key[0] or key[1] not in pending_seats(play.state):
                return  # the decision went away meanwhile (someone else's claim)
            await self.log.produce([_record(command)])
            SENT.labels("yes").inc()
            self.round_trips.sent(command.command_id)

        task = asyncio.create_task(send())
        self._timers.add(task)
        task.add_done_callback(self._timers.discard)

    # --- assignment --------------------------------------------------------------------------

    async def _assigned(self, partitions: set[int]) -> None:
        assert self.processor is not None
        for p in sorted(partitions):
            self.processor.seek(p, await self._fold_tail(p))
            # Decisions pending when the service stopped are answered now.
            await self._play({t for t, play in self.tables.items() if play.partition == p})


def _addressed(command: cmd.HandCommand, state: HandState) -> cmd.HandCommand:
    return msgspec.structs.replace(
        command,
        table_id=state.table_id,
        hand_id=state.hand_id,
        decision_seq=state.decision_seq,
        command_id=f"bot:{state.hand_id}:{state.decision_seq}:{command.seat}",
    )


def _record(command: cmd.HandCommand) -> Outgoing:
    envelope = CommandEnvelope(command=command)  # type: ignore[arg-type]  # a concrete command
    return Outgoing(TABLE_COMMANDS, command.table_id, encode(envelope))
