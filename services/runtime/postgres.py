"""PostgreSQL for the distributed mode: one asyncpg pool per store, its tables in one schema,
created by numbered migrations applied at start.

A start that fails (the database away, a migration refused) closes what it opened and raises:
the caller retries it with backoff (``services.runtime.backoff``; the gateway, the rating and
the history services do). While the database is away a pool's connections fail and asyncpg
opens new ones on the next use; a caller that cannot tell whether its last commit took effect
closes the store and starts it again (the history projection), and resumes from the stored
positions (docs/exactly-once.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import asyncpg

from services.runtime.sqlite import Migration as Migration

# Migration: (version, name, SQL); ``{schema}`` in the SQL is the store's schema, quoted.

_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def quote(schema: str, longest: int = 63) -> str:
    """``schema`` in double quotes, refused unless lower-case letters, digits and ``_``, at
    most ``longest`` characters (PostgreSQL's identifiers have at most 63)."""
    if not _NAME.match(schema) or len(schema) > longest:
        raise ValueError(f"schema name {schema!r}: use lower-case letters, digits and _")
    return f'"{schema}"'


async def migrate(
    pool: asyncpg.Pool, schema: str, lock: str, migrations: Sequence[Migration]
) -> list[int]:
    """Apply the migrations ``schema`` (already quoted) lacks, under an advisory lock named
    ``lock`` so concurrent starts are safe; returns the versions applied now."""
    done: list[int] = []
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", lock)
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {schema}.schema_migrations ("
            "version integer PRIMARY KEY, name text NOT NULL, "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        applied = {
            r["version"]
            for r in await conn.fetch(f"SELECT version FROM {schema}.schema_migrations")
        }
        for version, name, sql in migrations:
            if version in applied:
                continue
            await conn.execute(sql.format(schema=schema))
            await conn.execute(
                f"INSERT INTO {schema}.schema_migrations (version, name) VALUES ($1, $2)",
                version,
                name,
            )
            done.append(version)
    return done


class PostgresStore:
    """What every PostgreSQL store has: a pool and a schema. ``start`` connects and migrates
    (under the advisory lock ``migration_lock``), ``close`` may be called any time, ``pool``
    is there in between; ``s`` is the schema quoted, for the store's SQL."""

    def __init__(
        self,
        dsn: str,
        schema: str,
        migrations: Sequence[Migration],
        *,
        migration_lock: str,
        what: str,
        pool_size: int = 4,
        longest_schema: int = 63,
        command_timeout: float | None = None,
    ) -> None:
        self.dsn = dsn
        self.schema = schema
        self.s = quote(schema, longest_schema)
        self.migrations = migrations
        self.migration_lock = migration_lock
        self.what = what
        self.pool_size = pool_size
        self.command_timeout = command_timeout
        self._pool: asyncpg.Pool | None = None

    async def start(self) -> None:
        """Connect and apply the missing migrations."""
        pool = await asyncpg.create_pool(
            self.dsn, min_size=1, max_size=self.pool_size, command_timeout=self.command_timeout
        )
        try:
            await migrate(pool, self.s, self.migration_lock, self.migrations)
        except BaseException:
            await pool.close()
            raise
        self._pool = pool

    async def migrate(self) -> list[int]:
        """Apply the migrations this database lacks (under a lock: concurrent starts are
        safe); returns the versions applied now."""
        return await migrate(self.pool, self.s, self.migration_lock, self.migrations)

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise RuntimeError(f"{self.what} is not started")
        return self._pool
