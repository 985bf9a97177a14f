"""Reviews by the expert itself (issue 21's checks): a hand the expert played throughout
marks nothing as a mistake, and a good ready hand broken for nothing is a blunder. The expert plays
with its own worlds and the review values with the same (and confirms with more), so the
review sees what the expert saw."""

from __future__ import annotations

import msgspec

from schemas import commands as cmd
from services.analysis.review import review_hand
from services.bots.expert import ExpertBot
from services.rules import INDEX, NAMES, HandState, shanten, suit_keys
from services.rules.fan import winning_tiles
from tests.analysis_hands import play_logged_hand

SEED = bytes(range(32))


def _bots() -> list[object]:
    return [ExpertBot() for _ in range(4)]


def _shanten_after(state: HandState, seat: int, tile: int) -> int:
    """How far from ready the seat's hand is after discarding ``tile`` (its two suits)."""
    counts = list(state.counts[seat])
    counts[tile] -= 1
    keys = suit_keys(counts)
    missing = state.missing[seat]
    if missing is not None and keys[missing]:
        return 99
    a, b = [s for s in range(3) if s != missing][:2]
    return shanten(keys[a], keys[b], 4 - len(state.melds[seat]))


def test_a_hand_the_expert_played_throughout_has_no_mistake_or_blunder() -> None:
    events = play_logged_hand(SEED, _bots())  # type: ignore[arg-type]
    review = review_hand(events, [0, 1, 2, 3])
    assert review.decisions
    assert not [d for d in review.decisions if d.mark in ("mistake", "blunder")]


def _in_sight(state: HandState, seat: int) -> list[int]:
    """Copies of each tile the seat can see: every discard pile, every declared group, its
    own hand (the count a player uses to tell a live wait and a safe tile)."""
    seen = list(state.counts[seat])
    for s in range(4):
        for t in state.discards[s]:
            seen[t] += 1
        for m in state.melds[s]:
            seen[m.tile] += 4 if "kong" in m.kind else 3
    return seen


def test_breaking_a_ready_hand_for_nothing_is_a_blunder_at_that_decision() -> None:
    """The first time a seat's discard keeps a good ready hand (five or more winning tiles
    still live, 25 or more tiles in the wall), it discards instead the breaking tile with the
    most copies in sight (the safest: nothing is gained in safety, nor in waits, since the
    hand is no longer ready). Over 20 deals this break cost a median 1.25 points, a blunder
    in 9 and a mistake in 4 (docs/analysis.md); early in the wall a broken hand is often
    ready again soon, which is what the rest cost less for."""
    changed: dict[str, int] = {}

    def break_ready(n: int, state: HandState, command: cmd.HandCommand) -> cmd.HandCommand | None:
        if changed or not isinstance(command, cmd.Discard) or state.window is not None:
            return None
        seat = command.seat
        if _shanten_after(state, seat, INDEX[command.tile]) != 0 or state.wall_left < 25:
            return None
        after = list(state.counts[seat])
        after[INDEX[command.tile]] -= 1
        seen = _in_sight(state, seat)
        waits = winning_tiles(suit_keys(after), len(state.melds[seat]), state.missing[seat])
        if sum(4 - seen[t] for t in waits) < 5:
            return None
        breaking = [
            t for t in range(27) if state.counts[seat][t] and _shanten_after(state, seat, t) != 0
        ]
        if not breaking:
            return None
        tile = max(breaking, key=lambda t: (seen[t], t))
        changed.update(seat=seat, seq=state.seq + 1)
        return msgspec.structs.replace(command, tile=NAMES[tile])

    events = play_logged_hand(SEED, _bots(), change=break_ready)  # type: ignore[arg-type]
    assert changed, "no good ready hand to break in this deal"
    review = review_hand(events, [changed["seat"]])
    at = next(d for d in review.decisions if d.seq == changed["seq"])
    assert at.kind == "turn" and isinstance(at.played, cmd.Discard)
    assert at.mark == "blunder", (at.loss, at.played, at.best)
    assert at.best != at.played
