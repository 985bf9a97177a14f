"""SQLite for the embedded mode: one way to open a file, one migration runner, and one worker
thread per connection so that no ``sqlite3`` call of a store blocks the event loop.

Durability, chosen once for every file in the data folder (``SYNCHRONOUS``): WAL mode with
``synchronous=FULL``, so a committed transaction survives a power cut, not only a crash of the
process, as the embedded log's commits do (docs/exactly-once.md). With ``NORMAL`` a power cut
may take back the last commits while the log keeps what followed from them: an account or a
session handed out (``gateway.sqlite3``) that the log's events already name. The projections
(``ratings.sqlite3``, ``history.sqlite3``) store their input position with their rows, so
losing a commit there would only make them read the log again; they keep ``FULL`` (as before)
so that one setting, and one argument, holds for every file. The cost, an fsync per commit, is
small: account writes are rare and the projections write many records per transaction.

Migrations are ``(version, name, sql)``; each file records what it applied in
``schema_migrations (version, name, applied_at)``, as the PostgreSQL stores do
(``services.runtime.postgres``). Files made before, whose ``schema_migrations`` has only a
``version`` column, are brought to that form when opened.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

Migration = tuple[int, str, str]
"""(version, name, SQL of one or more statements separated by ``;``), for SQLite and
PostgreSQL alike (``services.runtime.postgres``: ``{schema}`` in its SQL is the schema)."""

JOURNAL_MODE = "WAL"
"""Readers in other connections (the gateway, ``ratings show``) never block the writer."""
SYNCHRONOUS = "FULL"
"""See the module's docstring: as durable as the embedded log."""
BUSY_TIMEOUT_MS = 10_000
"""How long a statement waits for another connection's write lock before it fails."""


def connect(path: str | Path, cache_kib: int | None = None) -> sqlite3.Connection:
    """``path`` opened in autocommit mode (transactions are explicit: ``write``) with the
    pragmas every file in the data folder uses; usable from any thread, one at a time."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        # The wait comes first: setting the journal mode takes a lock too, and a second
        # connection opened while the first migrates the file failed at once without it.
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        db.execute(f"PRAGMA journal_mode={JOURNAL_MODE}")
        db.execute(f"PRAGMA synchronous={SYNCHRONOUS}")
        db.execute("PRAGMA foreign_keys=ON")
        if cache_kib is not None:
            db.execute(f"PRAGMA cache_size=-{cache_kib}")
    except BaseException:
        db.close()
        raise
    return db


@contextmanager
def write(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on any exception (also when the
    body rolled back itself and then raised)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    if db.in_transaction:
        db.execute("COMMIT")


def _statements(sql: str) -> Iterator[str]:
    return (s for s in sql.split(";") if s.strip())


def _bookkeeping(db: sqlite3.Connection, migrations: Sequence[Migration]) -> None:
    """``schema_migrations`` in its one form: created, or rebuilt from an older file's
    ``version``-only table (names taken from ``migrations``)."""
    columns = [r[1] for r in db.execute("PRAGMA table_info(schema_migrations)")]
    if columns and "name" in columns:
        return
    if columns:
        db.execute("ALTER TABLE schema_migrations RENAME TO schema_migrations_old")
    db.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
        "name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    )
    if columns:
        names = {version: name for version, name, _ in migrations}
        db.executemany(
            "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
            [
                (v, names.get(v, ""))
                for (v,) in db.execute("SELECT version FROM schema_migrations_old")
            ],
        )
        db.execute("DROP TABLE schema_migrations_old")


def migrate(db: sqlite3.Connection, migrations: Sequence[Migration]) -> list[int]:
    """Apply the migrations ``db`` lacks, all in one write transaction (another process
    opening the same file at once waits, then finds them applied); the versions applied now."""
    done: list[int] = []
    with write(db):
        _bookkeeping(db, migrations)
        applied = {v for (v,) in db.execute("SELECT version FROM schema_migrations")}
        for version, name, sql in migrations:
            if version in applied:
                continue
            for statement in _statements(sql):
                db.execute(statement)
            db.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, name)
            )
            done.append(version)
    return done


class Database:
    """One connection to one SQLite file (``connect``'s pragmas, ``migrations`` applied when
    opened) and the one thread its statements run on: ``await db.run(work)`` calls
    ``work(connection)`` there, so the event loop never waits on the disk, and calls run one
    at a time in the order made. A transaction is one ``work`` (``with write(conn): …``)."""

    def __init__(
        self,
        path: str | Path,
        migrations: Sequence[Migration] = (),
        *,
        what: str = "the SQLite store",
        cache_kib: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.migrations = migrations
        self.what = what
        self.cache_kib = cache_kib
        self._db: sqlite3.Connection | None = None
        self._thread: ThreadPoolExecutor | None = None

    async def open(self) -> list[int]:
        """Connect and apply the missing migrations; the versions applied now."""
        thread = ThreadPoolExecutor(1, thread_name_prefix=f"sqlite-{self.path.stem}")

        def opening() -> tuple[sqlite3.Connection, list[int]]:
            db = connect(self.path, self.cache_kib)
            try:
                return db, migrate(db, self.migrations) if self.migrations else []
            except BaseException:
                db.close()
                raise

        try:
            db, done = await asyncio.get_running_loop().run_in_executor(thread, opening)
        except BaseException:
            thread.shutdown(wait=False)
            raise
        self._db, self._thread = db, thread
        return done

    async def close(self) -> None:
        """Close the connection once the calls made before have run."""
        db, thread, self._db, self._thread = self._db, self._thread, None, None
        if db is not None and thread is not None:
            try:
                await asyncio.get_running_loop().run_in_executor(thread, db.close)
            finally:
                thread.shutdown(wait=False)

    @property
    def opened(self) -> bool:
        return self._db is not None

    @property
    def db(self) -> sqlite3.Connection:
        """The connection itself, for tools and tests (its calls then run on the caller's
        thread: not from the event loop of a running service)."""
        if self._db is None:
            raise RuntimeError(f"{self.what} is not started")
        return self._db

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` on this connection's thread."""
        db, thread = self.db, self._thread
        assert thread is not None
        return await asyncio.get_running_loop().run_in_executor(thread, work, db)

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return await self.run(lambda db: db.execute(sql, params).fetchall())

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return await self.run(lambda db: db.execute(sql, params).fetchone())

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One statement in autocommit mode; the rows it changed."""
        return await self.run(lambda db: db.execute(sql, params).rowcount)


class SqliteStore:
    """What every SQLite store has: its ``Database``, opened by ``start`` and closed by
    ``close``, and ``db``, the connection itself (for tools and tests)."""

    def __init__(
        self,
        path: str | Path,
        migrations: Sequence[Migration],
        *,
        what: str,
        cache_kib: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.database = Database(self.path, migrations, what=what, cache_kib=cache_kib)

    async def start(self) -> None:
        """Connect and apply the missing migrations."""
        await self.database.open()

    async def close(self) -> None:
        await self.database.close()

    @property
    def db(self) -> sqlite3.Connection:
        return self.database.db
