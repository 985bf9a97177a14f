"""Ratings for the gateway: a thin adapter over the rating service's read side
(``services.rating.read``) and its recompute (``services.rating.service.recompute``).

The gateway opens the rating store read-mostly (PostgreSQL when a DSN is set, else
``ratings.sqlite3`` in the data folder) and never writes ratings: only the rating service
applies results.
"""

from __future__ import annotations

from pathlib import Path

from services.rating.read import Profile, Ranked, leaderboard, place, profile, rating_history
from services.rating.store import HistoryEntry, Place, RatingStore, RecomputeReport, open_store
from services.runtime.log import EventLog

WHOLE = 1_000_000
"""A limit no player's rating history reaches (one change per rated hand)."""


class Ratings:
    def __init__(self, event_log: EventLog, dsn: str | None, data_dir: Path) -> None:
        self.log = event_log
        self.store: RatingStore = open_store(dsn, data_dir)

    async def start(self) -> None:
        await self.store.start()

    async def close(self) -> None:
        await self.store.close()

    async def profile(self, player: str) -> Profile:
        return await profile(self.store, player, history=50)

    async def history(self, player: str) -> list[HistoryEntry]:
        """Every rating change of the player, newest first (for the profile's chart)."""
        return await rating_history(self.store, player, limit=WHOLE)

    async def rating(self, player: str) -> float:
        return (await self.profile(player)).rating

    async def leaderboard(
        self, limit: int, offset: int, with_provisional: bool = False
    ) -> list[Ranked]:
        return await leaderboard(
            self.store, limit=limit, offset=offset, with_provisional=with_provisional
        )

    async def place(self, player: str, with_provisional: bool = False) -> Place:
        return await place(self.store, player, with_provisional=with_provisional)

    async def recompute(self) -> RecomputeReport:
        from services.rating.service import recompute

        return await recompute(self.log, self.store)
