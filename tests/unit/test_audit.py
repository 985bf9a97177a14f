"""The hand auditor: honest hands pass, every kind of tampering is named by its seq."""

from __future__ import annotations

import hashlib
import random
import re
from functools import cache
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
from services.rules.hand import handle, legal_actions, replay, start_hand
from services.rules.selfplay import eager_choice, play_random_hand, random_seed
from services.rules.shuffle import shuffle
from services.rules.state import pending_seats
from services.rules.tiles import INDEX, NAMES
from services.rules.timeouts import default_command

replace = msgspec.structs.replace
Events = list[ev.Event]


@cache
def honest(i: int, eager: bool = True, timeout_rate: float = 0.05) -> tuple[ev.Event, ...]:
    _, events = play_random_hand(random.Random(i), eager=eager, timeout_rate=timeout_rate)
    return tuple(events)


def hand(i: int = 0, **kw: Any) -> Events:
    return list(honest(i, **kw))


def find(events: Events, pred: Any, start: int = 0) -> int:
    """The index of the first event (from ``start``) for which ``pred`` holds."""
    return next(i for i in range(start, len(events)) if pred(events[i]))


def hand_with(pred: Any) -> tuple[Events, int]:
    """An honest hand holding an event for which ``pred`` holds, and that event's index."""
    for i in range(500):
        events = hand(i)
        for k, e in enumerate(events):
            if pred(e):
                return events, k
    raise AssertionError("no hand has such an event")


def has_problem(result: AuditResult, seq: int, *words: str) -> bool:
    """Whether a problem names ``seq`` first and contains every word."""
    return any(p.startswith(f"seq {seq}:") and all(w in p for w in words) for p in result.problems)


def failed(events: Events) -> AuditResult:
    result = audit_hand(events)
    assert result.finished and not result.ok and result.failed, result
    assert result.problems
    assert all(re.match(r"seq \d+: ", p) for p in result.problems), result.problems
    return result


# --- honest hands --------------------------------------------------------------------------


@pytest.mark.parametrize("i", range(40))
def test_honest_eager_hands_with_timeouts_pass(i: int) -> None:
    events = hand(i)
    result = audit_hand(events)
    assert result == AuditResult("table", "hand", finished=True, ok=True, problems=[])
    assert not result.skipped and not result.failed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.booleans(), st.sampled_from([0.0, 0.05, 0.3, 1.0]))
def test_every_honest_hand_passes(seed: int, eager: bool, timeout_rate: float) -> None:
    _, events = play_random_hand(random.Random(seed), eager=eager, timeout_rate=timeout_rate)
    result = audit_hand(events)
    assert result.ok, result.problems


def play_with_ids(rng: random.Random, ids: str = "hand-7") -> Events:
    """A hand with real ids, named players and a command id on every command."""
    seed = random_seed(rng)
    players = ["ana", "bo", "cy", "dee"]
    state, events = start_hand("t-9", ids, shuffle(seed), players=players, seed=seed)
    n = 0
    while state.phase != "ended":
        seat = rng.choice(pending_seats(state))
        n += 1
        command: cmd.HandCommand
        if rng.random() < 0.1:
            command = cmd.Timeout(seat=seat, decision_seq=state.decision_seq)
        else:
            command = eager_choice(rng, state, legal_actions(state, seat))
        result = handle(state, replace(command, command_id=f"c{n}", hand_id=ids))
        assert not isinstance(result, cmd.Rejection), result
        events.extend(result)
    return events


def test_ids_players_and_command_ids_are_carried() -> None:
    for i in range(20):
        events = play_with_ids(random.Random(i))
        assert audit_hand(events) == AuditResult("t-9", "hand-7", True, True, [])
    # The command id on an automatic event is compared too.
    k = find(events, lambda e: isinstance(e, ev.TileDrawn) and e.command_id)
    events[k] = replace(events[k], command_id="forged")
    assert has_problem(failed(events), events[k].seq, "tile_drawn", "command_id", "forged")


def test_tuple_logs_are_audited_like_lists() -> None:
    assert audit_hand(tuple(hand(3))).ok


# --- unfinished hands are skipped -----------------------------------------------------------


def test_unfinished_hands_are_skipped_not_failed() -> None:
    events = hand(1)
    for cut in (0, 1, 6, 40, len(events) - 1):
        result = audit_hand(events[:cut])
        assert not result.finished and result.skipped and not result.failed
        assert not result.ok and result.problems == []
    assert audit_hand(events[:30]).hand_id == "hand"


# --- pauses (practice) ----------------------------------------------------------------------


@cache
def paused_practice(i: int) -> tuple[ev.Event, ...]:
    """An honest practice hand (seats 1-3 computers) that seat 0 paused and resumed."""
    _, events = play_random_hand(random.Random(i), eager=True, pause_rate=0.15)
    assert any(isinstance(e, ev.HandPaused) for e in events)
    return tuple(events)


def with_pause(events: Events, k: int, seat: int = 0) -> Events:
    """``events`` with a pause and its resume logged before ``events[k]`` (seqs moved on)."""
    e = events[k]
    pause = ev.HandPaused(table_id=e.table_id, hand_id=e.hand_id, seq=e.seq, seat=seat)
    resume = ev.HandResumed(table_id=e.table_id, hand_id=e.hand_id, seq=e.seq + 1, seat=seat)
    later = [replace(x, seq=x.seq + 2) for x in events[k:]]
    return [*events[:k], pause, resume, *later]


@pytest.mark.parametrize("i", range(10))
def test_honest_practice_hands_with_pauses_pass(i: int) -> None:
    assert audit_hand(list(paused_practice(i))).ok


def test_a_pause_in_a_hand_that_is_not_practice_fails() -> None:
    events = hand(5)  # four humans
    k = find(events, lambda e: isinstance(e, ev.TileDiscarded), 20)
    result = failed(with_pause(events, k))
    assert has_problem(result, events[k].seq, "hand_paused (seat 0)", "pause_not_allowed")


def test_a_practice_hand_logged_as_rated_fails_at_its_pause() -> None:
    events = list(paused_practice(0))
    started = events[0]
    assert isinstance(started, ev.HandStarted)
    events[0] = replace(started, rated=True)
    k = find(events, lambda e: isinstance(e, ev.HandPaused))
    assert has_problem(failed(events), events[k].seq, "not a legal decision", "pause_not_allowed")


def test_a_pause_by_a_computer_seat_fails() -> None:
    events = list(paused_practice(1))
    k = find(events, lambda e: isinstance(e, ev.HandPaused))
    events[k] = replace(events[k], seat=2)
    assert has_problem(failed(events), events[k].seq, "hand_paused (seat 2)", "pause_not_allowed")


def test_a_resume_without_a_pause_fails() -> None:
    events = list(paused_practice(2))
    k = find(events, lambda e: isinstance(e, ev.HandPaused))
    events[k] = ev.HandResumed(table_id="table", hand_id="hand", seq=events[k].seq, seat=0)
    assert has_problem(failed(events), events[k].seq, "hand_resumed", "not_paused")


# --- tampering: the seed and the deal --------------------------------------------------------


def test_wrong_commitment() -> None:
    events = hand(2)
    other = hashlib.sha256(b"another seed").hexdigest()
    events[0] = replace(events[0], commitment=other)
    result = failed(events)
    assert has_problem(result, 1, "commitment", other, "is not the SHA-256 of the revealed seed")
    assert len(result.problems) == 1  # nothing else is blamed on it


def test_revealed_seed_of_another_hand() -> None:
    events = hand(2)
    other = hand(3)
    wall = events[5]
    assert isinstance(wall, ev.WallBuilt)
    events[5] = replace(wall, seed=other[5].seed)  # type: ignore[union-attr]
    result = failed(events)
    assert has_problem(result, 1, "is not the SHA-256")
    assert has_problem(result, len(events), "hand_ended reveals seed")


def test_swapped_tile_in_tiles_dealt() -> None:
    events = hand(4)
    one, two = events[2], events[3]
    assert isinstance(one, ev.TilesDealt) and isinstance(two, ev.TilesDealt)
    k = next(k for k in range(13) if one.tiles[k] != two.tiles[k])
    a, b = list(one.tiles), list(two.tiles)
    a[k], b[k] = b[k], a[k]
    events[2], events[3] = replace(one, tiles=a), replace(two, tiles=b)
    result = failed(events)
    assert has_problem(result, 3, "seat 1's dealt tiles are not the shuffle's", f"position {k}")
    assert has_problem(result, 4, "seat 2's dealt tiles are not the shuffle's", f"position {k}")


def test_reordered_dealt_tiles() -> None:
    events = hand(5)
    dealt = events[1]
    assert isinstance(dealt, ev.TilesDealt)
    tiles = sorted(dealt.tiles)
    assert tiles != dealt.tiles
    events[1] = replace(dealt, tiles=tiles)
    assert has_problem(failed(events), 2, "seat 0's dealt tiles are not the shuffle's")


def test_changed_wall_tile() -> None:
    events = hand(6)
    wall = events[5]
    assert isinstance(wall, ev.WallBuilt)
    tiles = list(wall.tiles)
    tiles[10] = NAMES[(INDEX[tiles[10]] + 1) % 27]
    events[5] = replace(wall, tiles=tiles)
    result = failed(events)
    assert has_problem(result, 6, "the wall is not the shuffle's", "position 10")


def test_changed_exchange_direction() -> None:
    events = hand(6)
    wall = events[5]
    assert isinstance(wall, ev.WallBuilt)
    other = "left" if wall.direction != "left" else "right"
    events[5] = replace(wall, direction=other)
    assert has_problem(failed(events), 6, "exchange direction", other)


def test_other_preset_or_dealer() -> None:
    events = hand(7)
    events[0] = replace(events[0], preset="Other-v1")
    assert has_problem(failed(events), 1, "hand_started differs", "preset")
    events = hand(7)
    events[0] = replace(events[0], dealer=2)
    assert has_problem(failed(events), 1, "hand_started differs", "dealer")


# --- tampering: the log's shape ------------------------------------------------------------


def test_dropped_event() -> None:
    events = hand(8)
    k = find(events, lambda e: isinstance(e, ev.TileDrawn), 20)
    dropped = events.pop(k)
    result = failed(events)
    assert has_problem(result, dropped.seq + 1, f"seq {dropped.seq} is missing", "a gap")


def test_dropped_events() -> None:
    events = hand(8)
    del events[30:33]
    assert has_problem(failed(events), 34, "seqs 31-33 are missing")


def test_duplicated_event() -> None:
    events = hand(9)
    k = find(events, lambda e: isinstance(e, ev.TileDiscarded), 20)
    events.insert(k + 1, events[k])
    result = failed(events)
    assert has_problem(result, events[k].seq, f"seq {events[k].seq} appears twice")


def test_event_of_another_hand() -> None:
    events = hand(10)
    events[40] = replace(events[40], hand_id="other")
    assert has_problem(failed(events), 41, "hand 'other' in the log of table 'table' hand 'hand'")


def test_event_after_the_end() -> None:
    events = hand(11)
    end = events[-1]
    drawn = events[find(events, lambda e: isinstance(e, ev.TileDrawn))]
    events += [replace(drawn, seq=end.seq + 1), replace(end, seq=end.seq + 2)]
    result = failed(events)
    assert has_problem(result, end.seq + 1, "tile_drawn is logged after the hand ended")


def test_missing_opening() -> None:
    events = hand(12)[6:]
    result = failed(events)
    assert has_problem(result, 7, "the opening must be hand_started")


# --- tampering: decisions and their consequences -------------------------------------------


def test_changed_discard_to_a_tile_not_held() -> None:
    events = hand(13)
    k = find(events, lambda e: isinstance(e, ev.TileDiscarded) and not e.timeout, 30)
    discard = events[k]
    assert isinstance(discard, ev.TileDiscarded)
    held = replay(events[:k]).counts[discard.seat]
    absent = next(t for t in range(27) if not held[t])
    events[k] = replace(discard, tile=NAMES[absent])
    result = failed(events)
    assert has_problem(
        result,
        discard.seq,
        f'tile_discarded (seat {discard.seat}, tile "{NAMES[absent]}"',
        "is not a legal decision",
    )


def test_changed_timed_out_discard() -> None:
    events, k = hand_with(lambda e: isinstance(e, ev.TileDiscarded) and e.timeout)
    discard = events[k]
    assert isinstance(discard, ev.TileDiscarded)
    held = replay(events[:k]).counts[discard.seat]
    other = next(t for t in range(27) if held[t] and NAMES[t] != discard.tile)
    events[k] = replace(discard, tile=NAMES[other])
    # The clock's default is re-played: it is not the logged tile.
    assert has_problem(failed(events), discard.seq, "tile_discarded differs", "tile")


def test_changed_automatic_draw() -> None:
    events = hand(14)
    k = find(events, lambda e: isinstance(e, ev.TileDrawn), 30)
    drawn = events[k]
    assert isinstance(drawn, ev.TileDrawn)
    events[k] = replace(drawn, tile=NAMES[(INDEX[drawn.tile] + 1) % 27])
    assert has_problem(failed(events), drawn.seq, "tile_drawn differs", "tile")


def test_changed_fan() -> None:
    events, k = hand_with(lambda e: isinstance(e, ev.Won))
    won = events[k]
    assert isinstance(won, ev.Won)
    events[k] = replace(won, fan=won.fan + 1)
    result = failed(events)
    assert has_problem(result, won.seq, "won differs from the re-decided event", "fan")


def test_changed_win_payment_amount() -> None:
    events, k = hand_with(lambda e: isinstance(e, ev.Won))
    won = events[k]
    assert isinstance(won, ev.Won)
    payments = [replace(won.payments[0], amount=won.payments[0].amount + 1), *won.payments[1:]]
    events[k] = replace(won, payments=payments)
    result = failed(events)
    assert has_problem(result, won.seq, "won differs", "payments")
    assert has_problem(result, len(events), "are not the sum of the logged payments")


def test_changed_kong_and_settlement_payments() -> None:
    events, k = hand_with(lambda e: isinstance(e, ev.Konged) and e.payments)
    kong = events[k]
    assert isinstance(kong, ev.Konged)
    events[k] = replace(kong, payments=[replace(p, amount=p.amount * 2) for p in kong.payments])
    assert has_problem(failed(events), kong.seq, "konged differs", "payments")
    events, k = hand_with(lambda e: isinstance(e, ev.SettlementItem))
    item = events[k]
    assert isinstance(item, ev.SettlementItem)
    events[k] = replace(item, payment=replace(item.payment, payer=item.payment.payee))
    result = failed(events)
    assert has_problem(result, item.seq, "settlement_item differs", "payment")
    assert has_problem(result, item.seq, "is not between two different seats")


def test_changed_score_in_hand_ended() -> None:
    events = hand(15)
    end = events[-1]
    assert isinstance(end, ev.HandEnded)
    scores = [end.scores[0] + 1, *end.scores[1:]]
    events[-1] = replace(end, scores=scores)
    result = failed(events)
    assert has_problem(result, end.seq, "do not sum to zero")
    assert has_problem(result, end.seq, "are not the sum of the logged payments")
    assert has_problem(result, end.seq, "hand_ended differs", "scores")


def test_scores_shifted_consistently_with_payments_still_fail() -> None:
    # Forge one payment and the final scores to match: the money adds up, re-deciding does not.
    events, k = hand_with(lambda e: isinstance(e, ev.Won) and not e.self_drawn)
    won = events[k]
    assert isinstance(won, ev.Won)
    p = won.payments[0]
    events[k] = replace(won, payments=[replace(p, amount=p.amount + 4)])
    end = events[-1]
    assert isinstance(end, ev.HandEnded)
    scores = list(end.scores)
    scores[p.payer] -= 4
    scores[p.payee] += 4
    events[-1] = replace(end, scores=scores)
    result = failed(events)
    assert result.problems == [result.problems[0]]
    assert has_problem(result, won.seq, "won differs", "payments")


def test_forged_timeout_flag() -> None:
    # A voluntary discard that is not the clock's default cannot be passed off as a timeout.
    def not_default(k: int, e: ev.Event) -> bool:
        if not isinstance(e, ev.TileDiscarded) or e.timeout:
            return False
        state = replay(events[:k])
        return default_command(state, e.seat) != cmd.Discard(seat=e.seat, tile=e.tile)

    events = hand(16)
    k = next(k for k, e in enumerate(events) if not_default(k, e))
    discard = events[k]
    events[k] = replace(discard, timeout=True)
    assert has_problem(failed(events), discard.seq, "tile_discarded differs", "tile")


def test_automatic_event_where_a_decision_was_due() -> None:
    events = hand(17)
    k = find(events, lambda e: isinstance(e, ev.TileDiscarded), 30)
    events[k] = ev.WallExhausted(
        table_id="table",
        hand_id="hand",
        seq=events[k].seq,
        ready=[],
        flower_pigs=[],
        base_values=[],
    )
    assert has_problem(failed(events), events[k].seq, "wall_exhausted is logged where a decision")


def mutate(value: Any, rng: random.Random) -> Any:
    """A different value of the same shape (tiles stay tiles, seats stay seats)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return (value + 1) % 4 if 0 <= value <= 3 else value + 1
    if isinstance(value, str):
        if value in INDEX:
            return NAMES[(INDEX[value] + 1) % 27]
        for group in (("left", "opposite", "right"), ("m", "p", "s")):
            if value in group:
                return group[(group.index(value) + 1) % 3]
        return value + "x"
    if value is None:
        return 1
    if isinstance(value, list) and value:
        k = rng.randrange(len(value))
        return [mutate(v, rng) if i == k else v for i, v in enumerate(value)]
    if isinstance(value, msgspec.Struct):
        names = [n for n in value.__struct_fields__ if n != "reason"]
        name = rng.choice(names)
        return replace(value, **{name: mutate(getattr(value, name), rng)})
    raise ValueError(value)


AUTOMATIC = (
    ev.TilesDealt,
    ev.WallBuilt,
    ev.ExchangeResolved,
    ev.MissingSuitsRevealed,
    ev.TileDrawn,
    ev.ResponseWindowOpened,
    ev.Punged,
    ev.WallExhausted,
    ev.SettlementItem,
    ev.HandEnded,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 199), st.randoms(use_true_random=False))
def test_any_change_to_an_automatic_event_is_detected(i: int, rng: random.Random) -> None:
    events = hand(i)
    candidates = [
        k
        for k, e in enumerate(events)
        if isinstance(e, AUTOMATIC)
        or (isinstance(e, ev.Won) and e.from_seat is not None)
        or (isinstance(e, ev.Konged) and e.kind == "exposed")
    ]
    k = rng.choice(candidates)
    e = events[k]
    fields = [
        n
        for n in e.__struct_fields__
        if getattr(e, n) != [] and not (isinstance(e, ev.HandStarted) and n == "seats")
    ]
    name = rng.choice(fields)
    changed = replace(e, **{name: mutate(getattr(e, name), rng)})
    assert changed != e
    events[k] = changed
    result = audit_hand(events)
    assert result.finished and not result.ok, (k, name, changed)


# --- many hands -----------------------------------------------------------------------------


def batch() -> list[Events]:
    hands = [hand(i) for i in range(12)]
    hands[3][0] = replace(hands[3][0], commitment="0" * 64)
    hands[7] = hands[7][:50]  # unfinished
    end = hands[9][-1]
    hands[9][-1] = replace(end, scores=[s + 1 for s in end.scores])  # type: ignore[union-attr]
    hands.append([])
    return hands


def test_audit_hands_counts() -> None:
    summary = audit_hands(batch())
    assert (summary.hands, summary.finished, summary.passed) == (13, 11, 9)
    assert (summary.failed, summary.skipped) == (2, 2)
    assert not summary.ok
    assert summary.failed_hands == [("table", "hand"), ("table", "hand")]
    assert summary.problems[0].startswith("table 'table' hand 'hand': seq 1: commitment")
    assert len(audit_hands(batch(), max_problems=2).problems) == 2


@pytest.mark.parametrize("processes", [1, 2])
def test_audit_encoded_hands_agrees(processes: int) -> None:
    hands = batch()
    encoded: list[Any] = [msgspec.json.encode(h) for h in hands]
    encoded[1] = [encode(EventEnvelope(event=e)) for e in hands[1]]  # log records
    got = audit_encoded_hands(encoded, processes=processes, chunk_size=3)
    assert got == audit_hands(hands)
    assert decode_hand(encoded[1]) == hands[1]


def test_undecodable_hand_fails() -> None:
    result = audit_encoded_hand(b'[{"type": "hand_started"}]')
    assert result.failed and "undecodable" in result.problems[0]
    summary = audit_encoded_hands([b"not json", msgspec.json.encode(hand(0))], processes=1)
    assert (summary.hands, summary.failed, summary.passed) == (2, 1, 1)
