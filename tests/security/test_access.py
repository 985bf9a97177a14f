"""Authorization, beyond what ``tests/service/test_gateway_*.py`` already holds (a body naming
another seat, timeouts, spectators, a private table without or with a wrong code, strangers'
sockets and exports, admin routes without a token or with a session token):

- a command acts for the sender's seat at the socket's table, whatever else its body says
  (another table, hand, command id or decision): the gateway overwrites all of it;
- a player of one table gets nothing of another, private, table: no socket, view or log;
- a private table's code opens that table only, exactly as given, and a code no table can
  have is refused the same way without troubling matchmaking;
- a private table a caller may not see answers exactly as a table that does not exist, open,
  full or closed, on ``GET`` and on joining with a wrong code;
- admin routes refuse wrong, near-miss and session credentials, the admin token is no
  session, and without ``MAHJONG_ADMIN_TOKEN`` they are off (403) for everyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec
import pytest
import websockets

from schemas.table import CommandEnvelope
from services.gateway.config import GatewayConfig, Limits, Rate
from services.runtime.topics import TABLE_COMMANDS
from tests.service.gateway_harness import ADMIN, connect, guest, platform, table_of_four
from tests.service.logs import records


def test_a_command_acts_for_the_senders_seat_at_the_sockets_table_only(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_a, players_a = await table_of_four(p, {"clock": None})
            table_b, players_b = await table_of_four(p, {"clock": None, "public": False})
            s = await connect(p, players_a[0], table_a)
            await s.until(lambda x: x.view is not None)
            assert s.view is not None
            mine = s.view["view"]["seat"]
            action = dict(s.view["view"]["legal_actions"][0])
            body = {
                **action,
                "seat": mine,  # its own seat: allowed; everything else is the gateway's
                "table_id": table_b,
                "command_id": f"{players_b[0].id}/forged",
                "hand_id": f"{table_b}#1",
                "decision_seq": 1,
            }
            await s.send({"type": "command", "command_id": "mine-1", "body": body})
            # A hand id of the other table in the frame itself: refused by the table as stale.
            await s.send(
                {
                    "type": "command",
                    "command_id": "mine-2",
                    "hand_id": f"{table_b}#1",
                    "body": action,
                }
            )
            await s.until(lambda x: bool(x.of_type("rejected")))
            assert s.of_type("rejected")[0]["code"] == "stale_hand"
            await s.until(
                lambda x: x.view is not None and x.view["view"]["players"][mine]["chose_exchange"]
            )
            sent = [
                msgspec.json.decode(r.value, type=CommandEnvelope).command
                for r in await records(p.log, TABLE_COMMANDS)
            ]
            ours = [c for c in sent if getattr(c, "command_id", "").startswith(players_a[0].id)]
            assert [(c.table_id, c.seat, c.command_id) for c in ours] == [
                (table_a, mine, f"{players_a[0].id}/mine-1"),
                (table_a, mine, f"{players_a[0].id}/mine-2"),
            ]
            assert ours[0].hand_id == f"{table_a}#1" and ours[0].decision_seq is None
            assert not [c for c in sent if getattr(c, "command_id", "").endswith("/forged")]
            # Nothing of table B for a player of table A: no socket, view or hand log.
            other = await connect(p, players_a[1], table_b)
            await other.until(lambda x: x.closed)
            assert other.of_type("error")[-1]["code"] == "forbidden"
            assert other.of_type("view") == [] and other.of_type("events") == []
            r = await p.http.get(f"/api/tables/{table_b}/view", headers=players_a[1].auth)
            assert r.status_code == 404
            r = await p.http.get(f"/api/hands/{table_b}%231/export", headers=players_a[1].auth)
            assert r.status_code == 404
            r = await p.http.get(f"/api/tables/{table_b}", headers=players_a[1].auth)
            assert r.status_code == 404
            await s.close()

    asyncio.run(go())


def test_a_private_tables_code_opens_that_table_only(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            owner, other_owner, stranger = await guest(p), await guest(p), await guest(p)
            tables = []
            for who in (owner, other_owner):
                r = await p.http.post(
                    "/api/tables", json={"options": {"public": False}}, headers=who.auth
                )
                tables.append((r.json()["table_id"], r.json()["code"]))
            (table, code), (_, other_code) = tables
            near = [
                other_code,
                code.upper() if code != code.upper() else code.lower(),
                code[:-1],
                code + "x",
                f" {code}",
                "",
                "ü" * 16,  # no code is like this: refused at the gateway
                code[:8] + "é" + code[9:],
                "x" * 10_000,
            ]
            for attempt in near:
                r = await p.http.post(
                    f"/api/tables/{table}/join", json={"code": attempt}, headers=stranger.auth
                )
                assert r.status_code == 409, (attempt, r.text)
                assert r.json()["code"] == "no_such_table"
            # Matchmaking is still there for everyone, and the right code still works.
            r = await p.http.post(
                f"/api/tables/{table}/join", json={"code": code}, headers=stranger.auth
            )
            assert r.status_code == 200, r.text
            assert r.json()["code"] is None  # the code is shown to its creator only

    asyncio.run(go())


def _anonymous(answer: Any, table_id: str) -> tuple[int, Any]:
    """An answer with the table id it names taken out (the caller gave that id)."""
    body = answer.json()
    if body.get("params", {}).get("table_id") == table_id:
        body["params"]["table_id"] = "<id>"
    return answer.status_code, body


def test_a_private_table_answers_exactly_as_a_table_that_does_not_exist(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            stranger = await guest(p)
            made_up = "t-doesnotexist"
            # Open with one player, full and playing, and closed after its hand.
            owner = await guest(p)
            r = await p.http.post(
                "/api/tables", json={"options": {"public": False}}, headers=owner.auth
            )
            open_id, open_code = r.json()["table_id"], r.json()["code"]
            full_id, players = await table_of_four(p, {"clock": None, "public": False})
            none = _anonymous(
                await p.http.get(f"/api/tables/{made_up}", headers=stranger.auth), made_up
            )
            assert none[0] == 404 and none[1]["code"] == "no_such_table"
            for table_id in (open_id, full_id):
                r = await p.http.get(f"/api/tables/{table_id}", headers=stranger.auth)
                assert _anonymous(r, table_id) == none
            # Joining with a wrong code: the answer for a table that does not exist, even
            # when the private table is full (its code is checked first).
            wrong = {"code": open_code[::-1]}
            nowhere = await p.http.post(
                f"/api/tables/{made_up}/join", json=wrong, headers=stranger.auth
            )
            assert nowhere.status_code == 409 and nowhere.json()["code"] == "no_such_table"
            for table_id in (open_id, full_id):
                for attempt in (wrong, {"code": None}, {}):
                    r = await p.http.post(
                        f"/api/tables/{table_id}/join", json=attempt, headers=stranger.auth
                    )
                    assert _anonymous(r, table_id) == _anonymous(nowhere, made_up), attempt
            # Its own players still see it.
            r = await p.http.get(f"/api/tables/{full_id}", headers=players[1].auth)
            assert r.status_code == 200 and r.json()["status"] == "starting"  # no client yet
            # Closed: a public table says so; a private one is as unknown as ever.
            r = await p.http.post(
                "/api/tables", json={"options": {"public": True}}, headers=stranger.auth
            )
            public_id = r.json()["table_id"]
            for who, table_id in ((stranger, public_id), (owner, open_id)):
                r = await p.http.post(f"/api/tables/{table_id}/leave", headers=who.auth)
                assert r.status_code == 200, r.text
            r = await p.http.get(f"/api/tables/{public_id}", headers=owner.auth)
            assert r.status_code == 200 and r.json()["status"] == "closed"
            r = await p.http.get(f"/api/tables/{open_id}", headers=stranger.auth)
            assert _anonymous(r, open_id) == none

    asyncio.run(go())


def test_admin_routes_want_the_admin_token_and_nothing_else(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path, limits=Limits(admin=Rate(1_000.0, 1_000.0))) as p:
            me = await guest(p)
            wrong: list[bytes | None] = [
                None,
                b"Bearer",
                f"Bearer {ADMIN[:-1]}".encode(),
                f"Bearer {ADMIN}x".encode(),
                f"Bearer {ADMIN.upper()}".encode(),
                f"Bearer {'x' * len(ADMIN)}".encode(),
                f"Bearer {me.token}".encode(),
                b"Bearer \xe9" + ADMIN.encode(),  # not ASCII: compared as bytes all the same
            ]
            for path in ("/api/admin/audit", "/api/admin/ratings/recompute"):
                for header in wrong:
                    headers = {} if header is None else {"authorization": header}
                    r = await p.http.post(path, headers=headers)
                    assert r.status_code == 401, (path, header, r.text)
                    assert r.json()["code"] == "unauthorized"
                for scheme in ("Basic", "Token", "Bearer:"):
                    r = await p.http.post(path, headers={"authorization": f"{scheme} {ADMIN}"})
                    assert r.status_code == 401, scheme
            # The admin token is not a session: it opens no player route or socket.
            admin = {"authorization": f"Bearer {ADMIN}"}
            assert (await p.http.get("/api/me", headers=admin)).status_code == 401
            ws = await websockets.connect(p.ws_url)
            await ws.send(json.dumps({"type": "hello", "token": ADMIN, "table_id": "t"}))
            assert json.loads(await ws.recv())["code"] == "unauthorized"
            with contextlib.suppress(websockets.ConnectionClosed):
                await ws.recv()
            assert ws.close_code == 1008

    asyncio.run(go())


def test_admin_routes_are_off_without_the_token_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MAHJONG_ADMIN_TOKEN", raising=False)
    config = GatewayConfig.from_env()
    assert config.admin_token is None

    async def go() -> None:
        async with platform(tmp_path, limits=Limits(admin=Rate(1_000.0, 1_000.0))) as p:
            p.gateway.config = replace(p.gateway.config, admin_token=config.admin_token)
            for token in (None, ADMIN, "None", "null"):
                headers = {} if token is None else {"authorization": f"Bearer {token}"}
                r = await p.http.post("/api/admin/audit", headers=headers)
                assert r.status_code == 403 and r.json()["code"] == "admin_disabled"

    asyncio.run(go())
