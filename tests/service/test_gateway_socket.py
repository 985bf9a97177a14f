"""The table WebSocket on the embedded log: a player acts only for its own seat, malformed
frames get error frames on a socket that stays usable, floods are cut off, reconnecting
with the last seq sends only what is missing, and spectators see public information only."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
import websockets

from schemas.table import CommandEnvelope
from services.gateway.accounts import token_hash
from services.gateway.config import Limits, Rate
from services.runtime.log import EventLog
from services.runtime.topics import TABLE_COMMANDS
from tests.service.gateway_harness import (
    connect,
    guest,
    platform,
    play_with_bot,
    seat_view,
    table_of_four,
)
from tests.service.logs import records


async def _commands(log: EventLog) -> list[Any]:
    return [
        msgspec.json.decode(r.value, type=CommandEnvelope).command
        for r in await records(log, TABLE_COMMANDS)
    ]


def test_a_player_acts_only_for_its_own_seat(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p, {"clock": None, "public": True})
            s = await connect(p, users[0], table_id)
            await s.until(lambda x: x.view is not None)
            assert s.view is not None
            mine = s.view["view"]["seat"]
            other = (mine + 1) % 4
            tiles = s.view["view"]["players"][mine]["hand"]
            by_suit = {x: [t for t in tiles if t[1] == x] for x in "mps"}
            three = next(v[:3] for v in by_suit.values() if len(v) >= 3)
            # Naming another seat is refused and nothing reaches the table.
            await s.send(
                {
                    "type": "command",
                    "command_id": "a1",
                    "body": {"type": "choose_exchange", "tiles": three, "seat": other},
                }
            )
            await s.until(lambda x: bool(x.of_type("error")))
            error = s.of_type("error")[-1]
            assert error["code"] == "not_your_seat" and error["command_id"] == "a1"
            # Timeouts are the clock's; a spectator has no seat to act for.
            await s.send({"type": "command", "command_id": "a2", "body": {"type": "timeout"}})
            await s.until(lambda x: len(x.of_type("error")) >= 2)
            assert s.of_type("error")[-1]["code"] == "forbidden_command"
            watcher = await guest(p)
            w = await connect(p, watcher, table_id)
            await w.until(lambda x: x.view is not None)
            await w.send({"type": "command", "command_id": "b1", "body": {"type": "pass"}})
            await w.until(lambda x: bool(x.of_type("error")))
            assert w.of_type("error")[-1]["code"] == "not_a_player"
            # The seat is the gateway's: a command without one acts for the sender's seat.
            await s.send(
                {
                    "type": "command",
                    "command_id": "a3",
                    "decision_seq": s.view["decision_seq"],
                    "body": {"type": "choose_exchange", "tiles": three},
                }
            )
            await s.until(
                lambda x: x.view is not None and x.view["view"]["players"][mine]["chose_exchange"]
            )
            sent = [c for c in await _commands(p.log) if getattr(c, "command_id", "")]
            players = [c for c in sent if not c.command_id.startswith("start:")]
            assert [(c.seat, c.command_id) for c in players] == [(mine, f"{users[0].id}/a3")]
            for x in (s, w):
                await x.close()

    asyncio.run(go())


def test_malformed_frames_get_error_frames_and_the_socket_stays_usable(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p)
            s = await connect(p, users[0], table_id)
            await s.until(lambda x: x.view is not None)
            bad: list[str | bytes] = [
                "this is not json",
                json.dumps({"type": "launch_missiles"}),
                json.dumps({"type": "command", "command_id": "x", "body": {"type": "discard"}}),
                json.dumps({"type": "command", "command_id": "bad id!", "body": {}}),
                json.dumps(
                    {
                        "type": "command",
                        "command_id": "y",
                        "body": {"type": "discard", "tile": "0z"},
                    }
                ),
                json.dumps({"type": "hello", "token": "t", "table_id": table_id}),
                b"\x00\x01binary",
                json.dumps({"type": "ping", "t": "x" * 20_000}),
            ]
            for frame in bad:
                await s.ws.send(frame)
            await s.until(lambda x: len(x.of_type("error")) >= len(bad))
            codes = [e["code"] for e in s.of_type("error")]
            assert codes == [
                "bad_frame",
                "bad_frame",
                "bad_command",
                "bad_frame",
                "bad_command",
                "bad_frame",
                "bad_frame",
                "too_large",
            ]
            assert all(e["reason"] for e in s.of_type("error"))
            await s.send({"type": "ping", "t": 42})
            await s.until(lambda x: bool(x.of_type("pong")))
            assert s.of_type("pong")[-1]["t"] == 42
            # The socket still plays: the whole hand, to its end.
            others = [await connect(p, u, table_id) for u in users[1:]]
            await asyncio.wait_for(asyncio.gather(*(play_with_bot(x) for x in [s, *others])), 120)
            r = await p.http.get("/healthz")
            assert r.json()["ok"]
            for x in [s, *others]:
                await x.close()

    asyncio.run(go())


def test_floods_are_cut_off_and_the_service_stays_healthy(tmp_path: Path) -> None:
    limits = Limits(
        ws_frames=Rate(5.0, 10.0),
        ws_flood_strikes=30,
        ws_max_frame_bytes=1024,
        ws_hard_max_bytes=4096,
    )

    async def go() -> None:
        async with platform(tmp_path, limits=limits) as p:
            table_id, users = await table_of_four(p)
            s = await connect(p, users[0], table_id)
            await s.until(lambda x: x.view is not None)
            for i in range(200):
                try:
                    await s.send({"type": "ping", "t": i})
                except websockets.ConnectionClosed:
                    break
            await s.until(lambda x: x.closed, 10)
            codes = [e["code"] for e in s.of_type("error")]
            assert codes[0] == "rate_limited" and codes[-1] == "flood"
            assert s.ws.close_code == 1008
            # A frame past the hard limit closes the socket (1009) without harm.
            big = await connect(p, users[1], table_id)
            await big.until(lambda x: x.view is not None)
            await big.ws.send("x" * 10_000)
            await big.until(lambda x: x.closed, 10)
            assert big.ws.close_code == 1009
            # Everyone else is fine.
            ok = await connect(p, users[2], table_id)
            await ok.until(lambda x: x.view is not None)
            await ok.send({"type": "ping", "t": 1})
            await ok.until(lambda x: bool(x.of_type("pong")))
            await ok.close()

    asyncio.run(go())


def test_reconnecting_with_the_last_seq_sends_only_what_is_missing(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p)
            sockets = [await connect(p, u, table_id) for u in users]
            others = asyncio.gather(*(play_with_bot(s) for s in sockets[1:]))
            first = sockets[0]
            await asyncio.wait_for(play_with_bot(first, stop_at_seq=40), 60)
            held = dict(first.events)
            last = max(n for n in held if all(k in held for k in range(1, n + 1)))
            hand_id = first.hand_id
            await first.close()
            # The others play on while it is away, until the hand waits for it.
            watcher = sockets[1]
            await watcher.until(
                lambda x: (
                    x.view is not None
                    and x.view["seq"] > last
                    and first.view is not None
                    and (
                        x.view["view"]["pending"] == [first.view["view"]["seat"]]
                        or x.view["view"]["phase"] == "ended"
                    )
                ),
                # When the first seat has already won, this waits for the hand to end: three
                # bots' play through the gateway, slower on a loaded machine (CI timed out at
                # 20 s once).
                timeout=90,
            )
            again = await connect(p, users[0], table_id, hand_id=hand_id, last_seq=last)
            await again.until(lambda x: x.view is not None)
            batch = again.of_type("events")[0]["events"]
            new = [e["seq"] for e in batch if e["seq"] > last]
            assert new == list(range(last + 1, again.view["seq"] + 1))
            # Earlier events are sent again only whole: ones it may have held hidden, or in
            # part (an exchange's others' tiles, a window's others' rights), once it is over.
            for e in batch:
                if e["seq"] <= last:
                    assert e["type"] != "hidden"
                    assert e["type"] in (
                        "response_window_opened",
                        "tiles_dealt",
                        "wall_built",
                        "exchange_chosen",
                        "exchange_resolved",
                        "missing_suit_declared",
                        "tile_drawn",
                        "claim_declared",
                        "passed",
                    )
                    if e["type"] == "response_window_opened":
                        assert again.view["view"]["phase"] == "ended"
            merged = {**held, **{e["seq"]: e for e in batch}}
            # A new socket of the same player (it takes the seat from ``again``) gets it all.
            seen = again.view["view"]
            fresh = await connect(p, users[0], table_id)
            await fresh.until(lambda x: x.view is not None and bool(x.events))
            assert merged == fresh.events
            assert seen == fresh.view["view"]
            await asyncio.wait_for(asyncio.gather(play_with_bot(fresh), others), 120)
            for s in (again, fresh, *sockets[1:]):
                await s.close()

    asyncio.run(go())


def test_spectators_see_only_public_information(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p, {"clock": None, "public": True})
            watcher = await guest(p)
            w = await connect(p, watcher, table_id)
            await w.until(lambda x: x.view is not None)
            assert w.of_type("welcome")[0]["role"] == "spectator"
            players = [await connect(p, u, table_id) for u in users]
            games = asyncio.gather(*(play_with_bot(s) for s in players))
            while not games.done():
                await asyncio.sleep(0.05)
                if w.view is None:
                    continue
                view = seat_view(w.view)
                if view.phase == "ended":
                    continue
                assert view.seat is None and view.legal_actions == [] and view.drawn is None
                assert view.wall is None and view.seed is None
                assert all(x.hand is None for x in view.players if not x.won)
                for e in w.events.values():
                    assert e["type"] not in ("tiles_dealt", "wall_built", "tile_drawn")
                    if e["type"] == "exchange_resolved":
                        assert e["passed"] == [[], [], [], []]
            await asyncio.wait_for(games, 120)
            await w.until(lambda x: x.view is not None and x.view["view"]["phase"] == "ended")
            assert all(x["hand"] is not None for x in w.view["view"]["players"])
            for s in (w, *players):
                await s.close()

    asyncio.run(go())


@pytest.mark.parametrize("public", [False, True])
def test_strangers_and_bad_tokens_are_refused(tmp_path: Path, public: bool) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, _ = await table_of_four(p, {"clock": None, "public": public})
            stranger = await guest(p)
            s = await connect(p, stranger, table_id)
            if public:
                await s.until(lambda x: x.view is not None)
                assert s.of_type("welcome")[0]["role"] == "spectator"
            else:
                await s.until(lambda x: x.closed)
                assert s.of_type("error")[-1]["code"] == "forbidden"
                assert s.ws.close_code == 1008
            nobody = await connect(p, None, table_id)
            await nobody.until(lambda x: x.closed)
            assert nobody.of_type("error")[-1]["code"] == "unauthorized"
            late = await connect(p, stranger, table_id, v=99)
            await late.until(lambda x: x.closed)
            assert late.of_type("error")[-1]["code"] == "unsupported_version"

    asyncio.run(go())


def _exchange_command(s: Any, command_id: str) -> dict[str, Any]:
    """A valid ``choose_exchange`` for the socket's seat, from its latest view."""
    assert s.view is not None
    mine = s.view["view"]["seat"]
    tiles = s.view["view"]["players"][mine]["hand"]
    by_suit = {x: [t for t in tiles if t[1] == x] for x in "mps"}
    three = next(v[:3] for v in by_suit.values() if len(v) >= 3)
    return {
        "type": "command",
        "command_id": command_id,
        "decision_seq": s.view["decision_seq"],
        "body": {"type": "choose_exchange", "tiles": three},
    }


async def _forwarded(log: EventLog, user_id: str, command_id: str) -> bool:
    return any(c.command_id == f"{user_id}/{command_id}" for c in await _commands(log))


def test_logout_closes_the_sessions_sockets_at_once_and_forwards_nothing_after(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p)
            host = await guest(p)
            r = await p.http.post(
                "/api/tables", json={"options": {"clock": None, "public": True}}, headers=host.auth
            )
            assert r.status_code == 201, r.text
            s = await connect(p, users[0], table_id)
            # A second tab of the same session, watching another table (a second tab at this
            # one would take the seat: one seat, one driver).
            again = await connect(p, users[0], r.json()["table_id"])
            other = await connect(p, users[1], table_id)
            for x in (s, other):
                await x.until(lambda y: y.view is not None)
            await again.until(lambda y: bool(y.of_type("welcome")))
            r = await p.http.post("/api/auth/logout", headers=users[0].auth)
            assert r.status_code == 204
            with contextlib.suppress(websockets.ConnectionClosed):
                await s.send(_exchange_command(s, "after-logout"))
            for x in (s, again):
                await x.until(lambda y: y.closed, timeout=5)
                assert x.of_type("error")[-1]["code"] == "session_ended"
                assert x.ws.close_code == 1008
            await asyncio.sleep(0.3)
            assert not await _forwarded(p.log, users[0].id, "after-logout")
            # Another player's socket is untouched and still acts.
            await other.send(_exchange_command(other, "still-here"))
            for _ in range(50):
                if await _forwarded(p.log, users[1].id, "still-here"):
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the other player's command was not forwarded")
            assert not other.closed
            await other.close()

    asyncio.run(go())


def test_a_session_deleted_elsewhere_closes_its_sockets_within_a_second(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p)
            s = await connect(p, users[0], table_id)
            await s.until(lambda x: x.view is not None)
            # As another gateway's logout does: the session is gone from the shared store only.
            await p.gateway.accounts.store.delete_session(token_hash(users[0].token))
            started = time.monotonic()
            await s.until(lambda x: x.closed, timeout=5)
            assert time.monotonic() - started < 2.5
            assert s.of_type("error")[-1]["code"] == "session_ended"
            assert s.ws.close_code == 1008

    asyncio.run(go())


def test_a_socket_is_closed_when_its_session_expires(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p)
            expires = int(time.time() * 1000) + 1_500
            p.gateway.accounts.store.db.execute(  # type: ignore[attr-defined]
                "UPDATE sessions SET expires_ms = ? WHERE token_hash = ?",
                (expires, token_hash(users[0].token)),
            )
            s = await connect(p, users[0], table_id)
            # The table frame: the deal itself waits for the other three players' clients.
            await s.until(lambda x: bool(x.of_type("table")))
            await s.until(lambda x: x.closed, timeout=5)
            assert int(time.time() * 1000) >= expires
            assert s.of_type("error")[-1]["code"] == "session_expired"
            assert s.ws.close_code == 1008

    asyncio.run(go())


def test_a_second_socket_of_a_player_takes_the_seat_and_the_first_is_told(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        async with platform(tmp_path) as p:
            table_id, users = await table_of_four(p, {"clock": None, "public": True})
            first = await connect(p, users[0], table_id)
            await first.until(lambda x: x.view is not None)
            # A spectator of the same table is not affected by anyone's second tab.
            watcher = await guest(p)
            w = await connect(p, watcher, table_id)
            await w.until(lambda x: x.view is not None)
            second = await connect(p, users[0], table_id)
            await second.until(lambda x: x.view is not None)
            await first.until(lambda x: x.closed)
            assert first.of_type("error")[-1]["code"] == "opened_elsewhere"
            assert first.ws.close_code == 1008 and first.ws.close_reason == "opened_elsewhere"
            assert second.of_type("welcome")[0]["role"] == "player" and not second.closed
            # The second socket drives the seat.
            mine = second.view["view"]["seat"] if second.view else None
            tiles = second.view["view"]["players"][mine]["hand"] if second.view else []
            three = next(
                v[:3] for v in ([t for t in tiles if t[1] == x] for x in "mps") if len(v) >= 3
            )
            await second.send(
                {
                    "type": "command",
                    "command_id": "s1",
                    "body": {"type": "choose_exchange", "tiles": three},
                }
            )
            await second.until(
                lambda x: x.view is not None and x.view["view"]["players"][mine]["chose_exchange"]
            )
            # "Use here": opening it again moves the seat back, and the other one is told.
            again = await connect(p, users[0], table_id)
            await again.until(lambda x: x.view is not None)
            await second.until(lambda x: x.closed)
            assert second.of_type("error")[-1]["code"] == "opened_elsewhere"
            assert not w.closed and not w.of_type("error")
            for s in (again, w):
                await s.close()

    asyncio.run(go())
