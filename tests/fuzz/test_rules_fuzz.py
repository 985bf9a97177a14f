"""The rules engine under 100,000+ random and invalid commands: no crash, every refusal
clean, and a refused command changes nothing.

Hands are dealt from seeded random seeds, timed (every clock preset) or untimed, and played
to their end by random legal players (sometimes letting the clock run out). At each decision
point, a few random commands (``tests/fuzz/commands.py``) are fired the way the table
service takes them: ``services.rules.clock.check_time`` and then
``services.rules.hand.handle`` on a copy of the state. Then:

- nothing raises;
- a refusal is a ``Rejection`` with a code from the engine's catalogue, a reason and plain
  params, and the state it was tried on is equal to the state before (field by field);
- an accepted command's events, folded with ``apply`` onto the state before, give exactly
  the state ``handle`` left (the events say everything the command changed);
- ``decide`` is pure and gives the same answer twice.

Commands are also fired before the deal is complete (every prefix of the opening events)
and after the hand has ended. Each played hand's whole log replays to its live state.

The bulk run uses a seeded ``random.Random`` (many commands per generated state keeps it
fast); a Hypothesis run draws the commands from a strategy and shrinks any failure.
``MAHJONG_FUZZ_SCALE`` multiplies the bulk run for a longer campaign.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from services.rules.clock import PRESETS, check_time
from services.rules.hand import apply, decide, handle, replay
from services.rules.state import HandState
from tests.fuzz import tally as fuzz_tally
from tests.fuzz.commands import check_rejection, command_strategy, random_command
from tests.fuzz.hands import deal, play_step

SCALE = float(os.environ.get("MAHJONG_FUZZ_SCALE", "1"))
BULK_COMMANDS = int(100_000 * SCALE)


@dataclass
class Tally:
    commands: int = 0
    accepted: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    phases: Counter[str] = field(default_factory=Counter)
    hands: int = 0


def times_around(rng: random.Random, state: HandState, seat: int, now: int) -> int:
    """A time to try a command at: now, or just before, at or after the seat's deadline."""
    clock = state.clock
    run = clock.running.get(seat) if clock is not None and 0 <= seat <= 3 else None
    if run is None or rng.random() < 0.4:
        return now + rng.choice((0, 0, 1, -1, 10**9))
    return run.deadline_ms + clock.grace_ms + rng.choice((-1, 0, 1, 5_000))  # type: ignore[union-attr]


def fire(state: HandState, command: cmd.HandCommand, now: int, tally: Tally) -> None:
    """Try ``command`` on a copy of ``state`` as the table service would; check the answer."""
    tally.commands += 1
    tally.phases[state.phase] += 1
    work = state.copy()
    late = check_time(work, command, now)
    if late is not None:
        tally.codes[check_rejection(late)] += 1
    assert work == state, f"check_time changed the state: {command}"
    result = handle(work, command)
    if isinstance(result, cmd.Rejection):
        tally.codes[check_rejection(result)] += 1
        assert work == state, f"a rejected command changed the state: {command} -> {result}"
        return
    tally.accepted += 1
    assert result, f"an accepted command emitted nothing: {command}"
    assert [e.seq for e in result] == list(range(state.seq + 1, state.seq + 1 + len(result)))
    folded = state.copy()
    for e in result:
        apply(folded, e)
    assert folded == work, f"the events of {command} do not say what it changed"


def check_decide(state: HandState, command: cmd.HandCommand) -> None:
    before = state.copy()
    first = decide(state, command)
    assert state == before, f"decide changed the state: {command}"
    assert decide(state, command) == first


def fuzz_hand(rng: random.Random, number: int, budget: int, tally: Tally) -> None:
    """Deal a hand, fire random commands before the deal is done, at its decision points
    and after its end, spending about ``budget`` commands; play it out legally."""
    state, events, now = deal(rng, f"fuzz#{number}", rng.choice((None, *PRESETS)))
    # Before the deal is complete: every prefix of the opening events.
    for end in range(1, len(events)):
        early = replay(events[:end])
        fire(early, random_command(rng, early), now, tally)
    per_point = max(1, budget // 120)
    while state.phase != "ended":
        for _ in range(rng.randint(1, 2 * per_point - 1)):
            command = random_command(rng, state)
            fire(state, command, times_around(rng, state, command.seat, now), tally)
        if rng.random() < 0.05:
            check_decide(state, random_command(rng, state))
        now += rng.choice((0, 200, 1_500, 4_000, 20_000, 70_000))
        events += play_step(rng, state, now)
    for _ in range(3 * per_point):
        fire(state, random_command(rng, state), now, tally)
    assert replay(events) == state
    tally.hands += 1


def test_a_hundred_thousand_random_commands_are_all_refused_cleanly() -> None:
    rng = random.Random(20_240_610)
    tally = Tally()
    number = 0
    while tally.commands < BULK_COMMANDS:
        number += 1
        fuzz_hand(rng, number, rng.choice((60, 250, 500)), tally)
    print(
        f"\nrules fuzz: {tally.commands} commands over {tally.hands} hands; "
        f"{tally.accepted} accepted; codes {dict(tally.codes.most_common())}; "
        f"phases {dict(tally.phases)}"
    )
    fuzz_tally.add("engine_commands", tally.commands)
    assert tally.commands >= BULK_COMMANDS
    # The run reaches the engine's checks broadly, not one refusal over and over.
    assert set(tally.phases) == {"deal", "exchange", "missing", "play", "ended"}
    assert len(tally.codes) >= 25, tally.codes
    assert tally.accepted > 1_000


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 2**32),
    st.sampled_from((None, *PRESETS)),
    st.integers(0, 250),
    st.lists(command_strategy(), min_size=1, max_size=40),
)
def test_commands_drawn_by_hypothesis_are_refused_cleanly(
    seed_int: int, clock: str | None, steps: int, commands: list[cmd.HandCommand]
) -> None:
    rng = random.Random(seed_int)
    state, events, now = deal(rng, "fuzz#1", clock)
    for _ in range(steps):
        if state.phase == "ended":
            break
        now += rng.choice((0, 1_000, 30_000))
        events += play_step(rng, state, now)
    tally = Tally()
    for command in commands:
        fire(state, command, now, tally)
        check_decide(state, command)
    fuzz_tally.add("engine_commands", len(commands))
    assert replay(events) == state
