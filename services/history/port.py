"""The hand-history store port: what the history projection writes and the gateway reads.

Two adapters, which import this module: ``services.history.postgres`` (asyncpg; distributed
mode, schema ``history``) and ``services.history.embedded`` (``history.sqlite3`` beside the
embedded log); ``services.history.store`` picks one. Both hold the same tables
(``services.history.migrations``). ``apply`` writes a step's rows together with the input
positions they consume, in one transaction, after checking that the stored positions are
still the step's starting ones: the store is the sink, so the projection resumes from it and
every hand is written exactly once however often it is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from services.history.fold import EndedHand, HandRow, TableFacts, rows_of

PositionKey = tuple[str, int]
"""(topic, partition)."""


@dataclass(frozen=True, slots=True)
class Position:
    """Where the projection is in one input partition."""

    next_offset: int
    open_from: int
    """Where a restart reads from to rebuild the hands still open at ``next_offset``."""


@dataclass(slots=True)
class Step:
    """What one step read: the hands that ended, the tables opened, and where it stops."""

    start: dict[PositionKey, Position]
    """The positions the step started from (as the projection believes them stored)."""
    end: dict[PositionKey, Position]
    ended: list[EndedHand] = field(default_factory=list)
    facts: list[TableFacts] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Applied:
    """What a committed step wrote."""

    hands: int
    rows: int
    tables: int


@dataclass(slots=True)
class Snapshot:
    """Every row of the store, read in one consistent transaction (for the rebuild check)."""

    positions: dict[PositionKey, Position]
    facts: list[TableFacts]
    rows: list[HandRow]


def rows_for(ended: list[EndedHand], facts: dict[str, TableFacts]) -> list[HandRow]:
    """The rows of ended hands, each (hand, seat) once: the first end of a hand id wins, as
    the stores' ``ON CONFLICT DO NOTHING`` keeps it."""
    seen: set[tuple[str, int]] = set()
    rows = []
    for hand in ended:
        for row in rows_of(hand, facts.get(hand.end.table_id)):
            if (row.hand_id, row.seat) not in seen:
                seen.add((row.hand_id, row.seat))
                rows.append(row)
    return rows


class HistoryStore(Protocol):
    """Hand-history rows, table facts and the input positions, in one transactional store."""

    async def start(self) -> None:
        """Connect and apply any missing migrations."""
        ...

    async def close(self) -> None: ...

    async def positions(self) -> dict[PositionKey, Position]:
        """Every stored position (none the first time: everything starts at offset 0)."""
        ...

    async def apply(self, step: Step) -> Applied | None:
        """Write the step's facts and the rows of its ended hands and move the positions to
        ``step.end``, in one transaction. Returns None, changing nothing, when a stored
        position is not ``step.start`` (another projection wrote meanwhile)."""
        ...

    async def hands(
        self,
        player: str,
        viewer: str | None,
        limit: int,
        before_ms: int | None = None,
        kind: str | None = None,
        offset: int = 0,
    ) -> list[HandRow]:
        """``player``'s finished hands, newest first, as ``viewer`` may see them: a private
        table's hands only when the viewer played them too (None: no such filter); only
        hands of ``kind`` when given (one of ``fold.KINDS``); the first ``offset`` of them
        skipped."""
        ...

    async def count_hands(
        self, player: str, viewer: str | None, before_ms: int | None = None, kind: str | None = None
    ) -> int:
        """How many hands ``hands`` lists with these filters, over all pages."""
        ...

    async def figure_rows(self, player: str, viewer: str | None) -> list[HandRow]:
        """Every finished hand of ``player`` (oldest first) that ``viewer`` may see, for the
        figures (``services.history.figures``): a private table's hands only when the viewer
        played them too (None, or the player: all of them)."""
        ...

    async def hand(self, hand_id: str) -> list[HandRow]:
        """A hand's rows in seat order (empty: not in the history)."""
        ...

    async def snapshot(self) -> Snapshot: ...
