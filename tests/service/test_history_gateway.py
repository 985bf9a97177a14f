"""Players' hands through the gateway: read from the history projection, a private table's
hands listed only to its players (issue 17, defect 6), rows that say who played and how."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.service.gateway_harness import (
    Platform,
    User,
    guest,
    platform,
    play_one_hand,
)


async def _hands(p: Platform, of: User, viewer: User) -> list[dict[str, Any]]:
    r = await p.http.get(f"/api/players/{of.id}/hands", headers=viewer.auth)
    assert r.status_code == 200, r.text
    body: list[dict[str, Any]] = r.json()
    return body


def test_a_private_tables_hands_are_listed_only_to_its_players(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await play_one_hand(p, {"clock": None, "hands": 1, "public": False})
            for _ in range(100):
                if await _hands(p, users[0], users[0]):
                    break
                await asyncio.sleep(0.1)
            mine = await _hands(p, users[0], users[0])
            assert [h["table_id"] for h in mine] == [table_id]
            # Another player of that hand sees it in the first one's list too.
            assert [h["table_id"] for h in await _hands(p, users[0], users[1])] == [table_id]
            # Someone who did not play it sees neither the hand nor the table's id.
            stranger = await guest(p)
            r = await p.http.get(f"/api/players/{users[0].id}/hands", headers=stranger.auth)
            assert r.status_code == 200 and r.json() == [] and table_id not in r.text

    asyncio.run(go())


def test_a_public_tables_rows_name_the_players_kind_points_and_place(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await play_one_hand(p, {"clock": None, "hands": 1})
            stranger = await guest(p)
            for _ in range(100):
                rows = await _hands(p, users[2], stranger)
                if rows:
                    break
                await asyncio.sleep(0.1)
            assert len(rows) == 1
            row = rows[0]
            assert row["table_id"] == table_id and row["kind"] == "casual" and row["public"]
            assert sorted(row["players"]) == sorted(u.id for u in users)
            assert row["players"][row["seat"]] == users[2].id == row["player"]
            assert 1 <= row["placement"] <= 4 and row["ended_ms"] > 0
            export = (
                await p.http.get(
                    f"/api/hands/{row['hand_id'].replace('#', '%23')}/export",
                    headers=stranger.auth,
                )
            ).json()
            assert export["events"][-1]["scores"][row["seat"]] == row["score"]
            # Every player's display name, for the page to show.
            assert row["names"] == {u.id: u.name for u in users}
            # Kinds and pages, with the count of every page in X-Total-Count.
            path = f"/api/players/{users[2].id}/hands"
            r = await p.http.get(f"{path}?kind=casual", headers=stranger.auth)
            assert [h["hand_id"] for h in r.json()] == [row["hand_id"]]
            assert r.headers["x-total-count"] == "1"
            r = await p.http.get(f"{path}?kind=practice", headers=stranger.auth)
            assert r.json() == [] and r.headers["x-total-count"] == "0"
            r = await p.http.get(f"{path}?offset=1&limit=5", headers=stranger.auth)
            assert r.json() == [] and r.headers["x-total-count"] == "1"
            # Bad parameters: a code the page translates, and nothing listed.
            r = await p.http.get(f"{path}?kind=ranked", headers=stranger.auth)
            assert r.status_code == 400 and r.json()["code"] == "bad_kind"
            assert r.json()["params"] == {"kind": "ranked"}
            for offset in ("-1", str(2**53)):
                r = await p.http.get(f"{path}?offset={offset}", headers=stranger.auth)
                assert r.status_code == 400 and r.json()["code"] == "bad_offset", offset
            r = await p.http.get(f"{path}?offset=two", headers=stranger.auth)
            assert r.status_code == 400 and r.json()["code"] == "bad_request"

    asyncio.run(go())
