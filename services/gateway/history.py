"""Hand export and replays.

``export``: a hand's JSON event log. A finished hand is public whole (RULES.md §10: the
seed reveals everything at the end); an unfinished one only as the asking seat (or a
spectator of a public table) may see it now, through ``visibility.seen_events``.

``replay_frames``: a finished hand step by step, each step the public view after that event
with every concealed hand shown (the hand is over, so nothing is hidden any more).

Finding an old hand: the watcher's index of hand starts (every ``hand_started`` the gateway
has followed), else where the hand-history projection says its log starts, else a scan of
the table's ``table.events`` partition. Finished hands never
change, so their events are cached.
"""

from __future__ import annotations

from collections import OrderedDict

import msgspec

from schemas import events as ev
from schemas.table import decode_event
from schemas.views import SeatView
from services.gateway.tables import TableWatcher
from services.history.store import HistoryStore
from services.rules import HandState, apply, open_view
from services.runtime.log import EventLog, read_through
from services.runtime.topics import TABLE_EVENTS

CACHED_HANDS = 256


class ReplayStep(msgspec.Struct, frozen=True, kw_only=True):
    """One step of a replay: the event and the view after it."""

    seq: int
    event: ev.Event
    view: SeatView


class HandLogs:
    """Reads whole hand logs, with a small cache of finished ones."""

    def __init__(
        self, event_log: EventLog, tables: TableWatcher, history: HistoryStore | None = None
    ) -> None:
        self.log = event_log
        self.tables = tables
        self.history = history
        self.cache: OrderedDict[str, list[ev.Event]] = OrderedDict()

    async def events(self, hand_id: str) -> list[ev.Event] | None:
        """The hand's events (None: no such hand)."""
        cached = self.cache.get(hand_id)
        if cached is not None:
            self.cache.move_to_end(hand_id)
            return cached
        table_id = hand_id.rsplit("#", 1)[0]
        if not table_id or table_id == hand_id:
            return None
        w = self.tables.tables.get(table_id)
        if w is not None and w.hand_id == hand_id:
            events = list(w.events)
        else:
            events = await self._scan(table_id, hand_id)
        if not events:
            return None
        if isinstance(events[-1], ev.HandEnded):
            self.cache[hand_id] = events
            while len(self.cache) > CACHED_HANDS:
                self.cache.popitem(last=False)
        return events

    async def _scan(self, table_id: str, hand_id: str) -> list[ev.Event]:
        start = self.tables.hand_starts.get(hand_id)
        partition = self.tables.partition_of(table_id)
        offset = start.offset if start is not None and start.partition == partition else 0
        if start is None and self.history is not None:
            rows = await self.history.hand(hand_id)
            if rows and rows[0].partition == partition:
                offset = rows[0].start_offset
        events: list[ev.Event] = []
        async for r in read_through(self.log, TABLE_EVENTS, partition, offset):
            if r.key != table_id:
                continue
            e = decode_event(r.value)
            if e.hand_id != hand_id:
                if events:
                    break  # the next hand of the table: this one is complete
                continue
            events.append(e)
            if isinstance(e, ev.HandEnded):
                break
        return events


def replay_frames(events: list[ev.Event]) -> list[ReplayStep]:
    """Every step of a finished hand, all hands shown."""
    state = HandState()
    steps = []
    for e in events:
        apply(state, e)
        steps.append(ReplayStep(seq=e.seq, event=e, view=open_view(state)))
    return steps
