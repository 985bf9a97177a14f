"""The view-leak property over 10,000 hands: nothing a seat (or a spectator) is sent ever
holds what RULES.md §10 hides from it.

Hands are played by random and eager random players (``services.rules.selfplay``: many
wins, kongs, robbing windows and exhaustions), a quarter of them timed with clocks that run
out. At sampled decision points of every hand, for each of the four seats and a spectator,
two things are checked *as they go on the wire* (the frames ``services.gateway.protocol``
encodes, decoded back to plain JSON):

- the ``view`` frame (``services.rules.view.seat_view``): no other seat's concealed tiles
  (unless it won), no other seat's exchange choice or the tiles it received, no drawn tile
  but one's own, no missing suit of another seat before all four are revealed, no exchange
  direction before it resolves, no wall, no seed, legal actions only one's own;
- the ``events`` frame (``services.gateway.visibility``, the per-seat filter of the log):
  no other seat's dealt tiles, draws, exchange choice or missing-suit declaration, no wall
  or seed, only one's own part of the exchange, others' claims and passes only once their
  window resolved, and ``hidden`` placeholders with public counts only.

At the end of every hand everything is shown (the event log: checked for one hand in ten),
and once per twenty hands a view is also
checked the strong way: it is equal to the view of a state whose hidden parts were shuffled
(``tests/unit/test_view.py``'s ``scramble``), so it cannot depend on them at all.

``MAHJONG_FUZZ_SCALE`` multiplies the number of hands.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from typing import Any

import msgspec
import pytest

from schemas import commands as cmd
from schemas import events as ev
from services.gateway import protocol as proto
from services.rules.clock import PRESETS
from services.rules.hand import handle, legal_actions, start_hand
from services.rules.selfplay import eager_choice, random_seed
from services.rules.shuffle import shuffle
from services.rules.state import HandState, pending_seats
from services.rules.tiles import DIRECTION_STEP
from services.rules.visibility import seat_view, seen_events
from tests.fuzz import tally as fuzz_tally
from tests.fuzz.hands import deal, play_step
from tests.unit.test_view import scramble

SCALE = float(os.environ.get("MAHJONG_FUZZ_SCALE", "1"))
HANDS = int(10_000 * SCALE)
CHUNKS = 4  # separate tests, so pytest-xdist can spread them
VIEWERS: tuple[int | None, ...] = (None, 0, 1, 2, 3)
SAMPLE = 0.012  # share of decision points checked (about two a hand, with the end)
PRIVATE = {"tiles_dealt", "tile_drawn", "exchange_chosen", "missing_suit_declared"}
ANSWERS = {"claim_declared", "passed"}
QUIET = {"claim_declared", "passed", "clock_started", "clock_stopped"}
PUBLIC_PARTS = {"count", "replacement", "wall_left"}


def wire(frame: msgspec.Struct) -> Any:
    """A server frame as the client receives it: encoded, then parsed as plain JSON."""
    return msgspec.json.decode(proto.encode(frame))


def check_view(state: HandState, viewer: int | None) -> None:
    view = wire(
        proto.ViewFrame(
            seq=state.seq,
            hand_id=state.hand_id,
            decision_seq=state.decision_seq,
            view=seat_view(state, viewer),
        )
    )["view"]
    over = state.phase == "ended"
    revealed = all(m is not None for m in state.missing) and state.phase in ("play", "ended")
    if over:
        assert all(p["hand"] is not None for p in view["players"])
        assert view["seed"] == state.seed and view["wall"] is not None
        return
    assert view["wall"] is None and view["seed"] is None
    for p in view["players"]:
        x = p["seat"]
        if x != viewer:
            assert p["hand"] is None or state.won[x], f"seat {x}'s hand shown to {viewer}"
            assert p["missing"] is None or revealed, f"seat {x}'s missing suit shown early"
    if viewer is None:
        assert view["drawn"] is None and view["legal_actions"] == []
        assert view["exchange_chosen"] is None and view["exchange_received"] is None
    else:
        assert view["drawn"] is None or state.turn == viewer
        own = state.exchange[viewer]
        assert view["exchange_chosen"] is None or own is not None
        if state.phase in ("deal", "exchange"):
            assert view["exchange_received"] is None and view["direction"] is None
        elif state.direction is not None and view["exchange_received"] is not None:
            giver = (viewer - DIRECTION_STEP[state.direction]) % 4
            assert len(view["exchange_received"]) == 3 and state.exchange[giver] is not None
        assert all(a["seat"] == viewer for a in view["legal_actions"])


def check_events(events: list[ev.Event], viewer: int | None) -> None:
    frame = wire(proto.EventsFrame(hand_id=events[0].hand_id, events=seen_events(events, viewer)))
    sent = frame["events"]
    assert [e["seq"] for e in sent] == list(range(1, len(events) + 1))
    if isinstance(events[-1], ev.HandEnded):
        assert sent == [msgspec.to_builtins(e) for e in events]
        return
    resolved_after = [False] * len(sent)  # a later event closes the window of an answer
    loud = False
    for i in range(len(sent) - 1, -1, -1):
        resolved_after[i] = loud
        loud = loud or sent[i]["type"] not in QUIET
    for i, e in enumerate(sent):
        kind = e["type"]
        assert e.get("seed") is None and kind != "wall_built"
        if kind == "hidden":
            assert set(e["public"]) <= PUBLIC_PARTS and "tiles" not in e and "tile" not in e
            continue
        if kind in PRIVATE:
            assert e["seat"] == viewer, f"{kind} of seat {e['seat']} sent to {viewer}"
        elif kind in ANSWERS and e["seat"] != viewer:
            assert resolved_after[i], f"{kind} of seat {e['seat']} sent to {viewer} too early"
        elif kind == "exchange_resolved":
            step = DIRECTION_STEP[e["direction"]]
            for giver, tiles in enumerate(e["passed"]):
                mine = viewer is not None and viewer in (giver, (giver + step) % 4)
                assert tiles == [] or mine, f"seat {giver}'s exchange sent to {viewer}"


def check_point(
    state: HandState, events: list[ev.Event], tally: Counter[str], with_events: bool = True
) -> None:
    for viewer in VIEWERS:
        check_view(state, viewer)
        if with_events:
            check_events(events, viewer)
    tally["points"] += 1
    tally[state.phase] += 1


def play_and_check(rng: random.Random, n: int, tally: Counter[str]) -> None:
    k = n // CHUNKS  # the hand's number in its chunk
    if k % 4 == 3:  # timed, clocks running out now and then
        state, events, now = deal(rng, f"leak#{n}", rng.choice(PRESETS))
    else:
        seed = random_seed(rng)
        state, events = start_hand("leak", f"leak#{n}", shuffle(seed), seed=seed)
        now = 0
    eager = k % 2 == 0
    strong_at = rng.randrange(0, 100) if k % 20 == 0 else -1
    step = 0
    while state.phase != "ended":
        if rng.random() < SAMPLE or (k % 8 == 0 and step == 0):
            check_point(state, events, tally)
        if step == strong_at:
            for viewer in VIEWERS:
                shuffled = scramble(state, viewer, rng)
                assert seat_view(shuffled, viewer) == seat_view(state, viewer)
            tally["scrambled"] += 1
        step += 1
        if state.clock is not None:
            now += rng.choice((0, 200, 1_500, 4_000, 20_000, 70_000))
            events += play_step(rng, state, now)
            continue
        seat = rng.choice(pending_seats(state))
        options = legal_actions(state, seat)
        command = eager_choice(rng, state, options) if eager else rng.choice(options)
        result = handle(state, command)
        assert not isinstance(result, cmd.Rejection), result
        events += result
    check_point(state, events, tally, k % 10 == 0)  # the end: everything, for everyone
    tally["hands"] += 1


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_no_seat_is_ever_sent_what_is_hidden_from_it(chunk: int) -> None:
    rng = random.Random(1_000 + chunk)
    tally: Counter[str] = Counter()
    for n in range(chunk, HANDS, CHUNKS):
        play_and_check(rng, n, tally)
    print(f"\nview leak, chunk {chunk}: {dict(tally)}")
    fuzz_tally.add("view_leak_hands", tally["hands"])
    assert tally["hands"] == len(range(chunk, HANDS, CHUNKS))
    for phase in ("exchange", "missing", "play", "ended"):
        assert tally[phase] > 0, phase
    assert tally["scrambled"] >= tally["hands"] // 40
