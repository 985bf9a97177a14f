"""The gateway's account store on a real PostgreSQL: migrations (twice, at once), accounts,
sessions with expiry, guests made full accounts, and the hand history."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import pytest

from services.gateway.accounts import Account, Accounts, HandPlayed, NameTaken, token_hash
from services.gateway.store_postgres import PostgresAccountStore

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
            hand = HandPlayed(
                hand_id="t#1", table_id="t", seat=2, score=5, placement=1, end="x", ended_ms=9
            )
            await store.record_hands([(full.account.id, hand), (full.account.id, hand)])
            assert await store.hands(full.account.id, 10, None) == [hand]
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
