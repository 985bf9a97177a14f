"""Who may claim what: legal claims in response and robbing windows (RULES.md §3)."""

from __future__ import annotations

from collections.abc import Sequence

from services.rules.analysis import PAIR_KEYS, POW5, STANDARD_KEYS, is_complete
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
    return claims_on(state, (seat,), t)[0]


def claims_on(state: HandState, seats: Sequence[int], t: int) -> list[int]:
    """``[claim_bits(state, x, t) for x in seats]``: what each seat may claim on discard ``t``.

    A seat that has won claims nothing; nor does one failing ``may_call``. Others may win if
    not blocked from it and ``completes`` holds, and, while the wall lasts (the discard after
    the last tile may only be won on), pung with two held (unless it passed a pung of ``t``
    since it last drew) and kong with three.

    This runs for the three other seats on every discard, the engine's hottest check, so it
    reads the state once for all of them and has ``may_call`` and ``completes`` written out
    (tests/unit/test_engine_fast_paths.py holds it to them).
    """
    won, hu_blocked, pung_blocked = state.won, state.hu_blocked, state.pung_blocked
    missing_of, keys_of, counts_of, melds_of = state.missing, state.keys, state.counts, state.melds
    wall_left = state.back != state.front
    suit = t // 9
    add = POW5[t % 9]
    u, v = (suit + 1) % 3, (suit + 2) % 3  # the other two suits, whose keys t leaves alone
    out = []
    for seat in seats:
        bits = 0
        keys = keys_of[seat]
        missing = missing_of[seat]
        # may_call: the seat holds no tile of its missing suit, and t is of another suit.
        if not won[seat] and (missing is None or (suit != missing and not keys[missing])):
            # completes: the missing suit is empty and stays so, so only the shape counts;
            # its most selective test (t's own suit) first.
            if not hu_blocked[seat]:
                k = keys[suit] + add
                if (
                    k in STANDARD_KEYS and keys[u] in STANDARD_KEYS and keys[v] in STANDARD_KEYS
                ) or (
                    k in PAIR_KEYS
                    and keys[u] in PAIR_KEYS
                    and keys[v] in PAIR_KEYS
                    and not melds_of[seat]
                ):
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
