"""The read side of ratings, for the gateway: a player's profile and the leaderboard.

Both read the rating store only (``RatingStore``: PostgreSQL or the embedded SQLite file);
they never touch the log.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.rating.store import DEFAULT_VARIANT, HistoryEntry, PlayerRating, RatingStore


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
    changes = await store.history(player, variant, history) if standing.rated_hands else []
    return Profile(standing, changes)


@dataclass(frozen=True, slots=True)
class Ranked:
    """One leaderboard line."""

    rank: int
    standing: PlayerRating


async def leaderboard(
    store: RatingStore, variant: str = DEFAULT_VARIANT, limit: int = 100, offset: int = 0
) -> list[Ranked]:
    """Non-provisional players by rating, highest first; ``rank`` counts from 1 (equal
    ratings share no rank: ties are ordered by player id)."""
    rows = await store.leaderboard(variant, limit, offset)
    return [Ranked(offset + i + 1, row) for i, row in enumerate(rows)]
