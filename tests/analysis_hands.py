"""Hands played in-process with their whole event log, for the analysis tests: computers of
a strength in every seat, each deciding from its own tracker's view (as the ladder plays),
with an optional ``change`` that replaces one decision's command."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from schemas import commands as cmd
from schemas import events as ev
from services.bots import Bot, SeatTracker, make_bot
from services.rules import HandState, handle, legal_actions, pending_seats, shuffle, start_hand

Change = Callable[[int, HandState, cmd.HandCommand], cmd.HandCommand | None]
"""Given the decision's number, the state before it and the bot's command: another command
to play instead (None: the bot's)."""


def play_logged_hand(
    seed: bytes,
    bots: Sequence[Bot] | str = "normal",
    *,
    table_id: str = "review",
    hand_id: str = "review#1",
    computer_seats: list[int] | None = None,
    change: Change | None = None,
    timeout_at: int | None = None,
    continue_with: Sequence[Bot] | None = None,
) -> list[ev.Event]:
    """The events of one hand of the deal ``seed``, played to its end. ``timeout_at``: the
    decision with that number is the clock's default instead (a ``timeout`` command).
    ``continue_with``: after a changed decision, these bots play the rest."""
    players = [make_bot(bots) for _ in range(4)] if isinstance(bots, str) else list(bots)
    state, events = start_hand(
        table_id, hand_id, shuffle(seed), seed=seed, computer_seats=computer_seats
    )
    trackers = [SeatTracker(s) for s in range(4)]
    for t in trackers:
        t.observe_all(events)
    n = 0
    while state.phase != "ended":
        seat = pending_seats(state)[0]
        view = trackers[seat].view
        view.legal = legal_actions(state, seat)
        command: cmd.HandCommand = players[seat].decide(view)
        if change is not None:
            other = change(n, state, command)
            if other is not None:
                command = other
                if continue_with is not None:
                    players = list(continue_with)
        if timeout_at == n:
            command = cmd.Timeout(seat=seat, command_id=f"timeout-{n}")
        command = _with_id(command, n)
        result = handle(state, command)
        if isinstance(result, cmd.Rejection):
            raise AssertionError(f"{command} refused: {result.reason}")
        events += result
        for t in trackers:
            t.observe_all(result)
        n += 1
    return events


def _with_id(command: cmd.HandCommand, n: int) -> cmd.HandCommand:
    return msgspec.structs.replace(command, command_id=command.command_id or f"c-{n}")
