"""Tables, ratings, practice (RULES.md §9): who sits at a table, rated or casual, and each
hand's seat order.

Matchmaking (creating a table) asks ``seating_problem``, the table service (starting a
hand) ``table_problem``, which asks it too; the lobby seats players with ``first_seats``
and ``next_seats``.
Pausing a practice hand is ``services.rules.practice``; rating results are
``services.rating``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schemas.codes import SeatingCode, TableCode
from schemas.types import COMPUTER_PREFIX
from services.rules.clock import PRESETS
from services.rules.tiles import SEATS

COMPUTER = COMPUTER_PREFIX
"""Every computer player's id starts so: ``computer:<strength>:<n>``."""
PACES = ("instant", "fast", "normal", "slow")
"""How fast the computers of a table play."""

SeatingProblem = tuple[SeatingCode, str]
TableProblem = tuple[TableCode, str]


def is_computer(player: str) -> bool:
    """Whether a player id is a computer player's."""
    return player.startswith(COMPUTER)


def computer_seats(players: Sequence[str]) -> list[int]:
    """The seats of ``players`` that computers hold."""
    return [s for s, p in enumerate(players) if p.startswith(COMPUTER)]


def rated(asked: bool, computers: Sequence[int]) -> bool:
    """Whether a hand is rated: asked for, with four humans (any computer makes it casual)."""
    return asked and not computers


def seating_problem(rated: bool, clock: str | None, computers: bool) -> SeatingProblem | None:
    """Why a table may not be rated as asked (RULES.md §9), or None: a rated table has a
    clock and four humans, so no computers (that may fill empty seats, or that hold one)."""
    if rated and clock is None:
        return "rated_needs_clock", "a rated table needs a clock"
    if rated and computers:
        return "rated_needs_humans", "a rated table is for four humans; computers make it casual"
    return None


def table_problem(
    *,
    rated: bool,
    clock: str | None,
    players: Sequence[str],
    computer_seats: Sequence[int] = (),
    pace: str = "normal",
) -> TableProblem | None:
    """Why a hand cannot start at a table as asked (RULES.md §8, §9), or None: four
    players, a clock that is one of the presets, computer seats that are seats, the
    ``seating_problem`` rules and a known pace."""
    if len(players) != SEATS:
        return "need_four_players", "a hand needs four players"
    if clock is not None and clock not in PRESETS:
        return "unknown_clock", f"unknown clock {clock!r}; one of {', '.join(PRESETS)}"
    if any(not 0 <= s < SEATS for s in computer_seats):
        return "bad_seat", "computer seats are numbered 0 to 3"
    seating = seating_problem(rated, clock, bool(computer_seats))
    if seating is not None:
        return seating
    if pace not in PACES:
        return "unknown_pace", f"unknown pace {pace!r}"
    return None


def first_seats(
    humans: Sequence[str], strength: str, shuffle: Callable[[list[str]], None]
) -> list[str]:
    """A table's first hand: ``humans`` and computers of ``strength`` in the empty seats, in
    an order ``shuffle`` draws."""
    players = [*humans] + [f"{COMPUTER}{strength}:{i}" for i in range(SEATS - len(humans))]
    shuffle(players)
    return players


def next_seats(players: Sequence[str], staying: Sequence[str], strength: str) -> list[str]:
    """The seat order of a table's next hand: every seat moves on by one, so the dealer
    (seat 0) rotates (RULES.md §1); a computer of ``strength`` takes the seat of any human
    not ``staying``."""
    moved = [*players[1:], *players[:1]]
    used = {p for p in moved if p.startswith(COMPUTER)}
    fresh = (f"{COMPUTER}{strength}:{i}" for i in range(SEATS * 2))
    out = []
    for p in moved:
        if not p.startswith(COMPUTER) and p not in staying:
            p = next(c for c in fresh if c not in used)
            used.add(p)
        out.append(p)
    return out
