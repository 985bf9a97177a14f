"""Accounts, passwords and sessions.

- Passwords are hashed with argon2id (``argon2-cffi``, its default parameters); a hash made
  with older parameters is upgraded at the next login.
- A session token is 32 random bytes (URL-safe text) handed to the client once; the store
  keeps only its SHA-256, so a leaked database holds no usable token. Tokens expire
  (``GatewayConfig.session_ttl_s``); logout deletes them.
- A guest is an account without a password and with a generated name ("Guest-4821"). It can
  be turned into a full account later (``register`` with the guest's token) and keeps its
  history.
- An account's id (``p-…``) is what the event log calls a *player*; names are for display
  only and may be changed without touching any log. A chosen name keeps the rules of
  ``services.gateway.names`` (Unicode, NFC, 2 to 24 characters, refused with a reason and
  never cut); it is taken when another account's has the same skeleton (``names.name_key``:
  case and look-alike characters aside), which the stores hold unique. Login finds the name
  case-insensitively (``names.fold``), as it did for ASCII names.

The store port (``account_store.AccountStore``) has a SQLite adapter (``store_sqlite``,
embedded mode) and a PostgreSQL adapter (``store_postgres``); ``open_account_store`` picks one.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import secrets
import time
from dataclasses import dataclass

import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from schemas.codes import AccountCode
from services.gateway.account_store import Account as Account
from services.gateway.account_store import AccountStore as AccountStore
from services.gateway.account_store import NameTaken as NameTaken
from services.gateway.limits import LoginAttempts
from services.gateway.names import NameRefused, check_name, fold

MAX_LOGIN_NAME = 200
"""Longer login names are not looked up (no stored name is longer than 64 code points)."""
MIN_PASSWORD = 8
MAX_PASSWORD = 256


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class AccountError(Exception):
    """A refused account operation: a stable ``code``, its ``params`` (for clients to
    translate) and an English reason."""

    def __init__(
        self, code: AccountCode, reason: str, status: int = 400, **params: str | int
    ) -> None:
        super().__init__(reason)
        self.code, self.reason, self.status, self.params = code, reason, status, params


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Session:
    """A new session: the token (shown once) and when it expires."""

    token: str
    expires_ms: int
    account: Account


class Accounts:
    """Register, log in, guests, sessions: the rules around an ``AccountStore``."""

    def __init__(
        self,
        store: AccountStore,
        session_ttl_s: int,
        guest_ttl_s: int,
        attempts: LoginAttempts | None = None,
    ) -> None:
        self.store = store
        self.attempts = attempts or LoginAttempts()
        self.session_ttl_ms = session_ttl_s * 1000
        self.guest_ttl_ms = guest_ttl_s * 1000
        self.hasher = PasswordHasher()
        self._dummy_hash = self.hasher.hash(secrets.token_hex(8))

    # --- passwords (argon2 costs tens of ms: off the event loop) ----------------------------

    async def _hash(self, password: str) -> str:
        return await asyncio.to_thread(self.hasher.hash, password)

    async def _verify(self, password_hash: str, password: str) -> bool:
        def check() -> bool:
            try:
                return self.hasher.verify(password_hash, password)
            except (VerificationError, InvalidHashError):
                return False

        return await asyncio.to_thread(check)

    # --- operations --------------------------------------------------------------------------

    async def register(self, name: str, password: str, guest: Account | None = None) -> Session:
        """A new account (or the guest ``guest`` made a full account) and a session."""
        name = _check_name(name)
        _check_password(password)
        password_hash = await self._hash(password)
        if guest is not None:
            if not guest.guest:
                raise AccountError("already_registered", "this account already has a password")
            try:
                await self.store.set_password(guest.id, name, password_hash)
            except NameTaken:
                raise AccountError("name_taken", "that name is taken", 409) from None
            account = msgspec.structs.replace(guest, name=name, guest=False)
        else:
            account = Account(id=_new_id(), name=name, guest=False, created_ms=now_ms())
            try:
                await self.store.create_account(account, password_hash)
            except NameTaken:
                raise AccountError("name_taken", "that name is taken", 409) from None
        return await self._session(account)

    async def login(self, name: str, password: str, address: str = "") -> Session:
        """A session for the right name and password (one answer for every wrong pair);
        attempts at one name are slowed after a few, from any address (``LoginAttempts``)."""
        name = fold(name.strip()[:MAX_LOGIN_NAME])
        wait = self.attempts.attempt(name, address)
        if wait > 0:
            raise AccountError(
                "too_many_attempts",
                "too many wrong passwords for this account; try again later",
                429,
                retry_after_s=max(1, math.ceil(wait)),
            )
        found = await self.store.login_record(name) if name else None
        stored = found[1] if found is not None else None
        ok = await self._verify(stored or self._dummy_hash, password[:MAX_PASSWORD])
        if found is None or stored is None or not ok:
            self.attempts.failed(name)
            raise AccountError("bad_credentials", "wrong name or password", 401)
        self.attempts.succeeded(name, address)
        account = found[0]
        if self.hasher.check_needs_rehash(stored):
            await self.store.set_password(account.id, account.name, await self._hash(password))
        return await self._session(account)

    async def guest(self) -> Session:
        """A new guest account with a generated name, and its session."""
        for _ in range(20):
            name = f"Guest-{secrets.randbelow(900_000) + 100_000}"
            account = Account(id=_new_id(), name=name, guest=True, created_ms=now_ms())
            try:
                await self.store.create_account(account, None)
            except NameTaken:
                continue
            return await self._session(account, self.guest_ttl_ms)
        raise AccountError("no_guest_name", "could not find a free guest name; try again", 503)

    async def authenticate(self, token: str | None) -> Account | None:
        """The account of a valid, unexpired token."""
        if not token or len(token) > 200:
            return None
        return await self.store.session(token_hash(token), now_ms())

    async def logout(self, token: str) -> None:
        await self.store.delete_session(token_hash(token))

    async def _session(self, account: Account, ttl_ms: int | None = None) -> Session:
        token = secrets.token_urlsafe(32)
        expires = now_ms() + (ttl_ms or self.session_ttl_ms)
        await self.store.create_session(token_hash(token), account.id, expires)
        return Session(token, expires, account)


def _new_id() -> str:
    return f"p-{secrets.token_urlsafe(9)}"


def _check_name(name: str) -> str:
    """The name to store (trimmed, NFC), or the rule it breaks as an ``AccountError``."""
    try:
        return check_name(name)
    except NameRefused as refused:
        raise AccountError(refused.code, refused.reason, 400, **refused.params) from None


def _check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise AccountError(
            "bad_password",
            f"a password has {MIN_PASSWORD} to {MAX_PASSWORD} characters",
            min=MIN_PASSWORD,
            max=MAX_PASSWORD,
        )


def open_account_store(dsn: str | None, data_dir: str | object) -> AccountStore:
    """PostgreSQL when a DSN is given, else SQLite (``gateway.sqlite3``) in ``data_dir``."""
    if dsn:
        from services.gateway.store_postgres import PostgresAccountStore

        return PostgresAccountStore(dsn)
    from services.gateway.store_sqlite import SqliteAccountStore

    return SqliteAccountStore(data_dir)  # type: ignore[arg-type]
