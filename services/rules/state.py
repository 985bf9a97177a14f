"""The state of one hand and ``apply``: folding an event into it.

The state is a plain mutable record owned by one writer. ``apply`` changes it in place and
returns it; it never decides anything the event does not say, so folding a hand's events
always rebuilds the same state (``replay``). Use ``HandState.copy`` for a scratch copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from schemas import events as ev
from services.rules.analysis import POW5
from services.rules.tiles import INDEX, NUM_TYPES, SUITS

CLOCK_PRESETS: dict[str, tuple[int, int]] = {
    "bullet": (2_000, 5_000),
    "blitz": (3_000, 10_000),
    "standard": (5_000, 20_000),
    "relaxed": (15_000, 60_000),
}
"""Clock presets of RULES.md §8: per-decision base time and per-hand reserve, in ms."""

HU, PUNG, KONG = 1, 2, 4
"""Bits of a seat's legal claims in an open window."""

PHASES = ("deal", "exchange", "missing", "play", "ended")


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

    # --- derived facts -------------------------------------------------------------------

    @property
    def wall_left(self) -> int:
        return self.back - self.front

    def active(self, seat: int) -> bool:
        return not self.won[seat]

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
        for step in range(1, 5):
            s = (seat + step) % 4
            if not self.won[s]:
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


# --- apply ---------------------------------------------------------------------------------


def _hand_started(s: HandState, e: ev.HandStarted) -> None:
    s.table_id, s.hand_id = e.table_id, e.hand_id
    s.preset, s.players, s.commitment = e.preset, list(e.seats), e.commitment
    s.phase = "deal"
    s.rated, s.computer_seats = e.rated, list(e.computer_seats)
    s.clock = None if e.clock is None else Clock(e.clock, reserve=[full_reserve(e.clock)] * 4)


def full_reserve(preset: str) -> int:
    """A seat's reserve at the start of each hand under a clock preset (RULES.md §8)."""
    return CLOCK_PRESETS[preset][1]


def _tiles_dealt(s: HandState, e: ev.TilesDealt) -> None:
    counts, keys = s.counts[e.seat], s.keys[e.seat]
    for name in e.tiles:  # add_tile, written out for the 53 dealt tiles
        t = INDEX[name]
        counts[t] += 1
        keys[t // 9] += POW5[t % 9]


def _wall_built(s: HandState, e: ev.WallBuilt) -> None:
    s.wall = list(map(INDEX.__getitem__, e.tiles))
    s.front, s.back = 0, len(s.wall)
    s.direction, s.seed = e.direction, e.seed
    s.phase = "exchange"
    s.decision_seq = e.seq


def _exchange_chosen(s: HandState, e: ev.ExchangeChosen) -> None:
    chosen = tuple(map(INDEX.__getitem__, e.tiles))
    for t in chosen:
        s.remove_tile(e.seat, t)
    s.exchange[e.seat] = chosen


DIRECTION_STEP = {"right": 1, "opposite": 2, "left": 3}


def _exchange_resolved(s: HandState, e: ev.ExchangeResolved) -> None:
    step = DIRECTION_STEP[e.direction]
    s.direction = e.direction
    for seat, tiles in enumerate(e.passed):
        for name in tiles:
            s.add_tile((seat + step) % 4, INDEX[name])
    s.phase = "missing"
    s.decision_seq = e.seq


def _missing_declared(s: HandState, e: ev.MissingSuitDeclared) -> None:
    s.missing[e.seat] = SUITS.index(e.suit)


def _missing_revealed(s: HandState, e: ev.MissingSuitsRevealed) -> None:
    s.missing = [SUITS.index(x) for x in e.suits]
    s.phase = "play"
    s.turn, s.turn_kind, s.drawn = 0, "first", None
    s.decision_seq = e.seq


def _tile_drawn(s: HandState, e: ev.TileDrawn) -> None:
    # hand._discard folds the usual draw itself, the same way: keep the two alike.
    t = INDEX[e.tile]
    if e.replacement:
        s.back -= 1
    else:
        s.front += 1
    s.add_tile(e.seat, t)
    s.turn, s.turn_kind, s.drawn = e.seat, ("replacement" if e.replacement else "draw"), t
    s.hu_blocked[e.seat] = False
    s.pung_blocked[e.seat] = 0
    s.window = None
    s.decision_seq = e.seq


def _tile_discarded(s: HandState, e: ev.TileDiscarded) -> None:
    # hand._discard folds a discard itself, the same way: keep the two alike.
    t = INDEX[e.tile]
    s.remove_tile(e.seat, t)
    s.discards[e.seat].append(t)
    s.discard_after_draw = s.turn_kind in ("draw", "replacement")
    s.turn = s.turn_kind = s.drawn = None
    s.decision_seq = e.seq


def _window_opened(s: HandState, e: ev.ResponseWindowOpened) -> None:
    # hand._discard opens the window itself, the same way: keep the two alike.
    from services.rules.claims import claims_on

    t = INDEX[e.tile]
    claims = dict(zip(e.seats, claims_on(s, e.seats, t), strict=True))
    s.window = Window("discard", t, e.discarder, claims)
    s.decision_seq = e.seq


def _robbing_opened(s: HandState, e: ev.RobbingWindowOpened) -> None:
    t = INDEX[e.tile]
    s.window = Window("rob", t, e.declarer, {x: HU for x in e.seats})
    s.turn = s.turn_kind = None
    s.decision_seq = e.seq


def _respond(s: HandState, seat: int, response: str) -> None:
    w = s.window
    assert w is not None
    w.responses[seat] = response
    bits = w.claims[seat]
    if bits & HU and response != "hu":
        s.hu_blocked[seat] = True
    if bits & PUNG and response == "pass":
        s.pung_blocked[seat] |= 1 << w.tile


def _claim_declared(s: HandState, e: ev.ClaimDeclared) -> None:
    _respond(s, e.seat, e.claim)


def _passed(s: HandState, e: ev.Passed) -> None:
    _respond(s, e.seat, "pass")


def _punged(s: HandState, e: ev.Punged) -> None:
    t = INDEX[e.tile]
    s.remove_tile(e.seat, t, 2)
    s.discards[e.from_seat].pop()
    s.melds[e.seat].append(Meld("pung", t, e.from_seat))
    s.window = None
    s.turn, s.turn_kind, s.drawn = e.seat, "pung", None
    s.decision_seq = e.seq


def _konged(s: HandState, e: ev.Konged) -> None:
    t = INDEX[e.tile]
    if e.kind == "concealed":
        s.remove_tile(e.seat, t, 4)
        s.melds[e.seat].append(Meld("concealed", t))
    elif e.kind == "added":
        s.remove_tile(e.seat, t, 1)
        for m in s.melds[e.seat]:
            if m.kind == "pung" and m.tile == t:
                m.kind = "added"
    else:
        s.remove_tile(e.seat, t, 3)
        s.discards[e.from_seat if e.from_seat is not None else -1].pop()
        s.melds[e.seat].append(Meld("exposed", t, e.from_seat))
    for p in e.payments:
        s.pay(p)
        s.kong_income.append(p)
    s.window = None
    s.turn, s.turn_kind, s.drawn = e.seat, "kong", None


def _won(s: HandState, e: ev.Won) -> None:
    w = s.window
    if w is not None and not w.taken:
        # The discard (or the robbed kong tile) goes to the winners once, however many win.
        if w.kind == "discard":
            s.discards[w.source].pop()
        else:
            s.remove_tile(w.source, w.tile)
        s.taken.append(w.tile)
        w.taken = True
    s.won[e.seat] = True
    for p in e.payments:
        s.pay(p)
    tile = None if e.tile is None else INDEX[e.tile]
    hand = tuple(map(INDEX.__getitem__, e.hand))
    s.wins.append(WinRecord(e.seat, tile, e.from_seat, e.fan, e.value, tuple(e.patterns), hand))
    if s.turn == e.seat:
        s.turn = s.turn_kind = s.drawn = None


def _wall_exhausted(s: HandState, e: ev.WallExhausted) -> None:
    s.ready = list(e.ready)
    s.window = None
    s.turn = s.turn_kind = s.drawn = None


def _settlement_item(s: HandState, e: ev.SettlementItem) -> None:
    s.pay(e.payment)


def _hand_ended(s: HandState, e: ev.HandEnded) -> None:
    s.phase = "ended"
    s.end = e.end
    s.window = None
    s.turn = s.turn_kind = s.drawn = None
    s.decision_seq = e.seq


def _clock_started(s: HandState, e: ev.ClockStarted) -> None:
    clock = _clock_of(s)
    clock.grace_ms = e.grace_ms
    for d in e.seats:
        clock.running[d.seat] = Running(
            e.decision_seq, e.at_ms, d.base_ms, d.reserve_ms, d.deadline_ms
        )


def _clock_stopped(s: HandState, e: ev.ClockStopped) -> None:
    clock = _clock_of(s)
    clock.running.pop(e.seat, None)
    clock.reserve[e.seat] = e.reserve_ms


def _clock_of(s: HandState) -> Clock:
    if s.clock is None:
        raise ReplayError("a clock event in an untimed hand")
    return s.clock


_APPLY: dict[type[Any], Callable[[HandState, Any], None]] = {
    ev.HandStarted: _hand_started,
    ev.TilesDealt: _tiles_dealt,
    ev.WallBuilt: _wall_built,
    ev.ExchangeChosen: _exchange_chosen,
    ev.ExchangeResolved: _exchange_resolved,
    ev.MissingSuitDeclared: _missing_declared,
    ev.MissingSuitsRevealed: _missing_revealed,
    ev.TileDrawn: _tile_drawn,
    ev.TileDiscarded: _tile_discarded,
    ev.ResponseWindowOpened: _window_opened,
    ev.RobbingWindowOpened: _robbing_opened,
    ev.ClaimDeclared: _claim_declared,
    ev.Passed: _passed,
    ev.Punged: _punged,
    ev.Konged: _konged,
    ev.Won: _won,
    ev.WallExhausted: _wall_exhausted,
    ev.SettlementItem: _settlement_item,
    ev.HandEnded: _hand_ended,
    ev.ClockStarted: _clock_started,
    ev.ClockStopped: _clock_stopped,
}


class ReplayError(ValueError):
    """An event log that does not fit the state (out of order or from another hand)."""


def apply(state: HandState, event: ev.Event) -> HandState:
    """Fold one event into the state (in place) and return the state."""
    if event.seq != state.seq + 1:
        raise ReplayError(f"event seq {event.seq} does not follow {state.seq}")
    if state.seq and (event.table_id, event.hand_id) != (state.table_id, state.hand_id):
        raise ReplayError(f"event of {event.table_id}/{event.hand_id} in another hand's log")
    _APPLY[type(event)](state, event)
    state.seq = event.seq
    return state


APPLY_OWN: dict[type[Any], Callable[[HandState, Any], None]] = _APPLY
"""The fold of each event type without ``apply``'s checks, for the rules engine's own events:
it builds each from the state's ids and next seq, so they always fit (the caller sets
``state.seq``). Saves a call and two comparisons per event on the engine's hot paths."""


def replay(events: Iterable[ev.Event]) -> HandState:
    """Rebuild a hand's state from its events."""
    state = HandState()
    for e in events:
        apply(state, e)
    return state
