"""Who may claim what: legal claims in response and robbing windows (RULES.md §3)."""

from __future__ import annotations

from services.rules.analysis import POW5, is_complete
from services.rules.state import HU, KONG, PUNG, HandState


def completes(state: HandState, seat: int, t: int) -> bool:
    """Whether tile ``t`` would complete the seat's hand (missing suit included in the check)."""
    keys = list(state.keys[seat])
    keys[t // 9] += POW5[t % 9]
    return is_complete(keys, len(state.melds[seat]), state.missing[seat])


def may_call(state: HandState, seat: int, t: int) -> bool:
    """The missing-suit gate on every call: no missing tile held, the tile not of that suit."""
    return not state.holds_missing(seat) and t // 9 != state.missing[seat]


def claim_bits(state: HandState, seat: int, t: int) -> int:
    """The claims ``seat`` may make on discard ``t`` (HU | PUNG | KONG bits)."""
    if state.won[seat] or not may_call(state, seat, t):
        return 0
    bits = 0
    if not state.hu_blocked[seat] and completes(state, seat, t):
        bits |= HU
    if state.wall_left:  # the discard after the last wall tile may only be won on
        held = state.counts[seat][t]
        if held >= 2 and not (state.pung_blocked[seat] >> t) & 1:
            bits |= PUNG
        if held >= 3:
            bits |= KONG
    return bits


def can_rob(state: HandState, seat: int, t: int) -> bool:
    """Whether ``seat`` may rob an added kong of ``t``."""
    return (
        not state.won[seat]
        and may_call(state, seat, t)
        and not state.hu_blocked[seat]
        and completes(state, seat, t)
    )


def seats_after(seat: int) -> tuple[int, int, int]:
    """The other seats in turn order counting from ``seat``."""
    return ((seat + 1) % 4, (seat + 2) % 4, (seat + 3) % 4)
