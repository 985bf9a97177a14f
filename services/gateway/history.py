"""Hand export and replays.

``export``: a hand's JSON event log. A finished hand is shown whole (RULES.md §10: the
seed reveals everything at the end) to those who may open it (``access.hand_seat``: its
players, or anyone if its table was public); an unfinished one only as the asking seat (or
a spectator of a public table) may see it now, through ``visibility.seen_events``.

``replay_frames``: a finished hand step by step, one step per game action (``STEP_EVENTS``:
the deal, the exchange, the missing suits, each draw, discard, claim, kong, win and the
end). Bookkeeping between them (the seats' secret choices, answers in a window, the clocks,
a pause) is folded into the next step and only changes what it shows. Each step carries the
view after its action (every hand open, or one seat's view: ``visibility.seat_view``, the
event as ``visibility.seen`` shows it) and ``at_ms``, the moment of the action, at which the
view's clocks read what the live table showed then (docs/gateway.md, "Replays").

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
from schemas.views import SeatView, SeenEvent
from services.gateway.tables import TableWatcher
from services.history.store import HistoryStore
from services.rules import HandState, apply, open_view, seat_view, seen
from services.runtime.log import EventLog, read_through
from services.runtime.topics import TABLE_EVENTS

CACHED_HANDS = 256


STEP_EVENTS: tuple[type[ev.HandEvent], ...] = (
    ev.WallBuilt,  # the deal: every hand dealt, the wall built
    ev.ExchangeResolved,
    ev.MissingSuitsRevealed,
    ev.TileDrawn,
    ev.TileDiscarded,
    ev.RobbingWindowOpened,  # an added kong declared, open to be robbed
    ev.Punged,
    ev.Konged,
    ev.Won,
    ev.HandEnded,  # the settlement
)
"""The events that are a replay's steps (its game actions); every other event is bookkeeping."""

_WITH_STEP = (ev.ResponseWindowOpened,)
"""Shown with the step before them: the window a discard opens belongs to the discard."""


class ReplayStep(msgspec.Struct, frozen=True, kw_only=True):
    """One step of a replay: the action's event (as the view's seat may see it) and the view
    after it; ``at_ms``: when the action happened (server epoch ms; null: an untimed hand),
    the time the view's clocks are read at (``deadline_ms - at_ms`` left, as on the table)."""

    seq: int
    event: SeenEvent
    view: SeatView
    at_ms: int | None = None


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


def is_step(e: ev.Event) -> bool:
    """Whether an event is one of a replay's steps (a game action)."""
    return isinstance(e, STEP_EVENTS)


def action_times(events: list[ev.Event]) -> list[int | None]:
    """When each event happened, for a timed hand (None for all of an untimed one).

    Every command's clock events come after its other events (``clock.tick`` runs once the
    command is applied), so an event happened when the first clock event after it did: a
    ``clock_started`` at its ``at_ms``, a ``clock_stopped`` when its decision was offered plus
    ``used_ms``. The hand's last command records no clock (the hand is over); its events take
    the last time known before them."""
    times: list[int | None] = [None] * len(events)
    state = HandState()
    for i, e in enumerate(events):
        if isinstance(e, ev.ClockStarted):
            times[i] = e.at_ms
        elif isinstance(e, ev.ClockStopped) and state.clock is not None:
            run = state.clock.running.get(e.seat)
            if run is not None:
                times[i] = run.offered_ms + e.used_ms
        apply(state, e)
    after: int | None = None
    for i in range(len(events) - 1, -1, -1):
        if times[i] is None:
            times[i] = after
        else:
            after = times[i]
    last: int | None = None
    for i, t in enumerate(times):
        if t is None:
            times[i] = last
        else:
            last = t if last is None else max(last, t)
    return times


def replay_frames(events: list[ev.Event], seat: int | None = None) -> list[ReplayStep]:
    """A finished hand's steps: with every hand open (``seat`` None), or as ``seat`` saw
    each one (its own view then, nothing more: RULES.md §10)."""
    times = action_times(events)
    state = HandState()
    steps: list[ReplayStep] = []
    pending: tuple[int, ev.Event] | None = None

    def close() -> None:
        if pending is None:
            return
        i, e = pending
        shown: SeenEvent = e
        if seat is None:
            view = open_view(state)
        else:
            # As the seat saw it then; the help and the choices it had are not replayed.
            view = msgspec.structs.replace(seat_view(state, seat), legal_actions=[], waits=None)
            shown = seen(events, i, seat, isinstance(e, ev.HandEnded))
        steps.append(ReplayStep(seq=e.seq, event=shown, view=view, at_ms=times[i]))

    for i, e in enumerate(events):
        if pending is not None and not isinstance(e, _WITH_STEP):
            close()
            pending = None
        apply(state, e)
        if is_step(e):
            pending = (i, e)
    close()
    return steps


SETTLEMENT_EVENTS = (
    ev.HandStarted,
    ev.Konged,
    ev.Won,
    ev.WallExhausted,
    ev.SettlementItem,
    ev.HandEnded,
)
"""What a finished hand's settlement is drawn from (js/settlement.js)."""


def settlement_events(events: list[ev.Event]) -> list[ev.Event]:
    """The events of a finished hand's settlement (all public once it has ended)."""
    return [e for e in events if isinstance(e, SETTLEMENT_EVENTS)]
