"""Name skeletons in the SQLite account store (services/gateway/store_sqlite.py): unique, so
confusable names are taken; migration 2 fills them for accounts made before it, and two old
accounts that share one are both kept while new ones like them are refused. The same on
PostgreSQL: tests/integration/test_gateway_postgres.py."""

from __future__ import annotations

import asyncio
import sqlite3
import unicodedata
from pathlib import Path

import pytest

from services.gateway.account_store import Account, NameTaken
from services.gateway.names import name_key
from services.gateway.store_sqlite import FILE, MIGRATIONS, SqliteAccountStore
from services.runtime.sqlite import migrate


def account(account_id: str, name: str, created_ms: int = 0, guest: bool = False) -> Account:
    return Account(id=account_id, name=name, guest=guest, created_ms=created_ms)


def test_a_name_confusable_with_a_taken_one_is_taken(tmp_path: Path) -> None:
    async def go() -> None:
        store = SqliteAccountStore(tmp_path)
        await store.start()
        try:
            await store.create_account(account("p-1", "Tanya"), None)
            await store.create_account(account("p-2", "Zoë"), None)
            for name in ("TANYA", "Tаnya", "Tanуa"):  # case, a Cyrillic а, a Cyrillic у
                with pytest.raises(NameTaken):
                    await store.create_account(account("p-3", name), None)
            with pytest.raises(NameTaken):
                await store.create_account(
                    account("p-3", unicodedata.normalize("NFD", "Zoë")), None
                )
            await store.create_account(account("p-3", "Zoe"), None)  # no look-alike of Zoë
        finally:
            await store.close()

    asyncio.run(go())


def test_a_guest_cannot_take_a_confusable_name(tmp_path: Path) -> None:
    async def go() -> None:
        store = SqliteAccountStore(tmp_path)
        await store.start()
        try:
            await store.create_account(account("p-1", "Bob"), "hash")
            await store.create_account(account("p-2", "Guest-123456", guest=True), None)
            with pytest.raises(NameTaken):
                await store.set_password("p-2", "B0b", "hash")
            await store.set_password("p-2", "李小龙", "hash")
            found = await store.login_record("李小龙")
            assert found is not None and found[0].id == "p-2"
        finally:
            await store.close()

    asyncio.run(go())


def test_the_migration_fills_skeletons_and_keeps_old_accounts_that_collide(
    tmp_path: Path,
) -> None:
    # A file of the release before: migration 1 only, names as that release allowed.
    old = sqlite3.connect(tmp_path / FILE, isolation_level=None)
    migrate(old, MIGRATIONS[:1])
    old.executemany(
        "INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?)",
        [
            ("p-new", "B0b", "b0b", "h2", 0, 7),  # made after Bob: its skeleton is his
            ("p-old", "Bob", "bob", "h1", 0, 5),
            ("p-c", "carol", "carol", "h3", 0, 9),
        ],
    )
    old.close()

    async def go() -> None:
        store = SqliteAccountStore(tmp_path)
        await store.start()
        try:
            assert store.collided == 1
            keys = dict(store.db.execute("SELECT id, name_skeleton FROM accounts"))
            assert keys == {"p-old": name_key("Bob"), "p-new": None, "p-c": "carol"}
            for name, account_id in (("bob", "p-old"), ("B0B", "p-new"), ("Carol", "p-c")):
                found = await store.login_record(name)  # both old accounts still log in
                assert found is not None and found[0].id == account_id
            for name in ("BOB", "BOb", "b0B"):
                with pytest.raises(NameTaken):  # and no third one like them is made
                    await store.create_account(account("p-x", name, 11), None)
        finally:
            await store.close()
        again = SqliteAccountStore(tmp_path)
        await again.start()  # the collision stays as it was
        try:
            assert again.collided == 1
        finally:
            await again.close()

    asyncio.run(go())
