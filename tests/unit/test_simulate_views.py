"""``simulate`` feeds its bots from per-seat trackers (``services.simulate.bot_view``), not a
full ``seat_view`` per decision: the view must be exactly the seat's view, after every event
of the log, and every decision the same as one made from ``seat_view``."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import commands as cmd
from services.bots import STRENGTHS
from services.bots.botview import BotView, from_seat_view
from services.rules.hand import handle, start_hand
from services.rules.selfplay import random_seed
from services.rules.shuffle import shuffle
from services.rules.state import pending_seats
from services.rules.visibility import seat_view
from services.simulate import _observe, _TableRun, bot_view
from tests.helpers import quick_bot

LINEUPS = st.lists(st.sampled_from(sorted(STRENGTHS)), min_size=4, max_size=4)


def engine_view(run: _TableRun, seat: int) -> BotView:
    """What the bots were fed before: the seat's full view, converted."""
    assert run.state is not None
    view = from_seat_view(seat_view(run.state, seat))
    if run.state.phase != "play":
        view.legal = []  # bot_view leaves the opening's list out (no bot reads it there)
    return view


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), LINEUPS, st.floats(0.0, 0.2))
def test_the_tracked_view_is_the_seat_view_after_every_event_and_decides_the_same(
    seed_int: int, lineup: list[str], timeout_rate: float
) -> None:
    """The events come one at a time, as ``simulate`` reads them from the log, built into the
    hand state by ``apply``; some decisions time out, so the server's defaults are in the log
    too. After a command's events every seat's view is its seat view. Inside them (a poll
    could end there) a seat may differ for a moment (the tracker closes a window at the
    first win on its tile, the state at the draw after), but never a seat with a decision
    pending: whatever prefix of the log ``simulate`` decides on, it decides the same."""
    rng = random.Random(seed_int)
    seed = random_seed(rng)
    state, events = start_hand("t", "h", shuffle(seed), seed=seed)
    bots = [quick_bot(name) for name in lineup]
    run = _TableRun("t")
    decisions = 0
    while True:
        for event in events:
            _observe(run, event)
            assert run.state is not None
            for s in pending_seats(run.state):
                assert bot_view(run, run.state, s) == engine_view(run, s)
        for s in range(4):
            assert bot_view(run, run.state, s) == engine_view(run, s)
        if state.phase == "ended":
            break
        assert run.state is not None
        seat = rng.choice(pending_seats(run.state))
        if rng.random() < timeout_rate:
            command: cmd.HandCommand = cmd.Timeout(seat=seat)
        else:
            command = bots[seat].decide(bot_view(run, run.state, seat))
            assert command == bots[seat].act(seat_view(run.state, seat))
            decisions += 1
        result = handle(state, command)
        assert isinstance(result, list), result
        events = result
    assert run.state is not None and run.state.phase == "ended"
    assert decisions > 0


def test_a_new_hand_at_the_table_starts_fresh_views() -> None:
    run = _TableRun("t")
    for hand_id in ("h1", "h2"):
        seed = random_seed(random.Random(hand_id))
        _, events = start_hand("t", hand_id, shuffle(seed), seed=seed)
        for event in events:
            _observe(run, event)
        assert run.state is not None and run.state.hand_id == hand_id
        for s in range(4):
            assert bot_view(run, run.state, s) == engine_view(run, s)
            assert run.trackers[s].view.hand_id == hand_id
