"""The default action the server plays when a decision runs out of time (RULES.md §8)."""

from __future__ import annotations

from schemas import commands as cmd
from services.rules.state import HU, HandState
from services.rules.tiles import NAMES, SUITS, tiles_of
from services.rules.turn import can_self_draw, legal_discards


def exchange_default(state: HandState, seat: int) -> list[int]:
    """The first three tiles, sorted, of the first suit (m, p, s) holding at least three."""
    held = tiles_of(state.counts[seat])
    for s in range(3):
        of_suit = [t for t in held if t // 9 == s]
        if len(of_suit) >= 3:
            return of_suit[:3]
    raise ValueError(f"seat {seat} holds no suit with three tiles")


def missing_default(state: HandState, seat: int) -> int:
    """The suit with fewest tiles after the exchange; ties go to m, then p, then s."""
    per_suit = [sum(state.counts[seat][s * 9 : s * 9 + 9]) for s in range(3)]
    return min(range(3), key=lambda s: (per_suit[s], s))


def default_command(state: HandState, seat: int) -> cmd.HandCommand:
    """The command the server plays for ``seat``'s pending decision on timeout."""
    if state.phase == "exchange":
        return cmd.ChooseExchange(
            seat=seat, tiles=[NAMES[t] for t in exchange_default(state, seat)]
        )
    if state.phase == "missing":
        return cmd.DeclareMissing(seat=seat, suit=SUITS[missing_default(state, seat)])
    w = state.window
    if w is not None:
        return cmd.Hu(seat=seat) if w.claims.get(seat, 0) & HU else cmd.Pass(seat=seat)
    if can_self_draw(state, seat):
        return cmd.Hu(seat=seat)
    options = legal_discards(state, seat)
    if state.drawn is not None and state.drawn in options:
        return cmd.Discard(seat=seat, tile=NAMES[state.drawn])
    return cmd.Discard(seat=seat, tile=NAMES[options[-1]])
