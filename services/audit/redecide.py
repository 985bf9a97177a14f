"""Re-deciding a hand: the one loop both audits run over a hand's log.

From a fresh state dealt by the hand's seed (``fresh_hand``), every logged decision is rebuilt
as the command that caused it (``command_for``) and run through the rules engine; after each
decision of a timed hand, the clocks are run at the time the first logged clock event states.
``redecide`` yields what the engine emits at each step (in the log, each step's events follow
the last one's), and stops with one sentence at the first step that cannot be re-decided.
Automatic events (draws, windows, wins on discards, settlement, the end) are never taken from
the log: the caller compares them, field by field (``hand_audit``) or as bytes
(``encoded_audit``).

The loop reads a logged event's type and only the fields named in ``READS``; so it runs on
decoded events and on *peeks* alike: types generated from the events' own (``PEEK_OF``) that
decode only those fields, for a log whose bytes are compared rather than decoded.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from schemas import commands as cmd
from schemas import events as ev
from services.rules import Deal, HandState, handle, start_hand, tick

OPENING = 6
"""HandStarted, four TilesDealt and WallBuilt: the events ``start_hand`` emits."""

Step = list[ev.Event]
"""One step of re-deciding: the events it made. The first step's belong at log position
``OPENING``, and each next step's where the last one's end."""


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


def redecide(state: HandState, logged_at: Callable[[int], Any], n: int) -> Iterator[Step | str]:
    """Re-decide the ``n``-event log whose event at a position ``logged_at`` gives (a decoded
    event or its peek), from ``state`` just after the opening (``fresh_hand``), which it
    advances.

    Yields each step (a decision's events, or a timed hand's clock events after one) before
    going on: the caller compares the step with the log and stops on a difference, or resumes.
    Yields a problem (one sentence naming the logged event's seq) and stops where re-deciding
    cannot go on: a decision the rules refuse, an automatic event where a decision is due,
    a clock that is not where the log says, events after the end, or a log that ends first.
    The next step starts where the last one's events end, so a caller that does not compare
    step by step (``encoded_audit``) must compare all the events at the end.
    """
    rebuild_of = _COMMAND_OF.get  # command_for's lookup, a call fewer per decision
    pos = OPENING
    last: cmd.HandCommand | None = None
    timed = state.clock is not None  # a hand is timed or not from its start
    clocks_due = timed  # they start after the opening and each decision
    while pos < n:
        logged = logged_at(pos)
        if clocks_due and state.phase != "ended":
            clocks_due = False
            if type(logged) not in _CLOCK_TYPES:
                yield f"seq {logged.seq}: the clocks were not stopped or started here"
                return
            ticked = _clock_tick(state, logged, last)
            if ticked is None:  # only a stop names a seat
                yield f"seq {logged.seq}: seat {logged.seat} had no clock running"
                return
            made, actor, limit_of = ticked
            yield made
            # The caller found the log's clock events the same: now whether they are right.
            if not made:
                yield f"seq {logged.seq}: a clock event where no clock changes"
                return
            problem = _clock_limit_problem(made, actor, limit_of)
            if problem is not None:
                yield problem
                return
            pos += len(made)
            last = None
            continue
        if state.phase == "ended":
            yield (
                f"seq {logged.seq}: {tag(logged)} is logged after the hand ended (seq {state.seq})"
            )
            return
        rebuild = rebuild_of(type(logged))
        command = None if rebuild is None else rebuild(logged, state.decision_seq)
        if command is None:
            yield (
                f"seq {logged.seq}: {tag(logged)} is logged where a decision was due, but "
                "no decision causes it; re-deciding the hand does not produce it"
            )
            return
        result = handle(state, command)
        if type(result) is not list:
            assert isinstance(result, cmd.Rejection)
            yield (
                f"seq {logged.seq}: the logged {describe(logged)} is not a legal decision: "
                f"{result.reason} ({result.code})"
            )
            return
        yield result
        pos += len(result)
        last = command
        clocks_due = timed
    if state.phase != "ended":  # a log that ends in hand_ended ends the hand first
        yield f"seq {logged_at(n - 1).seq}: re-deciding the hand does not end it"


# --- the clocks ------------------------------------------------------------------------------


def _clock_tick(
    state: HandState, first: Any, last: cmd.HandCommand | None
) -> tuple[list[ev.Event], int | None, dict[int, int]] | None:
    """Run the clock (applying its events to ``state``) at the time the first logged clock
    event after a decision states: a ``clock_stopped`` its ``used_ms`` after the decision was
    offered, a ``clock_started`` its ``at_ms``. Returns the clock events, the seat that made
    the decision ``last`` and every running seat's time limit before them; None when a logged
    stop names a seat whose clock was not running.

    ``first`` is the logged event, decoded or peeked: only its type tag and the fields named
    above are read.
    """
    clock = state.clock
    assert clock is not None
    stopped = tag(first) == "clock_stopped"
    if stopped:
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
    grace = clock.grace_ms if stopped else first.grace_ms
    made = tick(state, now, timed_out=timed_out, command_id=first.command_id, grace_ms=grace)
    return made, actor, limit_of


def _clock_limit_problem(
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


# --- decisions -------------------------------------------------------------------------------


def command_for(e: Any, decision_seq: int) -> cmd.HandCommand | None:
    """The command that caused decision event ``e`` (decoded or peeked), or None for an
    automatic event.

    A timed-out decision becomes the clock's ``Timeout`` for ``decision_seq`` (the pending
    decision of the state the command is run on); the engine then plays the §8 default.
    """
    rebuild = _COMMAND_OF.get(type(e))
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
"""How each kind of decision event is rebuilt into its command (reading only the fields
``READS`` names, so its peek is rebuilt by the same function)."""


# --- peeks: the fields re-deciding reads, decoded alone ----------------------------------------

READS: dict[type[Any], tuple[str, ...]] = {
    ev.WallBuilt: ("seed",),
    ev.TileDiscarded: ("seat", "tile", "timeout"),
    ev.Passed: ("seat", "timeout"),
    ev.ClaimDeclared: ("seat", "claim", "timeout"),
    ev.Konged: ("seat", "tile", "kind"),
    ev.RobbingWindowOpened: ("declarer", "tile"),
    ev.Won: ("seat", "from_seat", "timeout"),
    ev.ExchangeChosen: ("seat", "tiles", "timeout"),
    ev.MissingSuitDeclared: ("seat", "suit", "timeout"),
    ev.ClockStarted: ("at_ms", "grace_ms"),
    ev.ClockStopped: ("seat", "used_ms"),
    ev.HandPaused: ("seat",),
    ev.HandResumed: ("seat",),
}
"""The fields re-deciding reads of each event type, besides ``seq`` and ``command_id`` (every
event's): ``command_for``'s, ``_clock_tick``'s, the seed's. ``hand_started`` is read in full;
every other event is only compared."""


def _peek_type(kind: type[Any]) -> type[Any]:
    """``kind`` with only the fields ``READS`` names, under its own type tag, and without the
    schema's checks on them (a tile's pattern, a seat's range): the types are the event's, so
    a peek reads like the event, and is decoded in a fraction of its time. Nothing is lost:
    a peeked log passes only if its bytes are the re-decided events' own."""
    hints = typing.get_type_hints(kind)  # without Annotated: the checks are dropped
    reads = READS.get(kind, ())
    fields: list[Any] = []
    for f in msgspec.structs.fields(kind):
        if f.name in reads or f.name in ("seq", "command_id"):
            hint = hints[f.name]
            if f.required:
                fields.append((f.name, hint))
            elif f.default_factory is not msgspec.NODEFAULT:
                fields.append((f.name, hint, msgspec.field(default_factory=f.default_factory)))
            else:
                fields.append((f.name, hint, f.default))
    config = kind.__struct_config__
    return msgspec.defstruct(
        f"{kind.__name__}Peek",
        fields,
        module=__name__,
        tag=config.tag,
        tag_field=config.tag_field,
        kw_only=True,
        frozen=True,
        gc=False,  # peeks hold no cycles: no work for the collector
    )


PEEK_OF: dict[type[Any], type[Any]] = {
    # hand_started is decoded as itself, with the schema's checks: the events re-deciding
    # makes carry its fields (ids, players), so they must be what the schema allows.
    kind: kind if kind is ev.HandStarted else _peek_type(kind)
    for kind in ev.EVENT_TYPES
}
"""The peek type of every event type."""

_COMMAND_OF = COMMAND_OF | {PEEK_OF[kind]: rebuild for kind, rebuild in COMMAND_OF.items()}
_CLOCK_TYPES = frozenset(
    {ev.ClockStarted, ev.ClockStopped, PEEK_OF[ev.ClockStarted], PEEK_OF[ev.ClockStopped]}
)


# --- wording ---------------------------------------------------------------------------------

MAX_VALUE_CHARS = 160


def tag(e: Any) -> str:
    """An event's type tag (its class name for anything else)."""
    config = getattr(type(e), "__struct_config__", None)
    return str(config.tag) if config is not None and config.tag else type(e).__name__


def describe(e: Any) -> str:
    """An event's tag and its identifying fields, e.g. ``tile_discarded (seat 2, tile 5s)``."""
    parts = []
    for name in ("seat", "declarer", "discarder", "tile", "claim", "kind", "suit", "tiles"):
        if name in e.__struct_fields__:
            parts.append(f"{name} {show(getattr(e, name))}")
    if getattr(e, "timeout", False):
        parts.append("on timeout")
    return f"{tag(e)} ({', '.join(parts)})" if parts else tag(e)


def show(value: object) -> str:
    """A field's value as JSON, cut to ``MAX_VALUE_CHARS``."""
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"
