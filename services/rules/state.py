"""The state of one hand: what the server knows, every section's facts in one record.

The state is a plain mutable record owned by one writer. Each section module folds its own
events into it (``services.rules.hand.apply`` dispatches); nothing here decides a rule. Use
``HandState.copy`` for a scratch copy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from schemas import commands as cmd
from schemas import events as ev
from schemas.codes import RuleCode
from services.rules.fan import POW5
from services.rules.tiles import NAMES, NUM_TYPES, seats_after

_AFTER = tuple((*seats_after(seat), seat) for seat in range(4))

HU, PUNG, KONG = ev.CLAIM_HU, ev.CLAIM_PUNG, ev.CLAIM_KONG
"""Bits of a seat's legal claims in an open window (as ``ResponseWindowOpened.claims``)."""


@dataclass(slots=True)
class Meld:
    """A declared group: ``kind`` is pung, concealed, added or exposed (the last three: kongs)."""

    kind: str
    tile: int
    from_seat: int | None = None

    @property
    def size(self) -> int:
        return 3 if self.kind == "pung" else 4


@dataclass(slots=True)
class Window:
    """An open response window (after a discard) or robbing window (after an added kong)."""

    kind: str  # "discard" or "rob"
    tile: int
    source: int  # the discarder or the kong declarer
    claims: dict[int, int]  # seat -> legal claim bits, for every seat that was asked
    responses: dict[int, str] = field(default_factory=dict)
    taken: bool = False  # the tile has gone to a winner

    @property
    def pending(self) -> list[int]:
        return [s for s in self.claims if s not in self.responses]


@dataclass(slots=True)
class WinRecord:
    """A win as the scenario outcome reports it."""

    seat: int
    tile: int | None
    from_seat: int | None
    fan: int
    value: int
    patterns: tuple[str, ...]
    hand: tuple[int, ...] = ()  # the revealed concealed tiles, winning tile included
    shared: bool = False  # won on the same discard (or robbed kong) as the win before it


@dataclass(slots=True)
class Running:
    """A seat's clock while it decides (RULES.md §8)."""

    decision_seq: int
    offered_ms: int
    base_ms: int
    reserve_ms: int  # how much of the reserve this decision may use
    deadline_ms: int


@dataclass(slots=True)
class Clock:
    """The clocks of a timed hand: each seat's reserve left and its running decision."""

    preset: str
    grace_ms: int = 0
    reserve: list[int] = field(default_factory=lambda: [0] * 4)
    running: dict[int, Running] = field(default_factory=dict)

    def copy(self) -> Clock:
        return Clock(
            self.preset,
            self.grace_ms,
            self.reserve[:],
            {s: Running(*_fields(r)) for s, r in self.running.items()},
        )


def _fields(r: Running) -> tuple[int, int, int, int, int]:
    return (r.decision_seq, r.offered_ms, r.base_ms, r.reserve_ms, r.deadline_ms)


@dataclass(slots=True)
class HandState:
    """Everything the server knows about one hand, hidden parts included."""

    table_id: str = ""
    hand_id: str = ""
    seq: int = 0
    preset: str = ""
    players: list[str] = field(default_factory=list)
    commitment: str | None = None
    seed: str | None = None
    phase: str = "deal"
    counts: list[list[int]] = field(default_factory=lambda: [[0] * NUM_TYPES for _ in range(4)])
    keys: list[list[int]] = field(default_factory=lambda: [[0, 0, 0] for _ in range(4)])
    melds: list[list[Meld]] = field(default_factory=lambda: [[] for _ in range(4)])
    discards: list[list[int]] = field(default_factory=lambda: [[] for _ in range(4)])
    taken: list[int] = field(default_factory=list)
    wall: list[int] = field(default_factory=list)
    front: int = 0
    back: int = 0
    exchange: list[tuple[int, ...] | None] = field(default_factory=lambda: [None] * 4)
    direction: str | None = None  # drawn by the shuffle; public once the exchange resolves
    missing: list[int | None] = field(default_factory=lambda: [None] * 4)
    turn: int | None = None
    turn_kind: str | None = None  # first, draw, replacement or pung
    drawn: int | None = None
    # The latest discard came right after its discarder drew from the wall: only then is a
    # discard on an empty wall "the discard of the last wall tile" (last_tile, RULES.md §6).
    discard_after_draw: bool = False
    window: Window | None = None
    won: list[bool] = field(default_factory=lambda: [False] * 4)
    wins: list[WinRecord] = field(default_factory=list)
    scores: list[int] = field(default_factory=lambda: [0] * 4)
    payments: list[ev.Payment] = field(default_factory=list)
    kong_income: list[ev.Payment] = field(default_factory=list)
    hu_blocked: list[bool] = field(default_factory=lambda: [False] * 4)
    pung_blocked: list[int] = field(default_factory=lambda: [0] * 4)
    end: str | None = None
    ready: list[bool | None] | None = None
    decision_seq: int = 0
    clock: Clock | None = None  # None: untimed
    rated: bool = False
    computer_seats: list[int] = field(default_factory=list)
    paused: bool = False  # a practice hand its human paused (services.rules.practice)

    # --- derived facts -------------------------------------------------------------------

    @property
    def wall_left(self) -> int:
        return self.back - self.front

    def winners(self) -> int:
        return sum(self.won)

    def holds_missing(self, seat: int) -> bool:
        m = self.missing[seat]
        return m is not None and self.keys[seat][m] != 0

    def concealed_count(self, seat: int) -> int:
        return sum(self.counts[seat])

    def meld_shapes(self, seat: int) -> list[tuple[int, int]]:
        """Declared groups as ``(tile, size)`` for analysis."""
        return [(m.tile, m.size) for m in self.melds[seat]]

    def next_active(self, seat: int) -> int:
        """The next active seat after ``seat`` in turn order."""
        won = self.won
        for s in _AFTER[seat]:
            if not won[s]:
                return s
        raise ValueError("no active seat left")

    def copy(self) -> HandState:
        """An independent copy, cheap enough to make per decision."""
        w = self.window
        return HandState(
            table_id=self.table_id,
            hand_id=self.hand_id,
            seq=self.seq,
            preset=self.preset,
            players=list(self.players),
            commitment=self.commitment,
            seed=self.seed,
            phase=self.phase,
            counts=[c[:] for c in self.counts],
            keys=[k[:] for k in self.keys],
            melds=[[Meld(m.kind, m.tile, m.from_seat) for m in ms] for ms in self.melds],
            discards=[d[:] for d in self.discards],
            taken=self.taken[:],
            wall=self.wall,  # never mutated: draws move front/back
            front=self.front,
            back=self.back,
            exchange=self.exchange[:],
            direction=self.direction,
            missing=self.missing[:],
            turn=self.turn,
            turn_kind=self.turn_kind,
            drawn=self.drawn,
            discard_after_draw=self.discard_after_draw,
            window=None
            if w is None
            else Window(w.kind, w.tile, w.source, dict(w.claims), dict(w.responses), w.taken),
            won=self.won[:],
            wins=self.wins[:],
            scores=self.scores[:],
            payments=self.payments[:],
            kong_income=self.kong_income[:],
            hu_blocked=self.hu_blocked[:],
            pung_blocked=self.pung_blocked[:],
            end=self.end,
            ready=None if self.ready is None else self.ready[:],
            decision_seq=self.decision_seq,
            clock=None if self.clock is None else self.clock.copy(),
            rated=self.rated,
            computer_seats=self.computer_seats[:],
            paused=self.paused,
        )

    # --- tile movement -------------------------------------------------------------------

    def add_tile(self, seat: int, t: int, n: int = 1) -> None:
        self.counts[seat][t] += n
        self.keys[seat][t // 9] += n * POW5[t % 9]

    def remove_tile(self, seat: int, t: int, n: int = 1) -> None:
        if self.counts[seat][t] < n:
            raise ValueError(f"seat {seat} does not hold {n} of tile {t}")
        self.counts[seat][t] -= n
        self.keys[seat][t // 9] -= n * POW5[t % 9]

    def pay(self, payment: ev.Payment) -> None:
        self.scores[payment.payer] -= payment.amount
        self.scores[payment.payee] += payment.amount
        self.payments.append(payment)


class ReplayError(ValueError):
    """An event log that does not fit the state (out of order or from another hand)."""


def pending_seats(state: HandState) -> list[int]:
    """The seats whose decision the hand waits for."""
    if state.phase == "exchange":
        return [s for s in range(4) if state.exchange[s] is None]
    if state.phase == "missing":
        return [s for s in range(4) if state.missing[s] is None]
    if state.phase != "play":
        return []
    if state.window is not None:
        return state.window.pending
    return [] if state.turn is None else [state.turn]


Decided = list[ev.Event] | cmd.Rejection
"""What deciding a command gives: the events it caused (already folded), or a refusal."""

Fold = Callable[[HandState, Any], None]
"""How one event type changes the state: each section module keeps the folds of its events."""


class Log:
    """Emits events: each gets the next seq, is folded into the state, and is collected.

    The deciding functions of every section emit through a ``Log``; ``folds`` is the whole
    fold table, which ``services.rules.hand`` fills in (it imports every section).
    """

    __slots__ = ("command_id", "events", "state")
    folds: ClassVar[Mapping[type[Any], Fold]] = {}

    def __init__(
        self, state: HandState, command_id: str = "", events: list[ev.Event] | None = None
    ) -> None:
        self.state = state
        self.command_id = command_id
        self.events: list[ev.Event] = [] if events is None else events

    def emit(self, event_type: type[Any], /, **fields: Any) -> None:
        s = self.state
        self.push(
            event_type(
                table_id=s.table_id,
                hand_id=s.hand_id,
                seq=s.seq + 1,
                command_id=self.command_id,
                **fields,
            )
        )

    def push(self, event: ev.Event) -> None:
        """Fold and collect an event the caller built with the state's ids, the next seq and
        ``command_id`` (``emit`` does that; the hottest events are built in place instead, which
        saves packing their fields into a dict twice)."""
        s = self.state
        # What ``apply`` does, minus its checks: an event built here always fits the state.
        self.folds[type(event)](s, event)
        s.seq = event.seq
        self.events.append(event)


def reject(code: RuleCode, reason: str, **params: str | int) -> cmd.Rejection:
    """A refusal: a stable ``code`` with its ``params``, and an English ``reason``.

    Imported as ``_reject``: the i18n check (tests/service/test_gateway_i18n.py) finds the
    codes the server sends by that name."""
    return cmd.Rejection(code=code, reason=reason, params=params)


_reject = reject


def not_pending(state: HandState, seat: int) -> cmd.Rejection:
    """Why ``seat`` may not act now: another seat's decision, or an answer it already gave."""
    waiting = pending_seats(state)
    if state.window is not None:
        if seat in state.window.responses:
            return _reject("already_responded", f"seat {seat} already responded", seat=seat)
        return _reject(
            "awaiting_responses",
            f"waiting for seats {waiting} to respond to {NAMES[state.window.tile]}",
            seat=seat,
        )
    return _reject(
        "not_your_turn", f"it is seat {waiting[0] if waiting else '-'}'s decision", seat=seat
    )
