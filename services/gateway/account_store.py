"""The account store port: what ``services.gateway.accounts`` needs from a store, and the
records it passes. The adapters (``store_sqlite``, ``store_postgres``) import this module;
``accounts.open_account_store`` picks one of them.
"""

from __future__ import annotations

from typing import Protocol

import msgspec


class Account(msgspec.Struct, frozen=True, kw_only=True):
    """A player's account as the gateway shows it (never the password hash)."""

    id: str
    name: str
    guest: bool
    created_ms: int


class NameTaken(Exception):
    """The store already has an account of that name: the same ``names.name_key`` (case
    and confusable characters aside), so also the same name case-insensitively."""


class AccountStore(Protocol):
    """Where accounts and session token hashes live."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def create_account(self, account: Account, password_hash: str | None) -> None:
        """Raises ``NameTaken`` when the name, or one confusable with it, exists."""
        ...

    async def account(self, account_id: str) -> Account | None: ...

    async def accounts(self, account_ids: list[str]) -> dict[str, Account]: ...

    async def login_record(self, name: str) -> tuple[Account, str | None] | None:
        """The account of ``name`` (case-insensitive: ``names.fold``) and its password hash."""
        ...

    async def set_password(self, account_id: str, name: str, password_hash: str) -> None:
        """Give an account a (new) name and password hash; it is no longer a guest.
        Raises ``NameTaken``."""
        ...

    async def create_session(self, token_hash: str, account_id: str, expires_ms: int) -> None: ...

    async def session(self, token_hash: str, now: int) -> Account | None:
        """The account of an unexpired session."""
        ...

    async def delete_session(self, token_hash: str) -> None: ...

    async def sessions_alive(self, token_hashes: list[str], now: int) -> dict[str, int]:
        """Of ``token_hashes``, the unexpired sessions and when each expires."""
        ...

    async def delete_expired(self, now: int) -> int: ...
