"""The waits help (听牌提示, RULES.md §4 and §10): concrete waits, candidate discards, and that
the figures depend on nothing the seat may not see."""

from __future__ import annotations

import random
import timeit

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from schemas.views import MeldView, PlayerView, SeatView
from services.rules.fan import complete_from_counts
from services.rules.hand import handle, legal_actions, start_hand
from services.rules.selfplay import eager_choice, random_seed
from services.rules.shuffle import shuffle
from services.rules.state import pending_seats
from services.rules.tiles import INDEX, NAMES
from services.rules.visibility import seat_view
from services.rules.waits import shanten, waits_help
from tests.helpers import counts
from tests.unit.test_view import scramble


def _view(
    hand: str,
    melds: list[MeldView] | None = None,
    discards: list[list[str]] | None = None,
    legal: list[cmd.HandCommand] | None = None,
    missing: str = "s",
    won: tuple[int, ...] = (),
) -> SeatView:
    rivers = discards or [[], [], [], []]
    players = [
        PlayerView(
            seat=s,
            player=f"p{s}",
            concealed_count=len(hand.split()) if s == 0 else 13,
            melds=(melds or []) if s == 0 else [],
            discards=rivers[s],
            missing=missing if s == 0 else "m",
            chose_exchange=True,
            declared_missing=True,
            won=s in won,
            score=0,
            hand=hand.split() if s == 0 else None,
        )
        for s in range(4)
    ]
    return SeatView(
        table_id="t",
        hand_id="h",
        seq=40,
        seat=0,
        phase="play",
        players=players,
        wall_left=40,
        direction="left",
        pending=[0],
        turn=0,
        window=None,
        wins=[],
        legal_actions=legal or [],
    )


def test_a_ready_hand_lists_each_wait_with_its_unseen_copies_and_value() -> None:
    # 1m 2m 3m | 4m 5m 6m | 7m 8m 9m | 1p 1p | 2p 3p: waits on 1p and 4p.
    view = _view(
        "1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p 2p 3p",
        discards=[["4p"], ["4p", "1p"], [], ["5s"]],
    )
    help_ = waits_help(view)
    assert help_ is not None and help_.shanten == 0 and help_.payers == 3
    got = {w.tile: (w.unseen, w.fan, w.value, w.discard, w.self_drawn) for w in help_.waits}
    # 1p: two in hand, one in a river → 1 unseen; 4p: two in rivers → 2 unseen. No pattern.
    assert got == {"1p": (1, 0, 1, 1, 6), "4p": (2, 0, 1, 1, 6)}


def test_a_pure_suit_wait_is_valued_and_a_won_seat_does_not_pay() -> None:
    view = _view("1m 1m 1m 2m 3m 4m 5m 6m 7m 8m 9m 9m 9m", won=(2,))
    help_ = waits_help(view)
    assert help_ is not None and help_.payers == 2
    by_tile = {w.tile: w for w in help_.waits}
    assert sorted(by_tile) == sorted(["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m"])
    # Nine gates: 1m makes a root (four 1m) on top of the pure suit.
    assert by_tile["1m"].unseen == 1 and by_tile["1m"].fan == 3 and by_tile["1m"].value == 8
    assert by_tile["5m"].fan == 2 and by_tile["5m"].value == 4 and by_tile["5m"].self_drawn == 10


def test_a_wait_on_a_tile_the_seat_holds_four_of_has_none_unseen() -> None:
    view = _view(
        "4p 5p 6p 7p",
        melds=[MeldView(kind="pung", tile="4p"), MeldView(kind="pung", tile="1m"),
               MeldView(kind="exposed", tile="9m")],
    )  # fmt: skip
    help_ = waits_help(view)
    assert help_ is not None
    got = {w.tile: (w.unseen, w.patterns) for w in help_.waits}
    assert got == {"4p": (0, ["root"]), "7p": (3, ["root", "root"])}


def test_a_hand_not_ready_gives_its_distance() -> None:
    view = _view("1m 2m 3m 4m 5m 6m 7m 8m 1p 4p 7p 9p 9p")
    help_ = waits_help(view)
    assert help_ is not None and help_.shanten == 2 and help_.waits == []


def test_a_hand_of_fourteen_hints_each_legal_discard() -> None:
    hand = "1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p 2p 3p 7p"
    legal: list[cmd.HandCommand] = [
        cmd.Discard(table_id="t", hand_id="h", seat=0, tile=t) for t in sorted(set(hand.split()))
    ]
    help_ = waits_help(_view(hand, legal=legal))
    assert help_ is not None
    hints = {h.tile: h for h in help_.discards}
    assert set(hints) == set(hand.split())
    assert [w.tile for w in hints["7p"].waits] == ["1p", "4p"] and hints["7p"].shanten == 0
    assert hints["1m"].shanten == 1 and hints["1m"].waits == []


def test_the_missing_suit_goes_first() -> None:
    hand = "1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p 2p 3p 7s"
    only = [cmd.Discard(table_id="t", hand_id="h", seat=0, tile="7s")]
    help_ = waits_help(_view(hand, legal=only))
    assert help_ is not None and [h.tile for h in help_.discards] == ["7s"]
    assert help_.discards[0].shanten == 0
    # Thirteen with a missing-suit tile: never ready, at least one change away.
    assert shanten(_keys("1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p 1p 7s"), 0, 2) == 1


def _keys(text: str) -> list[int]:
    from services.rules.fan import suit_keys

    return suit_keys(counts(text))


def test_a_spectator_gets_no_help() -> None:
    rng = random.Random(3)
    seed = random_seed(rng)
    state, _ = start_hand("t", "h", shuffle(seed), seed=seed)
    while state.phase != "play":
        seat = rng.choice(pending_seats(state))
        handle(state, eager_choice(rng, state, legal_actions(state, seat)))
    assert seat_view(state, None).waits is None
    assert seat_view(state, state.turn).waits is not None


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_the_help_depends_only_on_the_seat_view(seed_int: int) -> None:
    """Scramble every hidden tile (other hands, the wall, others' exchange choices): the help
    stays the same; its unseen counts are the copies in the hidden places; its waits complete."""
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, _ = start_hand("t", "h", shuffle(seed), seed=seed)
    while state.phase != "ended":
        for viewer in range(4):
            help_ = seat_view(state, viewer).waits
            assert seat_view(scramble(state, viewer, rng), viewer).waits == help_
            if help_ is None:
                continue
            hidden = [0] * 27
            for t in state.wall[state.front : state.back]:
                hidden[t] += 1
            for s in range(4):
                if s != viewer and not state.won[s]:
                    for t in range(27):
                        hidden[t] += state.counts[s][t]
            if state.window is not None and state.window.kind == "rob":
                hidden[state.window.tile] -= 1  # shown: the kong's fourth tile
            melds = len(state.melds[viewer])
            for w in help_.waits:
                t = INDEX[w.tile]
                assert w.unseen == hidden[t]
                c = list(state.counts[viewer])
                c[t] += 1
                assert complete_from_counts(c, melds)
        seat = rng.choice(pending_seats(state))
        handle(state, eager_choice(rng, state, legal_actions(state, seat)))


def test_the_help_is_fast() -> None:
    """A seat view is built on every frame: the help must cost well under a millisecond."""
    hand = "1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p 2p 3p 7p"
    legal: list[cmd.HandCommand] = [
        cmd.Discard(table_id="t", hand_id="h", seat=0, tile=t) for t in sorted(set(hand.split()))
    ]
    fourteen = _view(hand, legal=legal)
    thirteen = _view("1m 2m 3m 4m 5m 6m 7m 8m 9m 1p 1p 2p 3p")
    waits_help(fourteen)
    n = 200
    per_14 = timeit.timeit(lambda: waits_help(fourteen), number=n) / n
    per_13 = timeit.timeit(lambda: waits_help(thirteen), number=n) / n
    assert per_13 < 1e-3 and per_14 < 2e-3, (per_13, per_14)
    assert NAMES  # the notation table is the engine's
