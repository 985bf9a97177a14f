"""The rules engine's hot paths, written out for speed, held to the plain rules they stand for.

Each test pairs a fast form with a plain reference (the engine's earlier, straightforward
code) over states from random hands: the claims on a discard, the suit keys, waits and fan,
the shuffle's batched draws, and the folds ``handle`` does in place, which must leave the
state exactly as replaying the events with ``state.apply`` does.
"""

from __future__ import annotations

import random
from functools import cache

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from schemas import events as ev
from services.rules.claims import claim_bits, claims_on, completes, may_call
from services.rules.clock import tick
from services.rules.fan import (
    FAN,
    PAIR_KEYS,
    POW5,
    PUNG_KEYS,
    STANDARD_KEYS,
    Reading,
    best_reading,
    hand_value,
    is_complete,
    suit_keys,
    winning_tiles,
)
from services.rules.hand import handle, legal_actions, replay, start_hand
from services.rules.selfplay import eager_choice, play_random_hand, random_seed
from services.rules.shuffle import ByteStream, shuffle
from services.rules.state import HU, KONG, PUNG, HandState, pending_seats
from services.rules.tiles import ALL_TILES

# --- references: the plain forms --------------------------------------------------------


def ref_claim_bits(state: HandState, seat: int, t: int) -> int:
    if state.won[seat] or not may_call(state, seat, t):
        return 0
    bits = 0
    if not state.hu_blocked[seat] and completes(state, seat, t):
        bits |= HU
    if state.wall_left:
        held = state.counts[seat][t]
        if held >= 2 and not (state.pung_blocked[seat] >> t) & 1:
            bits |= PUNG
        if held >= 3:
            bits |= KONG
    return bits


def ref_suit_keys(counts: list[int]) -> list[int]:
    keys = [0, 0, 0]
    for t in range(27):
        keys[t // 9] += counts[t] * POW5[t % 9]
    return keys


def ref_winning_tiles(keys: list[int], declared: int, missing: int | None) -> list[int]:
    out = []
    for t in range(27):
        if t // 9 == missing or (keys[t // 9] // POW5[t % 9]) % 5 == 4:
            continue
        work = list(keys)
        work[t // 9] += POW5[t % 9]
        if is_complete(work, declared, missing):
            out.append(t)
    return out


def ref_best_reading(
    counts: list[int], melds: list[tuple[int, int]], situational: list[str]
) -> Reading:
    k0, k1, k2 = ref_suit_keys(counts)
    totals = list(counts)
    for t, size in melds:
        totals[t] += size
    common = ["root" for t in range(27) if totals[t] == 4]
    if len({t // 9 for t in range(27) if totals[t]}) == 1:
        common.append("pure_suit")
    common.extend(situational)
    readings = []
    if all(k in STANDARD_KEYS for k in (k0, k1, k2)):
        standard = list(common)
        if all(k in PUNG_KEYS for k in (k0, k1, k2)):
            standard.append("all_pungs")
        if len(melds) == 4:
            standard.append("golden_hook")
        readings.append(standard)
    if not melds and all(k in PAIR_KEYS for k in (k0, k1, k2)):
        readings.append([*common, "seven_pairs"])
    best = max(readings, key=lambda ps: sum(FAN[p] for p in ps))
    fan = sum(FAN[p] for p in best)
    return Reading(fan=fan, value=hand_value(fan), patterns=tuple(sorted(best)))


def ref_shuffle_order(seed: bytes) -> list[int]:
    stream = ByteStream(seed)
    tiles = list(ALL_TILES)
    for i in range(len(tiles) - 1, 0, -1):
        j = stream.draw(i + 1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles


# --- states to check them on -------------------------------------------------------------


@cache
def honest(i: int) -> tuple[ev.Event, ...]:
    rng = random.Random(i)
    _, events = play_random_hand(rng, eager=i % 3 != 0, timeout_rate=(0.0, 0.05, 0.3)[i % 3])
    return tuple(events)


def states(hands: range, every: int = 3) -> list[HandState]:
    out = []
    for i in hands:
        events = honest(i)
        out.extend(replay(events[:k]) for k in range(7, len(events), every))
    return out


def test_claims_on_a_discard_follow_the_rules() -> None:
    checked = 0
    for state in states(range(40)):
        for t in range(27):
            assert claims_on(state, (0, 1, 2, 3), t) == [
                ref_claim_bits(state, seat, t) for seat in range(4)
            ]
            checked += 1
        # and with the flags the plain form reads set the other way
        state.hu_blocked = [not b for b in state.hu_blocked]
        state.pung_blocked = [~b & (2**27 - 1) for b in state.pung_blocked]
        for seat in range(4):
            for t in range(27):
                assert claim_bits(state, seat, t) == ref_claim_bits(state, seat, t)
    assert checked > 10_000


@settings(max_examples=500)
@given(
    st.lists(st.integers(0, 26), max_size=14).filter(
        lambda ts: max(map(ts.count, ts), default=0) <= 4
    )
)
def test_suit_keys_and_waits(ts: list[int]) -> None:
    counts = [ts.count(t) for t in range(27)]
    keys = suit_keys(counts)
    assert keys == ref_suit_keys(counts)
    for declared in range(5):
        for missing in (None, 0, 1, 2):
            assert winning_tiles(keys, declared, missing) == ref_winning_tiles(
                keys, declared, missing
            )


def test_fan_of_every_win_in_random_hands() -> None:
    wins = 0
    for i in range(150):
        for e in honest(i):
            if isinstance(e, ev.Won):
                counts = [e.hand.count(n) for n in _NAMES]
                for situational in ([], ["last_tile"], ["kong_replacement", "robbing_kong"]):
                    for melds in ([], [(0, 3)], [(0, 3), (9, 4), (18, 3), (26, 4)]):
                        try:
                            want = ref_best_reading(counts, melds, situational)
                        except ValueError:
                            with pytest.raises(ValueError):
                                best_reading(counts, melds, situational)
                            continue
                        assert best_reading(counts, melds, situational) == want
                wins += 1
    assert wins > 50


_NAMES = [f"{r}{s}" for s in "mps" for r in range(1, 10)]


def test_shuffle_draws_in_a_batch_as_one_by_one() -> None:
    rng = random.Random(5)
    for _ in range(300):
        seed = random_seed(rng)
        deal = shuffle(seed)
        order = ref_shuffle_order(seed)
        assert [*deal.hands[0][:13], *deal.hands[1], *deal.hands[2], *deal.hands[3]] == order[:52]
        assert deal.hands[0][13] == order[52] and list(deal.wall) == order[53:]


@pytest.mark.parametrize("high", [0, 3, 50, 106])
def test_batched_draws_fall_back_when_a_word_is_rejected(high: int) -> None:
    """A word from ``2**64 - 256`` up may be rejected: the batch then draws one by one."""
    ns = range(108, 1, -1)
    words = [random.Random(high).getrandbits(64) for _ in range(120)]
    words[high] = 2**64 - 1  # rejected by every n but a power of two
    batched, single = ByteStream(b"x" * 32), ByteStream(b"x" * 32)
    for stream in (batched, single):
        stream._words, stream._next = list(words), 0
    drawn = batched.draw_each(ns)
    assert drawn == [single.draw(n) for n in ns]
    assert batched._next == single._next == len(ns) + (ns[high] & (ns[high] - 1) != 0)


# --- the folds handle does in place --------------------------------------------------------


def check_every_step(state: HandState, events: list[ev.Event], new: list[ev.Event]) -> None:
    events.extend(new)
    assert replay(events) == state, (new, state)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.booleans(), st.sampled_from([0.0, 0.05, 0.3, 1.0]))
def test_every_step_of_handle_replays_to_the_same_state(
    seed: int, eager: bool, timeout_rate: float
) -> None:
    rng = random.Random(seed)
    raw = random_seed(rng)
    state, events = start_hand("t", "t#1", shuffle(raw), seed=raw)
    assert replay(events) == state
    while state.phase != "ended":
        seat = rng.choice(pending_seats(state))
        command: cmd.HandCommand
        if rng.random() < timeout_rate:
            command = cmd.Timeout(seat=seat, decision_seq=state.decision_seq)
        else:
            options = legal_actions(state, seat)
            command = eager_choice(rng, state, options) if eager else rng.choice(options)
        result = handle(state, command)
        assert not isinstance(result, cmd.Rejection), result
        check_every_step(state, events, result)


@pytest.mark.parametrize("seed", range(4))
def test_every_step_of_a_timed_hand_replays_to_the_same_state(seed: int) -> None:
    rng = random.Random(seed)
    raw = random_seed(rng)
    state, events = start_hand("t", "t#1", shuffle(raw), seed=raw, clock="blitz")
    now = 1_700_000_000_000
    check_every_step(state, events, tick(state, now))
    while state.phase != "ended":
        seat = rng.choice(pending_seats(state))
        now += rng.randrange(2_000)
        command = msgspec.structs.replace(
            eager_choice(rng, state, legal_actions(state, seat)), command_id=f"c{now}"
        )
        result = handle(state, command)
        assert not isinstance(result, cmd.Rejection), result
        check_every_step(state, events, [*result, *tick(state, now, None, command.command_id)])
