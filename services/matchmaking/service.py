"""``MatchmakingService``: consume ``match.requests``, decide with the pure lobby, append
``lobby.events`` (and a filled table's ``start_hand`` to ``table.commands``) exactly once.

``match.requests`` has one partition, so one member holds the whole lobby and a player can
never be seated twice: every request is decided against everything decided before it. Each
poll's requests and the Quick Play matches that follow are one log transaction with the
group's position. Recovery reads the latest snapshot (compacted ``lobby.snapshots``, written
in the same transactions) and the lobby events after it; never the whole history.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import msgspec
from prometheus_client import Counter, Histogram

from schemas import lobby as lb
from schemas.table import CommandEnvelope, StartHand, encode
from services.matchmaking.lobby import Chance, Lobby, apply, decide, due, waiting_on_time
from services.runtime.log import EventLog, Outgoing, Processor, Record, Transaction, read_through
from services.runtime.service import GroupMember, Health, known, transact
from services.runtime.topics import (
    LOBBY_EVENTS,
    LOBBY_SNAPSHOTS,
    MATCH_REPLIES,
    MATCH_REQUESTS,
    TABLE_COMMANDS,
)

log = logging.getLogger("mahjong.matchmaking")

REQUESTS = Counter("mahjong_matchmaking_requests", "Requests read from match.requests")
REFUSED = Counter(
    "mahjong_matchmaking_refused", "Requests refused on match.replies, by code", ["code"]
)
TABLES_STARTED = Counter(
    "mahjong_matchmaking_tables_started", "Tables filled and started (start_hand sent)"
)
QUICKPLAY_WAIT = Histogram(
    "mahjong_quickplay_wait_seconds",
    "How long a Quick Play player waited in the queue until seated",
    buckets=(0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0),
)

SNAPSHOT_EVERY = 500  # lobby events between snapshots
MATCH_EVERY_S = 0.5  # how often the Quick Play queue is looked at when nothing arrives


class Snapshot(msgspec.Struct, frozen=True, kw_only=True):
    """The lobby as of ``next_offset`` in ``lobby.events`` (key ``lobby``)."""

    lobby: Lobby
    next_offset: int
    v: int = 1


class MatchmakingService(GroupMember):
    """The single writer of the lobby."""

    max_records = 500
    poll_s = MATCH_EVERY_S

    def __init__(
        self,
        event_log: EventLog,
        *,
        group: str = "matchmaking",
        now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        chance: Chance | None = None,
    ) -> None:
        super().__init__(event_log, group, MATCH_REQUESTS)
        self.now_ms = now_ms
        self.chance = chance or Chance()
        self.lobby = Lobby()
        self.position = 0  # next offset of match.requests to decide
        self.since_snapshot = 0
        self.requests_handled = 0
        self.refused = 0
        self.tables_started = 0
        self.owned = False

    def probe(self) -> Health:
        return self.health(
            partitions=frozenset({0}) if self.owned else frozenset(),
            active=sum(1 for t in self.lobby.tables.values() if t.started),
            positions=known({0: self.position} if self.owned else {}),
            counters={
                "requests": self.requests_handled,
                "refused": self.refused,
                "tables_started": self.tables_started,
            },
        )

    async def handle(self, processor: Processor, batch: dict[int, list[Record]]) -> None:
        """Decide the requests and match the queue, while this member holds the lobby."""
        records = batch.get(0, [])
        if self.owned and (records or waiting_on_time(self.lobby)):
            await self._commit(processor, records)

    async def _commit(self, processor: Processor, records: list[Record]) -> None:
        if not records and not due(self.lobby, self.now_ms(), Chance()):
            return  # nothing arrived and nothing is due: no transaction
        next_offset = records[-1].offset + 1 if records else self.position
        before = self.lobby
        # Decide against a scratch copy: a failed transaction leaves the lobby as the log has it.
        self.lobby = msgspec.convert(msgspec.to_builtins(before), Lobby)

        async def decide(txn: Transaction) -> None:
            lobby_records: list[Outgoing] = []
            for record in records:
                self._decide(txn, record, lobby_records)
            self._emit(txn, due(self.lobby, self.now_ms(), self.chance), lobby_records)
            await self._append_lobby(txn, lobby_records)

        def undo() -> None:
            self.lobby = before

        # On failure the processor gives the lobby's partition back (``_revoked``) and, once
        # it is settled and this member's again, rebuilds it (``_assigned``).
        if await transact(
            processor,
            0,
            next_offset,
            decide,
            holds=lambda: self.owned,
            log=log,
            failed=undo,
            giving_back="transaction failed; giving the lobby back to rebuild it from the log",
        ):
            self.position = next_offset

    def _decide(self, txn: Transaction, record: Record, out: list[Outgoing]) -> None:
        self.requests_handled += 1
        REQUESTS.inc()
        try:
            request = lb.decode_request(record.value)
        except msgspec.DecodeError as exc:
            self._refuse(
                txn,
                record.key,
                lb.RequestRefused(request_id="", player="", code="malformed", reason=str(exc)),
            )
            return
        result = decide(self.lobby, request, self.now_ms(), self.chance)
        if isinstance(result, lb.RequestRefused):
            self._refuse(txn, request.player, result)
            return
        self._emit(txn, result, out)

    def _refuse(self, txn: Transaction, key: str, refusal: lb.RequestRefused) -> None:
        self.refused += 1
        REFUSED.labels(refusal.code).inc()
        txn.send_soon(Outgoing(MATCH_REPLIES, key, msgspec.json.encode(refusal), 0))

    def _emit(
        self, txn: Transaction, output: list[lb.Event | StartHand], out: list[Outgoing]
    ) -> None:
        for item in output:
            if isinstance(item, StartHand):
                self.tables_started += 1
                TABLES_STARTED.inc()
                txn.send_soon(
                    Outgoing(TABLE_COMMANDS, item.table_id, encode(CommandEnvelope(command=item)))
                )
                continue
            if isinstance(item, lb.QueueLeft) and item.matched_table:
                waiting = self.lobby.queue.get(item.player)
                if waiting is not None:
                    QUICKPLAY_WAIT.observe(max(0, item.at_ms - waiting.since_ms) / 1000)
            apply(self.lobby, item)
            body = msgspec.json.encode(lb.LobbyEnvelope(event=item))
            out.append(Outgoing(LOBBY_EVENTS, _key(item), body, 0))

    async def _append_lobby(self, txn: Transaction, records: list[Outgoing]) -> None:
        """Append the lobby events in order; every so often, a snapshot of the lobby after
        them, naming the offset it covers."""
        if not records:
            return
        for r in records[:-1]:
            txn.send_soon(r)
        last = await txn.send(records[-1])
        self.since_snapshot += len(records)
        if self.since_snapshot >= SNAPSHOT_EVERY:
            self.since_snapshot = 0
            snap = Snapshot(lobby=self.lobby, next_offset=last + 1)
            txn.send_soon(Outgoing(LOBBY_SNAPSHOTS, "lobby", msgspec.json.encode(snap), 0))

    # --- recovery ----------------------------------------------------------------------------

    async def _assigned(self, partitions: set[int]) -> None:
        if 0 in partitions:
            await self._recover()
            self.owned = True

    async def _revoked(self, partitions: set[int]) -> None:
        if 0 in partitions:
            self.owned = False
            self.lobby = Lobby()

    async def _recover(self) -> None:
        """The lobby from the log: the newest snapshot, then the events after it."""
        lobby, start = Lobby(), 0
        async for record in read_through(self.log, LOBBY_SNAPSHOTS, 0, 0):
            snap = msgspec.json.decode(record.value, type=Snapshot)
            lobby, start = snap.lobby, snap.next_offset
        count = 0
        async for record in read_through(self.log, LOBBY_EVENTS, 0, start):
            try:
                event = lb.decode_lobby_event(record.value)
            except msgspec.DecodeError as exc:
                # Not written by matchmaking (it writes only what it decided): skip it, or
                # every recovery would stop here. The projector dead-letters it too.
                log.error("lobby event at %d unreadable, skipped: %s", record.offset, exc)
                continue
            apply(lobby, event)
            count += 1
        self.lobby = lobby
        self.since_snapshot = count
        committed = await self.log.group_positions(self.group, MATCH_REQUESTS)
        self.position = committed.get(0, 0)
        log.info(
            "lobby recovered: %d tables, %d waiting, %d events after the snapshot",
            len(lobby.tables),
            len(lobby.queue),
            count,
        )


def _key(event: lb.Event) -> str:
    key = getattr(event, "table_id", None) or getattr(event, "player", "")
    return str(key)
