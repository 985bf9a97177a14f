"""Audit one finished hand from its event log alone.

A hand's log is trusted for nothing but the players' (and the clock's) decisions. The auditor

1. checks the log's shape: seqs ``1..n`` with no gap or duplicate, one table and hand;
2. checks the revealed seed against the commitment published when the hand started;
3. re-derives the deal (the dealt tiles, the wall, the exchange direction) from the seed with
   the RULES.md §1.1 shuffle;
4. re-decides the hand: from a fresh state dealt by the same seed, every logged decision is
   rebuilt as the command that caused it and run through the rules engine, whose events must
   equal the logged ones field for field (automatic events — draws, windows, wins on discards,
   settlement, the end — are never taken from the log, only compared);
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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from schemas import commands as cmd
from schemas import events as ev
from services.rules import (
    NAMES,
    SEED_BYTES,
    Deal,
    HandState,
    handle,
    placements,
    shuffle,
    start_hand,
    tick,
)

OPENING = 6
"""HandStarted, four TilesDealt and WallBuilt: the events ``start_hand`` emits."""

MAX_VALUE_CHARS = 160


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
                problems.append(f"seq {seq}: seq {seq} appears twice (a duplicated {_tag(e)})")
            elif seq < expected:
                problems.append(f"seq {seq}: {_tag(e)} is out of order (after seq {expected - 1})")
            elif seq > expected:
                gap = (
                    f"seq {expected} is"
                    if seq == expected + 1
                    else f"seqs {expected}-{seq - 1} are"
                )
                problems.append(f"seq {seq}: {gap} missing before this {_tag(e)} (a gap)")
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
            got = _tag(head[i]) if i < len(head) else "nothing"
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
    last: cmd.HandCommand | None = None
    clocks_due = state.clock is not None  # they start after the opening and each decision
    while pos < n:
        logged = events[pos]
        if clocks_due and state.phase != "ended":
            clocks_due = False
            if not isinstance(logged, _CLOCK_EVENTS):
                problems.append(f"seq {logged.seq}: the clocks were not stopped or started here")
                return
            step = _check_clock(events, pos, state, last, problems)
            if step == 0:
                return
            pos += step
            last = None
            continue
        if state.phase == "ended":
            problems.append(
                f"seq {logged.seq}: {_tag(logged)} is logged after the hand ended (seq {state.seq})"
            )
            return
        command = command_for(logged, state.decision_seq)
        if command is None:
            problems.append(
                f"seq {logged.seq}: {_tag(logged)} is logged where a decision was due, but "
                "no decision causes it; re-deciding the hand does not produce it"
            )
            return
        result = handle(state, command)
        if isinstance(result, cmd.Rejection):
            problems.append(
                f"seq {logged.seq}: the logged {_describe(logged)} is not a legal decision: "
                f"{result.reason} ({result.code})"
            )
            return
        k = len(result)
        if events[pos : pos + k] != result:
            for i, made in enumerate(result):
                if pos + i >= n:
                    problems.append(
                        f"seq {events[-1].seq}: the log ends here but re-deciding continues "
                        f"with {_tag(made)} (seq {made.seq})"
                    )
                    return
                if events[pos + i] != made:
                    problems.append(_mismatch(events[pos + i], made))
                    return
        pos += k
        last = command
        clocks_due = state.clock is not None
    if state.phase != "ended":  # unreachable for a log ending in hand_ended; kept as a guard
        problems.append(f"seq {events[-1].seq}: re-deciding the hand does not end it")


def fresh_hand(started: Any, deal: Deal, seed: bytes) -> tuple[HandState, list[ev.Event]]:
    """``start_hand`` as the logged ``hand_started`` says (its ids, players, clock and flags),
    dealt by ``seed``: the state re-deciding starts from, and the opening it emits."""
    return start_hand(
        started.table_id,
        started.hand_id,
        deal,
        players=list(started.seats),
        seed=seed,
        command_id=started.command_id,
        clock=started.clock,
        rated=started.rated,
        computer_seats=list(started.computer_seats),
        pace=started.pace,
    )


_CLOCK_EVENTS = (ev.ClockStarted, ev.ClockStopped)


def _check_clock(
    events: Sequence[ev.Event],
    pos: int,
    state: HandState,
    last: cmd.HandCommand | None,
    problems: list[str],
) -> int:
    """Recompute the clock events at ``pos`` from the time they state; how many there are
    (0 after a problem)."""
    first = events[pos]
    ticked = clock_tick(state, first, last)
    if ticked is None:
        assert isinstance(first, ev.ClockStopped)  # only a stop names a seat
        problems.append(f"seq {first.seq}: seat {first.seat} had no clock running")
        return 0
    made, actor, limit_of = ticked
    if not made or events[pos : pos + len(made)] != made:
        for i, want in enumerate(made):
            if pos + i >= len(events) or events[pos + i] != want:
                got = events[min(pos + i, len(events) - 1)]
                problems.append(_mismatch(got, want))
                return 0
        problems.append(f"seq {first.seq}: a clock event where no clock changes")
        return 0
    problem = clock_limit_problem(made, actor, limit_of)
    if problem is not None:
        problems.append(problem)
        return 0
    return len(made)


def clock_tick(
    state: HandState, first: Any, last: cmd.HandCommand | None
) -> tuple[list[ev.Event], int | None, dict[int, int]] | None:
    """Run the clock (applying its events to ``state``) at the time the first logged clock
    event after a decision states: a ``clock_stopped`` its ``used_ms`` after the decision was
    offered, a ``clock_started`` its ``at_ms``. Returns the clock events, the seat that made
    the decision ``last`` and every running seat's time limit before them; None when a logged
    stop names a seat whose clock was not running.

    ``first`` is the logged event, decoded or peeked (see ``encoded_audit``): only its type
    tag and the fields named above are read.
    """
    clock = state.clock
    assert clock is not None
    if _tag(first) == "clock_stopped":
        run = clock.running.get(first.seat)
        if run is None:
            return None
        now = run.offered_ms + first.used_ms
    else:
        now = first.at_ms
    actor = None if last is None else last.seat
    limit_of = {s: r.deadline_ms - r.offered_ms + clock.grace_ms for s, r in clock.running.items()}
    timed_out = actor if isinstance(last, cmd.Timeout) else None
    # New clocks run with the hand's lag allowance as logged (a hand played under an earlier
    # policy re-derives exactly): the opening's clock_started sets it for the hand.
    grace = clock.grace_ms
    if _tag(first) == "clock_started":
        grace = getattr(first, "grace_ms", grace)
    made = tick(state, now, timed_out=timed_out, command_id=first.command_id, grace_ms=grace)
    return made, actor, limit_of


def clock_limit_problem(
    made: list[ev.Event], actor: int | None, limit_of: dict[int, int]
) -> str | None:
    """Why the acting seat's stopped clock is wrong: a timeout before its time limit ran out,
    or an answer after it; None when it is right (or the seat had no clock)."""
    for e in made:
        if isinstance(e, ev.ClockStopped) and e.seat == actor:
            limit = limit_of[e.seat]
            if e.timeout and e.used_ms < limit:
                return (
                    f"seq {e.seq}: seat {e.seat} was timed out after {e.used_ms} ms, "
                    f"before its {limit} ms ran out"
                )
            if not e.timeout and e.used_ms > limit:
                return (
                    f"seq {e.seq}: seat {e.seat} answered after {e.used_ms} ms, past its {limit} ms"
                )
    return None


_CHECKED_ABOVE: dict[type[Any], tuple[str, ...]] = {
    ev.HandStarted: ("commitment",),
    ev.TilesDealt: ("seat", "tiles"),
    ev.WallBuilt: ("tiles", "direction", "seed"),
}


def command_for(e: ev.Event, decision_seq: int) -> cmd.HandCommand | None:
    """The command that caused decision event ``e``, or None for an automatic event.

    A timed-out decision becomes the clock's ``Timeout`` for ``decision_seq`` (the pending
    decision of the state the command is run on); the engine then plays the §8 default.

    ``encoded_audit.peek_command`` does the same for an event's peek, with the same
    functions (``COMMAND_OF``).
    """
    rebuild = COMMAND_OF.get(type(e))
    return None if rebuild is None else rebuild(e, decision_seq)


def _timed_out(e: Any, decision_seq: int) -> cmd.Timeout:
    return cmd.Timeout(seat=e.seat, command_id=e.command_id, decision_seq=decision_seq)


def _discarded(e: Any, decision_seq: int) -> cmd.HandCommand:
    if e.timeout:
        return _timed_out(e, decision_seq)
    return cmd.Discard(seat=e.seat, tile=e.tile, command_id=e.command_id)


def _passed(e: Any, decision_seq: int) -> cmd.HandCommand:
    if e.timeout:
        return _timed_out(e, decision_seq)
    return cmd.Pass(seat=e.seat, command_id=e.command_id)


def _claimed(e: Any, decision_seq: int) -> cmd.HandCommand | None:
    if e.timeout:
        return _timed_out(e, decision_seq)
    if e.claim == "hu":
        return cmd.Hu(seat=e.seat, command_id=e.command_id)
    if e.claim == "pung":
        return cmd.Pung(seat=e.seat, command_id=e.command_id)
    if e.claim == "kong":
        return cmd.ClaimKong(seat=e.seat, command_id=e.command_id)
    return None


def _konged(e: Any, decision_seq: int) -> cmd.HandCommand | None:
    # An exposed kong, or an added kong after a robbing window, is automatic; an added
    # kong nobody could rob is logged straight away, as a decision.
    if e.kind in ("concealed", "added"):
        return cmd.Kong(seat=e.seat, tile=e.tile, command_id=e.command_id)
    return None


def _robbing(e: Any, decision_seq: int) -> cmd.HandCommand:
    return cmd.Kong(seat=e.declarer, tile=e.tile, command_id=e.command_id)


def _won(e: Any, decision_seq: int) -> cmd.HandCommand | None:
    if e.from_seat is not None:
        return None
    if e.timeout:
        return _timed_out(e, decision_seq)
    return cmd.Hu(seat=e.seat, command_id=e.command_id)


def _exchanged(e: Any, decision_seq: int) -> cmd.HandCommand:
    if e.timeout:
        return _timed_out(e, decision_seq)
    return cmd.ChooseExchange(seat=e.seat, tiles=list(e.tiles), command_id=e.command_id)


def _declared(e: Any, decision_seq: int) -> cmd.HandCommand:
    if e.timeout:
        return _timed_out(e, decision_seq)
    return cmd.DeclareMissing(seat=e.seat, suit=e.suit, command_id=e.command_id)


def _paused(e: Any, decision_seq: int) -> cmd.HandCommand:
    return cmd.Pause(seat=e.seat, command_id=e.command_id)


def _resumed(e: Any, decision_seq: int) -> cmd.HandCommand:
    return cmd.Resume(seat=e.seat, command_id=e.command_id)


COMMAND_OF: dict[type[Any], Callable[[Any, int], cmd.HandCommand | None]] = {
    ev.TileDiscarded: _discarded,
    ev.Passed: _passed,
    ev.ClaimDeclared: _claimed,
    ev.Konged: _konged,
    ev.RobbingWindowOpened: _robbing,
    ev.Won: _won,
    ev.ExchangeChosen: _exchanged,
    ev.MissingSuitDeclared: _declared,
    # Pause and resume are the human's decisions too: re-decided, so one the rules refuse
    # (in a timed or rated hand, say) fails the audit.
    ev.HandPaused: _paused,
    ev.HandResumed: _resumed,
}
"""How each kind of decision event is rebuilt into its command. The functions read only the
fields they name, so ``encoded_audit`` rebuilds its peeks (the same fields, decoded alone) with
them too."""


def _mismatch(logged: ev.Event, made: ev.Event) -> str:
    if type(logged) is not type(made):
        return (
            f"seq {logged.seq}: the log has {_describe(logged)} but re-deciding the hand gives "
            f"{_describe(made)}"
        )
    diffs = [
        f"{name} {_show(a)} logged, {_show(b)} re-decided"
        for name in logged.__struct_fields__
        if (a := getattr(logged, name)) != (b := getattr(made, name))
    ]
    return f"seq {logged.seq}: {_tag(logged)} differs from the re-decided event: " + "; ".join(
        diffs
    )


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


# --- wording ---------------------------------------------------------------------------------


def _is_seat(x: object) -> bool:
    return isinstance(x, int) and 0 <= x <= 3


def _tag(e: Any) -> str:
    tag = getattr(type(e), "__struct_config__", None)
    return str(tag.tag) if tag is not None and tag.tag else type(e).__name__


def _describe(e: ev.Event) -> str:
    """An event's tag and its identifying fields, e.g. ``tile_discarded (seat 2, tile 5s)``."""
    parts = []
    for name in ("seat", "declarer", "discarder", "tile", "claim", "kind", "suit", "tiles"):
        if name in e.__struct_fields__:
            parts.append(f"{name} {_show(getattr(e, name))}")
    if getattr(e, "timeout", False):
        parts.append("on timeout")
    return f"{_tag(e)} ({', '.join(parts)})" if parts else _tag(e)


def _show(value: object) -> str:
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"
