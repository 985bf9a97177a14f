"""The account store in PostgreSQL (asyncpg) for distributed mode.

Tables live in one schema (``gateway`` by default) and are created by numbered migrations,
applied at start under an advisory lock, so several gateways may start at once.
"""

from __future__ import annotations

import re
from typing import Any

import asyncpg

from services.gateway.accounts import Account, HandPlayed, NameTaken
from services.runtime.migrations import migrate_postgres

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "accounts, sessions, hands played",
        """
CREATE TABLE {schema}.accounts (
  id text PRIMARY KEY,
  name text NOT NULL,
  name_key text NOT NULL UNIQUE,
  password_hash text,
  guest boolean NOT NULL,
  created_ms bigint NOT NULL
);
CREATE TABLE {schema}.sessions (
  token_hash text PRIMARY KEY,
  account_id text NOT NULL REFERENCES {schema}.accounts(id),
  expires_ms bigint NOT NULL
);
CREATE INDEX sessions_expiry ON {schema}.sessions (expires_ms);
CREATE TABLE {schema}.hands_played (
  player text NOT NULL,
  hand_id text NOT NULL,
  table_id text NOT NULL,
  seat smallint NOT NULL,
  score integer NOT NULL,
  placement smallint NOT NULL,
  end_kind text NOT NULL,
  ended_ms bigint NOT NULL,
  PRIMARY KEY (player, hand_id)
);
CREATE INDEX hands_played_recent ON {schema}.hands_played (player, ended_ms DESC);
""",
    ),
)


def _account(row: Any) -> Account:
    return Account(id=row["id"], name=row["name"], guest=row["guest"], created_ms=row["created_ms"])


class PostgresAccountStore:
    """``AccountStore`` on PostgreSQL."""

    def __init__(self, dsn: str, schema: str = "gateway", pool_size: int = 4) -> None:
        if not _NAME.match(schema):
            raise ValueError(f"schema name {schema!r}: use lower-case letters, digits and _")
        self.dsn, self.schema, self.s = dsn, schema, f'"{schema}"'
        self.pool_size = pool_size
        self._pool: asyncpg.Pool | None = None

    async def start(self) -> None:
        self._pool = await asyncpg.create_pool(self.dsn, min_size=1, max_size=self.pool_size)
        await self.migrate()

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise RuntimeError("the account store is not started")
        return self._pool

    async def migrate(self) -> list[int]:
        """Apply the migrations this database lacks (under a lock: concurrent starts are
        safe); returns the versions applied now."""
        return await migrate_postgres(
            self.pool, self.s, f"mahjong-gateway:{self.schema}", MIGRATIONS
        )

    async def create_account(self, account: Account, password_hash: str | None) -> None:
        try:
            await self.pool.execute(
                f"INSERT INTO {self.s}.accounts VALUES ($1, $2, $3, $4, $5, $6)",
                account.id,
                account.name,
                account.name.lower(),
                password_hash,
                account.guest,
                account.created_ms,
            )
        except asyncpg.UniqueViolationError:
            raise NameTaken(account.name) from None

    async def account(self, account_id: str) -> Account | None:
        row = await self.pool.fetchrow(
            f"SELECT id, name, guest, created_ms FROM {self.s}.accounts WHERE id = $1",
            account_id,
        )
        return None if row is None else _account(row)

    async def accounts(self, account_ids: list[str]) -> dict[str, Account]:
        if not account_ids:
            return {}
        rows = await self.pool.fetch(
            f"SELECT id, name, guest, created_ms FROM {self.s}.accounts WHERE id = ANY($1)",
            account_ids,
        )
        return {r["id"]: _account(r) for r in rows}

    async def login_record(self, name: str) -> tuple[Account, str | None] | None:
        row = await self.pool.fetchrow(
            f"SELECT id, name, guest, created_ms, password_hash FROM {self.s}.accounts "
            "WHERE name_key = $1",
            name.lower(),
        )
        return None if row is None else (_account(row), row["password_hash"])

    async def set_password(self, account_id: str, name: str, password_hash: str) -> None:
        try:
            await self.pool.execute(
                f"UPDATE {self.s}.accounts SET name = $1, name_key = $2, password_hash = $3, "
                "guest = false WHERE id = $4",
                name,
                name.lower(),
                password_hash,
                account_id,
            )
        except asyncpg.UniqueViolationError:
            raise NameTaken(name) from None

    async def create_session(self, token_hash: str, account_id: str, expires_ms: int) -> None:
        await self.pool.execute(
            f"INSERT INTO {self.s}.sessions VALUES ($1, $2, $3)", token_hash, account_id, expires_ms
        )

    async def session(self, token_hash: str, now: int) -> Account | None:
        row = await self.pool.fetchrow(
            f"SELECT a.id, a.name, a.guest, a.created_ms FROM {self.s}.sessions s "
            f"JOIN {self.s}.accounts a ON a.id = s.account_id "
            "WHERE s.token_hash = $1 AND s.expires_ms > $2",
            token_hash,
            now,
        )
        return None if row is None else _account(row)

    async def delete_session(self, token_hash: str) -> None:
        await self.pool.execute(f"DELETE FROM {self.s}.sessions WHERE token_hash = $1", token_hash)

    async def sessions_alive(self, token_hashes: list[str], now: int) -> dict[str, int]:
        if not token_hashes:
            return {}
        rows = await self.pool.fetch(
            f"SELECT token_hash, expires_ms FROM {self.s}.sessions "
            "WHERE token_hash = ANY($1) AND expires_ms > $2",
            token_hashes,
            now,
        )
        return {r["token_hash"]: r["expires_ms"] for r in rows}

    async def delete_expired(self, now: int) -> int:
        status = await self.pool.execute(
            f"DELETE FROM {self.s}.sessions WHERE expires_ms <= $1", now
        )
        return int(status.split()[-1])

    async def record_hands(self, player_hands: list[tuple[str, HandPlayed]]) -> None:
        await self.pool.executemany(
            f"INSERT INTO {self.s}.hands_played VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
            "ON CONFLICT (player, hand_id) DO NOTHING",
            [
                (p, h.hand_id, h.table_id, h.seat, h.score, h.placement, h.end, h.ended_ms)
                for p, h in player_hands
            ],
        )

    async def hands(self, player: str, limit: int, before_ms: int | None) -> list[HandPlayed]:
        rows = await self.pool.fetch(
            "SELECT hand_id, table_id, seat, score, placement, end_kind, ended_ms "
            f"FROM {self.s}.hands_played WHERE player = $1 AND ended_ms < $2 "
            "ORDER BY ended_ms DESC, hand_id DESC LIMIT $3",
            player,
            before_ms if before_ms is not None else 2**62,
            limit,
        )
        return [
            HandPlayed(
                hand_id=r["hand_id"],
                table_id=r["table_id"],
                seat=r["seat"],
                score=r["score"],
                placement=r["placement"],
                end=r["end_kind"],
                ended_ms=r["ended_ms"],
            )
            for r in rows
        ]
