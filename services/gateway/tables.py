"""``TableWatcher``: the hands the gateway's clients look at, folded from ``table.events``.

The gateway follows ``table.events`` and ``table.replies`` (every partition: any client may
connect to any gateway). It keeps in memory only the tables someone watches: their current
hand's events and ``HandState``. A table is loaded when its first client arrives: where its
current hand starts comes from the follower (which notes every ``hand_started`` it passes)
or else from ``table.heads``, and the tail from there is folded with
``services.rules.apply``, as the table and clock services do on recovery. Loading
reads the log without holding the follower's lock, so a table being loaded never holds up
the broadcasts of the others; before the table joins the watched ones it folds whatever the
follower passed meanwhile. From then on the follower's records are folded too, each offset
once (records older than the load's end are skipped). Seat views come only from
``services.rules.seat_view`` (RULES.md §10).

Every ``hand_ended`` (of any table, watched or not) also goes to ``on_hand_ended`` when one
is given (players' hand history is the history projection's, ``services/history``). Who
played a hand is learnt from its ``hand_started``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from schemas import events as ev
from schemas.table import CommandRejected, ReplyEnvelope, TableHead, decode_event
from schemas.views import SeatView
from services.rules import HandState, ReplayError, apply, seat_view
from services.runtime.log import EventLog, Record, partition_for, read_through
from services.runtime.topics import TABLE_EVENTS, TABLE_HEADS, TABLE_REPLIES

log = logging.getLogger("mahjong.gateway.tables")

IDLE_DROP_S = 600.0  # an unwatched table stays in memory this long
HAND_INDEX = 100_000  # hand starts remembered (for exports and histories)


class Listener(Protocol):
    """A client watching a table: told when it changed and when its command was refused."""

    def table_changed(self) -> None: ...

    def command_rejected(self, rejection: CommandRejected) -> None: ...


@dataclass(slots=True)
class Watched:
    """One table in memory: its current hand, and who watches it."""

    table_id: str
    partition: int
    state: HandState | None = None
    events: list[ev.Event] = field(default_factory=list)
    position: int = 0  # the next table.events offset of this partition to fold
    listeners: set[Listener] = field(default_factory=set)
    idle_since: float = 0.0
    broken: bool = False
    last_hand: tuple[HandState, list[ev.Event]] | None = None  # the hand before this one
    # While a load catches up with the follower: what the follower passed meanwhile, in order.
    pending: list[tuple[int, ev.Event]] | None = None
    # The seat views of the hand's latest change, shared by the sockets that watch it.
    views: dict[tuple[str, int, int | None], SeatView] = field(default_factory=dict)

    @property
    def hand_id(self) -> str | None:
        return None if self.state is None else self.state.hand_id

    def view(self, state: HandState, seat: int | None) -> SeatView:
        """``seat_view(state, seat)``, computed once per change of the hand for every socket
        of that seat (a second tab, the spectators' public view); a state is known by its
        hand and seq, as it changes only by appending events."""
        key = (state.hand_id, state.seq, seat)
        found = self.views.get(key)
        if found is None:
            if len(self.views) >= 16:  # the views of older changes are not asked for again
                self.views.clear()
            found = self.views[key] = seat_view(state, seat)
        return found


@dataclass(frozen=True, slots=True)
class HandStart:
    """Where a hand's log starts and who plays it."""

    table_id: str
    partition: int
    offset: int
    players: tuple[str, ...]


HandEnded = Callable[[HandStart, ev.HandEnded], Awaitable[None]]


class TableWatcher:
    """The watched tables of one gateway (see the module note)."""

    def __init__(self, event_log: EventLog, on_hand_ended: HandEnded | None = None) -> None:
        self.log = event_log
        self.on_hand_ended = on_hand_ended
        self.tables: dict[str, Watched] = {}
        self.hand_starts: OrderedDict[str, HandStart] = OrderedDict()
        self.partitions = 0
        self.lock = asyncio.Lock()
        self.folded = 0
        self.followed: dict[int, int] = {}  # partition -> the next offset the follower folds
        self.starts: OrderedDict[str, int] = OrderedDict()  # table -> its latest hand's offset

    async def start(self) -> None:
        self.partitions = await self.log.partition_count(TABLE_EVENTS)

    def partition_of(self, table_id: str) -> int:
        return partition_for(table_id, self.partitions)

    # --- watching -----------------------------------------------------------------------------

    async def watch(self, table_id: str, listener: Listener) -> Watched:
        """The table, loaded if needed, with ``listener`` told of every change."""
        w = self.tables.get(table_id)
        if w is None or w.broken:
            w = await self._install(table_id, keep_empty=True)
        w.listeners.add(listener)
        return w

    def unwatch(self, table_id: str, listener: Listener) -> None:
        w = self.tables.get(table_id)
        if w is not None:
            w.listeners.discard(listener)
            if not w.listeners:
                w.idle_since = time.monotonic()

    def listeners_of(self, table_id: str) -> list[Listener]:
        """Who watches the table now (on this gateway)."""
        w = self.tables.get(table_id)
        return [] if w is None else list(w.listeners)

    async def peek(self, table_id: str) -> Watched:
        """The table's current hand without watching it (loaded for the call if needed)."""
        w = self.tables.get(table_id)
        if w is None:
            # A table without a hand is not worth keeping (an unknown id, say).
            w = await self._install(table_id, keep_empty=False)
        return w

    def drop_idle(self, now: float | None = None) -> int:
        """Forget tables nobody has watched for ``IDLE_DROP_S``."""
        now = time.monotonic() if now is None else now
        idle = [
            t
            for t, w in self.tables.items()
            if not w.listeners and now - w.idle_since > IDLE_DROP_S
        ]
        for t in idle:
            del self.tables[t]
        return len(idle)

    async def _install(self, table_id: str, keep_empty: bool) -> Watched:
        """Load the table and make it a watched one, caught up with the follower; a table
        someone else installed meanwhile wins (a broken one is replaced, its listeners kept).

        When the follower passed the load's end meanwhile, the table joins at once with its
        follower records held back (``pending``), the gap is read, then the held records are
        folded: one read, however busy the partition."""
        w = await self._load(table_id)
        async with self.lock:  # the follower folds nothing while this runs
            current = self.tables.get(table_id)
            if current is not None and not current.broken:
                return current
            w.idle_since = time.monotonic()
            if current is not None:
                w.listeners |= current.listeners
            target = self.followed.get(w.partition, 0)
            if target <= w.position:
                if w.state is not None or keep_empty or current is not None:
                    self.tables[table_id] = w
                return w
            w.pending = []
            self.tables[table_id] = w
        try:
            await self._fold_tail(w, w.position, target)
        except BaseException:
            w.broken, w.pending = True, None  # reload_broken loads it again
            raise
        async with self.lock:
            held, w.pending = w.pending or [], None
            for offset, e in held:
                w.position = offset + 1
                self._fold(w, e)
            if w.state is None and not keep_empty and not w.listeners:
                self.tables.pop(table_id, None)
        for listener in list(w.listeners):
            listener.table_changed()
        return w

    async def _load(self, table_id: str) -> Watched:
        """The table's current hand from where it starts up to the log's end (no lock held)."""
        p = self.partition_of(table_id)
        # The end first, then the start: a hand started before the end has its head (written
        # in the same transaction) visible by then; one started after is folded later.
        end = await self.log.end_offset(TABLE_EVENTS, p)
        start = self.starts.get(table_id)
        if start is None:
            async for r in read_through(self.log, TABLE_HEADS, p, 0):
                if r.key == table_id:
                    start = msgspec.json.decode(r.value, type=TableHead).start_offset
        w = Watched(table_id, p, position=end)
        if start is not None:
            await self._fold_tail(w, start, end)
        return w

    async def _fold_tail(self, w: Watched, start: int, end: int) -> None:
        """Fold the table's records in ``[start, end)`` of its partition (read, not followed)."""
        async for r in read_through(self.log, TABLE_EVENTS, w.partition, start, end):
            if r.key != w.table_id or w.broken:
                continue
            e = decode_event(r.value)
            if isinstance(e, ev.HandStarted):
                self._remember(
                    e.hand_id, HandStart(w.table_id, w.partition, r.offset, tuple(e.seats))
                )
            self._fold(w, e)
        w.position = max(w.position, end)

    def _fold(self, w: Watched, e: ev.Event) -> bool:
        """Fold one event of the table; whether it changed what its watchers see."""
        try:
            if isinstance(e, ev.HandStarted):
                if w.state is not None and w.state.hand_id != e.hand_id:
                    w.last_hand = (w.state, w.events)
                w.state, w.events = HandState(), []
            elif w.state is None or e.hand_id != w.state.hand_id:
                return False  # the end of a hand before the one loaded
            apply(w.state, e)
            w.events.append(e)
        except ReplayError:
            log.exception("table %s: event %d does not fit; reloading", w.table_id, e.seq)
            w.broken = True
        return True

    # --- following -------------------------------------------------------------------------

    async def on_records(self, records: list[Record]) -> None:
        """Fold a batch of the follower's ``table.events`` and ``table.replies`` records."""
        touched: set[str] = set()
        ended: list[tuple[HandStart, ev.HandEnded]] = []
        async with self.lock:
            for r in records:
                if r.topic == TABLE_EVENTS:
                    self._event(r, touched, ended)
                elif r.topic == TABLE_REPLIES:
                    self._reply(r)
        for table_id in touched:
            w = self.tables.get(table_id)
            if w is not None:
                for listener in list(w.listeners):
                    listener.table_changed()
        if self.on_hand_ended is not None:
            for start, end in ended:
                try:
                    await self.on_hand_ended(start, end)
                except Exception:
                    log.exception("recording the end of %s failed", end.hand_id)

    def _event(
        self, r: Record, touched: set[str], ended: list[tuple[HandStart, ev.HandEnded]]
    ) -> None:
        self.followed[r.partition] = r.offset + 1
        w = self.tables.get(r.key)
        value = r.value
        starts = b'"type":"hand_started"' in value
        ends = b'"type":"hand_ended"' in value
        if w is None and not starts and not ends:
            return  # nobody watches this table: cheap to skip
        if w is not None and (r.offset < w.position or r.partition != w.partition):
            return  # already folded by the load
        try:
            e = decode_event(value)
        except msgspec.DecodeError:
            log.warning("undecodable event at %s/%d@%d", r.topic, r.partition, r.offset)
            return
        if isinstance(e, ev.HandStarted):
            self._remember(e.hand_id, HandStart(e.table_id, r.partition, r.offset, tuple(e.seats)))
            self.starts[e.table_id] = r.offset
            self.starts.move_to_end(e.table_id)
            while len(self.starts) > HAND_INDEX:
                self.starts.popitem(last=False)
        elif isinstance(e, ev.HandEnded):
            start = self.hand_starts.get(e.hand_id)
            if start is not None:
                ended.append((start, e))
        if w is None:
            return
        if w.pending is not None:
            w.pending.append((r.offset, e))  # past the gap its load reads: folded after it
            return
        w.position = r.offset + 1
        self.folded += 1
        if self._fold(w, e):
            touched.add(w.table_id)

    def _reply(self, r: Record) -> None:
        w = self.tables.get(r.key)
        if w is None or not w.listeners:
            return
        try:
            rejected = msgspec.json.decode(r.value, type=ReplyEnvelope).rejected
        except msgspec.DecodeError:
            return
        for listener in list(w.listeners):
            listener.command_rejected(rejected)

    def _remember(self, hand_id: str, start: HandStart) -> None:
        self.hand_starts[hand_id] = start
        self.hand_starts.move_to_end(hand_id)
        while len(self.hand_starts) > HAND_INDEX:
            self.hand_starts.popitem(last=False)

    async def reload_broken(self) -> None:
        """Load again the tables whose log did not fold (a gap, say)."""
        for table_id, w in list(self.tables.items()):
            if w.broken:
                await self._install(table_id, keep_empty=True)
        for w in self.tables.values():
            for listener in list(w.listeners):
                listener.table_changed()
