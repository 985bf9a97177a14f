"""The waits help (听牌提示): what a seat's hand waits on, from that seat's own view only.

Built on RULES.md §4 (complete hands and fan, through ``fan.winning_tiles`` and
``fan.best_reading``: one rule in one place) and §10 (what a seat may see): ``waits_help``
takes a ``SeatView``, never a ``HandState``, so it cannot use the wall or another seat's
concealed tiles.

- A hand of 13 (concealed tiles and declared groups, a kong counted as three) is *ready* when
  some tile completes it; for each such tile the help gives the copies the seat cannot see
  (4 minus its own hand, every declared group, every river and every revealed winning hand)
  and the hand's fan and value if it wins on it, with the points of a discard win and of a
  self-drawn win (§5.1). Situational fan (kong replacement, robbing a kong, last tile) depends
  on how the tile comes and is left out.
- A hand of 14 on the seat's turn: for each legal discard (the missing suit first, §3), the
  waits after it, or a shanten-style distance from ready (``shanten``: the fewest tile
  changes; 0 is ready).
"""

from __future__ import annotations

from functools import cache, lru_cache

from schemas.commands import Discard
from schemas.views import DiscardHint, SeatView, WaitsHelp, WaitView
from services.rules.fan import POW5, best_reading, suit_keys, winning_tiles
from services.rules.readiness import shanten as two_suit_shanten
from services.rules.tiles import INDEX, NAMES, SUITS

# --- distance from ready ------------------------------------------------------------------


@cache
def _size(key: int) -> int:
    return sum((key // POW5[r]) % 5 for r in range(9))


def shanten(keys: list[int], declared: int, missing: int) -> int:
    """How many tile changes a hand of ``3n + 1`` concealed tiles is from ready (0: ready).

    The engine's shanten (``services.rules.readiness``) over the two kept suits: the standard
    form, or seven pairs with no declared group. Every tile of the missing suit still held
    must go first, so the distance is at least their number; a ready shape whose only wait
    is a fifth copy is one away.
    """
    return _shanten(keys[0], keys[1], keys[2], declared, missing)


@lru_cache(maxsize=1 << 16)
def _shanten(k0: int, k1: int, k2: int, declared: int, missing: int) -> int:
    keys = [k0, k1, k2]
    held_missing = _size(keys[missing])
    kept = [keys[s] for s in range(3) if s != missing]
    best = two_suit_shanten(kept[0], kept[1], 4 - declared)
    if best == 0 and not held_missing and not winning_tiles(keys, declared, missing):
        best = 1  # the only wait is on a fifth copy
    return max(best, held_missing)


# --- the help ------------------------------------------------------------------------------


def _visible(view: SeatView, own: list[int]) -> list[int]:
    """Copies of each tile type the seat can see: its hand, every group, river and win."""
    seen = list(own)
    for p in view.players:
        for m in p.melds:
            seen[INDEX[m.tile]] += 3 if m.kind == "pung" else 4
        for t in p.discards:
            seen[INDEX[t]] += 1
    for w in view.wins:
        for t in w.hand:
            seen[INDEX[t]] += 1
        if w.shared and w.tile is not None:
            seen[INDEX[w.tile]] -= 1  # one tile, in each winner's revealed hand
    window = view.window
    if window is not None and window.kind == "rob":
        seen[INDEX[window.tile]] += 1  # the kong's fourth tile, shown to be robbed
    return seen


def _waits(
    counts: list[int],
    melds: list[tuple[int, int]],
    missing: int | None,
    seen: list[int],
    payers: int,
) -> list[WaitView]:
    out = []
    for t in winning_tiles(suit_keys(counts), len(melds), missing):
        counts[t] += 1
        reading = best_reading(counts, melds)
        counts[t] -= 1
        out.append(
            WaitView(
                tile=NAMES[t],
                unseen=max(0, 4 - seen[t]),
                fan=reading.fan,
                value=reading.value,
                patterns=list(reading.patterns),
                discard=reading.value,
                self_drawn=(reading.value + 1) * payers,
            )
        )
    return out


def waits_help(view: SeatView) -> WaitsHelp | None:
    """The waits help of the seat whose view this is; None for a spectator, before play, once
    the seat has won or the hand is over, and while its hand is neither 13 nor 14 tiles."""
    seat = view.seat
    if seat is None or view.phase != "play":
        return None
    me = view.players[seat]
    if me.won or me.hand is None or me.missing is None:
        return None
    missing = SUITS.index(me.missing)
    counts = [0] * 27
    for name in me.hand:
        counts[INDEX[name]] += 1
    melds = [(INDEX[m.tile], 3 if m.kind == "pung" else 4) for m in me.melds]
    seen = _visible(view, counts)
    payers = sum(1 for p in view.players if p.seat != seat and not p.won)
    size = len(me.hand) % 3
    if size == 1:
        keys = suit_keys(counts)
        distance = shanten(keys, len(melds), missing)
        waits = _waits(counts, melds, missing, seen, payers) if distance == 0 else []
        return WaitsHelp(shanten=distance, waits=waits, payers=payers)
    if size != 2:
        return None
    candidates = sorted({INDEX[c.tile] for c in view.legal_actions if isinstance(c, Discard)})
    if not candidates and view.turn == seat:
        own_missing = [t for t in range(missing * 9, missing * 9 + 9) if counts[t]]
        candidates = own_missing or [t for t in range(27) if counts[t]]
    hints = []
    for t in candidates:
        counts[t] -= 1
        keys = suit_keys(counts)
        distance = shanten(keys, len(melds), missing)
        waits = _waits(counts, melds, missing, seen, payers) if distance == 0 else []
        counts[t] += 1
        hints.append(DiscardHint(tile=NAMES[t], shanten=distance, waits=waits))
    return WaitsHelp(discards=hints, payers=payers)
