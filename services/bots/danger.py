"""Danger: how much a discard is likely to cost, read from the table.

Everything comes from public facts in the seat's view:

- an opponent may not win on their declared missing suit, so those tiles are safe against
  them, and an opponent still shedding their missing suit cannot win at all (RULES.md §3);
  a player discards the missing suit first, so their first other discard (or any pung or
  kong) shows they are clean;
- the longer an opponent has played and the more groups they have declared, the likelier
  they are ready;
- an opponent whose declared groups are all of one suit, or who throws away one of their two
  suits, is probably building in the other, perhaps a pure suit, which pays four times as much;
- declared kongs are roots and double the hand.

``threats`` sums this up per opponent; ``danger`` turns it into the expected points a discard
hands to opponents who win on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.bots.botview import BotView

# The figures below were measured in self-play of normal bots (docs/bots.md): how often an
# opponent is ready, by turns played and declared groups, and how often a ready opponent
# waits on a tile, by its rank and by whether they threw that tile away themselves.
_READY_BY_TURNS = (
    0.10, 0.13, 0.19, 0.25, 0.33, 0.36, 0.40, 0.43, 0.48, 0.50, 0.57, 0.62, 0.63, 0.69, 0.73,
    0.73, 0.79,
)  # fmt: skip
_READY_PER_MELDS = (0.0, 0.1, 0.35, 0.45, 0.5)
_NOT_SHOWN_CLEAN = 0.015  # every discard so far of their missing suit: almost never ready
_WAIT_BY_RANK = (0.09, 0.13, 0.14, 0.15, 0.14, 0.14, 0.17, 0.12, 0.07)
_WAIT_IF_THROWN = 0.01  # a ready hand almost never waits on a tile it threw away
_BASE_VALUE = 1.35


@dataclass(frozen=True, slots=True)
class Threat:
    """One active opponent: how likely ready, what a win pays, how waits spread over suits."""

    seat: int
    ready: float
    value: float
    missing: int | None
    suit_weight: tuple[float, float, float]


def shown_clean(view: BotView, o: int) -> bool:
    """Whether opponent ``o`` has shown they hold none of their missing suit any more."""
    missing = view.missing[o]
    if missing is None or view.melds[o]:
        return True
    return any(t // 9 != missing for t in view.discards[o])


def _ready(view: BotView, o: int) -> float:
    """The chance that opponent ``o`` is ready now."""
    if not shown_clean(view, o):
        return _NOT_SHOWN_CLEAN
    melds = len(view.melds[o])
    turns = len(view.discards[o]) + melds
    p = _READY_BY_TURNS[min(turns, len(_READY_BY_TURNS) - 1)] + _READY_PER_MELDS[melds]
    return min(p, 0.97)


def _suits(view: BotView, o: int) -> tuple[tuple[float, float, float], bool]:
    """How an opponent's waits spread over the suits (1.5 on average over the two kept
    suits), and whether they look like a pure suit."""
    missing = view.missing[o]
    meld_suits = {m.tile // 9 for m in view.melds[o]}
    kept = [s for s in range(3) if s != missing]
    thrown = [sum(1 for t in view.discards[o] if t // 9 == s) for s in range(3)]
    weight = [0.0, 0.0, 0.0]
    for s in kept:
        weight[s] = 1.0 / (2.0 + thrown[s])
        if s in meld_suits:
            weight[s] *= 2.0
    if len(meld_suits) > 1:
        weight = [w if s in meld_suits else 0.0 for s, w in enumerate(weight)]
    total = sum(weight) or 1.0
    share = tuple(2.0 * w / total for w in weight)  # 1.0 each when even
    pure = max(share) > 1.7 and len(view.discards[o]) >= 5
    return (share[0], share[1], share[2]), pure


def threats(view: BotView) -> list[Threat]:
    """Every active opponent as a threat."""
    out = []
    for o in range(4):
        if o == view.seat or view.won[o]:
            continue
        share, pure = _suits(view, o)
        value = _BASE_VALUE * (1.5 if pure else 1.0)
        melds = view.melds[o]
        value *= 1.8 ** sum(1 for m in melds if m.kind != "pung")  # kongs are roots
        if len(melds) >= 2:
            value *= 1.2
        out.append(Threat(o, _ready(view, o), min(value, 8.0), view.missing[o], share))
    return out


def danger(view: BotView, foes: list[Threat], t: int) -> float:
    """Expected points lost if the seat discards ``t``, over opponents who may win on it."""
    suit, rank = divmod(t, 9)
    total = 0.0
    for f in foes:
        if suit == f.missing:
            continue  # nobody may win on their own missing suit
        if t in view.discards[f.seat]:
            p_wait = _WAIT_IF_THROWN
        else:
            p_wait = _WAIT_BY_RANK[rank] * (0.5 + 0.5 * f.suit_weight[suit])
        total += f.ready * p_wait * f.value
    return total


def pressure(foes: list[Threat]) -> float:
    """Expected points at stake among ready-looking opponents: how dangerous the table is."""
    return sum(f.ready * f.value for f in foes)
