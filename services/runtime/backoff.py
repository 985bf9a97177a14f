"""Waiting out an outage inside the process: retries with backoff, and quieter logs.

A service whose broker or database is away keeps running, not ready (``/readyz`` 503),
and tries again after 0.5 s, 1 s, 2 s … up to 10 s between attempts, saying so at most
every ``quiet_s``; it used to exit and lean on its supervisor to start it again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def away_errors() -> tuple[type[BaseException], ...]:
    """What a client raises while PostgreSQL or the broker is down, restarting or
    unreachable: worth waiting out, unlike a bug or bad data."""
    import asyncpg
    from aiokafka.errors import KafkaConnectionError, KafkaTimeoutError

    return (
        OSError,
        TimeoutError,
        asyncpg.InterfaceError,
        asyncpg.PostgresConnectionError,
        asyncpg.OperatorInterventionError,
        KafkaConnectionError,
        KafkaTimeoutError,
    )


FIRST_S = 0.5
MOST_S = 10.0


class Backoff:
    """Pauses that double from ``first_s`` up to ``most_s``; ``reset`` after a success."""

    def __init__(self, first_s: float = FIRST_S, most_s: float = MOST_S) -> None:
        self.first_s, self.most_s = first_s, most_s
        self.next_s = first_s
        self.attempts = 0

    def pause_s(self) -> float:
        pause, self.next_s = self.next_s, min(self.most_s, self.next_s * 2)
        self.attempts += 1
        return pause

    def reset(self) -> None:
        self.next_s, self.attempts = self.first_s, 0


async def until_done(
    what: str,
    attempt: Callable[[], Awaitable[T]],
    log: logging.Logger,
    *,
    retry_on: tuple[type[BaseException], ...] = (Exception,),
    backoff: Backoff | None = None,
) -> T:
    """``await attempt()`` until it returns, pausing between failures (``retry_on``); a
    warning on the first failure and then once a minute, an info line when it worked."""
    backoff = backoff or Backoff()
    said = 0.0
    while True:
        try:
            result = await attempt()
        except retry_on as exc:
            now = time.monotonic()
            if now - said >= 60.0:
                said = now
                log.warning(
                    "%s failed (%s: %s); retrying with backoff, not ready meanwhile",
                    what,
                    type(exc).__name__,
                    exc,
                )
            await asyncio.sleep(backoff.pause_s())
            continue
        if backoff.attempts:
            log.info("%s worked after %d failed attempts", what, backoff.attempts)
        return result


class Quieter(logging.Filter):
    """Lets one record per logger and message template through every ``every_s``; the
    next one that passes says how many were held back. For libraries that log the same
    line many times a second while a server is away (aiokafka does)."""

    def __init__(self, prefixes: tuple[str, ...] = ("aiokafka",), every_s: float = 10.0) -> None:
        super().__init__()
        self.prefixes = prefixes
        self.every_s = every_s
        self._last: dict[tuple[str, object], float] = {}
        self._held: dict[tuple[str, object], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not record.name.startswith(self.prefixes):
            return True
        key = (record.name, record.msg)
        now = time.monotonic()
        if now - self._last.get(key, -self.every_s) < self.every_s:
            self._held[key] = self._held.get(key, 0) + 1
            return False
        self._last[key] = now
        held = self._held.pop(key, 0)
        if held:
            record.msg = f"{record.msg} [and {held} more like it in the last {self.every_s:.0f} s]"
        if len(self._last) > 10_000:  # bounded: templates, not values, are the keys
            self._last.clear()
        return True
