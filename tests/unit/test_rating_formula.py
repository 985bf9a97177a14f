"""RULES.md §9's rating formula: hand-computed cases, the shared conformance vector, the
provisional boundary, and which results count."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from schemas.rating import RatedHandResult, decode_result, encode_result
from services.rating import formula
from services.rating.formula import Fold, deltas, expected_score, ignore_reason, new_ratings

VECTOR = "conformance/ratings/pairwise-elo-14-hands.json"


def result(
    players: list[str],
    points: list[int],
    hand_id: str = "t1#1",
    /,
    **flags: object,
) -> RatedHandResult:
    fields: dict[str, object] = {"rated": True, "clock": "standard", **flags}
    return RatedHandResult(
        table_id="t1",
        hand_id=hand_id,
        players=players,
        points=points,
        **fields,  # type: ignore[arg-type]
    )


P = ["ann", "bo", "cy", "di"]


# --- hand-computed cases --------------------------------------------------------------------


def test_equal_ratings_one_winner_three_equal_losers() -> None:
    # All at 1500: every E_ij = 1/2. The winner beats three: Σ(S−E) = 3·½ = 1.5,
    # ΔR = 64/3 · 1.5 = 32. Each loser: one loss (−½) and two draws (0): ΔR = 64/3 · −½.
    got = deltas([1500.0] * 4, [0] * 4, [9, -3, -3, -3])
    assert got[0] == 32.0
    assert got[1:] == [-32 / 3] * 3
    assert sum(got) == pytest.approx(0.0, abs=1e-12)


def test_all_draw_changes_nothing_at_equal_ratings() -> None:
    assert deltas([1500.0] * 4, [0] * 4, [0, 0, 0, 0]) == [0.0] * 4


def test_expected_score_at_400_points_is_one_in_eleven() -> None:
    # 10^(400/400) = 10: the weaker player expects 1/11, the stronger 10/11.
    assert expected_score(1500.0, 1900.0) == 1 / 11
    assert expected_score(1900.0, 1500.0) == 1 / (1 + 10**-1)


def test_established_upset_by_hand() -> None:
    # Ratings 1900, 1500, 1500, 1500, all established (K = 32). Seat 1 wins alone, the rest
    # are equal. Seat 0: loses to 1 (0 − 10/11), draws 2 and 3 (½ − 10/11 each):
    #   Σ = −10/11 + 2·(−9/22) = −19/11;  ΔR = 32/3 · −19/11 = −608/33 ≈ −18.4242.
    # Seat 1: beats 0 (1 − 1/11), beats 2 and 3 (½ each): Σ = 10/11 + 1 = 21/11;
    #   ΔR = 32/3 · 21/11 = 224/11 ≈ 20.3636.
    # Seats 2, 3: draw 0 (½ − 1/11), lose to 1 (−½), draw each other (0): Σ = −1/11;
    #   ΔR = −32/33 ≈ −0.9697.
    got = deltas([1900.0, 1500.0, 1500.0, 1500.0], [10] * 4, [-3, 9, -3, -3])
    assert got[0] == pytest.approx(-608 / 33, abs=1e-12)
    assert got[1] == pytest.approx(224 / 11, abs=1e-12)
    assert got[2] == pytest.approx(-32 / 33, abs=1e-12)
    assert got[3] == pytest.approx(-32 / 33, abs=1e-12)


def test_k_is_per_player() -> None:
    # Seat 0 provisional (9 hands before: K 64), the others established (K 32).
    got = deltas([1500.0] * 4, [9, 10, 10, 200], [9, -3, -3, -3])
    assert got == [32.0, -16 / 3, -16 / 3, -16 / 3]


def test_k_factor_boundary() -> None:
    assert [formula.k_factor(n) for n in (0, 9, 10, 11)] == [64, 64, 32, 32]
    assert [formula.is_provisional(n) for n in (0, 9, 10, 11)] == [True, True, False, False]


# --- the shared conformance vector ----------------------------------------------------------


def _vector(shared: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((shared / VECTOR).read_text())
    return data


def test_conformance_vector_every_hand(shared: Path) -> None:
    data = _vector(shared)
    assert data["start"] == formula.START_RATING
    fold = Fold()
    hands, afters = data["hands"], data["after"]
    assert isinstance(hands, list) and isinstance(afters, list)
    for n, (hand, after) in enumerate(zip(hands, afters, strict=True)):
        assert fold.apply(n, result(hand["players"], hand["points"], f"v#{n}")) is None
        standings = {row[1]: row for row in fold.rating_rows()}
        for player, want in after.items():
            _, _, rating, rated_hands, provisional, _ = standings[player]
            assert rating == pytest.approx(want["rating"], abs=1e-9), (n, player)
            assert rated_hands == want["rated_hands"], (n, player)
            assert provisional == want["provisional"], (n, player)


def test_conformance_vector_is_met_exactly(shared: Path) -> None:
    """The vector's order of operations reproduces its doubles to the last bit."""
    data = _vector(shared)
    ratings: dict[str, float] = {}
    played: dict[str, int] = {}
    hands, afters = data["hands"], data["after"]
    assert isinstance(hands, list) and isinstance(afters, list)
    for hand, after in zip(hands, afters, strict=True):
        players = hand["players"]
        before = [ratings.get(p, 1500.0) for p in players]
        counts = [played.get(p, 0) for p in players]
        for p, r in zip(players, new_ratings(before, counts, hand["points"]), strict=True):
            ratings[p] = r
            played[p] = played.get(p, 0) + 1
        for player, want in after.items():
            assert ratings[player].hex() == float(want["rating"]).hex()


def test_fold_matches_the_reference_functions() -> None:
    fold = Fold()
    players = [f"p{i}" for i in range(7)]
    ratings = {p: 1500.0 for p in players}
    played = {p: 0 for p in players}
    for n in range(60):
        seats = [players[(n * 3 + k * (n % 5 + 1)) % 7] for k in range(4)]
        if len(set(seats)) < 4:
            continue
        points = [(n * 7 + k * 5) % 11 - 5 for k in range(4)]
        want = new_ratings([ratings[p] for p in seats], [played[p] for p in seats], points)
        assert fold.apply(n, result(seats, points, f"h{n}")) is None
        for p, r in zip(seats, want, strict=True):
            ratings[p] = r
            played[p] += 1
    got = {row[1]: row[2] for row in fold.rating_rows()}
    assert got == {p: r for p, r in ratings.items() if played[p]}


# --- the provisional period ------------------------------------------------------------------


def test_provisional_boundary_between_hand_10_and_hand_11() -> None:
    """Hands 1–10 use K = 64 (fewer than 10 before each); hand 11 uses K = 32. The player is
    provisional after hand 9, established after hand 10."""
    fold = Fold()
    four = ["me", "a", "b", "c"]
    for n in range(1, 12):
        # Fresh opponents each hand, all at 1500: "me" wins against equals every time.
        others = [f"{o}{n}" for o in four[1:]]
        fold.apply(n, result(["me", *others], [9, -3, -3, -3], f"h{n}"))
    rows = [row for row in fold.history if row[1] == "me"]
    assert [row[10] for row in rows] == list(range(1, 12))  # rated hands after each
    ks = []
    for row in rows:
        before, delta = row[7], row[9]
        total = sum(
            1.0 - expected_score(before, 1500.0) for _ in range(3)
        )  # the same sum, for the K it implies
        ks.append(round(delta / total * 3))
    assert ks == [64] * 10 + [32]
    provisional_after = [row[10] < formula.PROVISIONAL_HANDS for row in rows]
    assert provisional_after == [True] * 9 + [False] * 2
    standing = {row[1]: row for row in fold.rating_rows()}["me"]
    assert standing[3] == 11 and standing[4] is False


def test_hand_10_is_still_k64_and_hand_11_is_k32_directly() -> None:
    nine, ten = (
        deltas([1500.0] * 4, [9, 0, 0, 0], [9, -3, -3, -3]),
        deltas([1500.0] * 4, [10, 0, 0, 0], [9, -3, -3, -3]),
    )
    assert nine[0] == 32.0  # the 10th hand: 9 before it, K 64
    assert ten[0] == 16.0  # the 11th hand: 10 before it, K 32


# --- what counts --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        ({"rated": False}, "casual"),
        ({"computer_seats": [2]}, "computer_seats"),
        ({"clock": None}, "untimed"),
        ({"clock": "untimed"}, "untimed"),
        ({"clock": "sundial"}, "unknown_clock"),
        ({"practice": True}, "practice"),
        ({"variant": "riichi"}, "unknown_variant"),
    ],
)
def test_unrated_hands_change_nothing(flags: dict[str, object], reason: str) -> None:
    fold = Fold()
    assert fold.apply(0, result(P, [9, -3, -3, -3], **flags)) == reason
    assert fold.rating_rows() == [] and fold.history == [] and fold.hands == []
    assert fold.reasons == {reason: 1}


@pytest.mark.parametrize("clock", sorted(formula.TIMED_CLOCKS))
def test_every_clock_preset_is_rated(clock: str) -> None:
    assert ignore_reason(result(P, [1, 0, 0, -1], clock=clock)) is None


def test_casual_between_rated_hands_is_skipped_entirely() -> None:
    with_casual, without = Fold(), Fold()
    hands = [
        result(P, [9, -3, -3, -3], "h1"),
        result(P, [-9, 3, 3, 3], "h2", rated=False),
        result(P, [0, 4, -4, 0], "h3", computer_seats=[0]),
        result(P, [-2, 2, -2, 2], "h4"),
    ]
    for n, h in enumerate(hands):
        with_casual.apply(n, h)
    for n, h in enumerate(hands):
        if ignore_reason(h) is None:
            without.apply(n, h)
    assert with_casual.rating_rows() == without.rating_rows()
    assert {row[3] for row in with_casual.rating_rows()} == {2}


@pytest.mark.parametrize(
    ("players", "points"),
    [
        (["a", "b", "c"], [1, 0, -1]),
        (["a", "b", "c", "a"], [1, 0, -1, 0]),
        (["a", "b", "c", ""], [1, 0, -1, 0]),
        (["a", "b", "c", "d"], [1, 0, -1]),
    ],
)
def test_malformed_results_are_ignored(players: list[str], points: list[int]) -> None:
    assert Fold().apply(0, result(players, points)) == "malformed"


def test_a_repeated_hand_changes_nothing() -> None:
    fold = Fold()
    assert fold.apply(0, result(P, [9, -3, -3, -3], "h1")) is None
    rows = fold.rating_rows()
    assert fold.apply(1, result(P, [-9, 3, 3, 3], "h1")) == "duplicate"
    assert fold.rating_rows() == rows and len(fold.hands) == 1


def test_undecodable_and_newer_records_are_ignored() -> None:
    fold = Fold()
    assert fold.apply_record(0, b"{not json") == "undecodable"
    newer = json.loads(encode_result(result(P, [1, 0, 0, -1])))
    newer["v"] = 99
    assert fold.apply_record(1, json.dumps(newer).encode()) == "undecodable"
    assert fold.apply_record(2, encode_result(result(P, [1, 0, 0, -1]))) is None


def test_result_round_trips_as_tagged_json() -> None:
    r = result(P, [1, 0, 0, -1], computer_seats=[], clock="blitz")
    raw = encode_result(r)
    assert json.loads(raw)["type"] == "rated_hand_result"
    assert json.loads(raw)["v"] == 1
    assert decode_result(raw) == r
    with pytest.raises(msgspec.ValidationError):
        decode_result(b'{"type": "rated_hand_result", "table_id": "t"}')
