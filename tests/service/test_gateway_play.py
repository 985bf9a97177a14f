"""Four clients play a whole hand through the gateway's WebSocket, each with its own seat's
view, and a casual table plays another hand once all four ask for it, every client seeing
each hand's end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.service.gateway_harness import (
    connect,
    guest,
    platform,
    play_with_bot,
    table_of_four,
)


def test_four_clients_play_a_hand_through_the_gateway(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p)
            sockets = [await connect(p, u, table_id) for u in users]
            await asyncio.wait_for(asyncio.gather(*(play_with_bot(s) for s in sockets)), 120)
            for s, u in zip(sockets, users, strict=True):
                await s.until(lambda x: x.view is not None and x.view["view"]["phase"] == "ended")
                assert s.view is not None
                view = s.view["view"]
                assert view["players"][view["seat"]]["player"] == u.id
            # After the end every event is public, and each client holds all of it: what it
            # held hidden or in part (another seat's exchange) was sent again whole.
            whole = await connect(p, users[0], table_id)
            await whole.until(lambda x: x.view is not None and bool(x.events))
            for s in sockets:
                assert s.events == whole.events
                assert all(e["type"] != "hidden" for e in s.events.values())
            for s in (*sockets, whole):
                await s.close()

    asyncio.run(go())


def test_a_casual_table_deals_again_only_once_every_player_asks(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p, {"clock": None})
            sockets = [await connect(p, u, table_id) for u in users]
            await asyncio.wait_for(asyncio.gather(*(play_with_bot(s) for s in sockets)), 240)
            for u in users[:3]:
                r = await p.http.post(f"/api/tables/{table_id}/again", headers=u.auth)
                assert r.status_code == 200, r.text
            await asyncio.sleep(1.0)  # three of four asked: no hand is dealt
            table = await p.http.get(f"/api/tables/{table_id}", headers=users[0].auth)
            assert table.json()["status"] == "results"
            assert all(s.hand_id == f"{table_id}#1" for s in sockets)
            r = await p.http.post(f"/api/tables/{table_id}/again", headers=users[3].auth)
            assert r.status_code == 200, r.text
            await asyncio.wait_for(
                asyncio.gather(*(play_with_bot(s, hands=2) for s in sockets)), 240
            )
            for s in sockets:
                assert s.ended == [f"{table_id}#1", f"{table_id}#2"]
                ended_views = [f for f in s.of_type("view") if f["view"]["phase"] == "ended"]
                assert f"{table_id}#1" in {f["hand_id"] for f in ended_views}
                await s.close()
            table = await p.http.get(f"/api/tables/{table_id}", headers=users[0].auth)
            body = table.json()
            assert body["hands_played"] == 2 and sum(body["totals"].values()) == 0

    asyncio.run(go())


def test_a_rated_table_plays_one_hand_and_frees_its_players_at_once(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p, {"rated": True, "clock": "blitz"})
            sockets = [await connect(p, u, table_id) for u in users]
            await asyncio.wait_for(asyncio.gather(*(play_with_bot(s) for s in sockets)), 240)
            for s in sockets:
                await s.until(
                    lambda x: any(f.get("status") == "closed" for f in x.of_type("table"))
                )
                assert s.ended == [f"{table_id}#1"]
                await s.close()
            for u in users:
                lobby = (await p.http.get("/api/lobby", headers=u.auth)).json()
                assert lobby["table_id"] is None
                r = await p.http.post("/api/quickplay", json={}, headers=u.auth)
                assert r.status_code == 200, r.text

    asyncio.run(go())


def test_quick_play_fills_the_table_with_the_computers_the_player_chose(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            me = await guest(p)
            r = await p.http.post(
                "/api/quickplay",
                json={"computers_after_s": 5, "computers": "grand"},
                headers=me.auth,
            )
            assert r.status_code == 400, r.text  # no such strength: refused, nothing queued
            assert (await p.http.get("/api/me", headers=me.auth)).json()["queue_since_ms"] is None
            r = await p.http.post(
                "/api/quickplay",
                json={"computers_after_s": 5, "computers": "strong"},
                headers=me.auth,
            )
            assert r.status_code == 200, r.text
            deadline = asyncio.get_running_loop().time() + 30
            while not (
                table_id := (await p.http.get("/api/me", headers=me.auth)).json()["table_id"]
            ):
                assert asyncio.get_running_loop().time() < deadline, "no table after 30 s"
                await asyncio.sleep(0.3)
            table = (await p.http.get(f"/api/tables/{table_id}", headers=me.auth)).json()
            assert table["quick_play"] and not table["rated"]
            assert table["options"]["computers"] == "strong"
            computers = [s for s in table["seated"] if s["computer"]]
            assert len(computers) == 3 and all("strong" in s["name"] for s in computers), computers

    asyncio.run(go())
