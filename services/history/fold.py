"""Folding ``table.events`` (and the table facts of ``lobby.events``) into hand-history rows.

Pure: records in, rows out. The projection (``services.history.service``) and its rebuild
use the same fold, so a rebuild from the log produces the same rows as the live service.

- ``HandsFold`` follows the hands of one ``table.events`` partition: a hand opens at its
  ``hand_started`` (its seats, rated flag, computer seats), each ``won`` raises the winner's
  best fan, and its ``hand_ended`` closes it into an ``EndedHand``. A table's next
  ``hand_started`` replaces a hand that never ended (nothing is written for that one), and
  a hand still open ``ABANDONED_AFTER`` offsets after its start (an untimed table its
  players left) is given up when the next hand of the partition starts, so that a restart
  never reads more than that again. ``open_from`` is the lowest offset a restart must read
  again to rebuild the open hands. Both depend only on the records, never on where a batch
  ends: the live projection and a rebuild give up the same hands.
- ``table_facts`` reads what ``table.events`` does not say about a table from its
  ``table_opened``: whether it is public, Quick Play, and whether computers may sit.
- ``rows_of`` turns an ended hand and its table's facts into one ``HandRow`` per seat.

The facts a player's figures need (``services.history.figures``) are read here and nowhere
else: how each seat won (``won``: self-drawn or on a discard, a robbed kong counting as a
discard as RULES.md §5.1 pays it), how many wins its discards paid for (``dealt_in``), and
at a wall exhaustion (RULES.md §6) whether a remaining seat was a flower pig or clean and
not ready.

Kinds: ``rated`` (a rated hand), ``quick_play`` (a Quick Play table, rated or not),
``practice`` (a private table with computer seats: what the practice button opens),
``casual`` (everything else, tables started without the lobby too).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from schemas import events as ev
from schemas import lobby as lb
from schemas.lobby import decode_lobby_event
from schemas.table import decode_event
from services.runtime.log import Record

KINDS = ("practice", "casual", "rated", "quick_play")
ABANDONED_AFTER = 2_000_000
"""Offsets of its partition after which a hand that has not ended is given up."""


class HandRow(msgspec.Struct, frozen=True, kw_only=True):
    """One player's line of a finished hand (one per seat)."""

    hand_id: str
    seat: int
    player: str
    table_id: str
    ended_ms: int
    """When ``hand_ended`` was appended to the log (0: not known)."""
    kind: str
    """practice, casual, rated or quick_play."""
    rated: bool
    public: bool
    players: list[str]
    """Every seat's player, in seat order."""
    score: int
    """The player's points in the hand."""
    placement: int
    """The player's place (1-4)."""
    best_fan: int | None
    """The highest fan of the player's wins in the hand (None: did not win)."""
    end: str
    """three_winners or wall_exhausted."""
    partition: int
    """Where the hand's log is: its ``table.events`` partition and offsets."""
    start_offset: int
    end_offset: int
    # The figures' facts (added by history migration 2; rows written before it keep these
    # defaults until the history is rebuilt from the log).
    won: str | None = None
    """self_drawn or discard (a robbed kong too); None: did not win."""
    dealt_in: int = 0
    """Wins the player paid for as the discarder (or the robbed kong's declarer)."""
    flower_pig: bool = False
    """At a wall exhaustion: still held a tile of the missing suit (RULES.md §6.1)."""
    not_ready: bool = False
    """At a wall exhaustion: clean but not ready (RULES.md §6.2); flower pigs are not
    counted here."""


ROW_COLUMNS: tuple[str, ...] = tuple(HandRow.__struct_fields__)


@dataclass(frozen=True, slots=True)
class TableFacts:
    """What ``lobby.events`` says about a table that ``table.events`` does not."""

    table_id: str
    public: bool
    quick_play: bool
    computers: bool
    """Whether computers may fill its empty seats."""
    opened_ms: int


FACT_COLUMNS: tuple[str, ...] = ("table_id", "public", "quick_play", "computers", "opened_ms")


@dataclass(slots=True)
class OpenHand:
    """A hand whose end the fold has not seen yet."""

    start: ev.HandStarted
    offset: int
    best_fans: list[int | None]
    won: list[str | None] = field(default_factory=lambda: [None] * 4)
    dealt_in: list[int] = field(default_factory=lambda: [0] * 4)
    exhausted: ev.WallExhausted | None = None


@dataclass(frozen=True, slots=True)
class EndedHand:
    """A hand from its start to its end, as the fold saw it."""

    start: ev.HandStarted
    end: ev.HandEnded
    partition: int
    start_offset: int
    end_offset: int
    ended_ms: int
    best_fans: tuple[int | None, ...]
    won: tuple[str | None, ...] = (None,) * 4
    dealt_in: tuple[int, ...] = (0,) * 4
    flower_pigs: frozenset[int] = frozenset()
    not_ready: frozenset[int] = frozenset()
    """Clean seats not ready at a wall exhaustion."""


@dataclass(slots=True)
class HandsFold:
    """The open hands of one partition and the hands that ended (see the module note)."""

    partition: int
    position: int = 0
    """The next offset to fold."""
    open: dict[str, OpenHand] = field(default_factory=dict)  # table id -> its open hand
    ended: list[EndedHand] = field(default_factory=list)
    undecodable: int = 0
    abandoned_after: int = ABANDONED_AFTER

    @property
    def open_from(self) -> int:
        """Where a restart reads from to rebuild the open hands."""
        return min((h.offset for h in self.open.values()), default=self.position)

    def fold(self, record: Record) -> None:
        """Fold one record of the partition (in offset order)."""
        self.position = record.offset + 1
        value = record.value
        # Only four kinds of event matter: skip the others without decoding them.
        if not (
            b'"type":"hand_started"' in value
            or b'"type":"won"' in value
            or b'"type":"hand_ended"' in value
            or b'"type":"wall_exhausted"' in value
        ):
            return
        try:
            e = decode_event(value)
        except msgspec.DecodeError:
            self.undecodable += 1
            return
        if isinstance(e, ev.HandStarted):
            oldest = record.offset - self.abandoned_after
            if self.open and min(h.offset for h in self.open.values()) < oldest:
                self.open = {t: h for t, h in self.open.items() if h.offset >= oldest}
            if len(e.seats) == 4:
                self.open[e.table_id] = OpenHand(e, record.offset, [None] * 4)
            return
        hand = self.open.get(e.table_id)
        if hand is None or hand.start.hand_id != e.hand_id:
            return  # a hand that started before this fold began, or a stray event
        if isinstance(e, ev.Won):
            if 0 <= e.seat < 4:
                best = hand.best_fans[e.seat]
                hand.best_fans[e.seat] = e.fan if best is None else max(best, e.fan)
                hand.won[e.seat] = "self_drawn" if e.self_drawn else "discard"
                if not e.self_drawn and e.from_seat is not None and 0 <= e.from_seat < 4:
                    hand.dealt_in[e.from_seat] += 1
        elif isinstance(e, ev.WallExhausted):
            hand.exhausted = e
        elif isinstance(e, ev.HandEnded):
            del self.open[e.table_id]
            if len(e.scores) == 4 and len(e.placements) == 4:
                pigs, not_ready = _exhaustion(hand.exhausted)
                self.ended.append(
                    EndedHand(
                        start=hand.start,
                        end=e,
                        partition=self.partition,
                        start_offset=hand.offset,
                        end_offset=record.offset,
                        ended_ms=record.timestamp_ms,
                        best_fans=tuple(hand.best_fans),
                        won=tuple(hand.won),
                        dealt_in=tuple(hand.dealt_in),
                        flower_pigs=pigs,
                        not_ready=not_ready,
                    )
                )

    def take_ended(self) -> list[EndedHand]:
        ended, self.ended = self.ended, []
        return ended


def _exhaustion(e: ev.WallExhausted | None) -> tuple[frozenset[int], frozenset[int]]:
    """The flower pigs and the clean seats not ready of a wall exhaustion (RULES.md §6):
    ``ready`` is null for winners and false for flower pigs."""
    if e is None:
        return frozenset(), frozenset()
    pigs = frozenset(s for s in e.flower_pigs if 0 <= s < 4)
    not_ready = frozenset(s for s, r in enumerate(e.ready[:4]) if r is False and s not in pigs)
    return pigs, not_ready


def table_facts(record: Record) -> TableFacts | None:
    """The facts of the table a ``lobby.events`` record opens (None: another event)."""
    if b'"type":"table_opened"' not in record.value:
        return None
    try:
        e = decode_lobby_event(record.value)
    except msgspec.DecodeError:
        return None
    if not isinstance(e, lb.TableOpened):
        return None
    return TableFacts(
        table_id=e.table_id,
        public=e.options.public,
        quick_play=e.quick_play,
        computers=e.options.computers is not None,
        opened_ms=e.at_ms,
    )


def kind_of(start: ev.HandStarted, facts: TableFacts | None) -> str:
    """practice, casual, rated or quick_play (see the module note)."""
    if facts is not None and facts.quick_play:
        return "quick_play"
    if start.rated:
        return "rated"
    if facts is not None and not facts.public and start.computer_seats:
        return "practice"
    return "casual"


def rows_of(hand: EndedHand, facts: TableFacts | None) -> list[HandRow]:
    """One row per seat of an ended hand; a table without lobby facts is public."""
    start, end = hand.start, hand.end
    kind = kind_of(start, facts)
    public = True if facts is None else facts.public
    return [
        HandRow(
            hand_id=end.hand_id,
            seat=seat,
            player=player,
            table_id=end.table_id,
            ended_ms=hand.ended_ms,
            kind=kind,
            rated=start.rated,
            public=public,
            players=list(start.seats),
            score=end.scores[seat],
            placement=end.placements[seat],
            best_fan=hand.best_fans[seat],
            end=end.end,
            partition=hand.partition,
            start_offset=hand.start_offset,
            end_offset=hand.end_offset,
            won=hand.won[seat],
            dealt_in=hand.dealt_in[seat],
            flower_pig=seat in hand.flower_pigs,
            not_ready=seat in hand.not_ready,
        )
        for seat, player in enumerate(start.seats)
    ]
