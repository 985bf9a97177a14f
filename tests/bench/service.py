"""Service-path benchmarks: command→event latency and events/s through the table service.

The table service runs as its own process (``mahjong-planet table``); simulated players in
this process send commands and time each until its first event comes back. On Kafka the
broker is the one in ``KAFKA_BOOTSTRAP_SERVERS`` or, failing that, ``deploy/kafka/kafka.sh``'s.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from services.runtime.embedded import EmbeddedLog
from services.runtime.kafka import KafkaLog
from services.runtime.log import EventLog
from services.runtime.topics import TOPICS
from services.simulate import simulate

ROOT = Path(__file__).resolve().parents[2]
LEVELS = ((1, 3), (100, 100), (1000, 1000))  # (concurrent tables, hands)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _broker() -> str:
    if os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        return os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    up = subprocess.run(
        ["bash", str(ROOT / "deploy/kafka/kafka.sh"), "up"],
        capture_output=True,
        text=True,
        check=True,
    )
    return up.stdout.strip().splitlines()[-1]


async def _level(log: EventLog, tables: int, hands: int) -> dict[str, Any]:
    result = await simulate(log, hands=hands, tables=tables, seed=tables, deadline_s=1800)
    lat = result.latencies_ms
    return {
        "tables": tables,
        "hands": result.hands,
        "commands": result.commands,
        "p50_ms": round(statistics.median(lat), 1),
        "p99_ms": round(_percentile(lat, 0.99), 1),
        "events_per_s": round(result.events / result.seconds),
        "commands_per_s": round(result.commands / result.seconds),
    }


def _service(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", "table", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def _run(
    log: EventLog, service_args: list[str], levels: tuple[tuple[int, int], ...]
) -> list[dict[str, Any]]:
    await log.start()
    await log.create_topics(TOPICS)
    proc = _service(service_args)
    try:
        await asyncio.sleep(3)  # let it join and recover
        return [await _level(log, t, h) for t, h in levels]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        await log.close()


def run_all() -> dict[str, Any]:
    levels = LEVELS if not os.environ.get("MAHJONG_BENCH_QUICK") else ((1, 2), (100, 100))
    out: dict[str, Any] = {}
    data = tempfile.mkdtemp(prefix="mp-bench-")
    for row in asyncio.run(_run(EmbeddedLog(data), ["--data", data], levels[:2])):
        out[f"embedded_{row['tables']}_tables"] = row
    broker = _broker()
    for row in asyncio.run(_run(KafkaLog(broker), ["--kafka", broker], levels)):
        out[f"kafka_{row['tables']}_tables"] = row
    return out
