"""What each seat may see (RULES.md §10): a hand's state and its event log as one seat (or a
spectator) may see them.

``seat_view`` is the only way information leaves the server's state for players and bots:
the bot API takes a ``SeatView``, never a ``HandState``. ``seen`` and ``seen_events`` are the
same filter for the *event log* a client receives (live, on reconnect, in an export). An
event the seat may not see keeps its place as a ``HiddenEvent`` with only its public parts,
so the client always holds seq 1..n with no gap.

- Private to one seat: its dealt tiles, its draws, its exchange choice, its missing-suit
  declaration (until all four are revealed), the tiles it gave and received in the exchange.
- Claims and passes in an open window: the seat's own at once, everyone's once the window
  has resolved (any later event other than another answer, a clock event or a pause).
- Hidden from everyone until the end: the wall, the seed and the exchange direction (the
  direction is public with ``exchange_resolved``).
- After ``hand_ended`` everything is public.
- The seat's own view carries its waits help (``services.rules.waits``), computed from that
  view alone; a spectator's carries none.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from schemas import events as ev
from schemas.views import (
    ClockView,
    HiddenEvent,
    MeldView,
    PlayerView,
    SeatView,
    SeenEvent,
    WindowView,
    WinView,
)
from services.rules.hand import legal_actions
from services.rules.state import HandState, pending_seats
from services.rules.tiles import DIRECTION_STEP, NAMES, SUITS
from services.rules.waits import waits_help

# --- the state -----------------------------------------------------------------------------


def _tiles(counts: list[int]) -> list[str]:
    return [NAMES[t] for t in range(27) for _ in range(counts[t])]


def seat_view(state: HandState, seat: int | None) -> SeatView:
    """What ``seat`` may see now; ``None`` gives a spectator's public view."""
    over = state.phase == "ended"
    revealed = all(m is not None for m in state.missing) and state.phase in ("play", "ended")
    exchanged = state.phase not in ("deal", "exchange")
    hands = {w.seat: w for w in state.wins}
    players = []
    for s in range(4):
        see_all = over or s == seat
        missing = state.missing[s]
        players.append(
            PlayerView(
                seat=s,
                player=state.players[s] if s < len(state.players) else "",
                concealed_count=state.concealed_count(s),
                melds=[
                    MeldView(kind=m.kind, tile=NAMES[m.tile], from_seat=m.from_seat)
                    for m in state.melds[s]
                ],
                discards=[NAMES[t] for t in state.discards[s]],
                missing=SUITS[missing] if missing is not None and (revealed or see_all) else None,
                chose_exchange=state.exchange[s] is not None,
                declared_missing=missing is not None,
                won=state.won[s],
                score=state.scores[s],
                hand=_tiles(state.counts[s]) if see_all or s in hands else None,
            )
        )
    w = state.window
    own_drawn = seat is not None and state.turn == seat and state.drawn is not None
    received = None
    if seat is not None and exchanged and state.direction is not None:
        giver = (seat - DIRECTION_STEP[state.direction]) % 4
        given = state.exchange[giver]
        received = None if given is None else [NAMES[t] for t in given]
    own_choice = None if seat is None else state.exchange[seat]
    view = SeatView(
        table_id=state.table_id,
        hand_id=state.hand_id,
        seq=state.seq,
        seat=seat,
        phase=state.phase,
        players=players,
        wall_left=state.wall_left,
        direction=state.direction if exchanged else None,  # type: ignore[arg-type]
        pending=pending_seats(state),
        turn=state.turn,
        window=None
        if w is None
        else WindowView(kind=w.kind, tile=NAMES[w.tile], source=w.source, pending=w.pending),
        wins=[
            WinView(
                seat=x.seat,
                tile=None if x.tile is None else NAMES[x.tile],
                from_seat=x.from_seat,
                fan=x.fan,
                value=x.value,
                patterns=list(x.patterns),
                hand=[NAMES[t] for t in x.hand],
                shared=x.shared,
            )
            for x in state.wins
        ],
        drawn=NAMES[state.drawn] if own_drawn and state.drawn is not None else None,
        exchange_chosen=None if own_choice is None else [NAMES[t] for t in own_choice],
        exchange_received=received,
        decision_seq=state.decision_seq,
        legal_actions=[] if seat is None else legal_actions(state, seat),  # type: ignore[arg-type]
        end=state.end,
        ready=state.ready,
        commitment=state.commitment,
        seed=state.seed if over else None,
        wall=[NAMES[t] for t in state.wall[state.front : state.back]] if over else None,
        clock=None if state.clock is None else state.clock.preset,
        clocks=_clocks(state),
        grace_ms=0 if state.clock is None else state.clock.grace_ms,
        paused=state.paused,
    )
    if seat is None or state.phase != "play" or state.won[seat]:
        return view
    help_ = waits_help(view)
    return view if help_ is None else msgspec.structs.replace(view, waits=help_)


def open_view(state: HandState) -> SeatView:
    """A spectator's view with every concealed hand shown: for replaying a hand that has
    ended, when everything is public."""
    view = seat_view(state, None)
    players = [msgspec.structs.replace(p, hand=_tiles(state.counts[p.seat])) for p in view.players]
    return msgspec.structs.replace(view, players=players)


def _clocks(state: HandState) -> list[ClockView]:
    clock = state.clock
    if clock is None:
        return []
    views = []
    for s in range(4):
        run = clock.running.get(s)
        views.append(
            ClockView(
                seat=s,
                reserve_ms=clock.reserve[s],
                deadline_ms=None if run is None else run.deadline_ms,
                base_ms=None if run is None else run.base_ms,
                usable_reserve_ms=None if run is None else run.reserve_ms,
            )
        )
    return views


# --- the event log -------------------------------------------------------------------------

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
        giver = (seat - DIRECTION_STEP[e.direction]) % 4
        return msgspec.structs.replace(
            e, passed=[tiles if s in (seat, giver) else [] for s, tiles in enumerate(e.passed)]
        )
    if isinstance(e, ev.ResponseWindowOpened) and e.claims:
        # A seat's rights tell what its hand can do with the tile (that it may win on it is
        # its wait): each seat sees its own, the others' read 0 until the hand is over.
        own = [c if s == seat else 0 for s, c in zip(e.seats, e.claims, strict=True)]
        return e if own == e.claims else msgspec.structs.replace(e, claims=own)
    if isinstance(e, _ANSWERS):
        if e.seat == seat or window_resolved(events, i):
            return e
        return _hidden(e, e.seat)
    return e


def seen_events(events: Sequence[ev.Event], seat: int | None) -> list[SeenEvent]:
    """The whole log as ``seat`` may see it now."""
    over = hand_over(events)
    return [seen(events, i, seat, over) for i in range(len(events))]
