"""The embedded platform (``tests/service/gateway_harness.py``) on a thread of its own, for
fuzzers that drive the gateway from synchronous code (schemathesis uses ``requests``)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.gateway.config import Limits
from tests.service.gateway_harness import Platform, platform


@dataclass
class Live:
    url: str
    ws_url: str
    platform: Platform
    loop: asyncio.AbstractEventLoop

    def run(self, coro: Any, timeout: float = 60) -> Any:
        """Run a coroutine on the platform's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


@contextlib.contextmanager
def live_platform(directory: Path, limits: Limits | None = None) -> Iterator[Live]:
    """The platform serving on a free port from a background thread until the block ends."""
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def serve() -> None:
        stop = asyncio.Event()
        box["stop"] = stop
        async with platform(directory, limits=limits) as p:
            box["live"] = Live(p.url, p.ws_url, p, asyncio.get_running_loop())
            ready.set()
            await stop.wait()

    def main() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:  # pragma: no cover - reported below
            box["error"] = exc
        finally:
            ready.set()

    thread = threading.Thread(target=main, name="live-platform", daemon=True)
    thread.start()
    ready.wait(60)
    if "live" not in box:
        raise RuntimeError(f"the platform did not start: {box.get('error')!r}")
    live: Live = box["live"]
    try:
        yield live
    finally:
        live.loop.call_soon_threadsafe(box["stop"].set)
        thread.join(60)
