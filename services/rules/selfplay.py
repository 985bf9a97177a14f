"""Random legal play: whole hands between players that pick uniformly among legal actions.

Used by property tests and benchmarks; deterministic for a given ``random.Random``.
"""

from __future__ import annotations

import random

from schemas import commands as cmd
from schemas import events as ev
from services.rules.hand import handle, legal_actions, start_hand
from services.rules.shuffle import shuffle
from services.rules.state import HandState, pending_seats
from services.rules.tiles import INDEX


def random_seed(rng: random.Random) -> bytes:
    """32 bytes from ``rng`` (not for production seeds: those come from ``secrets``)."""
    return rng.getrandbits(256).to_bytes(32, "big")


def connectedness(counts: list[int], t: int) -> int:
    """How well tile ``t`` connects to the rest of the hand (pairs and near neighbours)."""
    score = 3 * (counts[t] - 1)
    rank = t % 9
    for d in (-2, -1, 1, 2):
        if 0 <= rank + d < 9:
            score += counts[t + d] * (2 if abs(d) == 1 else 1)
    return score


def eager_choice(
    rng: random.Random, state: HandState, options: list[cmd.HandCommand]
) -> cmd.HandCommand:
    """A cheap, still random policy that wins, pungs and kongs often enough to cover the rules.

    It always wins, often claims, and discards loosely connected tiles.
    """
    for o in options:
        if isinstance(o, cmd.Hu):
            return o
    claims = [o for o in options if isinstance(o, (cmd.Pung, cmd.ClaimKong, cmd.Kong))]
    if claims and rng.random() < 0.7:
        return rng.choice(claims)
    discards = [o for o in options if isinstance(o, cmd.Discard)]
    if discards and rng.random() < 0.9:
        counts = state.counts[discards[0].seat]
        return min(discards, key=lambda o: (connectedness(counts, INDEX[o.tile]), rng.random()))
    return rng.choice(options)


def play_random_hand(
    rng: random.Random,
    seed: bytes | None = None,
    timeout_rate: float = 0.0,
    eager: bool = False,
    pause_rate: float = 0.0,
) -> tuple[HandState, list[ev.Event]]:
    """Deal from ``seed`` (or a random one) and play to the end with random legal choices.

    With ``timeout_rate`` > 0 a pending decision sometimes times out instead; ``eager`` players
    follow ``eager_choice`` and so reach wins, kongs and robbing windows far more often. With
    ``pause_rate`` > 0 the hand is a practice hand (seats 1-3 computers) whose seat 0
    sometimes pauses it and resumes it at once.
    """
    seed = seed if seed is not None else random_seed(rng)
    computers = [1, 2, 3] if pause_rate else None
    state, events = start_hand("table", "hand", shuffle(seed), seed=seed, computer_seats=computers)
    while state.phase != "ended":
        seat = rng.choice(pending_seats(state))
        command: cmd.HandCommand
        if pause_rate and rng.random() < pause_rate:
            for pausing in (cmd.Pause(seat=0), cmd.Resume(seat=0)):
                paused = handle(state, pausing)
                if isinstance(paused, cmd.Rejection):
                    raise AssertionError(f"{pausing} rejected: {paused.reason}")
                events.extend(paused)
            continue
        if timeout_rate and rng.random() < timeout_rate:
            command = cmd.Timeout(seat=seat, decision_seq=state.decision_seq)
        else:
            options = legal_actions(state, seat)
            command = eager_choice(rng, state, options) if eager else rng.choice(options)
        result = handle(state, command)
        if isinstance(result, cmd.Rejection):
            raise AssertionError(f"legal action {command} rejected: {result.reason}")
        events.extend(result)
    return state, events
