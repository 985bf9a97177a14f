"""Who may claim what (RULES.md §3, "Response window" and the missing-suit rule): the claim
rights of each seat on a discard or on an added kong's tile.

Each rule is written once, in ``claims_on``: the missing-suit gate on every call
(``may_call``), whether a tile wins (``completes``), the passing restrictions and the
last-discard rule; ``may_call`` and ``completes`` read their answer from it. The rights go
into the window event (``ResponseWindowOpened.claims``), so folding never works them out
again.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.rules.fan import PAIR_KEYS, POW5, STANDARD_KEYS
from services.rules.state import HU, KONG, PUNG, HandState

CALLABLE, COMPLETES = 8, 16
"""``claims_on(..., facts=True)`` bits: ``may_call`` holds; ``completes`` holds."""


def may_call(state: HandState, seat: int, t: int) -> bool:
    """The missing-suit gate on every call: no missing tile held, the tile not of that suit."""
    return bool(claims_on(state, (seat,), t, facts=True)[0] & CALLABLE)


def completes(state: HandState, seat: int, t: int) -> bool:
    """Whether tile ``t`` would complete the seat's hand (missing suit included in the check)."""
    return bool(claims_on(state, (seat,), t, facts=True)[0] & COMPLETES)


def claims_on(state: HandState, seats: Sequence[int], t: int, *, facts: bool = False) -> list[int]:
    """What each of ``seats`` may claim on discard ``t`` (HU | PUNG | KONG bits).

    A seat that has won claims nothing; nor does one failing the missing-suit gate
    (``may_call``). Others may win if not blocked from it and ``t`` completes the hand
    (``completes``), and, while the wall lasts (the discard after the last tile may only be
    won on), pung with two held (unless it passed a pung of ``t`` since it last drew) and
    kong with three. With ``facts`` the bits say only whether the gate passes (``CALLABLE``)
    and whether ``t`` completes (``COMPLETES``): ``may_call`` and ``completes`` are read
    from here, so each rule is written once.

    This runs for the three other seats on every discard, the engine's hottest check, so it
    reads the state once for all of them and looks up the key of ``t``'s suit first.
    """
    won, hu_blocked, pung_blocked = state.won, state.hu_blocked, state.pung_blocked
    missing_of, keys_of, counts_of, melds_of = state.missing, state.keys, state.counts, state.melds
    wall_left = state.back != state.front
    suit = t // 9
    add = POW5[t % 9]
    u, v = (suit + 1) % 3, (suit + 2) % 3  # the other two suits, whose keys t leaves alone
    out = []
    for seat in seats:
        keys = keys_of[seat]
        missing = missing_of[seat]
        # The missing-suit gate: a missing tile held, or t of that suit, allows no call (and
        # leaves the missing suit non-empty, so t completes nothing either).
        if missing is not None and (suit == missing or keys[missing]):
            out.append(0)
            continue
        if not facts and won[seat]:
            out.append(0)
            continue
        # Completes: the missing suit is empty and stays so, so only the shape counts; its
        # most selective test (t's own suit) first.
        k = keys[suit] + add
        complete = (
            k in STANDARD_KEYS and keys[u] in STANDARD_KEYS and keys[v] in STANDARD_KEYS
        ) or (
            k in PAIR_KEYS and keys[u] in PAIR_KEYS and keys[v] in PAIR_KEYS and not melds_of[seat]
        )
        if facts:
            out.append(CALLABLE | COMPLETES if complete else CALLABLE)
            continue
        bits = HU if complete and not hu_blocked[seat] else 0
        if wall_left:
            held = counts_of[seat][t]
            if held >= 2:
                if not (pung_blocked[seat] >> t) & 1:
                    bits |= PUNG
                if held >= 3:
                    bits |= KONG
        out.append(bits)
    return out


def claim_bits(state: HandState, seat: int, t: int) -> int:
    """The claims ``seat`` may make on discard ``t``."""
    return claims_on(state, (seat,), t)[0]


def can_rob(state: HandState, seat: int, t: int) -> bool:
    """Whether ``seat`` may rob an added kong of ``t``: a win on it, nothing else."""
    return (
        not state.won[seat]
        and may_call(state, seat, t)
        and not state.hu_blocked[seat]
        and completes(state, seat, t)
    )
