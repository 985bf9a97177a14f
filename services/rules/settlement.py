"""Wall exhaustion settlement (RULES.md §6): flower pigs, not ready, kong refunds."""

from __future__ import annotations

from dataclasses import dataclass

from schemas import events as ev
from schemas.events import Payment
from services.rules.fan import ready_value
from services.rules.placement import end
from services.rules.state import Fold, HandState, Log

FLOWER_PIG_PENALTY = 8


@dataclass(frozen=True, slots=True)
class Exhaustion:
    """What the settlement found and the payments it makes, in order."""

    ready: list[bool | None]
    flower_pigs: list[int]
    base_values: list[int | None]
    payments: list[Payment]


def settle_exhaustion(state: HandState) -> Exhaustion:
    """The §6 settlement of the remaining (non-winning) players.

    Order: flower pigs pay first, then clean not-ready players, then kong refunds; within
    each step by payer seat, then payee seat. Only remaining players pay.
    """
    remaining = [s for s in range(4) if not state.won[s]]
    pigs = [s for s in remaining if state.holds_missing(s)]
    clean = [s for s in remaining if s not in pigs]
    base: list[int | None] = [None] * 4
    for s in clean:
        missing = state.missing[s]
        assert missing is not None
        base[s] = ready_value(state.counts[s], state.meld_shapes(s), missing)
    ready: list[bool | None] = [None if state.won[s] else (base[s] is not None) for s in range(4)]
    ready_seats = [s for s in remaining if ready[s]]
    payments: list[Payment] = []
    for pig in pigs:
        payments.extend(
            Payment(payer=pig, payee=c, amount=FLOWER_PIG_PENALTY, reason="flower_pig")
            for c in clean
        )
    for s in clean:
        if ready[s]:
            continue
        for r in ready_seats:
            value = base[r]
            assert value is not None
            payments.append(Payment(payer=s, payee=r, amount=value, reason="not_ready"))
    for s in remaining:
        if ready[s]:
            continue
        payments.extend(
            Payment(payer=s, payee=k.payer, amount=k.amount, reason="kong_refund")
            for k in state.kong_income
            if k.payee == s
        )
    return Exhaustion(ready=ready, flower_pigs=pigs, base_values=base, payments=payments)


def exhaust(log: Log) -> None:
    """The wall is empty and the last discard resolved: settle (§6) and end the hand (§7)."""
    result = settle_exhaustion(log.state)
    log.emit(
        ev.WallExhausted,
        ready=result.ready,
        flower_pigs=result.flower_pigs,
        base_values=result.base_values,
    )
    for p in result.payments:
        log.emit(ev.SettlementItem, payment=p)
    end(log, "wall_exhausted")


def _wall_exhausted(s: HandState, e: ev.WallExhausted) -> None:
    s.ready = list(e.ready)
    s.window = None
    s.turn = s.turn_kind = s.drawn = None


def _settlement_item(s: HandState, e: ev.SettlementItem) -> None:
    s.pay(e.payment)


FOLDS: dict[type, Fold] = {ev.WallExhausted: _wall_exhausted, ev.SettlementItem: _settlement_item}
