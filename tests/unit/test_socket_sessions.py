"""Sockets bound to their sessions (``services.gateway.sessions``), on an in-memory store:
a revoked session ends its sockets at once and no other; an expired one at its expiry; a
session gone from the store is noticed by the next check; a store that does not answer ends
nothing but lets no command through."""

from __future__ import annotations

import asyncio

import pytest

from services.gateway.accounts import now_ms, token_hash
from services.gateway.sessions import SessionUnchecked, SocketSessions


class Store:
    """The one method of the account store that ``SocketSessions`` uses."""

    def __init__(self) -> None:
        self.sessions: dict[str, int] = {}
        self.down = False
        self.asked = 0

    async def sessions_alive(self, token_hashes: list[str], now: int) -> dict[str, int]:
        self.asked += 1
        if self.down:
            raise ConnectionError("the database is away")
        return {h: e for h, e in self.sessions.items() if h in token_hashes and e > now}


class Socket:
    def __init__(self) -> None:
        self.ended: list[bool] = []

    def end(self, expired: bool) -> None:
        self.ended.append(expired)


def _sessions(check_s: float = 1.0) -> tuple[Store, SocketSessions]:
    store = Store()
    return store, SocketSessions(store, check_s)  # type: ignore[arg-type]


def test_a_revoked_session_ends_all_its_sockets_at_once_and_no_other() -> None:
    async def go() -> None:
        store, sessions = _sessions()
        for token in ("a", "b"):
            store.sessions[token_hash(token)] = now_ms() + 60_000
        one, two, other = Socket(), Socket(), Socket()
        key = await sessions.bind("a", one)
        assert key is not None and await sessions.bind("a", two) == key
        other_key = await sessions.bind("b", other)
        assert other_key is not None
        sessions.revoke(key)
        assert one.ended == two.ended == [False] and other.ended == []
        assert not await sessions.alive(key) and await sessions.alive(other_key)
        assert await sessions.bind("a", Socket()) is None  # revoked here: not again

    asyncio.run(go())


def test_a_socket_ends_at_its_sessions_expiry() -> None:
    async def go() -> None:
        store, sessions = _sessions()
        store.sessions[token_hash("a")] = now_ms() + 200
        socket = Socket()
        key = await sessions.bind("a", socket)
        assert key is not None and await sessions.alive(key)
        await asyncio.sleep(0.35)
        assert socket.ended == [True] and not await sessions.alive(key)

    asyncio.run(go())


def test_a_session_gone_from_the_store_is_noticed_by_the_next_check() -> None:
    async def go() -> None:
        store, sessions = _sessions(check_s=0.05)
        store.sessions[token_hash("a")] = store.sessions[token_hash("b")] = now_ms() + 60_000
        commanding, idle = Socket(), Socket()
        key = await sessions.bind("a", commanding)
        idle_key = await sessions.bind("b", idle)
        assert key is not None and idle_key is not None
        del store.sessions[key], store.sessions[idle_key]  # another gateway's logouts
        await asyncio.sleep(0.06)
        assert not await sessions.alive(key)  # a command: the store is asked again
        assert commanding.ended == [False]
        assert await sessions.sweep() == 1  # the idle socket: the sweep asks for it
        assert idle.ended == [False] and len(sessions) == 0

    asyncio.run(go())


def test_a_store_that_does_not_answer_ends_nothing_and_lets_no_command_through() -> None:
    async def go() -> None:
        store, sessions = _sessions(check_s=0.0)
        store.sessions[token_hash("a")] = now_ms() + 60_000
        socket = Socket()
        key = await sessions.bind("a", socket)
        assert key is not None
        store.down = True
        with pytest.raises(SessionUnchecked):
            await sessions.alive(key)
        with pytest.raises(ConnectionError):
            await sessions.sweep()
        assert socket.ended == []
        store.down = False
        assert await sessions.alive(key)

    asyncio.run(go())


def test_within_the_check_period_a_command_costs_no_store_query() -> None:
    async def go() -> None:
        store, sessions = _sessions(check_s=60.0)
        store.sessions[token_hash("a")] = now_ms() + 60_000
        key = await sessions.bind("a", Socket())
        assert key is not None
        asked = store.asked
        for _ in range(100):
            assert await sessions.alive(key)
        assert store.asked == asked

    asyncio.run(go())
