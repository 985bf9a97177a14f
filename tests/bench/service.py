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
LEVELS = (1, 100, 1000)  # concurrent tables
MEASURE_S = 60.0  # the steady-state window per level
PACED_THINK_S = 1.0  # paced levels: each decision about a second after it is offered


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


async def _level(log: EventLog, tables: int, seconds: float, think_s: float) -> dict[str, Any]:
    # Easy bots: the cheapest legal players, so the figure is the service path's, not the
    # players' thinking (all four share this process and its one core).
    result = await simulate(
        log,
        hands=10 * tables,
        tables=tables,
        measure_s=seconds,
        deadline_s=1800,
        bots=("easy",) * 4,
        think_s=think_s,
    )
    lat = result.latencies_ms
    return {
        "tables": tables,
        "think_s": think_s,
        "hands_finished": result.hands,
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
    log: EventLog, service_args: list[str], levels: tuple[tuple[int, float], ...], seconds: float
) -> list[dict[str, Any]]:
    await log.start()
    await log.create_topics(TOPICS)
    proc = _service(service_args)
    try:
        await asyncio.sleep(3)  # let it join and recover
        return [await _level(log, t, seconds, think) for t, think in levels]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        await log.close()


def run_all() -> dict[str, Any]:
    seconds = float(os.environ.get("MAHJONG_BENCH_SECONDS", MEASURE_S))
    out: dict[str, Any] = {}
    data = tempfile.mkdtemp(prefix="mp-bench-")
    embedded = tuple((t, 0.0) for t in LEVELS[:2])
    for row in asyncio.run(_run(EmbeddedLog(data), ["--data", data], embedded, seconds)):
        out[f"embedded_{row['tables']}_tables"] = row
    broker = _broker()
    levels = tuple((t, 0.0) for t in LEVELS) + tuple((t, PACED_THINK_S) for t in LEVELS[1:])
    for row in asyncio.run(_run(KafkaLog(broker), ["--kafka", broker], levels, seconds)):
        paced = "_paced" if row["think_s"] else ""
        out[f"kafka_{row['tables']}_tables{paced}"] = row
    return out
