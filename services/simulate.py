"""Computer players driving whole hands through the service path (commands in, events out).

Each seat is played by a bot (``services.bots``) that decides from its own view only, exactly
what a human client would get: a ``SeatTracker`` per seat folds the table's events into that
seat's ``BotView`` (what ``seat_view`` shows it, RULES.md §10), so no full seat view is built
per decision. Its command goes to ``table.commands`` like any other.
"""

from __future__ import annotations

import heapq
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec

from schemas import commands as cmd
from schemas.events import Event
from schemas.table import CommandEnvelope, ReplyEnvelope, StartHand, decode_event, encode
from services.bots import Bot, SeatTracker, make_bot
from services.bots.botview import BotView
from services.rules import HandState, apply, legal_actions, pending_seats
from services.runtime.log import EventLog, Outgoing
from services.runtime.topics import TABLE_COMMANDS, TABLE_EVENTS, TABLE_REPLIES

DEFAULT_BOTS = ("normal", "normal", "normal", "normal")


@dataclass(slots=True)
class _TableRun:
    table_id: str
    state: HandState | None = None
    trackers: list[SeatTracker] = field(default_factory=list)  # each seat's view of the hand
    sent: set[tuple[int, int]] = field(default_factory=set)  # (decision_seq, seat) answered
    counted: str = ""  # the last hand counted as done


@dataclass(slots=True)
class SimulationResult:
    run_id: str  # every table of the run is named sim-<run_id>-<n>
    hands: int
    seconds: float
    commands: int
    rejections: int
    ends: dict[str, int]
    events: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    """Per accepted command: from handing it to the log to reading its first event back."""


async def simulate(
    event_log: EventLog,
    hands: int,
    tables: int = 20,
    progress: Callable[[int, int], None] | None = None,
    deadline_s: float = 3600.0,
    measure_s: float | None = None,
    bots: Sequence[str] = DEFAULT_BOTS,
    think_s: float = 0.0,
) -> SimulationResult:
    """Play ``hands`` hands over ``tables`` concurrent tables; returns when all have ended.

    ``bots`` names the strength of each seat (``services.bots.STRENGTHS``). With
    ``measure_s`` it stops after that long instead (a benchmark's steady-state window) and
    reports what was done by then. With ``think_s`` each decision is sent after a pause
    drawn uniformly from half to one and a half times it (players at a human pace; latency is
    timed from the send), and so is each hand's start, as players take a moment between
    hands: paced tables open spread over a second, not all in the same poll. There is no
    seed: bots decide deterministically from their views and the table service shuffles each
    hand.
    """
    players = [make_bot(name) for name in bots]
    if len(players) != 4:
        raise ValueError("simulate needs four bots, one per seat")
    run_id = uuid.uuid4().hex[:8]
    names = [f"sim-{run_id}-{i}" for i in range(min(tables, hands))]
    runs = {name: _TableRun(name) for name in names}
    follower = event_log.follower([TABLE_EVENTS, TABLE_REPLIES])
    await follower.start()
    started = done = commands = rejections = 0
    ends: dict[str, int] = {}
    outbox: list[Outgoing] = []
    waiting: dict[str, float] = {}  # command id -> when it was handed to the log
    latencies: list[float] = []
    events = 0

    thinking: list[tuple[float, int, str, Outgoing]] = []  # (due, n, command id, record)
    pace = random.Random(7)

    def send(command: cmd.HandCommand | StartHand, table_id: str) -> None:
        nonlocal commands
        commands += 1
        envelope = CommandEnvelope(command=command)  # type: ignore[arg-type]
        record = Outgoing(TABLE_COMMANDS, table_id, encode(envelope))
        if think_s > 0:  # a hand's start too: tables do not all open in one millisecond
            due = time.perf_counter() + think_s * pace.uniform(0.5, 1.5)
            heapq.heappush(thinking, (due, commands, command.command_id, record))
        else:
            waiting[command.command_id] = 0.0
            outbox.append(record)

    def start(run: _TableRun) -> None:
        nonlocal started
        started += 1
        players = [f"sim-player-{s}" for s in range(4)]
        send(
            StartHand(table_id=run.table_id, players=players, command_id=uuid.uuid4().hex),
            run.table_id,
        )

    try:
        for run in runs.values():
            start(run)
        begin = time.perf_counter()
        while done < hands:
            if measure_s is not None and time.perf_counter() - begin > measure_s:
                break
            if time.perf_counter() - begin > deadline_s:
                raise TimeoutError(f"simulation stalled: {done}/{hands} hands after {deadline_s}s")
            now = time.perf_counter()
            while thinking and thinking[0][0] <= now:
                _, _, cid, record = heapq.heappop(thinking)
                waiting[cid] = 0.0
                outbox.append(record)
            if outbox:
                stamp = time.perf_counter()
                for cid, t in waiting.items():
                    if not t:
                        waiting[cid] = stamp
                await event_log.produce(outbox)
                outbox.clear()
            changed: set[str] = set()
            wait = 0.05 if not thinking else min(0.05, max(0.0, thinking[0][0] - now))
            for r in await follower.poll(wait):
                target = runs.get(r.key)
                if target is None:
                    continue
                run = target
                changed.add(r.key)
                if r.topic == TABLE_REPLIES:
                    # Rejected (a race with a timeout, say): decide that seat again.
                    rejections += 1
                    reply = msgspec.json.decode(r.value, type=ReplyEnvelope).rejected
                    run.sent = {k for k in run.sent if k[1] != reply.seat}
                    continue
                event = decode_event(r.value)
                events += 1
                sent_at = waiting.pop(event.command_id, None)
                if sent_at:
                    latencies.append((time.perf_counter() - sent_at) * 1000)
                _observe(run, event)
            for name in changed:
                run = runs[name]
                state = run.state
                if state is None:
                    continue
                if state.phase != "ended":
                    _act(run, state, players, send)
                elif run.counted != state.hand_id:
                    run.counted = state.hand_id
                    done += 1
                    ends[state.end or "?"] = ends.get(state.end or "?", 0) + 1
                    if progress:
                        progress(done, hands)
                    if started < hands:
                        start(run)
    finally:
        await follower.stop()
    seconds = time.perf_counter() - begin
    return SimulationResult(run_id, done, seconds, commands, rejections, ends, events, latencies)


def _act(
    run: _TableRun,
    state: HandState,
    players: Sequence[Bot],
    send: Callable[[cmd.HandCommand, str], None],
) -> None:
    for seat in pending_seats(state):
        key = (state.decision_seq, seat)
        if key in run.sent:
            continue
        run.sent.add(key)
        choice = players[seat].decide(bot_view(run, state, seat))
        send(
            msgspec.structs.replace(
                choice,
                table_id=run.table_id,
                hand_id=state.hand_id,
                decision_seq=state.decision_seq,
                command_id=uuid.uuid4().hex,
            ),
            run.table_id,
        )


def _observe(run: _TableRun, event: Event) -> None:
    """Fold one event of the table's log into its hand state and each seat's tracker."""
    if run.state is None or event.hand_id != run.state.hand_id:
        run.state, run.sent = HandState(), set()
        run.trackers = [SeatTracker(s) for s in range(4)]
    apply(run.state, event)
    for tracker in run.trackers:
        tracker.observe(event)


def bot_view(run: _TableRun, state: HandState, seat: int) -> BotView:
    """``seat``'s view for its pending decision: its tracker's, with the legal actions.

    The same as ``from_seat_view(seat_view(state, seat))`` (tests/unit/test_simulate_views.py)
    except in the opening, where the list is left empty: no bot reads it there
    (``Bot.decide``), and every exchange triple would cost more than the decision.
    """
    view = run.trackers[seat].view
    view.legal = legal_actions(state, seat) if state.phase == "play" else []
    return view
