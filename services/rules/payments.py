"""Payments (RULES.md §5): what a win and each kind of kong pay, and to whom.

Points are game points: every payment moves them from one seat to another. The exhaustion
settlement's payments are §6's (``services.rules.settlement``).
"""

from __future__ import annotations

from schemas import events as ev
from services.rules.state import HandState
from services.rules.tiles import seats_after

CONCEALED_KONG_FEE, ADDED_KONG_FEE, EXPOSED_KONG_FEE = 2, 1, 2
"""§5.2: from each other active player, from each other active player, from the discarder."""


def from_others(s: HandState, seat: int, amount: int, reason: ev.PaymentReason) -> list[ev.Payment]:
    """``amount`` from every other active player to ``seat``."""
    return [
        ev.Payment(payer=x, payee=seat, amount=amount, reason=reason)
        for x in seats_after(seat)
        if not s.won[x]
    ]


def self_drawn_win(s: HandState, seat: int, value: int) -> list[ev.Payment]:
    """§5.1: every other active player pays the winner hand value + 1."""
    return from_others(s, seat, value + 1, "self_drawn_win")


def discard_win(source: int, winner: int, value: int, robbed: bool) -> list[ev.Payment]:
    """§5.1: the discarder (or the robbed kong's declarer) pays the winner's hand value."""
    reason: ev.PaymentReason = "robbed_kong_win" if robbed else "discard_win"
    return [ev.Payment(payer=source, payee=winner, amount=value, reason=reason)]


def concealed_kong(s: HandState, seat: int) -> list[ev.Payment]:
    """§5.2: 2 from each other active player."""
    return from_others(s, seat, CONCEALED_KONG_FEE, "concealed_kong")


def added_kong(s: HandState, seat: int) -> list[ev.Payment]:
    """§5.2: 1 from each other active player (only if nobody robbed it)."""
    return from_others(s, seat, ADDED_KONG_FEE, "added_kong")


def exposed_kong(source: int, seat: int) -> list[ev.Payment]:
    """§5.2: 2 from the discarder alone."""
    return [ev.Payment(payer=source, payee=seat, amount=EXPOSED_KONG_FEE, reason="exposed_kong")]
