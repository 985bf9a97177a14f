"""Who may claim what (RULES.md §3, "Response window" and the missing-suit rule): the claim
rights of each seat on a discard or on an added kong's tile.

Each rule is written once: ``may_call`` is the missing-suit gate on every call, ``completes``
whether a tile wins, and ``claims_on`` puts them together with the passing restrictions and
the last-discard rule for the seats asked after a discard. The rights go into the window
event (``ResponseWindowOpened.claims``), so folding never works them out again.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.rules.fan import POW5, is_complete
from services.rules.state import HU, KONG, PUNG, HandState


def may_call(state: HandState, seat: int, t: int) -> bool:
    """The missing-suit gate on every call: no missing tile held, the tile not of that suit."""
    missing = state.missing[seat]
    return missing is None or (t // 9 != missing and not state.keys[seat][missing])


def completes(state: HandState, seat: int, t: int) -> bool:
    """Whether tile ``t`` would complete the seat's hand (missing suit included in the check)."""
    keys = list(state.keys[seat])
    keys[t // 9] += POW5[t % 9]
    return is_complete(keys, len(state.melds[seat]), state.missing[seat])


def claims_on(state: HandState, seats: Sequence[int], t: int) -> list[int]:
    """What each of ``seats`` may claim on discard ``t`` (HU | PUNG | KONG bits).

    A seat that has won claims nothing; nor does one failing ``may_call``. Others may win if
    not blocked from it and ``completes`` holds, and, while the wall lasts (the discard after
    the last tile may only be won on), pung with two held (unless it passed a pung of ``t``
    since it last drew) and kong with three. Runs for the three other seats on every
    discard, so it reads the state once for all of them.
    """
    won, hu_blocked, pung_blocked = state.won, state.hu_blocked, state.pung_blocked
    counts_of = state.counts
    wall_left = state.back != state.front
    out = []
    for seat in seats:
        bits = 0
        if not won[seat] and may_call(state, seat, t):
            if not hu_blocked[seat] and completes(state, seat, t):
                bits = HU
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
