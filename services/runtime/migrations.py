"""Applying numbered SQL migrations to a PostgreSQL schema, once each, at start."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg


async def migrate_postgres(
    pool: asyncpg.Pool, schema: str, lock: str, migrations: Sequence[tuple[int, str, str]]
) -> list[int]:
    """Apply the ``(version, name, sql)`` migrations ``schema`` (already quoted) lacks, under
    an advisory lock named ``lock`` so concurrent starts are safe; returns the versions applied
    now. Each migration's SQL may name ``{schema}``."""
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
