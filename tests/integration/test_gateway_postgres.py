"""The gateway's account store on a real PostgreSQL: migrations (twice, at once), accounts,
sessions with expiry and guests made full accounts; name skeletons unique and filled for the
accounts of the release before (two that collide both kept); a logout on one
gateway ends the sockets of that session on another."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import uuid
from pathlib import Path

import asyncpg
import httpx
import pytest
import websockets

from services.gateway.accounts import (
    Account,
    Accounts,
    NameTaken,
    now_ms,
    token_hash,
)
from services.gateway.app import GatewayService
from services.gateway.config import GatewayConfig
from services.gateway.names import name_key
from services.gateway.sessions import SocketSessions
from services.gateway.store_postgres import MIGRATIONS, PostgresAccountStore
from services.matchmaking.service import MatchmakingService
from services.runtime.embedded import EmbeddedLog
from services.runtime.postgres import migrate
from services.runtime.topics import TOPICS
from services.table.service import TableService

pytestmark = pytest.mark.integration


def test_account_store_on_postgres(postgres_dsn: str) -> None:
    schema = f"gateway_test_{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        stores = [PostgresAccountStore(postgres_dsn, schema) for _ in range(2)]
        await asyncio.gather(*(s.start() for s in stores))  # concurrent migrations are safe
        store = stores[0]
        try:
            assert await store.migrate() == []
            accounts = Accounts(store, session_ttl_s=3600, guest_ttl_s=3600)
            alice = await accounts.register("Alice", "s3cret-pw")
            with pytest.raises(NameTaken):
                await store.create_account(
                    Account(id="p-x", name="ALICE", guest=False, created_ms=0), None
                )
            again = await accounts.login("alice", "s3cret-pw")
            assert again.account.id == alice.account.id
            assert (await accounts.authenticate(again.token)) == alice.account
            await accounts.logout(again.token)
            assert await accounts.authenticate(again.token) is None
            guest = await accounts.guest()
            full = await accounts.register("carol", "pw-carol1", guest.account)
            assert full.account.id == guest.account.id and not full.account.guest
            await store.create_session(token_hash("old"), full.account.id, 1)
            assert await store.session(token_hash("old"), 2) is None
            assert await store.delete_expired(2) == 1
            names = await store.accounts([alice.account.id, full.account.id, "p-none"])
            assert {a.name for a in names.values()} == {"Alice", "carol"}
        finally:
            for s in stores:
                await s.close()
            conn = await asyncpg.connect(postgres_dsn)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await conn.close()

    asyncio.run(go())


def test_name_skeletons_on_postgres_are_unique_and_filled_for_old_accounts(
    postgres_dsn: str,
) -> None:
    schema = f"gateway_test_{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        # The release before: migration 1 only, and its accounts, two of them confusable.
        pool = await asyncpg.create_pool(postgres_dsn, min_size=1, max_size=1)
        try:
            await migrate(pool, f'"{schema}"', f"mahjong-gateway:{schema}", MIGRATIONS[:1])
            await pool.executemany(
                f'INSERT INTO "{schema}".accounts VALUES ($1, $2, $3, $4, false, $5)',
                [("p-new", "B0b", "b0b", "h2", 7), ("p-old", "Bob", "bob", "h1", 5)],
            )
        finally:
            await pool.close()
        stores = [PostgresAccountStore(postgres_dsn, schema) for _ in range(2)]
        await asyncio.gather(*(s.start() for s in stores))  # two gateways fill at once
        store = stores[0]
        try:
            assert sorted(s.collided for s in stores) in ([0, 1], [1, 1])
            rows = await store.pool.fetch(f'SELECT id, name_skeleton FROM "{schema}".accounts')
            assert {r["id"]: r["name_skeleton"] for r in rows} == {
                "p-old": name_key("Bob"),  # the older account holds the skeleton
                "p-new": None,
            }
            for name, account_id in (("BOB", "p-old"), ("b0b", "p-new")):
                found = await store.login_record(name)
                assert found is not None and found[0].id == account_id
            for name in ("bob", "BOb", "b0B"):  # no third account like them
                with pytest.raises(NameTaken):
                    await store.create_account(
                        Account(id="p-x", name=name, guest=False, created_ms=9), None
                    )
            await store.create_account(
                Account(id="p-t", name="Tanya", guest=False, created_ms=9), None
            )
            with pytest.raises(NameTaken):  # a Cyrillic а
                await store.create_account(
                    Account(id="p-y", name="Tаnya", guest=False, created_ms=10), None
                )
        finally:
            for s in stores:
                await s.close()
            conn = await asyncpg.connect(postgres_dsn)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await conn.close()

    asyncio.run(go())


class _Socket:
    """A socket as ``SocketSessions`` sees one: it records how it was ended."""

    def __init__(self) -> None:
        self.ended: list[bool] = []

    def end(self, expired: bool) -> None:
        self.ended.append(expired)


def test_a_logout_on_one_gateway_ends_the_sockets_of_another(postgres_dsn: str) -> None:
    schema = f"gateway_test_{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        store_a, store_b = (PostgresAccountStore(postgres_dsn, schema) for _ in range(2))
        await store_a.start()
        await store_b.start()
        try:
            gateway_a = Accounts(store_a, session_ttl_s=3600, guest_ttl_s=3600)
            # Gateway B checks before every command (no cache) and sweeps every 0.2 s.
            checking = SocketSessions(store_b, check_s=0.0)
            sweeping = SocketSessions(store_b, check_s=0.2)
            one, two = await gateway_a.guest(), await gateway_a.guest()
            commanding, idle, bystander = _Socket(), _Socket(), _Socket()
            key = await checking.bind(one.token, commanding)
            assert key is not None and await checking.alive(key)
            assert await sweeping.bind(one.token, idle) == key
            other = await sweeping.bind(two.token, bystander)
            assert other is not None
            sweep = asyncio.create_task(sweeping.run())
            try:
                await gateway_a.logout(one.token)  # on gateway A: B is not told
                assert not await checking.alive(key)  # the next command is not forwarded
                assert commanding.ended == [False]
                for _ in range(50):
                    if idle.ended:
                        break
                    await asyncio.sleep(0.05)
                assert idle.ended == [False]  # the idle socket is closed by the sweep
                assert bystander.ended == [] and await sweeping.alive(other)
            finally:
                sweep.cancel()
            # A socket's session that expires is ended by its expiry, whoever asks.
            await store_a.create_session(token_hash("soon"), two.account.id, now_ms() + 300)
            soon = _Socket()
            soon_key = await checking.bind("soon", soon)
            assert soon_key is not None
            await asyncio.sleep(0.5)
            assert soon.ended == [True] and not await checking.alive(soon_key)
            assert await checking.bind("soon", _Socket()) is None
        finally:
            await store_a.close()
            await store_b.close()
            conn = await asyncpg.connect(postgres_dsn)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await conn.close()

    asyncio.run(go())


def test_a_socket_on_gateway_b_closes_when_its_session_is_logged_out_on_gateway_a(
    postgres_dsn: str, tmp_path: Path
) -> None:
    """Two gateways on one log and one PostgreSQL account store, as in distributed mode."""
    schema = f"gateway_test_{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        log = EmbeddedLog(tmp_path)
        await log.start()
        await log.create_topics(TOPICS)
        stop = asyncio.Event()
        gateways, socks = [], []
        for _ in range(2):
            config = GatewayConfig(data_dir=tmp_path, port=0, request_timeout_s=5.0)
            gateways.append(GatewayService(log, config, PostgresAccountStore(postgres_dsn, schema)))
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
        tasks = [
            asyncio.create_task(TableService(log).run(stop)),
            asyncio.create_task(MatchmakingService(log).run(stop)),
            *(asyncio.create_task(g.run(stop, s)) for g, s in zip(gateways, socks, strict=True)),
        ]
        try:
            for _ in range(200):
                if all(g.ready.is_set() and g.port for g in gateways):
                    break
                await asyncio.sleep(0.05)
            url_a, url_b = (f"http://127.0.0.1:{s.getsockname()[1]}" for s in socks)
            async with httpx.AsyncClient(base_url=url_a, timeout=20) as a:
                r = await a.post("/api/auth/guest")
                token = r.json()["token"]
                auth = {"authorization": f"Bearer {token}"}
                r = await a.post("/api/tables", json={"options": {"public": False}}, headers=auth)
                assert r.status_code == 201, r.text
                table_id = r.json()["table_id"]
                ws = await websockets.connect(url_b.replace("http", "ws") + "/ws")
                await ws.send(json.dumps({"type": "hello", "token": token, "table_id": table_id}))
                assert json.loads(await ws.recv())["type"] == "welcome"
                assert (await a.post("/api/auth/logout", headers=auth)).status_code == 204
                started = time.monotonic()
                frames = []
                with pytest.raises(websockets.ConnectionClosed):
                    while True:
                        frames.append(json.loads(await asyncio.wait_for(ws.recv(), 5)))
                assert time.monotonic() - started < 3.0
                assert frames[-1]["type"] == "error" and frames[-1]["code"] == "session_ended"
                assert ws.close_code == 1008
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
            await log.close()
            conn = await asyncpg.connect(postgres_dsn)
            try:
                await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await conn.close()

    asyncio.run(go())
