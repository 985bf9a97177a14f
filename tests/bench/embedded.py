"""The embedded service path against in-process self-play: easy-bot hands per CPU second.

*simulate* is what ``mahjong-planet simulate --bots easy`` does on the embedded log (the
default 20 tables): the table service in the same process, the bots' commands through
``table.commands`` and the events back through ``table.events``, every transaction a durable
SQLite commit. *selfplay* is ``services.bots.ladder.self_play`` with easy bots (the bots
section's figure): the pure engine, no I/O. Both are timed by this process's CPU time
(``time.process_time``: user and system, the commits' fsyncs included), steadier than wall
time when the machine is shared, and measured in the same run; ``selfplay_ratio`` is the
first over the second.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from typing import Any

from services.bots import make_bot
from services.bots.ladder import self_play
from services.runtime.embedded import EmbeddedLog
from services.runtime.topics import TOPICS
from services.simulate import simulate
from services.table.service import TableService

SIMULATE_HANDS = 600
SIMULATE_TABLES = 20  # mahjong-planet simulate's default
SELF_PLAY_HANDS = 1000  # as the bots section
BOTS = ("easy",) * 4


async def _simulate(hands: int, tables: int) -> tuple[int, float, float]:
    """Hands played, CPU seconds and wall seconds of ``simulate`` on a fresh embedded log."""
    data = tempfile.mkdtemp(prefix="mp-embedded-bench-")
    try:
        log = EmbeddedLog(data)
        await log.start()
        await log.create_topics(TOPICS)
        stop = asyncio.Event()
        service = TableService(log)
        task = asyncio.create_task(service.run(stop))
        try:
            await asyncio.wait_for(service.ready.wait(), 60)
            began, began_cpu = time.perf_counter(), time.process_time()
            result = await simulate(log, hands, tables, bots=BOTS, deadline_s=1800)
            cpu, wall = time.process_time() - began_cpu, time.perf_counter() - began
        finally:
            stop.set()
            await task
            await log.close()
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return result.hands, cpu, wall


def run_all(
    hands: int = SIMULATE_HANDS,
    tables: int = SIMULATE_TABLES,
    self_play_hands: int = SELF_PLAY_HANDS,
) -> dict[str, Any]:
    played, cpu, wall = asyncio.run(_simulate(hands, tables))
    speed = self_play(make_bot("easy"), self_play_hands, seed=1)
    embedded = played / cpu
    return {
        "simulate_easy_hands": played,
        "simulate_easy_tables": tables,
        "simulate_easy_hands_per_cpu_s": round(embedded, 1),
        "simulate_easy_hands_per_s": round(played / wall, 1),
        "selfplay_easy_hands_per_cpu_s": round(speed.hands_per_cpu_s, 1),
        "selfplay_ratio": round(embedded / speed.hands_per_cpu_s, 3),
    }


if __name__ == "__main__":
    for name, value in run_all().items():
        print(f"{name:<36} {value:>10,}")
