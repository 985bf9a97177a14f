"""The account store in SQLite for embedded mode: ``gateway.sqlite3`` in the data folder.

Same tables as PostgreSQL (``store_postgres.MIGRATIONS``), applied at start. WAL mode; one
connection owned by the gateway's event loop (statements are short: no thread needed).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from services.gateway.accounts import Account, HandPlayed, NameTaken

FILE = "gateway.sqlite3"

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
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
)


def _account(row: tuple[Any, ...]) -> Account:
    account_id, name, guest, created = row
    return Account(id=account_id, name=name, guest=bool(guest), created_ms=created)


class SqliteAccountStore:
    """``AccountStore`` on SQLite."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / FILE
        self._db: sqlite3.Connection | None = None

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA busy_timeout=5000")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)")
        applied = {v for (v,) in db.execute("SELECT version FROM schema_migrations")}
        for version, sql in MIGRATIONS:
            if version in applied:
                continue
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in sql.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute("INSERT INTO schema_migrations VALUES (?)", (version,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        self._db = db

    async def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the account store is not started")
        return self._db

    async def create_account(self, account: Account, password_hash: str | None) -> None:
        try:
            self.db.execute(
                "INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?)",
                (
                    account.id,
                    account.name,
                    account.name.lower(),
                    password_hash,
                    int(account.guest),
                    account.created_ms,
                ),
            )
        except sqlite3.IntegrityError:
            raise NameTaken(account.name) from None

    async def account(self, account_id: str) -> Account | None:
        row = self.db.execute(
            "SELECT id, name, guest, created_ms FROM accounts WHERE id = ?", (account_id,)
        ).fetchone()
        return None if row is None else _account(row)

    async def accounts(self, account_ids: list[str]) -> dict[str, Account]:
        if not account_ids:
            return {}
        marks = ",".join("?" * len(account_ids))
        rows = self.db.execute(
            f"SELECT id, name, guest, created_ms FROM accounts WHERE id IN ({marks})",
            account_ids,
        ).fetchall()
        return {r[0]: _account(r) for r in rows}

    async def login_record(self, name: str) -> tuple[Account, str | None] | None:
        row = self.db.execute(
            "SELECT id, name, guest, created_ms, password_hash FROM accounts WHERE name_key = ?",
            (name.lower(),),
        ).fetchone()
        return None if row is None else (_account(row[:4]), row[4])

    async def set_password(self, account_id: str, name: str, password_hash: str) -> None:
        try:
            self.db.execute(
                "UPDATE accounts SET name = ?, name_key = ?, password_hash = ?, guest = 0 "
                "WHERE id = ?",
                (name, name.lower(), password_hash, account_id),
            )
        except sqlite3.IntegrityError:
            raise NameTaken(name) from None

    async def create_session(self, token_hash: str, account_id: str, expires_ms: int) -> None:
        self.db.execute(
            "INSERT INTO sessions VALUES (?, ?, ?)", (token_hash, account_id, expires_ms)
        )

    async def session(self, token_hash: str, now: int) -> Account | None:
        row = self.db.execute(
            "SELECT a.id, a.name, a.guest, a.created_ms FROM sessions s "
            "JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ? AND s.expires_ms > ?",
            (token_hash, now),
        ).fetchone()
        return None if row is None else _account(row)

    async def delete_session(self, token_hash: str) -> None:
        self.db.execute("DELETE FROM sessions WHERE token_hash = ?", (token_hash,))

    async def sessions_alive(self, token_hashes: list[str], now: int) -> dict[str, int]:
        if not token_hashes:
            return {}
        marks = ",".join("?" * len(token_hashes))
        rows = self.db.execute(
            f"SELECT token_hash, expires_ms FROM sessions "
            f"WHERE token_hash IN ({marks}) AND expires_ms > ?",
            [*token_hashes, now],
        ).fetchall()
        return {h: expires for h, expires in rows}

    async def delete_expired(self, now: int) -> int:
        return self.db.execute("DELETE FROM sessions WHERE expires_ms <= ?", (now,)).rowcount

    async def record_hands(self, player_hands: list[tuple[str, HandPlayed]]) -> None:
        self.db.executemany(
            "INSERT OR IGNORE INTO hands_played VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (p, h.hand_id, h.table_id, h.seat, h.score, h.placement, h.end, h.ended_ms)
                for p, h in player_hands
            ],
        )

    async def hands(self, player: str, limit: int, before_ms: int | None) -> list[HandPlayed]:
        rows = self.db.execute(
            "SELECT hand_id, table_id, seat, score, placement, end_kind, ended_ms "
            "FROM hands_played WHERE player = ? AND ended_ms < ? "
            "ORDER BY ended_ms DESC, hand_id DESC LIMIT ?",
            (player, before_ms if before_ms is not None else 2**62, limit),
        ).fetchall()
        return [
            HandPlayed(hand_id=h, table_id=t, seat=s, score=sc, placement=pl, end=e, ended_ms=ms)
            for h, t, s, sc, pl, e, ms in rows
        ]
