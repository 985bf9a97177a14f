"""``TableService``: consume ``table.commands``, decide with the rules engine, append events.

Exactly once: each poll's commands of one partition are handled in one log transaction that
also moves the group's position past them. A crash before the commit loses both the events
and the position, so the commands are read again and decided again against the state the
log holds; after the commit, neither is repeated. In memory, a table is its current hand's
state plus the command ids that hand accepted (duplicates are answered, not applied).

Recovery reads only the tail: ``table.heads`` (compacted) says where each active hand
starts in ``table.events``; the service replays from the earliest of those.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from prometheus_client import Counter, Histogram

from schemas import commands as cmd
from schemas import events as ev
from schemas.codes import TableCode
from schemas.lobby import PlayerWon, RequestEnvelope, TableFinished
from schemas.rating import RatedHandResult, encode_result
from schemas.table import (
    CommandRejected,
    DeadLetter,
    EventEnvelope,
    ReplyEnvelope,
    StartHand,
    TableCommand,
    TableHead,
    decode_command,
    decode_event,
    encode,
)
from services.rules import (
    HandState,
    ReplayError,
    check_time,
    clocks_started,
    handle,
    replay,
    shuffle,
    start_hand,
    table_problem,
    tick,
)
from services.runtime.log import (
    EventLog,
    Outgoing,
    Processor,
    Record,
    Transaction,
    read_through,
)
from services.runtime.ops import LATENCY_BUCKETS
from services.runtime.service import GroupMember, Health, transact
from services.runtime.topics import (
    MATCH_REQUESTS,
    RATING_RESULTS,
    TABLE_COMMANDS,
    TABLE_DLQ,
    TABLE_EVENTS,
    TABLE_HEADS,
    TABLE_REPLIES,
)

log = logging.getLogger("mahjong.table")

COMMANDS = Counter("mahjong_table_commands", "Commands read from table.commands, by type", ["type"])
REJECTIONS = Counter(
    "mahjong_table_rejections", "Commands refused on table.replies, by reason code", ["code"]
)
DEAD_LETTERS = Counter("mahjong_table_dead_letters", "Unreadable commands sent to the DLQ")
EVENTS = Counter("mahjong_table_events", "Events appended to table.events")
HANDS = Counter("mahjong_table_hands", "Hands dealt (started) and finished (ended)", ["stage"])
TRANSACTIONS = Counter("mahjong_table_transactions", "Log transactions, by outcome", ["outcome"])
COMMAND_LATENCY = Histogram(
    "mahjong_table_command_latency_seconds",
    "From reading a command to the commit of the transaction holding its events",
    buckets=LATENCY_BUCKETS,
)


@dataclass(slots=True)
class Table:
    """One table as the service holds it: its current hand and what that hand accepted."""

    table_id: str
    partition: int
    hands_started: int = 0
    state: HandState | None = None
    seen: set[str] = field(default_factory=set)
    start_command_id: str = ""
    start_offset: int = 0  # where the current hand's log starts in table.events
    broken: bool = False  # its log did not replay: refuse commands until an operator looks
    session: StartHand | None = None  # the command that dealt the current hand

    @property
    def in_hand(self) -> bool:
        return self.state is not None and self.state.phase != "ended"


class TableService(GroupMember):
    """The single writer of every table whose ``table.commands`` partition it is assigned."""

    poll_s = 0.1

    def __init__(
        self,
        event_log: EventLog,
        *,
        group: str = "table-service",
        seed_source: Callable[[int], bytes] = secrets.token_bytes,
        max_batch: int = 500,
        now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
    ) -> None:
        super().__init__(event_log, group, TABLE_COMMANDS)
        self.seed_source = seed_source
        self.max_records = max_batch
        self.now_ms = now_ms
        self.tables: dict[str, Table] = {}
        self.commands_handled = 0
        self.rejections = 0

    def probe(self) -> Health:
        held = self.held()

        async def committed() -> dict[int, int]:
            if not held:
                return {}
            positions = await self.log.group_positions(self.group, TABLE_COMMANDS)
            return {p: positions.get(p, 0) for p in held}

        return self.health(
            partitions=held,
            active=sum(1 for t in self.tables.values() if t.in_hand),
            positions=committed,
            counters={"commands": self.commands_handled, "rejections": self.rejections},
        )

    # --- the loop ---------------------------------------------------------------------------

    async def handle(self, processor: Processor, batch: dict[int, list[Record]]) -> None:
        """Commit each partition's commands in its own transaction (on the embedded log, a
        savepoint each inside the poll's one commit: docs/exactly-once.md)."""
        work = [self._process(processor, p, records) for p, records in batch.items()]
        if processor.concurrent_partitions:
            # Partitions hold disjoint tables: their transactions overlap safely.
            await asyncio.gather(*work)
        else:
            # One connection (the embedded log): the partitions' transactions one after the
            # other, committed together where the log can (one fsync a poll, not one each).
            one_commit = getattr(processor, "one_commit", None)
            async with contextlib.nullcontext() if one_commit is None else one_commit():
                for job in work:
                    await job

    async def _process(self, processor: Processor, partition: int, records: list[Record]) -> bool:
        """Decide and commit one batch; False when it did not commit (revoked, or failed and
        rewound: the commands will be read again)."""
        if partition not in processor.assignment():
            return False  # revoked since the poll: the new owner reads these commands
        began = time.perf_counter()

        async def decide(txn: Transaction) -> None:
            for record in records:
                await self._handle_record(txn, partition, record)

        # On failure the processor drops the partition (``_revoked``) and hands it back
        # through ``_assigned`` once it is settled, rebuilt from the log; the commands are
        # then read again. (A fenced member never gets it back: it rejoins the group.)
        if not await transact(
            processor,
            partition,
            records[-1].offset + 1,
            decide,
            holds=lambda: partition in processor.assignment(),
            log=log,
            failed=_FAILED.inc,
            lost=lambda: log.info("partition %d was revoked during its transaction", partition),
            giving_back=f"transaction failed; giving partition {partition} back",
        ):
            return False
        _COMMITTED.inc()
        elapsed = time.perf_counter() - began
        for _ in records:
            COMMAND_LATENCY.observe(elapsed)
        return True

    # --- one command ------------------------------------------------------------------------

    async def _handle_record(self, txn: Transaction, partition: int, record: Record) -> None:
        try:
            command = decode_command(record.value)
        except msgspec.DecodeError as exc:
            self._dead_letter(txn, record, str(exc))
            return
        if command.table_id != record.key:
            self._dead_letter(txn, record, f"key {record.key!r} is not table {command.table_id!r}")
            return
        table = self.tables.get(command.table_id)
        if table is None:
            table = self.tables[command.table_id] = Table(command.table_id, partition)
        self.commands_handled += 1
        _command_counter(command).inc()
        if table.broken:
            self._reject(txn, table, command, "table_unavailable", "this table is under repair")
            return
        if isinstance(command, StartHand):
            await self._start_hand(txn, table, command)
        else:
            await self._play(txn, table, command)

    async def _play(self, txn: Transaction, table: Table, command: cmd.HandCommand) -> None:
        if table.state is None:
            self._reject(txn, table, command, "no_hand", "no hand has been dealt at this table")
            return
        if command.command_id and command.command_id in table.seen:
            self._reject(txn, table, command, "duplicate", "this command was already applied")
            return
        # An answer that arrives before its clock started (stamped by an instance whose clock
        # runs a little ahead) is stamped at the clock's start: it used no time, and the log
        # stays consistent.
        now = max(self.now_ms(), clocks_started(table.state))
        late = check_time(table.state, command, now)
        if late is not None:
            self._reject(txn, table, command, late.code, late.reason, late.params)
            return
        result = handle(table.state, command)
        if isinstance(result, cmd.Rejection):
            self._reject(txn, table, command, result.code, result.reason, result.params)
            return
        if command.command_id:
            table.seen.add(command.command_id)
        timed_out = command.seat if isinstance(command, cmd.Timeout) else None
        result += tick(table.state, now, timed_out, command.command_id)
        self._append(txn, table, result)
        lobby = table.session is not None and table.session.lobby
        if lobby:
            for won in (e for e in result if isinstance(e, ev.Won)):
                self._tell_lobby(
                    txn,
                    table,
                    PlayerWon,
                    f"won:{table.state.hand_id}:{won.seat}",
                    winner=table.state.players[won.seat],
                )
        if table.state.phase == "ended":
            HANDS.labels("ended").inc()
            self._head(txn, table, ended=True)
            if table.state.rated:
                self._rated_result(txn, table.state)
            if lobby:
                # Every game is one hand: matchmaking closes the table or waits for Play again.
                self._tell_lobby(
                    txn,
                    table,
                    TableFinished,
                    f"finished:{table.state.hand_id}",
                    players=list(table.state.players),
                    points=list(table.state.scores),
                )

    def _tell_lobby(
        self,
        txn: Transaction,
        table: Table,
        kind: type[TableFinished] | type[PlayerWon],
        request_id: str,
        **fields: Any,
    ) -> None:
        """Send matchmaking a request of the table service about the table's current hand."""
        assert table.state is not None
        request = kind(
            player="table-service",
            request_id=request_id,
            table_id=table.table_id,
            hand_id=table.state.hand_id,
            **fields,
        )
        body = encode(RequestEnvelope(request=request))
        txn.send_soon(Outgoing(MATCH_REQUESTS, table.table_id, body, 0))

    async def _start_hand(self, txn: Transaction, table: Table, command: StartHand) -> None:
        if command.command_id and command.command_id in (table.start_command_id, *table.seen):
            self._reject(txn, table, command, "duplicate", "this hand was already started")
            return
        if table.in_hand:
            self._reject(txn, table, command, "hand_in_progress", "the current hand is not over")
            return
        problem = _start_problem(command)
        if problem is not None:
            self._reject(txn, table, command, *problem)
            return
        table.session = command
        await self._deal(txn, table, command)

    async def _deal(self, txn: Transaction, table: Table, command: StartHand) -> None:
        seed = self.seed_source(32)
        number = table.hands_started + 1
        state, events = start_hand(
            table.table_id,
            f"{table.table_id}#{number}",
            shuffle(seed),
            players=list(command.players),
            seed=seed,
            preset=command.preset,
            command_id=command.command_id,
            clock=command.clock,
            rated=command.rated,
            computer_seats=list(command.computer_seats),
            pace=command.pace,
        )
        events += tick(state, self.now_ms(), command_id=command.command_id)
        EVENTS.inc(len(events))
        HANDS.labels("started").inc()
        first = await txn.send(self._event_record(table, events[0]))
        for e in events[1:]:
            txn.send_soon(self._event_record(table, e))
        table.state, table.hands_started = state, number
        table.seen = {command.command_id} if command.command_id else set()
        table.start_command_id = command.command_id
        self._head(txn, table, start_offset=first)

    # --- output -----------------------------------------------------------------------------

    def _event_record(self, table: Table, event: ev.Event) -> Outgoing:
        return Outgoing(
            TABLE_EVENTS, table.table_id, encode(EventEnvelope(event=event)), table.partition
        )

    def _append(self, txn: Transaction, table: Table, events: list[ev.Event]) -> None:
        EVENTS.inc(len(events))
        for e in events:
            txn.send_soon(self._event_record(table, e))

    def _head(
        self, txn: Transaction, table: Table, *, start_offset: int = -1, ended: bool = False
    ) -> None:
        assert table.state is not None
        if start_offset >= 0:
            table.start_offset = start_offset
        head = TableHead(
            table_id=table.table_id,
            hand_id=table.state.hand_id,
            hands_started=table.hands_started,
            events_partition=table.partition,
            start_offset=table.start_offset,
            start_command_id=table.start_command_id,
            ended=ended,
            session=table.session,
        )
        txn.send_soon(Outgoing(TABLE_HEADS, table.table_id, encode(head), table.partition))

    def _rated_result(self, txn: Transaction, state: HandState) -> None:
        """A rated hand's result goes to ``rating.results`` in the same transaction as its
        end: one partition, so ratings apply results in one fixed order (RULES.md §9)."""
        result = RatedHandResult(
            table_id=state.table_id,
            hand_id=state.hand_id,
            players=list(state.players),
            points=list(state.scores),
            rated=state.rated,
            clock=None if state.clock is None else state.clock.preset,
            computer_seats=list(state.computer_seats),
            preset=state.preset,
            ended_at_ms=self.now_ms(),
        )
        txn.send_soon(Outgoing(RATING_RESULTS, state.table_id, encode_result(result), 0))

    def _reject(
        self,
        txn: Transaction,
        table: Table,
        command: TableCommand | cmd.HandCommand,
        code: TableCode,
        reason: str,
        params: dict[str, str | int] | None = None,
    ) -> None:
        self.rejections += 1
        REJECTIONS.labels(code).inc()
        reply = CommandRejected(
            table_id=table.table_id,
            command_id=command.command_id,
            seat=getattr(command, "seat", None),
            code=code,
            reason=reason,
            params=params or {},
        )
        txn.send_soon(
            Outgoing(
                TABLE_REPLIES,
                table.table_id,
                encode(ReplyEnvelope(rejected=reply)),
                table.partition,
            )
        )

    def _dead_letter(self, txn: Transaction, record: Record, reason: str) -> None:
        DEAD_LETTERS.inc()
        log.warning(
            "dead letter at %s/%d@%d: %s",
            record.topic,
            record.partition,
            record.offset,
            reason,
            extra={"table_id": record.key, "partition": record.partition, "offset": record.offset},
        )
        letter = DeadLetter(
            source_topic=record.topic,
            source_partition=record.partition,
            source_offset=record.offset,
            reason=reason,
            raw=record.value.decode("utf-8", "replace")[:10_000],
        )
        txn.send_soon(Outgoing(TABLE_DLQ, record.key, encode(letter), 0))

    # --- assignment and recovery ------------------------------------------------------------

    async def _assigned(self, partitions: set[int]) -> None:
        for p in sorted(partitions):
            await self._recover(p)

    async def _revoked(self, partitions: set[int]) -> None:
        for table_id in [t for t, x in self.tables.items() if x.partition in partitions]:
            del self.tables[table_id]

    def _install(self, partition: int, tables: dict[str, Table]) -> None:
        for table_id in [t for t, x in self.tables.items() if x.partition == partition]:
            del self.tables[table_id]
        self.tables.update(tables)

    async def _recover(self, partition: int) -> None:
        """Rebuild the partition's tables: heads first, then the tail of active hands."""
        await self._revoked({partition})
        # Built aside and installed at the end, with no await in between: whatever happens
        # to the partition while the log is read, ``self.tables`` never holds half of it.
        tables: dict[str, Table] = {}
        heads: dict[str, TableHead] = {}
        async for record in read_through(self.log, TABLE_HEADS, partition, 0):
            head = msgspec.json.decode(record.value, type=TableHead)
            heads[head.table_id] = head
        active = {h.table_id: h for h in heads.values() if not h.ended}
        for head in heads.values():
            tables[head.table_id] = Table(
                head.table_id,
                partition,
                hands_started=head.hands_started,
                start_command_id=head.start_command_id,
                start_offset=head.start_offset,
                session=head.session,
            )
        if not active:
            self._install(partition, tables)
            return
        logs: dict[str, list[ev.Event]] = {t: [] for t in active}
        start = min(h.start_offset for h in active.values())
        async for record in read_through(self.log, TABLE_EVENTS, partition, start):
            current = active.get(record.key)
            if current is None or record.offset < current.start_offset:
                continue
            event = decode_event(record.value)
            if event.hand_id == current.hand_id:
                logs[record.key].append(event)
        for table_id, events in logs.items():
            table = tables[table_id]
            try:
                table.state = replay(events)
            except ReplayError:
                # A log this service cannot fold is left alone for an operator, not guessed.
                log.exception(
                    "table %s: its hand log does not replay; not serving it",
                    table_id,
                    extra={"table_id": table_id, "hand_id": active[table_id].hand_id},
                )
                table.broken = True
                continue
            table.seen = {e.command_id for e in events if e.command_id}
        self._install(partition, tables)
        log.info(
            "recovered partition %d: %d tables, %d in a hand, from offset %d",
            partition,
            len(heads),
            len(active),
            start,
        )


_KINDS: dict[type, str] = {}
_COMMITTED = TRANSACTIONS.labels("committed")
_FAILED = TRANSACTIONS.labels("failed")
_COMMAND_COUNTERS: dict[type, Any] = {}
"""``COMMANDS``'s child per command type, looked up once (``labels`` costs a lock and a
dictionary of tuples on every call, a few percent of the service's CPU)."""


def _command_counter(command: object) -> Any:
    counter = _COMMAND_COUNTERS.get(type(command))
    if counter is None:
        counter = _COMMAND_COUNTERS[type(command)] = COMMANDS.labels(_kind(command))
    return counter


def _kind(command: object) -> str:
    """A command's ``type`` tag (``start_hand``, ``discard``, ...), for the metrics."""
    kind = type(command)
    tag = _KINDS.get(kind)
    if tag is None:
        config = getattr(kind, "__struct_config__", None)
        tag = _KINDS[kind] = str(getattr(config, "tag", None) or kind.__name__)
    return tag


def _start_problem(command: StartHand) -> tuple[TableCode, str] | None:
    """Why a hand cannot start as asked (RULES.md §8, §9), or None."""
    return table_problem(
        players=command.players,
        clock=command.clock,
        computer_seats=command.computer_seats,
        rated=command.rated,
        pace=command.pace,
    )
