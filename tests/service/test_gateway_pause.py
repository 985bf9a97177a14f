"""Pause and resume over the gateway's WebSocket: the player of a practice hand pauses it,
every command is refused until the resume, and the view says so (docs/gateway.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.service.gateway_harness import Socket, connect, guest, platform, table_of_four


def last(s: Socket, kind: str) -> dict[str, Any]:
    frames = s.of_type(kind)
    return frames[-1] if frames else {}


def test_the_player_pauses_and_resumes_a_practice_hand_over_the_socket(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:  # no bots service: the computers never answer
            user = await guest(p)
            r = await p.http.post("/api/practice", json={"pace": "fast"}, headers=user.auth)
            assert r.status_code == 201, r.text
            table_id = r.json()["table_id"]
            s = await connect(p, user, table_id)
            await s.until(lambda x: x.view is not None)
            assert s.view is not None and s.view["view"]["paused"] is False
            decision, hand_id = s.view["decision_seq"], s.view["hand_id"]
            await s.send(
                {
                    "type": "command",
                    "command_id": "p1",
                    "hand_id": hand_id,
                    "body": {"type": "pause"},
                }
            )
            await s.until(lambda x: x.view is not None and x.view["view"]["paused"])
            assert s.view is not None
            assert s.view["view"]["legal_actions"] == []
            assert s.view["decision_seq"] == decision
            paused = [e for e in s.events.values() if e["type"] == "hand_paused"]
            assert [e["seat"] for e in paused] == [s.view["view"]["seat"]]
            exchange = {"type": "choose_exchange", "tiles": ["1m", "1m", "1m"]}
            await s.send(
                {"type": "command", "command_id": "x1", "decision_seq": decision, "body": exchange}
            )
            await s.until(lambda x: bool(x.of_type("rejected")))
            assert (last(s, "rejected")["command_id"], last(s, "rejected")["code"]) == (
                "x1",
                "hand_paused",
            )
            await s.send({"type": "command", "command_id": "p2", "body": {"type": "pause"}})
            await s.until(lambda x: len(x.of_type("rejected")) == 2)
            assert last(s, "rejected")["code"] == "already_paused"
            # Another socket of the same player (a reload, another device) sees the pause; it
            # takes the seat (one seat, one driver), and resumes there.
            again = await connect(p, user, table_id)
            await again.until(lambda x: x.view is not None)
            assert again.view is not None and again.view["view"]["paused"] is True
            await s.until(lambda x: x.closed)
            assert last(s, "error")["code"] == "opened_elsewhere"
            await again.send({"type": "command", "command_id": "r1", "body": {"type": "resume"}})
            await again.until(lambda x: x.view is not None and not x.view["view"]["paused"])
            assert again.view is not None and again.view["decision_seq"] == decision
            assert again.view["view"]["legal_actions"] != []
            await again.close()

    asyncio.run(go())


def test_a_table_of_four_humans_cannot_be_paused(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p)
            s = await connect(p, users[0], table_id)
            await s.until(lambda x: x.view is not None)
            await s.send({"type": "command", "command_id": "p1", "body": {"type": "pause"}})
            await s.until(lambda x: bool(x.of_type("rejected")))
            rejected = last(s, "rejected")
            assert rejected["code"] == "pause_not_allowed"
            assert s.view is not None
            assert rejected["params"] == {"seat": s.view["view"]["seat"]}
            await asyncio.sleep(0.3)
            assert s.view["view"]["paused"] is False
            await s.close()

    asyncio.run(go())
