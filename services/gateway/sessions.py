"""The sessions that open sockets are bound to, and ending those sockets with them.

A socket is bound to the session of its ``hello``'s token, and must stop as soon as that
session ends: by logout or by expiry, on this gateway or on another one sharing the account
store (distributed mode: several gateways on one PostgreSQL).

- A logout through this gateway ends its sockets of that session at once (``revoke``).
- A logout through another gateway only deletes the session from the shared store: every
  ``check_s`` this gateway asks the store, in one query for all its sockets' sessions, which
  still exist, and ends the sockets of those that do not (``sweep``).
- A session's expiry is known from the store at ``bind``: a timer ends its sockets then.
- Before a command is forwarded (``alive``), the session must not be past its expiry and
  must have been seen in the store within ``check_s`` (else the store is asked now): a
  command after a logout anywhere, or after expiry, is never forwarded, even in the moment
  before a sweep notices.

The store being unreachable ends no socket (a logout needs the store too), but commands are
not forwarded while the session cannot be checked.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Protocol

from services.gateway.accounts import AccountStore, now_ms, token_hash

log = logging.getLogger("mahjong.gateway.sessions")

CHECK_S = 1.0
"""How old the store's word that a session exists may be when a command is forwarded; also
the period of the sweep."""
CHUNK = 500  # token hashes per store query of a sweep
REVOKED_REMEMBERED = 10_000


class Bound(Protocol):
    """A socket bound to a session (``Connection``)."""

    def end(self, expired: bool) -> None:
        """Close soon (from the socket's own task) with an error frame saying that the
        session has ended (``expired``: by its expiry, else by logout)."""
        ...


@dataclass(slots=True, eq=False)
class _Session:
    expires_ms: int
    checked: float  # time.monotonic() of the store's last word that it exists
    sockets: set[Bound] = field(default_factory=set)
    timer: asyncio.TimerHandle | None = None


class SessionUnchecked(Exception):
    """The account store did not answer whether a session still exists."""


class SocketSessions:
    """Sockets by the SHA-256 of their session token (see the module note)."""

    def __init__(self, store: AccountStore, check_s: float = CHECK_S) -> None:
        self.store = store
        self.check_s = check_s
        self._sessions: dict[str, _Session] = {}
        self._revoked: OrderedDict[str, None] = OrderedDict()
        self.ended = 0  # sockets ended because their session ended

    # --- binding -----------------------------------------------------------------------------

    async def bind(self, token: str, socket: Bound) -> str | None:
        """Bind ``socket`` to the session of ``token``; its token hash, or None when the
        session does not exist (any more)."""
        key = token_hash(token)
        found = await self.store.sessions_alive([key], now_ms())
        expires = found.get(key)
        if expires is None or key in self._revoked:
            return None
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = _Session(expires, time.monotonic())
            delay = max(0.0, (expires - now_ms()) / 1000)
            session.timer = asyncio.get_running_loop().call_later(
                min(delay, 30 * 24 * 3600.0), self._expire, key
            )
        session.sockets.add(socket)
        return key

    def unbind(self, key: str, socket: Bound) -> None:
        session = self._sessions.get(key)
        if session is None:
            return
        session.sockets.discard(socket)
        if not session.sockets:
            self._forget(key)

    def _forget(self, key: str) -> _Session | None:
        session = self._sessions.pop(key, None)
        if session is not None and session.timer is not None:
            session.timer.cancel()
        return session

    # --- ending --------------------------------------------------------------------------------

    def revoke(self, key: str) -> None:
        """The session ``key`` was deleted here (logout): end its sockets now."""
        self._revoked[key] = None
        while len(self._revoked) > REVOKED_REMEMBERED:
            self._revoked.popitem(last=False)
        self._end(key, expired=False)

    def _expire(self, key: str) -> None:
        session = self._sessions.get(key)
        if session is None:
            return
        if now_ms() < session.expires_ms:  # the timer's clock ran ahead of the wall clock
            delay = (session.expires_ms - now_ms()) / 1000
            session.timer = asyncio.get_running_loop().call_later(delay, self._expire, key)
            return
        self._end(key, expired=True)

    def _end(self, key: str, expired: bool) -> None:
        session = self._forget(key)
        if session is None:
            return
        for socket in list(session.sockets):
            self.ended += 1
            socket.end(expired)
        log.info(
            "%d socket(s) ended with their session (%s)",
            len(session.sockets),
            "expired" if expired else "ended",
        )

    # --- checking ------------------------------------------------------------------------------

    async def alive(self, key: str) -> bool:
        """Whether a socket of session ``key`` may still act: not ended, not expired, and
        seen in the store within ``check_s``. Raises ``SessionUnchecked`` when the store
        does not answer."""
        session = self._sessions.get(key)
        if session is None:
            return False
        if now_ms() >= session.expires_ms:
            self._expire(key)
            return False
        if time.monotonic() - session.checked <= self.check_s:
            return True
        asked = time.monotonic()
        try:
            found = await self.store.sessions_alive([key], now_ms())
        except Exception as exc:
            raise SessionUnchecked(str(exc)) from exc
        if key not in found:
            self._end(key, expired=False)
            return False
        if key in self._sessions:
            session.checked = max(session.checked, asked)
        return key in self._sessions

    async def sweep(self) -> int:
        """Ask the store about every bound session; end the sockets of the ones gone.
        Returns how many sessions ended."""
        keys = list(self._sessions)
        gone = 0
        for i in range(0, len(keys), CHUNK):
            chunk = keys[i : i + CHUNK]
            asked = time.monotonic()
            found = await self.store.sessions_alive(chunk, now_ms())
            for key in chunk:
                session = self._sessions.get(key)
                if session is None:
                    continue
                if key in found:
                    session.checked = max(session.checked, asked)
                else:
                    gone += 1
                    self._end(key, expired=False)
        return gone

    async def run(self) -> None:
        """Sweep every ``check_s`` until cancelled."""
        while True:
            await asyncio.sleep(self.check_s)
            if not self._sessions:
                continue
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("could not check the sockets' sessions: %s", exc)

    def close(self) -> None:
        for key in list(self._sessions):
            self._forget(key)

    def __len__(self) -> int:
        return len(self._sessions)
