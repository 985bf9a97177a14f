"""A player's figures and whole rating history through the gateway: the figures come from
the hand-history projection, a private table's hands count for its players only, a bad
``kind`` or an unknown player changes nothing and says why."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

from schemas.rating import RatedHandResult
from services.rating.service import RatingService
from services.rating.store import open_store as open_rating_store
from tests.service.gateway_harness import (
    Platform,
    User,
    guest,
    platform,
    play_one_hand,
)
from tests.service.rating_results import produce


async def _stats(p: Platform, of: str, viewer: User, query: str = "") -> Any:
    r = await p.http.get(f"/api/players/{of}/stats{query}", headers=viewer.auth)
    return r


def test_a_private_hand_counts_in_its_players_figures_only(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            _, users = await play_one_hand(p, {"clock": None, "hands": 1, "public": False})
            for _ in range(100):
                if (await _stats(p, users[0].id, users[0])).json()["hands"]:
                    break
                await asyncio.sleep(0.1)
            row = (
                await p.http.get(f"/api/players/{users[0].id}/hands", headers=users[0].auth)
            ).json()[0]
            mine = (await _stats(p, users[0].id, users[0])).json()
            assert mine["hands"] == 1 and mine["casual"] == 1 and mine["rated"] == 0
            assert mine["by_kind"] == {"practice": 0, "casual": 1, "rated": 0, "quick_play": 0}
            assert mine["places"][row["placement"] - 1] == 1 and sum(mine["places"]) == 1
            assert mine["average_points"] == row["score"]
            assert mine["wins"] == (row["best_fan"] is not None)
            assert mine["dealt_in_hands"] == (row["dealt_in"] > 0)
            # Someone who played it too sees the same figures; a stranger sees none of it.
            assert (await _stats(p, users[0].id, users[1])).json() == mine
            stranger = await guest(p)
            theirs = (await _stats(p, users[0].id, stranger)).json()
            assert theirs["hands"] == 0 and theirs["places"] == [0, 0, 0, 0]
            # Every seat's figures together: one hand each, zero-sum points.
            all_four = [(await _stats(p, u.id, u)).json() for u in users]
            assert sum(f["points"] for f in all_four) == 0
            assert sum(f["wins"] for f in all_four) == sum(f["self_drawn"] for f in all_four) + (
                sum(f["deal_ins"] for f in all_four)
            )
            casual = (await _stats(p, users[0].id, users[0], "?kind=casual")).json()
            assert casual == mine
            assert (await _stats(p, users[0].id, users[0], "?kind=rated")).json()["hands"] == 0

    asyncio.run(go())


def test_an_unknown_player_or_kind_is_refused_with_its_code(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            me = await guest(p)
            r = await _stats(p, "nobody-at-all", me)
            assert r.status_code == 404 and r.json()["code"] == "no_such_player"
            assert r.json()["params"] == {"player": "nobody-at-all"}
            r = await _stats(p, me.id, me, "?kind=bogus")
            assert r.status_code == 400 and r.json()["code"] == "bad_request"
            r = await p.http.get("/api/players/nobody-at-all/ratings", headers=me.auth)
            assert r.status_code == 404 and r.json()["code"] == "no_such_player"
            empty = (await _stats(p, me.id, me)).json()
            assert empty["hands"] == 0 and empty["win_rate"] == 0.0
            r = await p.http.get(f"/api/players/{me.id}/ratings", headers=me.auth)
            assert r.status_code == 200 and r.json() == []

    asyncio.run(go())


def test_the_whole_rating_history_is_returned_oldest_first(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            users = [await guest(p) for _ in range(4)]
            ids = [u.id for u in users]
            results = [
                RatedHandResult(
                    table_id=f"rt{k}",
                    hand_id=f"rt{k}#1",
                    players=ids[k % 4 :] + ids[: k % 4],
                    points=[3, -1, -1, -1],
                    rated=True,
                    clock="standard",
                )
                for k in range(63)
            ]
            await produce(p.log, results)
            ratings = RatingService(p.log, open_rating_store(None, tmp_path))
            await ratings.store.start()
            await ratings.catch_up()
            await ratings.store.close()
            whole = (
                await p.http.get(f"/api/players/{ids[0]}/ratings", headers=users[1].auth)
            ).json()
            assert [c["hand_id"] for c in whole] == [f"rt{k}#1" for k in range(63)]
            assert [c["rated_hands"] for c in whole] == list(range(1, 64))
            for before, after in itertools.pairwise(whole):
                assert after["rating_before"] == before["rating_after"]
            profile = (await p.http.get(f"/api/players/{ids[0]}", headers=users[1].auth)).json()
            assert len(profile["history"]) == 50 and profile["rated_hands"] == 63

    asyncio.run(go())
