"""Rate and size limits: token buckets, the HTTP middleware, the client address.

Every ``/api`` request takes a token from its client address's bucket (``Limits.http``);
register/login/guest also from the stricter ``Limits.auth`` bucket, admin routes from
``Limits.admin``; every other HTTP request (the web client's files, the OpenAPI document,
the health check) from ``Limits.static``. An empty bucket answers 429 with ``Retry-After``
and a JSON error body. Request bodies are capped by Litestar (``request_max_body_size``:
413). WebSocket limits are applied per socket in ``connection.py`` with the same
``TokenBucket``. ``PathGuard`` refuses paths with control characters (NUL above all) before
any route or file lookup sees them. ``LoginAttempts`` slows password guessing per account.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from services.gateway.config import Limits, Rate

ASGIApp = Callable[..., Any]

log = logging.getLogger("mahjong.gateway.http")


class TokenBucket:
    """``rate.per_s`` tokens a second up to ``rate.burst``; ``take`` spends one if it can."""

    __slots__ = ("burst", "per_s", "stamp", "tokens")

    def __init__(self, rate: Rate, now: float | None = None) -> None:
        self.per_s, self.burst = rate.per_s, rate.burst
        self.tokens = rate.burst
        self.stamp = time.monotonic() if now is None else now

    def take(self, now: float | None = None, cost: float = 1.0) -> bool:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.per_s)
        self.stamp = now
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False

    def wait_s(self, cost: float = 1.0) -> float:
        """Seconds until ``cost`` tokens are there."""
        missing = cost - self.tokens
        return 0.0 if missing <= 0 else missing / self.per_s if self.per_s > 0 else math.inf


class Buckets:
    """One ``TokenBucket`` per key (client address), the least recently used dropped first
    past ``max_keys`` (a dropped key starts again with a full bucket)."""

    def __init__(self, rate: Rate, max_keys: int = 50_000) -> None:
        self.rate, self.max_keys = rate, max_keys
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def bucket(self, key: str) -> TokenBucket:
        b = self._buckets.get(key)
        if b is None:
            b = self._buckets[key] = TokenBucket(self.rate)
            if len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        return b

    def take(self, key: str) -> tuple[bool, float]:
        """Whether ``key`` may go on, and if not how long to wait."""
        b = self.bucket(key)
        return (True, 0.0) if b.take() else (False, b.wait_s())


def client_address(scope: dict[str, Any], trusted_proxies: frozenset[str]) -> str:
    """The client's IP address; a trusted proxy's ``X-Forwarded-For`` is believed."""
    client = scope.get("client")
    address = str(client[0]) if client else "unknown"
    if address in trusted_proxies:
        for name, value in scope.get("headers", []):
            if name == b"x-forwarded-for":
                first = str(value.decode("latin-1")).split(",")[0].strip()
                if first:
                    return first
    return address


AUTH_PATHS = ("/api/auth/register", "/api/auth/login", "/api/auth/guest")


class RateLimitMiddleware:
    """ASGI middleware: token buckets per client address for every HTTP request."""

    def __init__(self, app: ASGIApp, limits: Limits, trusted_proxies: frozenset[str]) -> None:
        self.app = app
        self.trusted = trusted_proxies
        self.http = Buckets(limits.http)
        self.static = Buckets(limits.static)
        self.auth = Buckets(limits.auth)
        self.admin = Buckets(limits.admin)
        self.refused = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = client_address(scope, self.trusted)
        path = scope["path"]
        checks = [self.http if path.startswith("/api/") else self.static]
        if path in AUTH_PATHS:
            checks.append(self.auth)
        elif path.startswith("/api/admin/"):
            checks.append(self.admin)
        for buckets in checks:
            ok, wait = buckets.take(key)
            if not ok:
                self.refused += 1
                await _too_many(send, wait)
                return
        await self.app(scope, receive, send)


class _Tries:
    """Login attempts of one account name since its last success."""

    __slots__ = ("count", "last")

    def __init__(self) -> None:
        self.count = 0
        self.last = 0.0


class LoginAttempts:
    """Password guessing slowed per account, from whatever addresses it comes.

    Every attempt at a name counts (before its password is checked, so that parallel
    requests cannot slip through together); a success clears the count. After ``free``
    attempts, the next must wait ``2**(count - free)`` seconds after the previous one, at
    most ``cap_s``: a few typos cost nothing, a guesser gets about ``86400 / cap_s``
    guesses a day per gateway. An attempt refused for being early is not counted, so
    hammering does not lengthen the wait. An address that logged into the account before
    (one of its last ``known`` ones) is neither slowed nor counted: however an attacker
    keeps the account slowed, the real user's usual devices log in at once (others wait at
    most ``cap_s``). Names whose count has reached ``free`` are kept apart from the rest,
    so that trying very many names cannot push a guessed account's count out of memory.
    """

    def __init__(
        self,
        free: int = 5,
        cap_s: float = 300.0,
        forget_s: float = 3600.0,
        known: int = 8,
        max_names: int = 100_000,
    ) -> None:
        self.free, self.cap_s, self.forget_s = free, cap_s, forget_s
        self.known, self.max_names = known, max_names
        self._cold: OrderedDict[str, _Tries] = OrderedDict()  # fewer than ``free`` tries
        self._hot: OrderedDict[str, _Tries] = OrderedDict()
        self._known: OrderedDict[str, list[str]] = OrderedDict()
        self.refused = 0
        self.clock: Callable[[], float] = time.monotonic

    @staticmethod
    def key(name: str) -> str:
        return name[:64].lower()

    def attempt(self, name: str, address: str, now: float | None = None) -> float:
        """0 when this attempt may go on (it is counted); else the seconds to wait."""
        now = self.clock() if now is None else now
        key = self.key(name)
        if address in self._known.get(key, ()):
            return 0.0
        tries = self._hot.get(key) or self._cold.get(key)
        if tries is not None and now - tries.last > self.forget_s:
            self._drop(key)
            tries = None
        if tries is None:
            tries = self._cold[key] = _Tries()
            if len(self._cold) > self.max_names:
                self._cold.popitem(last=False)
        if tries.count >= self.free:
            wait = min(self.cap_s, 2.0 ** (tries.count - self.free)) - (now - tries.last)
            if wait > 0:
                self.refused += 1
                return wait
        tries.count += 1
        tries.last = now
        if tries.count >= self.free and key in self._cold:
            del self._cold[key]
            self._hot[key] = tries
            if len(self._hot) > self.max_names:
                self._hot.popitem(last=False)
        (self._hot if key in self._hot else self._cold).move_to_end(key)
        return 0.0

    def failed(self, name: str, now: float | None = None) -> None:
        """The password was wrong: the wait runs from now (checking it took a while)."""
        key = self.key(name)
        tries = self._hot.get(key) or self._cold.get(key)
        if tries is not None:
            tries.last = self.clock() if now is None else now

    def succeeded(self, name: str, address: str) -> None:
        """The right password: the count is cleared and ``address`` becomes a known one."""
        key = self.key(name)
        self._drop(key)
        addresses = self._known.pop(key, [])
        if address in addresses:
            addresses.remove(address)
        self._known[key] = [*addresses, address][-self.known :]
        if len(self._known) > self.max_names:
            self._known.popitem(last=False)

    def _drop(self, key: str) -> None:
        self._cold.pop(key, None)
        self._hot.pop(key, None)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class PathGuard:
    """ASGI middleware: a request whose (percent-decoded) path holds a control character is
    answered 400 ``bad_path`` (and logged) before routing: NUL in a path made the static
    files' lookup raise (500), and no route or file has such a name."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not _CONTROL.search(path):
            await self.app(scope, receive, send)
            return
        fields = {"status": 400, "code": "bad_path", "method": scope.get("method", "")}
        fields["path"] = path[:200]
        log.info("request refused: 400 bad_path", extra=fields)
        reason = "the path holds a control character"
        await refuse(send, 400, {"code": "bad_path", "reason": reason, "params": {}})


async def refuse(
    send: Any, status: int, error: dict[str, Any], headers: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    """Answer from ASGI middleware, before any route: ``error`` (``{"code", "reason",
    "params"}``, as the routes answer) as JSON with ``status`` and any further ``headers``."""
    body = json.dumps(error).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                *headers,
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _too_many(send: Any, wait_s: float) -> None:
    retry = max(1, math.ceil(wait_s))
    error = {
        "code": "rate_limited",
        "reason": "too many requests; slow down",
        "params": {"retry_after_s": retry},
    }
    await refuse(send, 429, error, ((b"retry-after", str(retry).encode()),))


class Counter:
    """Open sockets per client address."""

    def __init__(self) -> None:
        self.open: dict[str, int] = {}

    def acquire(self, key: str, limit: int) -> bool:
        n = self.open.get(key, 0)
        if n >= limit:
            return False
        self.open[key] = n + 1
        return True

    def release(self, key: str) -> None:
        n = self.open.get(key, 0) - 1
        if n <= 0:
            self.open.pop(key, None)
        else:
            self.open[key] = n
