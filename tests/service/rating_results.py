"""Generated ``rating.results`` for the rating tests, and how to check a store against them."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

from schemas.rating import RatedHandResult, encode_result
from services.rating.formula import Fold
from services.rating.service import RatingService
from services.rating.store import RatingStore
from services.runtime.log import EventLog, Outgoing
from services.runtime.topics import RATING_RESULTS


def sample(
    n: int,
    *,
    seed: int = 1,
    players: int = 12,
    prefix: str = "",
    start: int = 0,
    unrated_every: int = 0,
) -> list[RatedHandResult]:
    """``n`` results among ``players`` players; every ``unrated_every``-th one is unrated
    in turn casual, with a computer seat, untimed, practice."""
    rng = random.Random(seed)
    names = [f"{prefix}p{i}" for i in range(players)]
    out = []
    for k in range(start, start + n):
        flags: dict[str, object] = {"rated": True, "clock": "standard"}
        if unrated_every and k % unrated_every == unrated_every - 1:
            choices: list[dict[str, object]] = [
                {"rated": False, "clock": "standard"},
                {"rated": True, "clock": "standard", "computer_seats": [3]},
                {"rated": True, "clock": None},
                {"rated": True, "clock": "standard", "practice": True},
            ]
            flags = choices[(k // unrated_every) % 4]
        out.append(
            RatedHandResult(
                table_id=f"{prefix}t{k % 3}",
                hand_id=f"{prefix}t{k % 3}#{k}",
                players=rng.sample(names, 4),
                points=[rng.randint(-8, 8) for _ in range(4)],
                **flags,  # type: ignore[arg-type]
            )
        )
    return out


async def produce(
    log: EventLog, results: Sequence[RatedHandResult], topic: str = RATING_RESULTS
) -> None:
    await log.produce([Outgoing(topic, r.table_id, encode_result(r), 0) for r in results])


def fold_of(results: Sequence[RatedHandResult]) -> Fold:
    """The pure fold of results in order (offsets counted from 0)."""
    fold = Fold()
    for seq, r in enumerate(results):
        fold.apply(seq, r)
    return fold


async def standings(store: RatingStore, fold: Fold) -> dict[str, tuple[float, int, bool]]:
    """The store's standing of every player the fold knows (rating, hands, provisional)."""
    out = {}
    for _, player, *_ in fold.rating_rows():
        found = await store.rating(player)
        assert found is not None, player
        out[player] = (found.rating, found.rated_hands, found.provisional)
    return out


def expected(fold: Fold) -> dict[str, tuple[float, int, bool]]:
    return {row[1]: (row[2], row[3], row[4]) for row in fold.rating_rows()}


async def run_until(service: RatingService, end: int, timeout_s: float = 60) -> None:
    """Run ``service`` until its position reaches ``end``, then stop it."""
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    try:
        async with asyncio.timeout(timeout_s):
            while service.position < end:
                if task.done():
                    task.result()
                await asyncio.sleep(0.02)
    finally:
        stop.set()
        await task
