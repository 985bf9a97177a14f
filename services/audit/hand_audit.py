"""Audit one finished hand from its event log alone.

A hand's log is trusted for nothing but the players' (and the clock's) decisions. The auditor

1. checks the log's shape: seqs ``1..n`` with no gap or duplicate, one table and hand;
2. checks the revealed seed against the commitment published when the hand started;
3. re-derives the deal (the dealt tiles, the wall, the exchange direction) from the seed with
   the RULES.md §1.1 shuffle;
4. re-decides the hand (``redecide``): from a fresh state dealt by the same seed, every logged
   decision is rebuilt as the command that caused it and run through the rules engine, whose
   events must equal the logged ones field for field (automatic events — draws, windows, wins
   on discards, settlement, the end — are never taken from the log, only compared);
   — in a timed hand the clock events after each decision are recomputed the same way from
   the time they state, and every timeout must have come after its deadline and the lag
   allowance, every answer before;
5. checks the money: every payment positive between two seats, the final scores the net of all
   logged payments and summing to zero, the placements those of the scores.

Pure and without I/O: the caller reads the log. Each problem is one English sentence naming
the seq of the event it is about.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from schemas import events as ev
from services.audit.redecide import OPENING, describe, fresh_hand, redecide, show, tag
from services.rules import NAMES, SEED_BYTES, Deal, placements, shuffle


@dataclass(frozen=True, slots=True)
class AuditResult:
    """The verdict on one hand.

    ``finished`` is False for a hand whose log does not end with ``HandEnded``: such a hand is
    skipped (not audited, not failed) and ``ok`` is False with no problems. For a finished hand
    ``ok`` is True exactly when ``problems`` is empty.
    """

    table_id: str
    hand_id: str
    finished: bool
    ok: bool
    problems: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> bool:
        return not self.finished

    @property
    def failed(self) -> bool:
        return self.finished and not self.ok


def audit_hand(events: Sequence[ev.Event]) -> AuditResult:
    """Audit one hand's whole log (see the module docstring for what is checked)."""
    table_id = events[0].table_id if events else ""
    hand_id = events[0].hand_id if events else ""
    ended = events[-1] if events else None
    if not isinstance(ended, ev.HandEnded):
        return AuditResult(table_id, hand_id, finished=False, ok=False)
    if not isinstance(events, list):
        events = list(events)
    problems: list[str] = []
    try:
        _check_sequence(events, table_id, hand_id, problems)
        opening = _check_opening_shape(events, problems)
        if opening is not None:
            seed = _check_seed(opening, ended, problems)
            if seed is not None:
                deal = shuffle(seed)
                _check_deal(opening, deal, problems)
                _check_redecided(events, opening, seed, deal, problems)
        _check_money(events, ended, problems)
    except Exception as exc:  # a malformed log must give a verdict, never crash the caller
        problems.append(f"the audit could not finish: {type(exc).__name__}: {exc}")
    return AuditResult(table_id, hand_id, finished=True, ok=not problems, problems=problems)


# --- 1. the log's shape ----------------------------------------------------------------------


def _check_sequence(
    events: Sequence[ev.Event], table_id: str, hand_id: str, problems: list[str]
) -> None:
    seqs = [e.seq for e in events]
    if seqs != list(range(1, len(events) + 1)):
        seen: set[int] = set()
        expected = 1
        for e in events:
            seq = e.seq
            if seq in seen:
                problems.append(f"seq {seq}: seq {seq} appears twice (a duplicated {tag(e)})")
            elif seq < expected:
                problems.append(f"seq {seq}: {tag(e)} is out of order (after seq {expected - 1})")
            elif seq > expected:
                gap = (
                    f"seq {expected} is"
                    if seq == expected + 1
                    else f"seqs {expected}-{seq - 1} are"
                )
                problems.append(f"seq {seq}: {gap} missing before this {tag(e)} (a gap)")
            seen.add(seq)
            expected = max(expected, seq + 1)
    if {(e.table_id, e.hand_id) for e in events} != {(table_id, hand_id)}:
        for e in events:
            if e.table_id != table_id or e.hand_id != hand_id:
                problems.append(
                    f"seq {e.seq}: event of table {e.table_id!r} hand {e.hand_id!r} in the log "
                    f"of table {table_id!r} hand {hand_id!r}"
                )


class _Opening(msgspec.Struct, frozen=True):
    started: ev.HandStarted
    dealt: list[ev.TilesDealt]
    wall: ev.WallBuilt


def _check_opening_shape(events: Sequence[ev.Event], problems: list[str]) -> _Opening | None:
    head = list(events[:OPENING])
    kinds = [ev.HandStarted, ev.TilesDealt, ev.TilesDealt, ev.TilesDealt, ev.TilesDealt]
    kinds.append(ev.WallBuilt)
    for i, want in enumerate(kinds):
        if i >= len(head) or not isinstance(head[i], want):
            got = tag(head[i]) if i < len(head) else "nothing"
            seq = head[i].seq if i < len(head) else i + 1
            problems.append(
                f"seq {seq}: the opening must be hand_started, four tiles_dealt and wall_built; "
                f"event {i + 1} is {got}, so the deal cannot be audited"
            )
            return None
    started, wall = head[0], head[5]
    assert isinstance(started, ev.HandStarted) and isinstance(wall, ev.WallBuilt)
    dealt = [e for e in head[1:5] if isinstance(e, ev.TilesDealt)]
    return _Opening(started, dealt, wall)


# --- 2. the seed and its commitment ----------------------------------------------------------


def _check_seed(opening: _Opening, ended: ev.HandEnded, problems: list[str]) -> bytes | None:
    wall = opening.wall
    if wall.seed is None:
        problems.append(f"seq {wall.seq}: wall_built reveals no seed, so the deal is unaudited")
        return None
    if ended.seed != wall.seed:
        problems.append(
            f"seq {ended.seq}: hand_ended reveals seed {ended.seed} but wall_built "
            f"(seq {wall.seq}) has {wall.seed}"
        )
    try:
        seed = bytes.fromhex(wall.seed)
    except ValueError:
        problems.append(f"seq {wall.seq}: the seed {wall.seed!r} is not hex")
        return None
    if len(seed) != SEED_BYTES:
        problems.append(f"seq {wall.seq}: the seed has {len(seed)} bytes, not {SEED_BYTES}")
        return None
    digest = hashlib.sha256(seed).hexdigest()
    started = opening.started
    if started.commitment != digest:
        problems.append(
            f"seq {started.seq}: commitment {started.commitment} is not the SHA-256 of the "
            f"revealed seed (which hashes to {digest})"
        )
    return seed


# --- 3. the deal -----------------------------------------------------------------------------


def _check_deal(opening: _Opening, deal: Deal, problems: list[str]) -> None:
    for seat, (dealt, want) in enumerate(zip(opening.dealt, deal.hands, strict=True)):
        if dealt.seat != seat:
            problems.append(
                f"seq {dealt.seq}: tiles_dealt number {seat + 1} is for seat {dealt.seat}, "
                f"not seat {seat}"
            )
        expected = [NAMES[t] for t in want]
        if dealt.tiles != expected:
            problems.append(
                f"seq {dealt.seq}: seat {seat}'s dealt tiles are not the shuffle's: "
                + _diff_tiles(dealt.tiles, expected)
            )
    wall = opening.wall
    expected_wall = [NAMES[t] for t in deal.wall]
    if wall.tiles != expected_wall:
        problems.append(
            f"seq {wall.seq}: the wall is not the shuffle's: "
            + _diff_tiles(wall.tiles, expected_wall)
        )
    if wall.direction != deal.direction:
        problems.append(
            f"seq {wall.seq}: the exchange direction {wall.direction!r} is not the shuffle's "
            f"{deal.direction!r}"
        )


def _diff_tiles(logged: list[str], expected: list[str]) -> str:
    for i, (a, b) in enumerate(zip(logged, expected, strict=False)):
        if a != b:
            return f"position {i} is {a}, the shuffle of the seed puts {b} there"
    return f"{len(logged)} tiles logged, the shuffle of the seed gives {len(expected)}"


# --- 4. re-deciding the hand -----------------------------------------------------------------


def _check_redecided(
    events: Sequence[ev.Event], opening: _Opening, seed: bytes, deal: Deal, problems: list[str]
) -> None:
    state, fresh = fresh_hand(opening.started, deal, seed)
    # The seed and the deal were checked above: compare the opening's other fields only.
    for logged, made in zip(events[:OPENING], fresh, strict=True):
        if logged != made:
            if type(logged) is type(made):
                checked = _CHECKED_ABOVE[type(made)]
                made = msgspec.structs.replace(made, **{f: getattr(logged, f) for f in checked})
            if logged != made:
                problems.append(_mismatch(logged, made))
    n = len(events)
    pos = OPENING
    for step in redecide(state, events.__getitem__, n):
        if isinstance(step, str):
            problems.append(step)
            return
        end = pos + len(step)
        if events[pos:end] != step:
            held = events[pos:end]  # shorter than ``step`` where the log ends early
            then = [_as_logged_then(a, b) for a, b in zip(held, step, strict=False)]
            step = then + step[len(then) :]
        if events[pos:end] != step:
            problems.append(_first_difference(events, pos, step))
            return
        pos = end


def _as_logged_then(logged: ev.Event, made: ev.Event) -> ev.Event:
    """``made`` as a log written before window events carried the claim rights holds it:
    without them (``services.rules.hand.apply`` works them out when replaying such a log)."""
    if (
        isinstance(made, ev.ResponseWindowOpened)
        and isinstance(logged, ev.ResponseWindowOpened)
        and not logged.claims
    ):
        return msgspec.structs.replace(made, claims=[])
    return made


def _first_difference(events: Sequence[ev.Event], pos: int, made: list[ev.Event]) -> str:
    """The first of the re-decided events ``made`` that the log from ``pos`` does not hold."""
    n = len(events)
    clocks = type(made[0]) in _CLOCK_EVENTS  # only the clock (``tick``) makes clock events
    for i, want in enumerate(made):
        if pos + i >= n and not clocks:
            return (
                f"seq {events[-1].seq}: the log ends here but re-deciding continues "
                f"with {tag(want)} (seq {want.seq})"
            )
        if pos + i >= n or events[pos + i] != want:
            # Past the end of the log, clock events are held to its last event.
            return _mismatch(events[min(pos + i, n - 1)], want)
    raise AssertionError("the events are the same")


_CLOCK_EVENTS = (ev.ClockStarted, ev.ClockStopped)

_CHECKED_ABOVE: dict[type[Any], tuple[str, ...]] = {
    ev.HandStarted: ("commitment",),
    ev.TilesDealt: ("seat", "tiles"),
    ev.WallBuilt: ("tiles", "direction", "seed"),
}


def _mismatch(logged: ev.Event, made: ev.Event) -> str:
    if type(logged) is not type(made):
        return (
            f"seq {logged.seq}: the log has {describe(logged)} but re-deciding the hand gives "
            f"{describe(made)}"
        )
    diffs = [
        f"{name} {show(a)} logged, {show(b)} re-decided"
        for name in logged.__struct_fields__
        if (a := getattr(logged, name)) != (b := getattr(made, name))
    ]
    return f"seq {logged.seq}: {tag(logged)} differs from the re-decided event: " + "; ".join(diffs)


# --- 5. the money ----------------------------------------------------------------------------


def _check_money(events: Sequence[ev.Event], ended: ev.HandEnded, problems: list[str]) -> None:
    check_payments(_payments(events), ended, problems)


def _payments(events: Sequence[ev.Event]) -> Iterator[tuple[int, ev.Payment]]:
    """Every payment the log records, in order, with the seq of its event."""
    for e in events:
        kind = type(e)
        if kind is ev.TileDrawn or kind is ev.TileDiscarded or kind not in _PAYING:
            continue
        paid = [e.payment] if isinstance(e, ev.SettlementItem) else getattr(e, "payments", [])
        for p in paid:
            yield e.seq, p


def check_payments(
    paid: Iterable[tuple[int, ev.Payment]], ended: ev.HandEnded, problems: list[str]
) -> None:
    """Every payment (with the seq of its event) positive and between two seats; the final
    scores the net of them, summing to zero; the placements those of the scores."""
    net = [0, 0, 0, 0]
    for seq, p in paid:
        if not (_is_seat(p.payer) and _is_seat(p.payee)) or p.payer == p.payee:
            problems.append(
                f"seq {seq}: a payment from seat {p.payer} to seat {p.payee} is not "
                "between two different seats 0-3"
            )
            continue
        if not isinstance(p.amount, int) or p.amount <= 0:
            problems.append(f"seq {seq}: a payment amount of {p.amount!r} is not positive")
        net[p.payer] -= p.amount
        net[p.payee] += p.amount
    scores = list(ended.scores)
    if sum(scores) != 0:
        problems.append(f"seq {ended.seq}: the final scores {scores} do not sum to zero")
    if scores != net:
        problems.append(
            f"seq {ended.seq}: the final scores {scores} are not the sum of the logged "
            f"payments per seat, {net}"
        )
    elif list(ended.placements) != placements(scores):
        problems.append(
            f"seq {ended.seq}: placements {list(ended.placements)} do not follow from the "
            f"scores (expected {placements(scores)})"
        )


_PAYING = frozenset({ev.Won, ev.Konged, ev.SettlementItem})


def _is_seat(x: object) -> bool:
    return isinstance(x, int) and 0 <= x <= 3
