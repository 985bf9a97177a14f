"""The audit of encoded logs: an exact log is proven by its bytes, anything else gets the full
audit's verdict, word for word."""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from schemas import events as ev
from schemas.table import EventEnvelope, encode
from services.audit import (
    AuditResult,
    audit_encoded_hand,
    audit_encoded_hands,
    audit_hand,
    audit_hands,
    decode_hand,
)
from services.audit.encoded_audit import audit_if_exact
from services.audit.redecide import PEEK_OF, command_for
from services.rules.clock import tick
from services.rules.hand import handle, legal_actions, start_hand
from services.rules.selfplay import eager_choice, random_seed
from services.rules.shuffle import shuffle
from services.rules.state import pending_seats
from tests.unit.test_audit import hand, mutate

Events = list[ev.Event]


def array(events: Events) -> bytes:
    return msgspec.json.encode(events)


def records(events: Events) -> list[bytes]:
    return [encode(EventEnvelope(event=e)) for e in events]


def timed_hand(seed: int, preset: str = "bullet") -> Events:
    """A timed hand with command ids, answers at random times and some timeouts."""
    rng = random.Random(seed)
    raw = random_seed(rng)
    state, events = start_hand(
        "t", f"t#{seed}", shuffle(raw), seed=raw, clock=preset, command_id="start"
    )
    now = 1_700_000_000_000
    # A lag allowance other than today's: the audit re-derives clocks with the logged one.
    grace = 150
    events += tick(state, now, command_id="start", grace_ms=grace)
    n = 0
    while state.phase != "ended":
        n += 1
        assert state.clock is not None
        seat = rng.choice(pending_seats(state))
        run = state.clock.running[seat]
        command: cmd.HandCommand
        if rng.random() < 0.15:
            now = max(now, run.deadline_ms + state.clock.grace_ms)
            command = cmd.Timeout(seat=seat, decision_seq=run.decision_seq, command_id=f"c{n}")
        else:
            now = min(now + rng.randrange(3_000), run.deadline_ms)
            choice = eager_choice(rng, state, legal_actions(state, seat))
            command = msgspec.structs.replace(choice, command_id=f"c{n}")
        result = handle(state, command)
        assert not isinstance(result, cmd.Rejection), result
        timed_out = seat if isinstance(command, cmd.Timeout) else None
        events += [*result, *tick(state, now, timed_out, command.command_id, grace)]
    return events


def honest_hands() -> list[Events]:
    return [hand(i) for i in range(30)] + [timed_hand(i) for i in range(6)]


# --- peeks -----------------------------------------------------------------------------------


def test_every_event_type_has_a_peek_of_its_tag() -> None:
    assert set(PEEK_OF) == set(ev.EVENT_TYPES)
    for kind, peek in PEEK_OF.items():
        assert peek.__struct_config__.tag == kind.__struct_config__.tag


def test_a_peeked_decision_is_rebuilt_into_the_same_command() -> None:
    decisions = 0
    for events in honest_hands():
        peeks = audit_peeks(array(events))
        assert [type(p) for p in peeks] == [PEEK_OF[type(e)] for e in events]
        for e, p in zip(events, peeks, strict=True):
            assert command_for(p, 7) == command_for(e, 7)
            decisions += command_for(e, 7) is not None
            if isinstance(e, ev.ClockStopped | ev.ClockStarted):
                for name in p.__struct_fields__:
                    assert getattr(p, name) == getattr(e, name)
    assert decisions > 2000


def audit_peeks(encoded: bytes) -> list[Any]:
    from services.audit.encoded_audit import _PEEK_EVENTS

    return _PEEK_EVENTS.decode(encoded)


# --- exact logs --------------------------------------------------------------------------------


def test_an_exact_log_is_proven_by_its_bytes_as_an_array_and_as_records() -> None:
    for events in honest_hands():
        want = audit_hand(events)
        assert want.ok
        assert audit_if_exact(array(events)) == want
        assert audit_if_exact(records(events)) == want
        assert audit_encoded_hand(records(events)) == want


def test_the_same_json_written_otherwise_gets_the_full_audit_and_passes() -> None:
    events = hand(3)
    spaced = json.dumps(json.loads(array(events)), indent=1).encode()
    assert audit_if_exact(spaced) is None
    assert audit_encoded_hand(spaced) == audit_hand(events)
    reordered = [json.dumps(json.loads(r), sort_keys=True).encode() for r in records(events)]
    assert audit_if_exact(reordered) is None
    assert audit_encoded_hand(reordered) == audit_hand(events)
    other_version = [r.replace(b',"v":1}', b',"v":2}') for r in records(events)]
    assert audit_if_exact(other_version) is None
    assert audit_encoded_hand(other_version).ok


@pytest.mark.parametrize("how", ["merge", "split", "drop", "swap"])
def test_records_cut_or_ordered_otherwise_fail_as_the_full_audit_says(how: str) -> None:
    events = hand(4)
    recs = records(events)
    k = 40
    if how == "merge":  # one record holding two events
        recs[k : k + 2] = [recs[k] + b"," + recs[k + 1]]
    elif how == "split":  # one event in two records, the same bytes joined by a comma
        cut = recs[k].index(b",")
        recs[k : k + 1] = [recs[k][:cut], recs[k][cut + 1 :]]
    elif how == "drop":
        del recs[k]
    else:
        recs[k], recs[k + 1] = recs[k + 1], recs[k]
    assert audit_if_exact(recs) is None
    result = audit_encoded_hand(recs)
    assert result.failed, result
    if how in ("merge", "split"):
        assert "undecodable" in result.problems[0]


def test_a_split_record_that_joins_back_into_the_log_still_fails() -> None:
    # Two records cut at another place than between their events: joined with a comma,
    # they read as the exact log, but each alone is not a record.
    events = hand(5)
    recs = records(events)
    k = 30
    pair = recs[k] + b"," + recs[k + 1]
    cut = pair.index(b",", len(recs[k]) + 3)
    recs[k : k + 2] = [pair[:cut], pair[cut + 1 :]]
    assert b",".join(recs) == b",".join(records(events))
    assert audit_if_exact(recs) is None
    assert audit_encoded_hand(recs).failed


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 99), st.randoms(use_true_random=False), st.booleans())
def test_any_changed_field_gets_the_full_audits_verdict(
    i: int, rng: random.Random, as_records: bool
) -> None:
    events = hand(i)
    k = rng.randrange(len(events))
    e = events[k]
    fields = [n for n in e.__struct_fields__ if getattr(e, n) != []]
    name = rng.choice(fields)
    events[k] = msgspec.structs.replace(e, **{name: mutate(getattr(e, name), rng)})
    encoded: Any = records(events) if as_records else array(events)
    want = full_audit(encoded)
    if not want.ok:
        assert audit_if_exact(encoded) is None
    assert audit_encoded_hand(encoded) == want


def full_audit(encoded: Any) -> AuditResult:
    """The verdict without the byte comparison: decode every event, audit them."""
    try:
        events = decode_hand(encoded)
    except msgspec.DecodeError as exc:
        return AuditResult("", "", finished=True, ok=False, problems=[f"undecodable log: {exc}"])
    return audit_hand(events)


def test_timed_hands_with_a_moved_clock_get_the_full_audits_verdict() -> None:
    events = timed_hand(1)
    k = next(k for k, e in enumerate(events) if isinstance(e, ev.ClockStopped) and k > 30)
    stop = events[k]
    assert isinstance(stop, ev.ClockStopped)
    events[k] = msgspec.structs.replace(stop, used_ms=stop.used_ms + 1)
    want = audit_hand(events)
    assert want.failed
    for encoded in (array(events), records(events)):
        assert audit_if_exact(encoded) is None
        assert audit_encoded_hand(encoded) == want


def test_unfinished_and_empty_logs_are_left_to_the_full_audit() -> None:
    events = hand(6)
    for cut in (0, 5, 60):
        assert audit_if_exact(array(events[:cut])) is None
        assert audit_encoded_hand(array(events[:cut])) == audit_hand(events[:cut])
    assert audit_if_exact(b"not json") is None
    assert audit_if_exact([b"{}", b"[]"]) is None
    assert audit_encoded_hand([]) == AuditResult("", "", finished=False, ok=False)


@pytest.mark.parametrize("processes", [1, 2])
def test_many_hands_over_workers_agree_with_the_full_audit(processes: int) -> None:
    hands = [hand(i) for i in range(40)]
    end = hands[5][-1]
    assert isinstance(end, ev.HandEnded)
    hands[5][-1] = msgspec.structs.replace(end, scores=[s + 1 for s in end.scores])
    hands[9] = hands[9][:70]
    encoded: list[Any] = [records(h) if i % 2 else array(h) for i, h in enumerate(hands)]
    got = audit_encoded_hands(iter(encoded), processes=processes)
    assert got == audit_hands(hands)
    assert (got.passed, got.failed, got.skipped) == (38, 1, 1)


def test_a_worker_that_dies_stops_the_audit_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os
    import time

    from services.audit import batch_audit

    parent = os.getpid()
    real = batch_audit.audit_encoded_hand

    def dying(encoded: Any) -> AuditResult:
        if os.getpid() != parent:
            os._exit(3)
        time.sleep(0.01)  # leave the worker chunks to take
        return real(encoded)

    monkeypatch.setattr(batch_audit, "audit_encoded_hand", dying)
    hands = [array(hand(i)) for i in range(40)]
    with pytest.raises(RuntimeError, match="exit code 3"):
        audit_encoded_hands(hands, processes=2, chunk_size=1)


def test_a_log_written_before_a_field_was_added_passes_by_the_full_audit() -> None:
    # As if hand_started had gained "computer_seats" (default []) after this log was written.
    events = hand(8)
    old = array(events).replace(b',"computer_seats":[]', b"", 1)
    assert old != array(events)
    assert audit_if_exact(old) is None
    assert audit_encoded_hand(old) == audit_hand(events)
    old_records = [r.replace(b',"computer_seats":[]', b"", 1) for r in records(events)]
    assert audit_if_exact(old_records) is None
    assert audit_encoded_hand(old_records) == audit_hand(events)


def test_practice_hands_with_pauses_are_proven_by_their_bytes() -> None:
    from tests.unit.test_audit import paused_practice

    for i in range(5):
        events = list(paused_practice(i))
        want = audit_hand(events)
        assert want.ok
        assert audit_if_exact(array(events)) == want
        assert audit_if_exact(records(events)) == want
        peeks = audit_peeks(array(events))
        for e, p in zip(events, peeks, strict=True):
            assert command_for(p, 7) == command_for(e, 7)


def test_a_pause_in_a_timed_hand_gets_the_full_audits_failing_verdict() -> None:
    from tests.unit.test_audit import with_pause

    events = timed_hand(2)
    # Before a decision (the clocks of the one before it are logged): a pause the human of
    # a practice hand could send, in a timed hand.
    k = next(
        k
        for k, e in enumerate(events)
        if k > 30 and isinstance(e, ev.TileDiscarded) and isinstance(events[k - 1], ev.ClockStarted)
    )
    paused = with_pause(events, k)
    want = audit_hand(paused)
    assert want.failed and any("pause_not_allowed" in p for p in want.problems), want.problems
    for encoded in (array(paused), records(paused)):
        assert audit_if_exact(encoded) is None
        assert audit_encoded_hand(encoded) == want
