"""Who may claim what (RULES.md §3, "Response window" and the missing-suit rule): the claim
rights of each seat on a discard or on an added kong's tile.

Each rule is written once: ``may_call`` is the missing-suit gate on every call, ``completes``
whether a tile wins, and ``claims_on`` puts them together with the passing restrictions and
the last-discard rule for the seats asked after a discard. The first two are written for
several seats at once (``may_call_each``, ``completes_each``), as a discard asks three. The
rights go into the window event (``ResponseWindowOpened.claims``), so folding never works
them out again.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.rules.fan import PAIR_KEYS, POW5, STANDARD_KEYS
from services.rules.state import HU, KONG, PUNG, HandState


def may_call(state: HandState, seat: int, t: int) -> bool:
    """The missing-suit gate on every call: no missing tile held, the tile not of that suit."""
    return may_call_each(state, (seat,), t)[0]


def may_call_each(state: HandState, seats: Sequence[int], t: int) -> list[bool]:
    """``may_call`` for each of ``seats``."""
    suit = t // 9
    missing_of, keys_of = state.missing, state.keys
    out = []
    for x in seats:
        m = missing_of[x]
        out.append(m is None or (suit != m and not keys_of[x][m]))
    return out


def completes(state: HandState, seat: int, t: int) -> bool:
    """Whether tile ``t`` would complete the seat's hand (missing suit included in the check)."""
    return completes_each(state, (seat,), t)[0]


def completes_each(state: HandState, seats: Sequence[int], t: int) -> list[bool]:
    """``completes`` for each of ``seats``: ``fan.is_complete`` of each hand with ``t`` added.

    Adding ``t`` changes only its own suit's key, so that one is looked up first (the most
    selective test) and the other two as they are."""
    suit = t // 9
    add = POW5[t % 9]
    u, v = (suit + 1) % 3, (suit + 2) % 3  # the other two suits, whose keys t leaves alone
    missing_of, keys_of, melds_of = state.missing, state.keys, state.melds
    out = []
    for x in seats:
        keys = keys_of[x]
        m = missing_of[x]
        if m is not None and (m == suit or keys[m]):
            out.append(False)  # the missing suit is not empty with t
            continue
        k = keys[suit] + add
        out.append(
            (k in STANDARD_KEYS and keys[u] in STANDARD_KEYS and keys[v] in STANDARD_KEYS)
            or (
                k in PAIR_KEYS and keys[u] in PAIR_KEYS and keys[v] in PAIR_KEYS and not melds_of[x]
            )
        )
    return out


def claims_on(state: HandState, seats: Sequence[int], t: int) -> list[int]:
    """What each of ``seats`` may claim on discard ``t`` (HU | PUNG | KONG bits).

    A seat that has won claims nothing; nor does one failing ``may_call``. Others may win if
    not blocked from it and ``completes`` holds, and, while the wall lasts (the discard after
    the last tile may only be won on), pung with two held (unless it passed a pung of ``t``
    since it last drew) and kong with three. Runs for the three other seats on every
    discard, so it asks ``may_call_each`` and ``completes_each`` once for all of them.
    """
    callers = may_call_each(state, seats, t)
    wins = completes_each(state, seats, t)
    won, hu_blocked, pung_blocked = state.won, state.hu_blocked, state.pung_blocked
    counts_of = state.counts
    wall_left = state.back != state.front
    out = []
    for seat, call, win in zip(seats, callers, wins, strict=True):
        bits = 0
        if call and not won[seat]:
            if win and not hu_blocked[seat]:
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
