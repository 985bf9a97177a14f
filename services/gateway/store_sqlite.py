"""The account store in SQLite for embedded mode: ``gateway.sqlite3`` in the data folder.

Same tables as PostgreSQL (``store_postgres.MIGRATIONS``), applied at start; opened, migrated
and run off the event loop by ``services.runtime.sqlite`` (WAL, ``synchronous=FULL``: an
account or session handed out survives a power cut, as the log's events that name it do).
``hands_played`` (migration 1) is no longer written or read: the hand history
(``services.history``) replaced it. It is kept, not dropped, so that a gateway of an older
release still running on the same database is not broken.

Migration 2 adds ``name_skeleton`` (``names.name_key``: the name with case and look-alike
characters folded away), unique; ``start`` fills it for the accounts that lack one (those
made before it, or by an older gateway), oldest first. When two existing accounts share a
skeleton both are kept, both still log in, and the older holds the key, so no new account
can take a third name like theirs.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from services.gateway.account_store import Account, NameTaken
from services.gateway.names import fold, name_key
from services.runtime.sqlite import Migration, SqliteStore, write

FILE = "gateway.sqlite3"

MIGRATIONS: tuple[Migration, ...] = (
    (
        1,
        "accounts, sessions, hands played",
        """
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL UNIQUE,
  password_hash TEXT,
  guest INTEGER NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  expires_ms INTEGER NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expires_ms);
CREATE TABLE hands_played (
  player TEXT NOT NULL,
  hand_id TEXT NOT NULL,
  table_id TEXT NOT NULL,
  seat INTEGER NOT NULL,
  score INTEGER NOT NULL,
  placement INTEGER NOT NULL,
  end_kind TEXT NOT NULL,
  ended_ms INTEGER NOT NULL,
  PRIMARY KEY (player, hand_id)
);
CREATE INDEX hands_played_recent ON hands_played (player, ended_ms DESC)
""",
    ),
    (
        2,
        "name skeletons: confusable names are taken",
        """
ALTER TABLE accounts ADD COLUMN name_skeleton TEXT;
CREATE UNIQUE INDEX accounts_name_skeleton ON accounts (name_skeleton)
""",
    ),
)


def fill_skeletons(db: sqlite3.Connection) -> int:
    """Give every account without a ``name_skeleton`` its own, oldest first, in one
    transaction; the number left without one (their skeleton is an older account's)."""
    left = 0
    with write(db):
        rows = db.execute(
            "SELECT id, name FROM accounts WHERE name_skeleton IS NULL ORDER BY created_ms, id"
        ).fetchall()
        for account_id, name in rows:
            try:
                db.execute(
                    "UPDATE accounts SET name_skeleton = ? WHERE id = ?",
                    (name_key(name), account_id),
                )
            except sqlite3.IntegrityError:
                left += 1
    return left


def _account(row: tuple[Any, ...]) -> Account:
    account_id, name, guest, created = row
    return Account(id=account_id, name=name, guest=bool(guest), created_ms=created)


class SqliteAccountStore(SqliteStore):
    """``AccountStore`` on SQLite."""

    def __init__(self, directory: str | Path) -> None:
        super().__init__(Path(directory) / FILE, MIGRATIONS, what="the account store")
        self.collided = 0
        """Accounts left without a skeleton at the last start (module docstring)."""

    async def start(self) -> None:
        """Connect, migrate, and fill the missing name skeletons."""
        await super().start()
        self.collided = await self.database.run(fill_skeletons)

    async def create_account(self, account: Account, password_hash: str | None) -> None:
        try:
            await self.database.execute(
                "INSERT INTO accounts (id, name, name_key, password_hash, guest, created_ms, "
                "name_skeleton) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    account.id,
                    account.name,
                    fold(account.name),
                    password_hash,
                    int(account.guest),
                    account.created_ms,
                    name_key(account.name),
                ),
            )
        except sqlite3.IntegrityError:
            raise NameTaken(account.name) from None

    async def account(self, account_id: str) -> Account | None:
        row = await self.database.fetchone(
            "SELECT id, name, guest, created_ms FROM accounts WHERE id = ?", (account_id,)
        )
        return None if row is None else _account(row)

    async def accounts(self, account_ids: list[str]) -> dict[str, Account]:
        if not account_ids:
            return {}
        marks = ",".join("?" * len(account_ids))
        rows = await self.database.fetchall(
            f"SELECT id, name, guest, created_ms FROM accounts WHERE id IN ({marks})",
            account_ids,
        )
        return {r[0]: _account(r) for r in rows}

    async def login_record(self, name: str) -> tuple[Account, str | None] | None:
        row = await self.database.fetchone(
            "SELECT id, name, guest, created_ms, password_hash FROM accounts WHERE name_key = ?",
            (fold(name),),
        )
        return None if row is None else (_account(row[:4]), row[4])

    async def set_password(self, account_id: str, name: str, password_hash: str) -> None:
        try:
            await self.database.execute(
                "UPDATE accounts SET name = ?, name_key = ?, name_skeleton = ?, "
                "password_hash = ?, guest = 0 WHERE id = ?",
                (name, fold(name), name_key(name), password_hash, account_id),
            )
        except sqlite3.IntegrityError:
            raise NameTaken(name) from None

    async def create_session(self, token_hash: str, account_id: str, expires_ms: int) -> None:
        await self.database.execute(
            "INSERT INTO sessions VALUES (?, ?, ?)", (token_hash, account_id, expires_ms)
        )

    async def session(self, token_hash: str, now: int) -> Account | None:
        row = await self.database.fetchone(
            "SELECT a.id, a.name, a.guest, a.created_ms FROM sessions s "
            "JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ? AND s.expires_ms > ?",
            (token_hash, now),
        )
        return None if row is None else _account(row)

    async def delete_session(self, token_hash: str) -> None:
        await self.database.execute("DELETE FROM sessions WHERE token_hash = ?", (token_hash,))

    async def sessions_alive(self, token_hashes: list[str], now: int) -> dict[str, int]:
        if not token_hashes:
            return {}
        marks = ",".join("?" * len(token_hashes))
        rows = await self.database.fetchall(
            f"SELECT token_hash, expires_ms FROM sessions "
            f"WHERE token_hash IN ({marks}) AND expires_ms > ?",
            [*token_hashes, now],
        )
        return {h: expires for h, expires in rows}

    async def delete_expired(self, now: int) -> int:
        return await self.database.execute("DELETE FROM sessions WHERE expires_ms <= ?", (now,))
