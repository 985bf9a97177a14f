"""The platform in one event loop on the embedded log, for the gateway tests: the table,
matchmaking (and optionally clock) services and a gateway on a free port; plus small HTTP
and WebSocket clients, and a bot that plays a seat *through the gateway* like any client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec
import websockets

from schemas.views import SeatView
from services.bots import make_bot
from services.clock.service import ClockService
from services.gateway import protocol as proto
from services.gateway.app import GatewayService
from services.gateway.config import GatewayConfig, Limits
from services.history.service import HistoryService
from services.history.store import open_store as open_history_store
from services.matchmaking.service import MatchmakingService
from services.runtime.embedded import EmbeddedLog
from services.runtime.topics import TOPICS
from services.table.service import TableService

ADMIN = "test-admin-secret"


@dataclass
class Platform:
    log: EmbeddedLog
    gateway: GatewayService
    url: str
    ws_url: str
    http: httpx.AsyncClient


@contextlib.asynccontextmanager
async def platform(
    directory: Path,
    *,
    limits: Limits | None = None,
    clock: bool = False,
    matchmaking: bool = True,
) -> AsyncIterator[Platform]:
    log = EmbeddedLog(directory)
    await log.start()
    await log.create_topics(TOPICS)
    stop = asyncio.Event()
    services: list[Any] = [
        TableService(log),
        HistoryService(log, open_history_store(None, directory)),
    ]
    if matchmaking:
        services.append(MatchmakingService(log))
    if clock:
        services.append(ClockService(log))
    config = GatewayConfig(
        data_dir=directory,
        port=0,
        admin_token=ADMIN,
        limits=limits or Limits(),
        request_timeout_s=5.0,
    )
    gateway = GatewayService(log, config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    tasks = [asyncio.create_task(s.run(stop)) for s in services]
    tasks.append(asyncio.create_task(gateway.run(stop, sock)))
    for _ in range(200):
        if gateway.ready.is_set() and gateway.port:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)
    url = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=url, timeout=20) as http:
        try:
            yield Platform(log, gateway, url, f"ws://127.0.0.1:{port}/ws", http)
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
            await log.close()


@dataclass
class User:
    token: str
    id: str
    name: str

    @property
    def auth(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"}


async def guest(p: Platform) -> User:
    r = await p.http.post("/api/auth/guest")
    assert r.status_code == 201, r.text
    body = r.json()
    return User(body["token"], body["account"]["id"], body["account"]["name"])


async def table_of_four(
    p: Platform, options: dict[str, Any] | None = None
) -> tuple[str, list[User]]:
    """Four guests at one table; its hand is dealt once their clients open it (or 10 s)."""
    users = [await guest(p) for _ in range(4)]
    r = await p.http.post(
        "/api/tables",
        json={"options": options or {"clock": None}},
        headers=users[0].auth,
    )
    assert r.status_code == 201, r.text
    table_id, code = r.json()["table_id"], r.json()["code"]
    for u in users[1:]:
        r = await p.http.post(f"/api/tables/{table_id}/join", json={"code": code}, headers=u.auth)
        assert r.status_code == 200, r.text
    return table_id, users


@dataclass
class Socket:
    """A WebSocket client that keeps every frame and the latest view and events."""

    ws: Any
    frames: list[dict[str, Any]] = field(default_factory=list)
    view: dict[str, Any] | None = None
    events: dict[int, dict[str, Any]] = field(default_factory=dict)
    hand_id: str | None = None
    reader: asyncio.Task[None] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False
    ended: list[str] = field(default_factory=list)  # hands whose hand_ended arrived

    async def send(self, frame: dict[str, Any] | str) -> None:
        await self.ws.send(frame if isinstance(frame, str) else json.dumps(frame))

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                frame = json.loads(raw)
                self.frames.append(frame)
                if frame["type"] == "view":
                    self.view = frame
                elif frame["type"] == "events":
                    self._events(frame["hand_id"], frame["events"])
                elif frame["type"] == "change":  # a compact socket's: events, the view's changes
                    self._events(frame["hand_id"], frame["events"])
                    held = self.view
                    names = frame["names"] or (held or {}).get("names", {})
                    self.view = {
                        **frame,
                        "type": "view",
                        "view": proto.changed_view(None if held is None else held["view"], frame),
                        "names": names,
                    }
                self.changed.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed = True
            self.changed.set()

    def _events(self, hand_id: str, events: list[dict[str, Any]]) -> None:
        if hand_id != self.hand_id:
            self.hand_id, self.events = hand_id, {}
        for e in events:
            self.events[e["seq"]] = e
            if e["type"] == "hand_ended":
                self.ended.append(hand_id)

    async def until(self, test: Callable[[Socket], bool], timeout: float = 20) -> None:
        async def wait() -> None:
            while not test(self):
                if self.closed:
                    raise AssertionError(f"socket closed; last frames {self.frames[-3:]}")
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(wait(), timeout)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["type"] == kind]

    async def close(self) -> None:
        await self.ws.close()
        if self.reader is not None:
            await self.reader


async def connect(p: Platform | str, user: User | None, table_id: str, **hello: Any) -> Socket:
    """A socket to the gateway (``p``: the platform or its ws:// URL) after its hello."""
    ws = await websockets.connect(p if isinstance(p, str) else p.ws_url, max_size=2**22)
    s = Socket(ws)
    s.reader = asyncio.create_task(s._read())
    await s.send(
        {"type": "hello", "token": user.token if user else "", "table_id": table_id, **hello}
    )
    return s


def seat_view(frame: dict[str, Any]) -> SeatView:
    return msgspec.convert(frame["view"], SeatView)


async def play_with_bot(
    s: Socket, strength: str = "easy", stop_at_seq: int | None = None, hands: int = 1
) -> None:
    """Play the socket's seat with a bot through the gateway until ``hands`` hands ended."""
    bot = make_bot(strength)
    answered: set[tuple[str, int]] = set()
    n = 0
    while True:
        await s.until(lambda x: x.view is not None)
        assert s.view is not None
        frame = s.view
        view = seat_view(frame)
        if len(s.ended) >= hands:
            return
        if stop_at_seq is not None and view.seq >= stop_at_seq and view.seat not in view.pending:
            return
        key = (view.hand_id, frame["decision_seq"])
        if view.legal_actions and key not in answered:
            answered.add(key)
            command = bot.act(view)
            body = msgspec.to_builtins(command)
            for k in ("seat", "table_id", "command_id", "hand_id", "decision_seq"):
                body.pop(k, None)
            n += 1
            await s.send(
                {
                    "type": "command",
                    "command_id": f"c{n}-{frame['decision_seq']}",
                    "decision_seq": frame["decision_seq"],
                    "body": body,
                }
            )
        current = s.view

        def moved(x: Socket, c: dict[str, Any] | None = current) -> bool:
            return x.view is not c or len(x.ended) >= hands

        await s.until(moved, 60)


async def play_one_hand(p: Platform, options: dict[str, Any]) -> tuple[str, list[User]]:
    """Four guests at a new table with ``options``, their clients playing its hand with an
    easy bot to the end; the sockets are closed after."""
    table_id, users = await table_of_four(p, options)
    sockets = [await connect(p, u, table_id) for u in users]
    await asyncio.wait_for(asyncio.gather(*(play_with_bot(s) for s in sockets)), 120)
    for s in sockets:
        await s.close()
    return table_id, users
