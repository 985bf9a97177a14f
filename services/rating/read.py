"""The read side of ratings, for the gateway: a player's profile and the leaderboard.

Both read the rating store only (``RatingStore``: PostgreSQL or the embedded SQLite file);
they never touch the log.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from services.rating.store import DEFAULT_VARIANT, HistoryEntry, Place, PlayerRating, RatingStore


@dataclass(frozen=True, slots=True)
class Profile:
    """A player's rating, provisional flag and recent history (newest first)."""

    standing: PlayerRating
    history: list[HistoryEntry]

    @property
    def rating(self) -> float:
        return self.standing.rating

    @property
    def provisional(self) -> bool:
        return self.standing.provisional


async def profile(
    store: RatingStore, player: str, variant: str = DEFAULT_VARIANT, history: int = 50
) -> Profile:
    """A player's profile; someone without a rated hand is at 1500 and provisional."""
    standing = await store.rating(player, variant) or PlayerRating.newcomer(player, variant)
    changes = await rating_history(store, player, variant, history) if standing.rated_hands else []
    return Profile(standing, changes)


async def rating_history(
    store: RatingStore, player: str, variant: str = DEFAULT_VARIANT, limit: int = 1_000_000
) -> list[HistoryEntry]:
    """A player's rating changes as shown (``shown_change``), newest first."""
    return [shown_change(h) for h in await store.history(player, variant, limit)]


def shown_change(entry: HistoryEntry) -> HistoryEntry:
    """A history entry with ``delta`` the change its rating actually made,
    ``rating_after − rating_before``.

    The stored ``delta`` is the formula's figure before it was added to the rating; where the
    hand should have changed nothing (a symmetric result), rounding leaves a residue like
    −1.18e−15 that the addition to a rating of ~1500 loses, so the rating did not move but
    the stored change reads as a (negative) non-zero. The difference of two doubles within a
    factor two of each other is exact (Sterbenz), so ``rating_before + delta`` is still
    ``rating_after`` exactly, and a rating that did not move shows a change of +0.0. The
    store keeps the formula's figure: ``ratings recompute`` compares it bit for bit."""
    return replace(entry, delta=entry.rating_after - entry.rating_before)


@dataclass(frozen=True, slots=True)
class Ranked:
    """One leaderboard line."""

    rank: int
    standing: PlayerRating


async def leaderboard(
    store: RatingStore,
    variant: str = DEFAULT_VARIANT,
    limit: int = 100,
    offset: int = 0,
    with_provisional: bool = False,
) -> list[Ranked]:
    """Established players by rating, highest first, then (``with_provisional``) the
    provisional ones by rating; ``rank`` counts from 1 over that whole order (equal ratings
    share no rank: ties are ordered by player id)."""
    rows = await store.leaderboard(variant, limit, offset, with_provisional)
    return [Ranked(offset + i + 1, row) for i, row in enumerate(rows)]


async def place(
    store: RatingStore,
    player: str,
    variant: str = DEFAULT_VARIANT,
    with_provisional: bool = False,
) -> Place:
    """``player``'s rank on ``leaderboard(..., with_provisional)``, counted the same way,
    and how many players it lists."""
    return await store.place(player, variant, with_provisional)
