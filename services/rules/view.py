"""Seat views: the state as one seat may see it (RULES.md §10).

This is the only way information leaves the server's state for players and bots: the bot
API takes a ``SeatView``, never a ``HandState``.
"""

from __future__ import annotations

from schemas.views import ClockView, MeldView, PlayerView, SeatView, WindowView, WinView
from services.rules.hand import legal_actions, pending_seats
from services.rules.state import DIRECTION_STEP, HandState
from services.rules.tiles import NAMES, SUITS


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
    return SeatView(
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
            )
        )
    return views
