"""Four clients play a whole hand through the gateway's WebSocket, each with its own seat's
view, and a table plays its hands in a row with every client seeing each hand's end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.service.gateway_harness import connect, platform, play_with_bot, table_of_four


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


def test_hands_in_a_row_each_end_is_seen(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p, {"clock": None, "hands": 2})
            sockets = [await connect(p, u, table_id) for u in users]
            await asyncio.wait_for(
                asyncio.gather(*(play_with_bot(s, hands=2) for s in sockets)), 240
            )
            for s in sockets:
                assert s.ended == [f"{table_id}#1", f"{table_id}#2"]
                ended_views = [f for f in s.of_type("view") if f["view"]["phase"] == "ended"]
                assert f"{table_id}#1" in {f["hand_id"] for f in ended_views}
                await s.close()

    asyncio.run(go())
