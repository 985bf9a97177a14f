"""The audit of an encoded hand that is exactly what re-deciding it writes: compared as bytes.

An honest hand's log is, byte for byte, the msgspec JSON of the events the rules engine emits
when its decisions are re-decided: the table service encodes the engine's own events. So a
log can be proven honest without decoding every event, which (with the schema's tile
patterns checked string by string) costs several times as much as decoding only what
re-deciding reads, and about as much as re-deciding itself:

1. *peek* at the events re-deciding reads, as the peek types ``redecide.PEEK_OF`` generates
   from the events' own (the type tag and the fields ``redecide.READS`` names; ``hand_started``
   in full, as itself). An array of events is peeked at in one go; log records one by one,
   only those read;
2. re-decide from ``fresh_hand`` dealt by the seed, with the loop ``hand_audit`` runs too
   (``redecide``): every decision rebuilt and run through ``handle``, the clocks run, each
   timeout and answer held to its time limit;
3. encode the re-decided events and compare them with the log: the whole array at once, or
   every log record with its event's record;
4. check the money of the re-decided events (``check_payments``, as the full audit does).

Equal bytes decode to equal events, so a log that passes here passes every check of
``audit_hand`` (seqs, commitment, deal, every event field by field, money) with the same
verdict. Anything else (a byte out of place, other JSON formatting, a field a newer schema
added, a rejection) gets no verdict here: the caller runs the full audit, which says what is
wrong. tests/unit/test_encoded_audit.py holds the two to the same verdicts.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from functools import reduce
from itertools import repeat
from typing import Any

import msgspec

from schemas import events as ev
from schemas.table import EventEnvelope
from services.audit.hand_audit import AuditResult, check_payments
from services.audit.redecide import OPENING, PEEK_OF, fresh_hand, redecide
from services.rules import SEED_BYTES, HandState, shuffle

_ANY_PEEK: Any = reduce(operator.or_, PEEK_OF.values())  # any event's peek
_PEEK_EVENTS = msgspec.json.Decoder(list[_ANY_PEEK])
_PEEK_RECORD: Any = msgspec.json.Decoder(
    msgspec.defstruct("PeekRecord", [("event", _ANY_PEEK)], gc=False)  # an EventEnvelope's
)
_ENCODER = msgspec.json.Encoder()


def _record_frame() -> tuple[bytes, bytes]:
    """What a log record (``EventEnvelope``) adds before and after its event's JSON."""
    event = ev.Passed(table_id="", hand_id="", seq=1, seat=0)
    inner = _ENCODER.encode(event)
    before, after = _ENCODER.encode(EventEnvelope(event=event)).split(inner)
    return before, after


_RECORD_BEFORE, _RECORD_AFTER = _record_frame()


# --- the audit ----------------------------------------------------------------------------


def audit_if_exact(encoded: bytes | bytearray | memoryview | Sequence[bytes]) -> AuditResult | None:
    """The verdict (passed) on a finished hand whose log is byte for byte what re-deciding it
    writes; None for any other log, whose verdict only the full audit gives.

    ``encoded`` is msgspec JSON: one array of the hand's events, or its log records in order
    (``EventEnvelope`` documents, one per event, as ``table.events`` holds them).
    """
    try:
        if isinstance(encoded, bytes | bytearray | memoryview):
            records = None
            redecided = _redecide(_PEEK_EVENTS.decode(encoded), (), encoded)
        else:
            # Only the records re-deciding reads are peeked at, one by one: the decisions
            # (about half), the opening's two and the first clock event after each decision.
            records = encoded
            redecided = _redecide([], records, None)
    except Exception:  # e.g. JSON that is not an array of events: the full audit says why
        return None
    if redecided is None:
        return None
    made, state = redecided
    if records is None:
        if _ENCODER.encode(made) != encoded:
            return None
    else:
        # Record by record: each log record the same bytes as its re-decided event framed.
        before, after, encode = _RECORD_BEFORE, _RECORD_AFTER, _ENCODER.encode
        if [before + encode(e) + after for e in made] != list(records):
            return None
    ended = made[-1]
    assert isinstance(ended, ev.HandEnded)  # re-deciding stopped at the end of the hand
    # The money as _check_money checks it. The payments the re-decided (so the logged) events
    # record are those the state applied, in order; seqs only go into problems, not kept here.
    problems: list[str] = []
    check_payments(zip(repeat(0), state.payments), ended, problems)
    if problems:
        return None
    return AuditResult(ended.table_id, ended.hand_id, finished=True, ok=True)


def _redecide(
    peeks: list[Any], records: Sequence[bytes], array: bytes | bytearray | memoryview | None
) -> tuple[list[ev.Event], HandState] | None:
    """The events re-deciding the peeked log emits and the final state; None where
    ``redecide`` finds a problem (or where the log is not even shaped for it). The log is its
    events' ``peeks`` (from ``array``), or (with no peeks) its ``records``, peeked at as they
    are read."""
    lazy = not peeks
    n = len(records) if lazy else len(peeks)
    if n <= OPENING:
        return None
    logged_at: Callable[[int], Any]
    if lazy:
        decode = _PEEK_RECORD.decode

        def logged_at(pos: int) -> Any:
            return decode(records[pos]).event

    else:
        logged_at = peeks.__getitem__
    started, wall = logged_at(0), logged_at(OPENING - 1)
    if type(started) is not ev.HandStarted or type(wall) is not _WALL or wall.seed is None:
        return None
    try:
        seed = bytes.fromhex(wall.seed)
    except ValueError:
        return None
    if len(seed) != SEED_BYTES:
        return None
    state, made = fresh_hand(started, shuffle(seed), seed)
    # The opening's bytes are compared at once (and again with the rest at the end): a log
    # written before its schema changed (an event gained a field) or with a forged deal
    # differs here already, and the full audit takes over before re-deciding it all.
    opening = list(map(_ENCODER.encode, made))
    if lazy:
        framed = [_RECORD_BEFORE + e + _RECORD_AFTER for e in opening]
        if framed != list(records[:OPENING]):
            return None
    else:
        assert array is not None
        head = b"[" + b",".join(opening) + b","
        if array[: len(head)] != head:
            return None
    # The steps are not compared one by one: all the events are, as bytes, by the caller.
    for step in redecide(state, logged_at, n):
        if isinstance(step, str):
            return None
        made += step
    return made, state


_WALL = PEEK_OF[ev.WallBuilt]
