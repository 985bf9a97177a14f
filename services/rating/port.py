"""The rating store port: what the rating service writes and the gateway reads.

Two adapters, which import this module: ``services.rating.postgres`` (asyncpg; distributed
mode) and ``services.rating.embedded`` (SQLite beside the embedded log); ``services.rating.store``
picks one. Both hold the same tables
(``services.rating.migrations``) and apply a batch of ``rating.results`` records in one
transaction together with the next input offset, so the store itself is where the service
resumes: a result is applied exactly once however often it is delivered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from schemas.rating import RatedHandResult, decode_result
from services.rating.formula import (
    HAND_COLUMNS,
    HISTORY_COLUMNS,
    PROVISIONAL_HANDS,
    RATING_COLUMNS,
    START_RATING,
    Fold,
    Ignored,
)

DEFAULT_VARIANT = "sichuan"


# --- what the read side returns -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlayerRating:
    """A player's current standing in one variant."""

    variant: str
    player: str
    rating: float
    rated_hands: int
    provisional: bool
    last_seq: int = -1
    """Offset in ``rating.results`` of the last result that changed it (-1: none yet)."""

    @classmethod
    def newcomer(cls, player: str, variant: str = DEFAULT_VARIANT) -> PlayerRating:
        """The standing of someone without a rated hand: 1500, provisional."""
        return cls(variant, player, START_RATING, 0, True)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One rated hand's change to one player's rating."""

    variant: str
    player: str
    seq: int
    hand_id: str
    table_id: str
    seat: int
    points: int
    rating_before: float
    rating_after: float
    delta: float
    rated_hands: int
    """Rated hands done after this one."""

    @property
    def provisional(self) -> bool:
        """Whether the player was still provisional after this hand."""
        return self.rated_hands < PROVISIONAL_HANDS


@dataclass(frozen=True, slots=True)
class Place:
    """A player's place on the leaderboard, counted as ``RatingStore.leaderboard`` lists it."""

    rank: int | None
    """1 for the first line; None: not listed (no rated hand yet, or provisional when only
    established players are listed)."""
    of: int
    """How many players the leaderboard lists."""


@dataclass(frozen=True, slots=True)
class Position:
    """Where the store is in an input topic, with what it did so far."""

    topic: str
    next_offset: int
    applied: int
    ignored: int


# --- applying a batch ---------------------------------------------------------------------


DEAD_LETTER = "dead_letter"
"""The reason a result the store refused is ignored (it is on ``rating.results.dlq``)."""


@dataclass(slots=True)
class Batch:
    """Records of ``rating.results`` decoded, with the keys their fold needs from the store.

    A record that does not decode (or breaks a bound of ``RatedHandResult``) is ``None`` in
    ``results``, with why in ``refused``; so is a record set aside because the store
    refused it before (``poison``: offset -> reason)."""

    results: list[tuple[int, RatedHandResult | None]]
    players: set[tuple[str, str]] = field(default_factory=set)
    hand_ids: set[tuple[str, str]] = field(default_factory=set)
    refused: dict[int, str] = field(default_factory=dict)
    poison: frozenset[int] = frozenset()

    @classmethod
    def decode(
        cls, records: Sequence[tuple[int, bytes]], poison: Mapping[int, str] | None = None
    ) -> Batch:
        poison = poison or {}
        batch = cls([], poison=frozenset(seq for seq, _ in records if seq in poison))
        for seq, raw in records:
            result: RatedHandResult | None = None
            if seq in poison:
                batch.refused[seq] = poison[seq]
            else:
                try:
                    result = decode_result(raw)
                except msgspec.DecodeError as exc:
                    batch.refused[seq] = f"undecodable: {exc}"
            batch.results.append((seq, result))
            if result is not None:
                batch.hand_ids.add((result.variant, result.hand_id))
                batch.players.update((result.variant, p) for p in result.players)
        return batch

    def fold_into(self, fold: Fold) -> None:
        for seq, result in self.results:
            if result is None:
                fold.ignore(seq, "", DEAD_LETTER if seq in self.poison else "undecodable")
            else:
                fold.apply(seq, result)


@dataclass(frozen=True, slots=True)
class Applied:
    """What one batch did."""

    next_offset: int
    applied: int
    ignored: list[Ignored]


# --- recompute ----------------------------------------------------------------------------

LogFold = Callable[[int], Awaitable["FoldedLog"]]
"""Folds ``rating.results`` from offset 0 up to (not including) the given offset."""


@dataclass(slots=True)
class FoldedLog:
    """The whole log folded in memory, and how far it reached."""

    fold: Fold
    records: int
    end: int
    """One past the last offset folded."""
    seconds: float


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A store table as recompute compares it: key columns, the others, which are floats."""

    name: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    floats: frozenset[str] = frozenset()


COMPARED = (
    TableSpec("ratings", ("variant", "player"), RATING_COLUMNS, frozenset({"rating"})),
    TableSpec(
        "history",
        ("variant", "player", "seq"),
        HISTORY_COLUMNS,
        frozenset({"rating_before", "rating_after", "delta"}),
    ),
    TableSpec("hands", ("variant", "hand_id"), HAND_COLUMNS),
    TableSpec("positions", ("topic",), ("topic", "next_offset", "applied", "ignored")),
)


@dataclass(slots=True)
class RecomputeReport:
    """``ratings recompute``: the log folded into fresh tables and compared with the live."""

    topic: str
    live_position: int
    folded: FoldedLog
    rows: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per table: (live rows, fresh rows)."""
    differences: dict[str, int] = field(default_factory=dict)
    """Per table: rows missing on either side or differing in any column."""
    examples: list[str] = field(default_factory=list)
    write_s: float = 0.0
    compare_s: float = 0.0
    where: str = ""
    """Where the fresh tables are, for inspection."""
    waiting_from: int | None = None
    """The first offset of a record the live service has not applied, when the log holds
    records past the live position: the live ratings are behind (stuck or slow)."""
    log_end: int = 0

    @property
    def behind(self) -> bool:
        return self.waiting_from is not None

    @property
    def ok(self) -> bool:
        return (
            not any(self.differences.values())
            and self.folded.end == self.live_position
            and not self.behind
        )

    @property
    def ignored(self) -> Counter[str]:
        return self.folded.fold.reasons

    def summary(self) -> str:
        fold = self.folded.fold
        lines = [
            f"rating.results: {self.folded.records:,} results up to offset {self.folded.end:,} "
            f"(live position {self.live_position:,}); {fold.applied:,} applied, "
            f"{sum(fold.reasons.values()):,} ignored"
            + (
                " (" + ", ".join(f"{k} {v:,}" for k, v in sorted(fold.reasons.items())) + ")"
                if fold.reasons
                else ""
            ),
            f"fold {self.folded.seconds:.2f} s, write fresh tables {self.write_s:.2f} s, "
            f"compare {self.compare_s:.2f} s ({self.where})",
        ]
        for name, (live, fresh) in self.rows.items():
            diff = self.differences.get(name, 0)
            verdict = "identical" if diff == 0 else f"{diff:,} rows DIFFER"
            lines.append(f"  {name:<10} live {live:>12,}  fresh {fresh:>12,}  {verdict}")
        if self.folded.end != self.live_position:
            lines.append(
                f"the log ends at offset {self.folded.end:,} but the live tables are at "
                f"{self.live_position:,}"
            )
        lines += [f"  {e}" for e in self.examples]
        if self.behind:
            lines.append(
                f"BEHIND: the live ratings stop at offset {self.live_position:,} but the log "
                f"holds records from offset {self.waiting_from:,} (it ends at "
                f"{self.log_end:,}): the rating service is stuck or slow; see its /readyz, "
                "its log and rating.results.dlq"
            )
        lines.append(
            "IDENTICAL: live equals recomputed, bit for bit"
            if self.ok
            else "BEHIND"
            if self.behind and not any(self.differences.values())
            else "DIFFERENT"
        )
        return "\n".join(lines)


def show_value(value: object) -> str:
    """A stored value for a difference report; floats exactly, as hex."""
    return value.hex() if isinstance(value, float) else repr(value)


# --- the port -----------------------------------------------------------------------------


class RatingStore(Protocol):
    """Current ratings, their history and the input position, in one transactional store."""

    async def start(self) -> None:
        """Connect and apply any missing migrations."""
        ...

    async def close(self) -> None: ...

    async def position(self, topic: str) -> Position:
        """Where the service resumes reading ``topic`` (offset 0 the first time)."""
        ...

    async def apply(self, topic: str, start: int, next_offset: int, batch: Batch) -> Applied | None:
        """Fold ``batch`` (records from ``start`` up to ``next_offset``) into the ratings and
        move the position to ``next_offset``, in one transaction. Returns None, changing
        nothing, when the stored position is not ``start`` (someone else applied them)."""
        ...

    async def rating(self, player: str, variant: str = DEFAULT_VARIANT) -> PlayerRating | None:
        """A player's standing, or None before their first rated hand."""
        ...

    async def history(
        self, player: str, variant: str = DEFAULT_VARIANT, limit: int = 100
    ) -> list[HistoryEntry]:
        """A player's rating changes, newest first."""
        ...

    async def leaderboard(
        self,
        variant: str = DEFAULT_VARIANT,
        limit: int = 100,
        offset: int = 0,
        with_provisional: bool = False,
    ) -> list[PlayerRating]:
        """Established players by rating, highest first (ties by player id); with
        ``with_provisional``, the provisional players after them, in the same order."""
        ...

    async def place(
        self, player: str, variant: str = DEFAULT_VARIANT, with_provisional: bool = False
    ) -> Place:
        """Where ``player`` is on ``leaderboard(variant, with_provisional=...)``: one plus
        the players listed before them, in one read."""
        ...

    async def recompute(self, topic: str, fold_log: LogFold) -> RecomputeReport:
        """Fold the log up to the live position into fresh tables and compare them with the
        live ones, against one consistent snapshot of the live tables."""
        ...
