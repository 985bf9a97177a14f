"""What each strength does in a given situation: one behaviour per test.

Views are built by hand (``situation``), as a seat would see them; there are no honours, so
hands are written in m, p and s only.
"""

from __future__ import annotations

import random

import pytest

from schemas import commands as cmd
from services.bots import STRENGTHS, make_bot, parse_strengths
from services.bots.botview import BotView, MeldInfo
from services.bots.danger import danger, threats
from services.bots.expert import MARGIN, option_values
from services.bots.pace import PACES, pace
from services.rules.fan import suit_keys
from services.rules.tiles import INDEX, NAMES, SUITS, parse_tiles


def situation(
    hand: str,
    missing: str = "m",
    *,
    phase: str = "play",
    window: tuple[str, str, int] | None = None,
    wall_left: int = 40,
    others_missing: str = "mps",
    discards: tuple[str, str, str] = ("", "", ""),
    melds: tuple[str, str, str] = ("", "", ""),
    own_melds: str = "",
    extra: tuple[cmd.HandCommand, ...] = (),
) -> BotView:
    """Seat 0's view. ``discards``/``melds`` are seats 1-3's (melds as pungs of those tiles);
    ``own_melds`` seat 0's pungs. On a turn every legal discard is offered, plus ``extra``."""
    counts = [0] * 27
    for t in parse_tiles(hand):
        counts[t] += 1
    v = BotView(seat=0, hand_id="h", phase=phase, hand=counts, keys=suit_keys(counts))
    if phase == "play":
        v.missing = [SUITS.index(missing)] + [SUITS.index(x) for x in others_missing]
    elif phase == "exchange":
        v.missing = [None] * 4
    v.wall_left = wall_left
    v.concealed = [sum(counts), 13, 13, 13]
    v.melds[0] = [MeldInfo("pung", t, 1) for t in parse_tiles(own_melds)]
    for s in range(1, 4):
        v.discards[s] = parse_tiles(discards[s - 1])
        v.melds[s] = [MeldInfo("pung", t, 0) for t in parse_tiles(melds[s - 1])]
        v.concealed[s] = 13 - 3 * len(v.melds[s])
    for s in range(4):
        for t in v.discards[s]:
            v.seen[t] += 1
        for m in v.melds[s]:
            v.seen[m.tile] += 3
    if window is not None:
        kind, tile, source = window
        v.window = (kind, INDEX[tile], source)
        v.seen[INDEX[tile]] += 1
        v.discards[source].append(INDEX[tile])
        v.legal = [*extra, cmd.Pass(seat=0)]
    elif phase == "play":
        v.turn = 0
        m = SUITS.index(missing)
        held = [t for t in range(27) if counts[t]]
        if any(t // 9 == m for t in held):
            held = [t for t in held if t // 9 == m]
        v.legal = [*extra, *(cmd.Discard(seat=0, tile=NAMES[t]) for t in held)]
    return v


def late_cheap_win() -> BotView:
    """Seat 0 may win a one-point discard with six tiles left. The others have shown they
    are clean (their discards go beyond their missing suits), as late in a real hand, so
    nobody is left to pay as a flower pig if the seat waits."""
    return situation(
        "1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 6s 6s",
        window=("discard", "4s", 3),
        wall_left=6,
        discards=("1m 9p 1s 8p", "9m 1s 8m 2m", "1m 9p 7m 2p"),
        extra=(cmd.Hu(seat=0),),
    )


def discarded(command: cmd.HandCommand) -> str:
    assert isinstance(command, cmd.Discard), command
    return command.tile


# --- every strength ------------------------------------------------------------------------


@pytest.mark.parametrize("strength", sorted(STRENGTHS))
def test_every_strength_wins_on_its_own_draw(strength: str) -> None:
    v = situation("1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 4s 6s 6s", extra=(cmd.Hu(seat=0),))
    assert make_bot(strength).decide(v) == cmd.Hu(seat=0)


@pytest.mark.parametrize("strength", sorted(set(STRENGTHS) - {"expert"}))
def test_every_rule_based_strength_wins_on_a_discard_late_in_the_hand(strength: str) -> None:
    v = late_cheap_win()
    assert make_bot(strength).decide(v) == cmd.Hu(seat=0)


@pytest.mark.parametrize("strength", sorted(STRENGTHS))
def test_every_strength_sheds_its_missing_suit_first(strength: str) -> None:
    v = situation("5m 1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 9s 9s")
    assert discarded(make_bot(strength).decide(v)) == "5m"


def test_the_expert_passes_a_cheap_late_win_only_when_its_worlds_pay_more_for_waiting() -> None:
    """Late, a ready seat that passes a one-point discard is paid by every player not ready
    at the end (RULES.md §6) and may still draw its tile: the expert plays both out and takes
    the better, by more than its margin over the strong bot's choice (a win)."""
    v = late_cheap_win()
    values = dict((type(c).__name__, value) for c, value in option_values(v))
    expected = cmd.Pass(seat=0) if values["Pass"] - values["Hu"] > MARGIN else cmd.Hu(seat=0)
    assert make_bot("expert").decide(v) == expected


# --- easy ----------------------------------------------------------------------------------


def test_easy_bot_passes_the_first_three_tiles_of_its_shortest_suit() -> None:
    v = situation("1m 2m 3m 4m 5m 1p 2p 3p 4p 5p 9s 8s 7s", phase="exchange")
    assert make_bot("easy").exchange(v) == parse_tiles("7s 8s 9s")


def test_easy_bot_claims_every_pung_offered() -> None:
    v = situation(
        "1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 9s 9s",
        window=("discard", "9s", 1),
        extra=(cmd.Pung(seat=0),),
    )
    assert make_bot("easy").decide(v) == cmd.Pung(seat=0)


def test_easy_bot_discards_the_tile_with_fewest_neighbours() -> None:
    v = situation("1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 5s 5s 9s")
    assert discarded(make_bot("easy").decide(v)) == "9s"


# --- normal --------------------------------------------------------------------------------


def test_normal_bot_discards_the_isolated_tile() -> None:
    v = situation("1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 5s 5s 9s")
    assert discarded(make_bot("normal").decide(v)) == "9s"


def test_normal_bot_keeps_the_wait_with_more_tiles_to_come() -> None:
    """Ready either way: 2s-3s waits on eight tiles (1s, 4s), 3s-3s/5s-5s on four."""
    v = situation("1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 3s 5s 5s")
    assert discarded(make_bot("normal").decide(v)) == "3s"


def test_normal_bot_exchanges_its_weakest_suit() -> None:
    v = situation("1m 5m 9m 1p 2p 3p 4p 5p 5s 6s 7s 8s 8s", phase="exchange")
    assert make_bot("normal").exchange(v) == parse_tiles("1m 5m 9m")


def test_normal_bot_declares_missing_the_suit_with_fewest_useful_tiles() -> None:
    """m and s have three tiles each: m's are a finished run, s's are scattered."""
    v = situation("1m 2m 3m 1p 2p 3p 4p 5p 6p 9p 1s 5s 9s", phase="missing")
    v.missing = [None] * 4
    assert make_bot("normal").missing_suit(v) == SUITS.index("s")
    assert make_bot("easy").missing_suit(v) == SUITS.index("m")


def test_normal_bot_pungs_only_when_that_brings_it_closer_to_ready() -> None:
    closer = situation(
        "1p 2p 3p 4p 5p 6p 2s 3s 9s 9s 5s 5s 8p",
        window=("discard", "9s", 1),
        extra=(cmd.Pung(seat=0),),
    )
    assert make_bot("normal").decide(closer) == cmd.Pung(seat=0)
    breaks_a_run = situation(
        "1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 4s 4s",
        window=("discard", "4s", 1),
        extra=(cmd.Pung(seat=0),),
    )
    assert make_bot("normal").decide(breaks_a_run) == cmd.Pass(seat=0)


def test_normal_bot_declares_a_concealed_kong_that_keeps_its_shanten() -> None:
    v = situation("1p 2p 3p 4p 5p 6p 9s 9s 9s 9s 2s 3s 5s 5s", extra=(cmd.Kong(seat=0, tile="9s"),))
    assert make_bot("normal").decide(v) == cmd.Kong(seat=0, tile="9s")


# --- strong --------------------------------------------------------------------------------


def test_strong_bot_sheds_its_most_dangerous_missing_tile_first() -> None:
    """Opponents are clean and playing; 5m was thrown by all of them, 1m by none."""
    seen = ("5m 2p 3s 4s 6p 7p 8s", "5m 2s 3s 4s 6s 7p 8p", "5m 4p 3p 2p 6s 7s 8s")
    v = situation("1m 5m 1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 9s", discards=seen, others_missing="ssp")
    assert discarded(make_bot("strong").decide(v)) == "1m"
    assert discarded(make_bot("normal").decide(v)) == "5m"  # it does not read the table


def test_strong_bot_folds_far_from_ready_late_against_ready_opponents() -> None:
    """Every opponent has declared circles missing and looks ready: circles are safe."""
    late = ("1s 2s 3s 4s 9s 8s 7s 1m 2m", "1s 3s 5s 7s 9s 9m 8m 7m", "2s 4s 6s 8s 9s 1m 3m 5m")
    v = situation(
        "1p 5p 9p 1s 4s 7s 9s 2s 5s 8s 3s 6s 9p 2p",
        wall_left=20,
        others_missing="ppp",
        discards=late,
        melds=("5s", "6s", "8s"),
    )
    assert discarded(make_bot("strong").decide(v))[1] == "p"


def test_strong_bot_throws_away_the_other_suit_for_a_free_pure_suit() -> None:
    v = situation("1p 2p 3p 4p 5p 6p 7p 8p 9p 2p 3p 9p 5s 9s")
    assert discarded(make_bot("strong").decide(v))[1] == "s"


def test_strong_bot_adds_no_kong_with_a_tile_opponents_are_waiting_on() -> None:
    """Late, opponents ready-looking: the fourth 5s could be robbed."""
    late = ("1p 2p 3p 9p 8p 7p 1m 2m 3m 4m", "1p 3p 9p 7p 8p 1m 9m 8m 7m", "2p 1p 6p 8p 9p 1m")
    v = situation(
        "1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 5s",
        own_melds="5s",
        wall_left=20,
        others_missing="mmm",
        discards=late,
        extra=(cmd.Kong(seat=0, tile="5s"),),
    )
    assert make_bot("strong").decide(v) != cmd.Kong(seat=0, tile="5s")
    assert make_bot("normal").decide(v) == cmd.Kong(seat=0, tile="5s")


def test_strong_bot_passes_a_cheap_discard_win_early_to_self_draw() -> None:
    """Ready on 4s-7s early in the hand: three times value + 1 beats value once."""
    v = situation(
        "1p 2p 3p 4p 5p 6p 7p 8p 9p 5s 6s 9s 9s",
        window=("discard", "4s", 2),
        wall_left=50,
        extra=(cmd.Hu(seat=0),),
    )
    assert make_bot("strong").decide(v) == cmd.Pass(seat=0)
    assert make_bot("normal").decide(v) == cmd.Hu(seat=0)


def test_strong_bot_counts_only_the_tiles_it_cannot_see() -> None:
    """Two ready discards; the wider wait's tiles are all on the table already."""
    gone = ("1s 4s 1s", "4s 1s 4s", "1s 4s")
    v = situation("1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 3s 5s 5s", discards=gone)
    assert discarded(make_bot("strong").decide(v)) == "2s"
    assert discarded(make_bot("normal").decide(v)) == "3s"


# --- danger --------------------------------------------------------------------------------


def test_a_tile_of_an_opponents_missing_suit_is_safe_against_them() -> None:
    late = ("1s 2s 3s 4s 9s 8s 7s 1p 2p",) * 3
    v = situation("1p 2p 3p 4p 5p 6p 7p 8p 9p 2s 3s 5s 5s 9s", others_missing="mmm", discards=late)
    foes = threats(v)
    assert danger(v, foes, INDEX["5m"]) == 0.0
    assert danger(v, foes, INDEX["5p"]) > 0.0


def test_an_opponent_still_shedding_their_missing_suit_is_rarely_ready() -> None:
    shedding = situation("1p", others_missing="mmm", discards=("1m 2m 3m 4m 5m 6m",) * 3)
    playing = situation("1p", others_missing="mmm", discards=("1m 2m 3m 4p 5s 6s",) * 3)
    assert threats(shedding)[0].ready < 0.05 < 0.3 < threats(playing)[0].ready


def test_a_tile_an_opponent_threw_away_is_safer_against_them() -> None:
    v = situation("1p", others_missing="mmm", discards=("1m 2m 3m 4p 5s 6s 7p",) * 3)
    foes = threats(v)
    assert danger(v, foes, INDEX["7p"]) < danger(v, foes, INDEX["6p"])


# --- pace and naming -----------------------------------------------------------------------


def test_instant_pace_never_waits() -> None:
    v = situation("1p 2p 3p", phase="exchange")
    assert pace("instant").delay(v, random.Random(1)) == 0.0


def test_opening_decisions_take_longer_than_claims_at_the_same_pace() -> None:
    opening = situation("1p 2p 3p", phase="exchange")
    claim = situation("1p 2p 3p 4p", window=("discard", "4p", 1))
    slow = PACES["slow"]
    assert slow.delay(opening, random.Random(2)) > slow.delay(claim, random.Random(2))


def test_one_strength_fills_all_four_seats() -> None:
    assert parse_strengths("strong") == ["strong"] * 4
    assert parse_strengths("easy,normal,strong,normal") == ["easy", "normal", "strong", "normal"]
    with pytest.raises(ValueError):
        parse_strengths("easy,hard")
