"""Marks and the accuracy figure of a review (``services.analysis.marks``)."""

from __future__ import annotations

import pytest

from services.analysis.marks import accuracy, mark


@pytest.mark.parametrize(
    ("loss", "expected"),
    [
        (0.0, "best"),
        (0.29, "best"),
        (0.3, "inaccuracy"),
        (0.99, "inaccuracy"),
        (1.0, "mistake"),
        (1.49, "mistake"),
        (1.5, "blunder"),
        (40.0, "blunder"),
    ],
)
def test_the_mark_follows_the_points_given_up(loss: float, expected: str) -> None:
    assert mark(loss) == expected


def test_all_best_decisions_are_100_percent_accurate() -> None:
    assert accuracy([0.0, 0.0, 0.0]) == 100.0


def test_a_seat_without_decisions_to_review_is_100_percent_accurate() -> None:
    assert accuracy([]) == 100.0


def test_accuracy_falls_with_each_points_given_up() -> None:
    assert accuracy([0.0, 0.3]) > accuracy([0.0, 1.0]) > accuracy([0.0, 1.5]) > accuracy([1.5, 1.5])


def test_one_catastrophe_costs_at_most_its_decisions_share() -> None:
    assert accuracy([0.0] * 9 + [1000.0]) == pytest.approx(90.0)
