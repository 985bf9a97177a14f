"""The account store in PostgreSQL (asyncpg) for distributed mode.

Tables live in one schema (``gateway`` by default) and are created by numbered migrations,
applied at start under an advisory lock, so several gateways may start at once (the pool and
the migrations: ``services.runtime.postgres``). ``hands_played`` (migration 1) is no longer
written or read (the hand history replaced it); it is kept so that a gateway of an older
release, still running during an upgrade, is not broken.

Migration 2 adds ``name_skeleton`` (``names.name_key``), unique; ``start`` fills it for the
accounts that lack one, oldest first, as the SQLite store does (``store_sqlite``: when two
existing accounts share a skeleton, both are kept and the older holds it).
"""

from __future__ import annotations

from typing import Any

import asyncpg

from services.gateway.account_store import Account, NameTaken
from services.gateway.names import fold, name_key
from services.runtime.postgres import Migration, PostgresStore

MIGRATIONS: tuple[Migration, ...] = (
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
    (
        2,
        "name skeletons: confusable names are taken",
        """
ALTER TABLE {schema}.accounts ADD COLUMN name_skeleton text;
CREATE UNIQUE INDEX accounts_name_skeleton ON {schema}.accounts (name_skeleton);
""",
    ),
)


def _account(row: Any) -> Account:
    return Account(id=row["id"], name=row["name"], guest=row["guest"], created_ms=row["created_ms"])


class PostgresAccountStore(PostgresStore):
    """``AccountStore`` on PostgreSQL."""

    def __init__(self, dsn: str, schema: str = "gateway", pool_size: int = 4) -> None:
        super().__init__(
            dsn,
            schema,
            MIGRATIONS,
            migration_lock=f"mahjong-gateway:{schema}",
            what="the account store",
            pool_size=pool_size,
        )
        self.collided = 0
        """Accounts left without a skeleton at the last start (``store_sqlite``)."""

    async def start(self) -> None:
        """Connect, migrate, and fill the missing name skeletons."""
        await super().start()
        self.collided = await self.fill_skeletons()

    async def fill_skeletons(self) -> int:
        """Give every account without a ``name_skeleton`` its own, oldest first; the number
        left without one. Each row on its own statement: gateways starting at once may
        fill the same rows, and a row another one filled is skipped."""
        left = 0
        rows = await self.pool.fetch(
            f"SELECT id, name FROM {self.s}.accounts WHERE name_skeleton IS NULL "
            "ORDER BY created_ms, id"
        )
        for row in rows:
            try:
                await self.pool.execute(
                    f"UPDATE {self.s}.accounts SET name_skeleton = $1 "
                    "WHERE id = $2 AND name_skeleton IS NULL",
                    name_key(row["name"]),
                    row["id"],
                )
            except asyncpg.UniqueViolationError:
                left += 1
        return left

    async def create_account(self, account: Account, password_hash: str | None) -> None:
        try:
            await self.pool.execute(
                f"INSERT INTO {self.s}.accounts (id, name, name_key, password_hash, guest, "
                "created_ms, name_skeleton) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                account.id,
                account.name,
                fold(account.name),
                password_hash,
                account.guest,
                account.created_ms,
                name_key(account.name),
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
            fold(name),
        )
        return None if row is None else (_account(row), row["password_hash"])

    async def set_password(self, account_id: str, name: str, password_hash: str) -> None:
        try:
            await self.pool.execute(
                f"UPDATE {self.s}.accounts SET name = $1, name_key = $2, name_skeleton = $3, "
                "password_hash = $4, guest = false WHERE id = $5",
                name,
                fold(name),
                name_key(name),
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
