"""The SQLite module every embedded store uses (services/runtime/sqlite.py): one way of
recording migrations (files written by either older runner still open), the durability
chosen once, statements off the event loop, a migration that fails leaves nothing."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from services.gateway.account_store import Account
from services.gateway.store_sqlite import FILE as GATEWAY_FILE
from services.gateway.store_sqlite import MIGRATIONS as GATEWAY_MIGRATIONS
from services.gateway.store_sqlite import SqliteAccountStore
from services.history.embedded import EmbeddedHistoryStore
from services.rating.embedded import FILE as RATING_FILE
from services.rating.embedded import EmbeddedRatingStore
from services.rating.migrations import SQLITE as RATING_MIGRATIONS
from services.runtime.embedded import EmbeddedLog
from services.runtime.sqlite import Database, SqliteStore, migrate


def _bookkeeping(path: Path) -> list[tuple[int, str]]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT version, name FROM schema_migrations ORDER BY 1").fetchall()
    finally:
        db.close()


def test_a_gateway_file_of_the_old_runner_opens_with_its_accounts(tmp_path: Path) -> None:
    # What the gateway's own runner wrote: schema_migrations with a version column only.
    old = sqlite3.connect(tmp_path / GATEWAY_FILE, isolation_level=None)
    old.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY)")
    for statement in GATEWAY_MIGRATIONS[0][2].split(";"):
        if statement.strip():
            old.execute(statement)
    old.execute("INSERT INTO schema_migrations VALUES (1)")
    old.execute("INSERT INTO accounts VALUES ('p-1', 'Ann', 'ann', NULL, 1, 5)")
    old.close()

    async def go() -> None:
        store = SqliteAccountStore(tmp_path)
        await store.start()
        try:
            assert await store.account("p-1") == Account(
                id="p-1", name="Ann", guest=True, created_ms=5
            )
        finally:
            await store.close()

    asyncio.run(go())
    assert _bookkeeping(tmp_path / GATEWAY_FILE) == [
        (1, GATEWAY_MIGRATIONS[0][1]),  # named from the migrations when the file was opened
        (2, GATEWAY_MIGRATIONS[1][1]),  # applied then
    ]


def test_a_rating_file_of_the_other_runner_opens_unchanged(tmp_path: Path) -> None:
    old = sqlite3.connect(tmp_path / RATING_FILE, isolation_level=None)
    old.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
        "name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    )
    for statement in RATING_MIGRATIONS[0][2].split(";"):
        if statement.strip():
            old.execute(statement)
    old.execute("INSERT INTO schema_migrations (version, name) VALUES (1, 'as written')")
    old.close()

    async def go() -> None:
        store = EmbeddedRatingStore(tmp_path)
        await store.start()
        try:
            assert (await store.position("rating.results")).next_offset == 0
        finally:
            await store.close()

    asyncio.run(go())
    assert _bookkeeping(tmp_path / RATING_FILE) == [(1, "as written")]


def test_every_file_in_the_data_folder_has_the_same_durability(tmp_path: Path) -> None:
    async def go() -> None:
        log = EmbeddedLog(tmp_path)
        stores: list[SqliteStore] = [
            SqliteAccountStore(tmp_path),
            EmbeddedRatingStore(tmp_path),
            EmbeddedHistoryStore(tmp_path),
        ]
        await log.start()
        for store in stores:
            await store.start()
        try:
            for db in [log.db, *(s.db for s in stores)]:
                assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
                assert db.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
        finally:
            for store in stores:
                await store.close()
            await log.close()

    asyncio.run(go())


def test_statements_run_off_the_event_loop_on_one_thread(tmp_path: Path) -> None:
    async def go() -> None:
        db = Database(tmp_path / "t.sqlite3", [(1, "t", "CREATE TABLE t (x INTEGER)")])
        assert await db.open() == [1]
        try:
            loop_thread = threading.get_ident()
            threads = await asyncio.gather(
                *(db.run(lambda _: threading.get_ident()) for _ in range(20))
            )
            assert loop_thread not in threads and len(set(threads)) == 1
            assert await db.execute("INSERT INTO t VALUES (?)", (7,)) == 1
            assert await db.fetchall("SELECT x FROM t") == [(7,)]
        finally:
            await db.close()
        with pytest.raises(RuntimeError, match="not started"):
            db.db  # noqa: B018

    asyncio.run(go())


def test_a_failing_migration_applies_nothing(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "t.sqlite3", isolation_level=None)
    assert migrate(db, [(1, "one", "CREATE TABLE one (x INTEGER)")]) == [1]
    with pytest.raises(sqlite3.OperationalError):
        migrate(
            db,
            [
                (1, "one", "CREATE TABLE one (x INTEGER)"),
                (2, "two", "CREATE TABLE two (x INTEGER)"),
                (3, "bad", "CREATE TABLE one (x INTEGER)"),
            ],
        )
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"one", "schema_migrations"}
    assert db.execute("SELECT version FROM schema_migrations").fetchall() == [(1,)]
    db.close()
