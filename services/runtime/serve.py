"""One service as its own process: ``mahjong-planet table|clock|matchmaking|bots|rating|...``.

Every service command comes through ``serve``, so each behaves the same way when started,
stopped and faced with a log or store that is away: the ops endpoint (``/readyz`` 503) is up
first, the log (and the service's store, if it has one to open) are connected while the
endpoint says "not ready", a broker that is away is waited for instead of crashing, SIGTERM
at any moment is a clean stop (exit code 0), and positions that belong to another log are
refused with exit code 1."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import Protocol

from services.runtime.log import EventLog
from services.runtime.service import Service


class Store(Protocol):
    """A store a service opens before it runs and closes after (the rating store)."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...


def serve(
    args: argparse.Namespace,
    name: str,
    make: Callable[[EventLog], Service],
    *,
    store: Store | None = None,
) -> int:
    """Run the service ``make`` builds on the selected log until SIGTERM or SIGINT; its
    exit code."""
    from services.runtime.config import open_log
    from services.runtime.ops import run_service, stop_on_signals
    from services.runtime.position import PositionBeyondEnd, refuse_to_mix
    from services.runtime.topics import TOPICS

    async def go() -> None:
        event_log = open_log(args, wait=True)
        service = make(event_log)

        async def prepare() -> None:
            await event_log.start()
            await event_log.create_topics(TOPICS)
            if store is not None:
                await store.start()

        try:
            await run_service(name, service, stop_on_signals(), args, prepare=prepare)
        finally:
            if store is not None:
                await store.close()
            await event_log.close()

    try:
        asyncio.run(go())
    except PositionBeyondEnd as exc:
        refuse_to_mix(name, exc)
        return 1
    return 0
