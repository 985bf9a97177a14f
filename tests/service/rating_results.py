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


def board_sample() -> list[RatedHandResult]:
    """Six regulars with 20 rated hands each (established), then four newcomers with two
    each (provisional, some rated above some regulars): a leaderboard of both kinds."""
    return sample(30, seed=3, players=6) + sample(2, seed=4, players=4, prefix="n", start=30)


async def check_board(store: RatingStore, fold: Fold) -> None:
    """The store's leaderboard and places agree with the fold: established players first by
    rating, then provisional ones by rating (ties by id), ranks counted over that order."""
    from services.rating.read import leaderboard, place
    from services.rating.store import Place

    want = sorted(fold.rating_rows(), key=lambda r: (r[4], -r[2], r[1]))
    established = [r for r in want if not r[4]]
    provisional = [r for r in want if r[4]]
    assert established and provisional
    # Otherwise the order would be the ratings' alone and this would check nothing more.
    assert max(r[2] for r in provisional) > min(r[2] for r in established)
    board = await leaderboard(store, limit=100, with_provisional=True)
    assert [(r.rank, r.standing.player, r.standing.provisional) for r in board] == [
        (i + 1, r[1], r[4]) for i, r in enumerate(want)
    ]
    page = await leaderboard(store, limit=3, offset=4, with_provisional=True)
    assert [(r.rank, r.standing.player) for r in page] == [
        (r.rank, r.standing.player) for r in board[4:7]
    ]
    # Without provisional players: the established ones only, as before.
    only = await leaderboard(store, limit=100)
    assert [r.standing.player for r in only] == [r[1] for r in established]
    for i, row in enumerate(want):
        assert await place(store, row[1], with_provisional=True) == Place(i + 1, len(want))
    for i, row in enumerate(established):
        assert await place(store, row[1]) == Place(i + 1, len(established))
    assert await place(store, provisional[0][1]) == Place(None, len(established))
    assert await place(store, "nobody", with_provisional=True) == Place(None, len(want))
