"""Compact sockets (``hello.compact``, what the web client asks for): each change of the hand
comes as one ``change`` frame, the new events and the view's changed fields. The view a
client rebuilds from them is the seat's view (RULES.md §10) at every change, its events are
the ones the seat may see, and it gets half the frames of a classic socket, and fewer bytes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec

from services.gateway.protocol import changed_view
from services.rules.hand import replay
from services.rules.visibility import seat_view, seen_events
from tests.service.gateway_harness import (
    connect,
    guest,
    platform,
    play_with_bot,
    table_of_four,
)
from tests.service.logs import hand_logs


def _builtins(x: Any) -> Any:
    return json.loads(msgspec.json.encode(x))


def test_a_compact_socket_rebuilds_its_seats_view_exactly_at_every_change(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p)
            sockets = [await connect(p, u, table_id, compact=True) for u in users]
            await asyncio.wait_for(asyncio.gather(*(play_with_bot(s) for s in sockets)), 120)
            for s in sockets:
                await s.close()
            [events] = [e for (t, _), e in (await hand_logs(p.log)).items() if t == table_id]
        for s in sockets:
            assert s.of_type("view") == [] and s.of_type("events") == []
            changes = s.of_type("change")
            assert changes[0]["full"] and changes[0]["names"]
            assert not any(f["full"] for f in changes[1:]), "one hand: only the first is whole"
            seat = changes[0]["view"]["seat"]
            held: dict[str, Any] | None = None
            for f in changes:
                held = changed_view(held, f)
                state = replay(events[: f["seq"]])
                assert held == _builtins(seat_view(state, seat)), f["seq"]
                if not f["full"]:  # only what changed is sent
                    assert "players" not in f["view"] and len(f["view"]) < len(held)
            by_seq = sorted(s.events.items())
            assert [e for _, e in by_seq] == _builtins(seen_events(events, seat))

    asyncio.run(go())


def test_a_compact_spectator_gets_half_the_frames_and_half_the_bytes_for_the_same_view(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p, {"clock": None, "public": True})
            watcher = await _guest_socket(p, table_id, compact=False)
            compact = await _guest_socket(p, table_id, compact=True)
            players = [await connect(p, u, table_id) for u in users]
            await asyncio.wait_for(asyncio.gather(*(play_with_bot(s) for s in players)), 120)
            for s in (watcher, compact):
                await s.until(lambda x: bool(x.ended))
            for s in (*players, watcher, compact):
                await s.close()
        assert watcher.view is not None and compact.view is not None
        assert compact.view["view"] == watcher.view["view"]  # the public view at the end
        assert compact.events == watcher.events
        hand = [f for f in watcher.frames if f["type"] in ("view", "events")]
        changes = compact.of_type("change")
        assert len(changes) <= len(hand) / 2 + 1
        size = sum(len(json.dumps(f)) for f in hand)
        assert sum(len(json.dumps(f)) for f in changes) < size / 2  # the same events, in both

    asyncio.run(go())


async def _guest_socket(p: Any, table_id: str, compact: bool) -> Any:
    return await connect(p, await guest(p), table_id, compact=compact)
