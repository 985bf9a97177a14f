"""Rate and size limits: token buckets, the HTTP middleware, the client address.

Every ``/api`` request takes a token from its client address's bucket (``Limits.http``);
register/login/guest also from the stricter ``Limits.auth`` bucket, admin routes from
``Limits.admin``; every other HTTP request (the web client's files, the OpenAPI document,
the health check) from ``Limits.static``. An empty bucket answers 429 with ``Retry-After``
and a JSON error body. Request bodies are capped by Litestar (``request_max_body_size``:
413). WebSocket limits are applied per socket in ``connection.py`` with the same
``TokenBucket``.
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from services.gateway.config import Limits, Rate

ASGIApp = Callable[..., Any]


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


async def _too_many(send: Any, wait_s: float) -> None:
    body = json.dumps(
        {
            "code": "rate_limited",
            "reason": "too many requests; slow down",
            "params": {"retry_after_s": max(1, math.ceil(wait_s))},
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"retry-after", str(max(1, math.ceil(wait_s))).encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


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
