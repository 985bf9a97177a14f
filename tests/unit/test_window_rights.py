"""The claim rights travel in the response window event, so ``apply`` only folds them; logs
written before the event carried them still replay to the same state."""

from __future__ import annotations

import random

import msgspec
import pytest

from schemas import events as ev
from schemas.table import EventEnvelope, decode_event, encode
from services.rules.claims import claims_on
from services.rules.hand import apply, replay
from services.rules.selfplay import play_random_hand
from services.rules.state import HandState
from services.rules.tiles import INDEX


def _hands(n: int) -> list[list[ev.Event]]:
    return [
        play_random_hand(random.Random(i), eager=i % 2 == 0, timeout_rate=0.1)[1] for i in range(n)
    ]


def _legacy(events: list[ev.Event]) -> list[ev.Event]:
    """The log as it was written before ``ResponseWindowOpened.claims`` existed."""
    return [
        msgspec.structs.replace(e, claims=[]) if isinstance(e, ev.ResponseWindowOpened) else e
        for e in events
    ]


@pytest.mark.parametrize("hands", [range(0, 40), range(40, 80)])
def test_a_window_event_carries_the_rights_claims_on_finds(hands: range) -> None:
    windows = 0
    for i in hands:
        _, events = play_random_hand(random.Random(i), eager=i % 2 == 0, timeout_rate=0.1)
        state = HandState()
        for e in events:
            if isinstance(e, ev.ResponseWindowOpened):
                windows += 1
                assert e.claims == claims_on(state, e.seats, INDEX[e.tile])
                assert len(e.claims) == len(e.seats) and all(e.claims)
            apply(state, e)
    assert windows > 100


def test_a_log_without_the_rights_replays_to_the_same_state() -> None:
    for events in _hands(60):
        legacy = _legacy(events)
        assert legacy != events or not any(isinstance(e, ev.ResponseWindowOpened) for e in events)
        for end in range(1, len(events) + 1, 7):
            assert replay(legacy[:end]) == replay(events[:end])
        assert replay(legacy) == replay(events)


def test_an_old_record_without_the_field_decodes_with_no_rights() -> None:
    events = next(e for e in _hands(10) if any(isinstance(x, ev.ResponseWindowOpened) for x in e))
    window = next(e for e in events if isinstance(e, ev.ResponseWindowOpened))
    record = msgspec.json.decode(encode(EventEnvelope(event=window)))
    del record["event"]["claims"]
    old = decode_event(msgspec.json.encode(record))
    assert isinstance(old, ev.ResponseWindowOpened) and old.claims == []
    assert msgspec.structs.replace(old, claims=window.claims) == window


def test_a_log_without_the_rights_passes_the_audit() -> None:
    from services.audit import audit_encoded_hand, audit_hand

    for events in _hands(12):
        legacy = _legacy(events)
        assert audit_hand(legacy).ok, audit_hand(legacy).problems
        encoded = [encode(EventEnvelope(event=e)) for e in legacy]
        assert audit_encoded_hand(encoded).ok


def test_a_log_whose_rights_were_changed_fails_the_audit() -> None:
    from services.audit import audit_hand

    events = next(e for e in _hands(10) if any(isinstance(x, ev.ResponseWindowOpened) for x in e))
    at = next(i for i, e in enumerate(events) if isinstance(e, ev.ResponseWindowOpened))
    window = events[at]
    assert isinstance(window, ev.ResponseWindowOpened)
    forged = msgspec.structs.replace(window, claims=[7 - c for c in window.claims])
    result = audit_hand([*events[:at], forged, *events[at + 1 :]])
    assert not result.ok and any("response_window_opened" in p for p in result.problems)
