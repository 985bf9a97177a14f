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
