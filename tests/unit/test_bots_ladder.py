"""The ladder: duplicate seatings, its report, and a small run in the expected order.

The full measurement (2,000 hands and more) belongs to ``make bench``; here a short run
checks the machinery and the order of the means.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from services.bots import make_bot
from services.bots.ladder import run_ladder, seatings, self_play
from services.cli import main


def test_duplicate_seatings_put_every_strength_in_every_seat_equally() -> None:
    plan = seatings(["easy", "normal", "strong"])
    assert len(plan) == 12
    for seat in range(4):
        assert Counter(lineup[seat] for lineup in plan) == {"easy": 4, "normal": 4, "strong": 4}


@pytest.mark.parametrize("names", [["normal"], ["easy", "strong"], ["easy", "normal", "strong"]])
def test_every_lineup_size_plays_each_strength_equally(names: list[str]) -> None:
    counts = Counter(name for lineup in seatings(names) for name in lineup)
    assert len(set(counts.values())) == 1 and set(counts) == set(names)


def test_a_short_ladder_reports_a_mean_and_interval_per_strength() -> None:
    bots = {name: make_bot(name) for name in ("easy", "normal", "strong")}
    result = run_ladder(bots, hands=24, seed=3)
    assert result.hands == 24 and result.deals == 2
    assert {s.strength for s in result.standings} == set(bots)
    for s in result.standings:
        assert s.low <= s.mean <= s.high and s.seat_hands == 32
    # Zero-sum: every strength sits in as many seats, so the means add up to nothing.
    assert abs(sum(s.mean for s in result.standings)) < 1e-9


def test_a_moderate_ladder_ranks_strong_over_normal_over_easy() -> None:
    """600 hands (50 deals): the means come out in order; the intervals need bench's size."""
    bots = {name: make_bot(name) for name in ("easy", "normal", "strong")}
    result = run_ladder(bots, hands=600, seed=0)
    assert [s.strength for s in result.standings] == ["strong", "normal", "easy"]
    assert result.ordered(["normal", "easy"])  # normal's lead over easy shows even here


def test_self_play_measures_hands_per_second() -> None:
    speed = self_play(make_bot("normal"), hands=5, seed=1)
    assert speed.hands == 5 and speed.decisions > 5 * 20 and speed.hands_per_s > 0


def test_the_ladder_command_prints_its_figures_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ladder", "--hands", "24", "--self-play-hands", "2", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["hands"] == 24 and len(data["standings"]) == 3
    assert data["order"] == "strong > normal > easy" and "self_play" in data
