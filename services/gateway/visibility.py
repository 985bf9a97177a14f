"""A hand's events as one seat (or a spectator) may see them: RULES.md §10.

``services.rules.view.seat_view`` is the one way to show a seat its *state*; this module is
the same filter for the *event log* a client receives (live, on reconnect, in an export).
An event the seat may not see keeps its place as a ``HiddenEvent`` with only its public
parts, so the client always holds seq 1..n with no gap.

- Private to one seat: its dealt tiles, its draws, its exchange choice, its missing-suit
  declaration (until all four are revealed), the tiles it gave and received in the exchange.
- Claims and passes in an open window: the seat's own at once, everyone's once the window
  has resolved (any later event other than another answer, a clock event or a pause).
- Hidden from everyone until the end: the wall, the seed and the exchange direction (the
  direction is public with ``exchange_resolved``).
- After ``hand_ended`` everything is public.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from schemas import events as ev
from services.gateway.protocol import HiddenEvent, SeenEvent

_ANSWERS = (ev.ClaimDeclared, ev.Passed)
# Events that do not resolve a window: the answers, the clocks, and a pause and its resume
# (a pause in an open window must not show the human the computers' hidden answers).
_QUIET = (
    ev.ClaimDeclared,
    ev.Passed,
    ev.ClockStarted,
    ev.ClockStopped,
    ev.HandPaused,
    ev.HandResumed,
)


def hand_over(events: Sequence[ev.Event]) -> bool:
    """Whether the hand's log holds its end (then every event is public)."""
    return bool(events) and isinstance(events[-1], ev.HandEnded)


def _hidden(e: ev.HandEvent, seat: int | None, **public: int | bool) -> HiddenEvent:
    return HiddenEvent(
        table_id=e.table_id,
        hand_id=e.hand_id,
        seq=e.seq,
        event=type(e).__struct_config__.tag,  # type: ignore[arg-type]
        seat=seat,
        public=public,
    )


def window_resolved(events: Sequence[ev.Event], i: int) -> bool:
    """Whether the window the answer ``events[i]`` belongs to has resolved."""
    return any(not isinstance(e, _QUIET) for e in events[i + 1 :])


def seen(events: Sequence[ev.Event], i: int, seat: int | None, over: bool) -> SeenEvent:
    """``events[i]`` as ``seat`` (None: a spectator) may see it; ``over``: the hand ended."""
    e = events[i]
    if over:
        return e
    if isinstance(e, ev.TilesDealt):
        return e if e.seat == seat else _hidden(e, e.seat, count=len(e.tiles))
    if isinstance(e, ev.WallBuilt):
        return _hidden(e, None, count=len(e.tiles))
    if isinstance(e, ev.ExchangeChosen | ev.MissingSuitDeclared):
        return e if e.seat == seat else _hidden(e, e.seat)
    if isinstance(e, ev.TileDrawn):
        if e.seat == seat:
            return e
        return _hidden(e, e.seat, replacement=e.replacement, wall_left=e.wall_left)
    if isinstance(e, ev.ExchangeResolved):
        if seat is None:
            return msgspec.structs.replace(e, passed=[[], [], [], []])
        step = {"right": 1, "opposite": 2, "left": 3}[e.direction]
        giver = (seat - step) % 4
        return msgspec.structs.replace(
            e, passed=[tiles if s in (seat, giver) else [] for s, tiles in enumerate(e.passed)]
        )
    if isinstance(e, _ANSWERS):
        if e.seat == seat or window_resolved(events, i):
            return e
        return _hidden(e, e.seat)
    return e


def seen_events(events: Sequence[ev.Event], seat: int | None) -> list[SeenEvent]:
    """The whole log as ``seat`` may see it now."""
    over = hand_over(events)
    return [seen(events, i, seat, over) for i in range(len(events))]


def is_hidden(item: SeenEvent) -> bool:
    return isinstance(item, HiddenEvent)
