"""The audit of an encoded hand that is exactly what re-deciding it writes: compared as bytes.

An honest hand's log is, byte for byte, the msgspec JSON of the events the rules engine emits
when its decisions are re-decided: the table service encodes the engine's own events. So a
log can be proven honest without decoding every event, which (with the schema's tile
patterns checked string by string) costs about as much as re-deciding the whole hand:

1. *peek* at the events re-deciding reads, with small decoding types that take only the type
   tag and the fields it needs: ``hand_started`` in full (its own type), the revealed seed,
   each decision's fields (as ``command_for`` reads them) and each first clock event's time.
   An array of events is peeked at in one go; log records one by one, only those read;
2. re-decide from ``start_hand`` dealt by the seed, exactly as ``hand_audit`` does: every
   decision rebuilt by the same functions as ``command_for`` and run through ``handle``, the
   clocks by ``clock_tick``, each timeout and answer held to its time limit;
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

from collections.abc import Sequence
from itertools import repeat
from typing import Any

import msgspec

from schemas import commands as cmd
from schemas import events as ev
from schemas.table import EventEnvelope
from services.audit.hand_audit import (
    COMMAND_OF,
    OPENING,
    AuditResult,
    check_payments,
    clock_limit_problem,
    clock_tick,
    fresh_hand,
)
from services.rules import SEED_BYTES, HandState, handle, shuffle

# --- peeks: the few fields re-deciding reads, under the events' own type tags ---------------


class _Peek(msgspec.Struct, kw_only=True, tag_field="type", gc=False):
    command_id: str = ""


class _Wall(_Peek, tag="wall_built"):
    seed: str | None = None


class _Discarded(_Peek, tag="tile_discarded"):
    seat: int
    tile: str
    timeout: bool = False


class _Passed(_Peek, tag="passed"):
    seat: int
    timeout: bool = False


class _Claimed(_Peek, tag="claim_declared"):
    seat: int
    claim: str
    timeout: bool = False


class _Konged(_Peek, tag="konged"):
    seat: int
    tile: str
    kind: str


class _Robbing(_Peek, tag="robbing_window_opened"):
    declarer: int
    tile: str


class _Won(_Peek, tag="won"):
    seat: int
    from_seat: int | None
    timeout: bool = False


class _Exchanged(_Peek, tag="exchange_chosen"):
    seat: int
    tiles: list[str]
    timeout: bool = False


class _Declared(_Peek, tag="missing_suit_declared"):
    seat: int
    suit: str
    timeout: bool = False


class _ClockStarted(_Peek, tag="clock_started"):
    at_ms: int
    grace_ms: int = 0


class _ClockStopped(_Peek, tag="clock_stopped"):
    seat: int
    used_ms: int


class _Paused(_Peek, tag="hand_paused"):
    seat: int


class _Resumed(_Peek, tag="hand_resumed"):
    seat: int


# Automatic events: only compared, never read.
class _Dealt(_Peek, tag="tiles_dealt"): ...


class _Resolved(_Peek, tag="exchange_resolved"): ...


class _Revealed(_Peek, tag="missing_suits_revealed"): ...


class _Drawn(_Peek, tag="tile_drawn"): ...


class _Window(_Peek, tag="response_window_opened"): ...


class _Punged(_Peek, tag="punged"): ...


class _Exhausted(_Peek, tag="wall_exhausted"): ...


class _Item(_Peek, tag="settlement_item"): ...


class _Ended(_Peek, tag="hand_ended"): ...


# hand_started is decoded in full, as its own type: it is one small event, and re-deciding
# starts from all of it (``fresh_hand``).
_AnyPeek = (
    ev.HandStarted
    | _Wall
    | _Discarded
    | _Passed
    | _Claimed
    | _Konged
    | _Robbing
    | _Won
    | _Exchanged
    | _Declared
    | _ClockStarted
    | _ClockStopped
    | _Paused
    | _Resumed
    | _Dealt
    | _Resolved
    | _Revealed
    | _Drawn
    | _Window
    | _Punged
    | _Exhausted
    | _Item
    | _Ended
)

PEEK_OF: dict[type[Any], type[Any]] = {
    ev.HandStarted: ev.HandStarted,
    ev.WallBuilt: _Wall,
    ev.TileDiscarded: _Discarded,
    ev.Passed: _Passed,
    ev.ClaimDeclared: _Claimed,
    ev.Konged: _Konged,
    ev.RobbingWindowOpened: _Robbing,
    ev.Won: _Won,
    ev.ExchangeChosen: _Exchanged,
    ev.MissingSuitDeclared: _Declared,
    ev.ClockStarted: _ClockStarted,
    ev.ClockStopped: _ClockStopped,
    ev.HandPaused: _Paused,
    ev.HandResumed: _Resumed,
    ev.TilesDealt: _Dealt,
    ev.ExchangeResolved: _Resolved,
    ev.MissingSuitsRevealed: _Revealed,
    ev.TileDrawn: _Drawn,
    ev.ResponseWindowOpened: _Window,
    ev.Punged: _Punged,
    ev.WallExhausted: _Exhausted,
    ev.SettlementItem: _Item,
    ev.HandEnded: _Ended,
}
"""The peek type of every event type (tests hold it to ``EVENT_TYPES``)."""

_COMMAND_OF = {PEEK_OF[kind]: rebuild for kind, rebuild in COMMAND_OF.items()}
"""A decision's peek is rebuilt into its command by the same function as its decoded event."""


def peek_command(peek: Any, decision_seq: int) -> cmd.HandCommand | None:
    """``command_for`` of a peek: the command that caused the peeked decision event."""
    rebuild = _COMMAND_OF.get(type(peek))
    return None if rebuild is None else rebuild(peek, decision_seq)


class _Record(msgspec.Struct, gc=False):
    event: _AnyPeek


_PEEK_EVENTS = msgspec.json.Decoder(list[_AnyPeek])
_PEEK_RECORD = msgspec.json.Decoder(_Record)
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
    """The events re-deciding the peeked log emits, as ``hand_audit._check_redecided`` runs
    it, and the final state; None where that would find a problem (or where the log is not
    even shaped for it). The log is its events' ``peeks`` (from ``array``), or (with no
    peeks) its ``records``, peeked at as they are read."""
    lazy = not peeks
    n = len(records) if lazy else len(peeks)
    decode = _PEEK_RECORD.decode
    if n <= OPENING:
        return None
    if lazy:
        started, wall = decode(records[0]).event, decode(records[OPENING - 1]).event
    else:
        started, wall = peeks[0], peeks[OPENING - 1]
    if type(started) is not ev.HandStarted or type(wall) is not _Wall or wall.seed is None:
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
    pos = OPENING
    last: cmd.HandCommand | None = None
    timed = state.clock is not None
    clocks_due = timed  # they start after the opening and each decision
    rebuilder = _COMMAND_OF.get
    while pos < n:
        if state.phase == "ended":
            return None  # events after the end
        peek = decode(records[pos]).event if lazy else peeks[pos]
        if clocks_due:
            clocks_due = False
            if type(peek) is not _ClockStarted and type(peek) is not _ClockStopped:
                return None
            ticked = clock_tick(state, peek, last)
            if ticked is None or not ticked[0] or clock_limit_problem(*ticked) is not None:
                return None
            made += ticked[0]
            pos += len(ticked[0])
            last = None
            continue
        rebuild = rebuilder(type(peek))
        if rebuild is None:
            return None  # an automatic event where a decision is due
        command = rebuild(peek, state.decision_seq)
        if command is None:
            return None
        result = handle(state, command)
        if type(result) is not list:
            return None  # a Rejection: the logged decision is not legal
        made += result
        pos += len(result)
        last = command
        clocks_due = timed
    if pos != n or state.phase != "ended":
        return None
    return made, state
