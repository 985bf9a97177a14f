"""Clock benchmarks on Kafka: timeout firing delay with 1,000 silent timed tables, and the
lag from a decision being offered to an instant answer arriving.

The table and clock services run as their own processes on the broker of
``KAFKA_BOOTSTRAP_SERVERS`` or ``deploy/kafka/kafka.sh``. Every figure is read back from the
hand logs, where the table service stamped it with its own clock:

- *firing delay*: for each timeout, the table service's time when it applied the timeout
  minus the deadline (plus the lag allowance, 0 today) it had announced. This is end to end:
  the clock service's timer, its send, Kafka, and the table service's queue.
- *answer lag*: ``used_ms`` of decisions answered by a responder that answers the moment it
  reads the decision: commit, read-committed consume, the responder, produce, consume.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec

from schemas import events as ev
from schemas.table import CommandEnvelope, StartHand, decode_event, encode
from services.rules.hand import apply
from services.rules.state import HandState
from services.rules.timeouts import default_command
from services.runtime.kafka import KafkaLog
from services.runtime.log import Outgoing, read_through
from services.runtime.topics import TABLE_COMMANDS, TABLE_EVENTS, TOPICS
from tests.bench.service import _broker, _percentile

ROOT = Path(__file__).resolve().parents[2]
SILENT_TABLES = 1000
SILENT_S = 75.0  # exchange timeouts at 20 s, missing suits at 35 s, then 2 s turns
LAG_TABLES = 100
LAG_S = 30.0


def _process(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _start(table: str, clock: str) -> Outgoing:
    start = StartHand(table_id=table, players=["a", "b", "c", "d"], clock=clock)
    return Outgoing(TABLE_COMMANDS, table, encode(CommandEnvelope(command=start)))


async def _events_of(log: KafkaLog, tables: set[str]) -> dict[str, list[ev.Event]]:
    out: dict[str, list[ev.Event]] = {t: [] for t in tables}
    for p in range(await log.partition_count(TABLE_EVENTS)):
        async for r in read_through(log, TABLE_EVENTS, p, 0):
            if r.key in out:
                out[r.key].append(decode_event(r.value))
    return out


def firing_delays(hands: dict[str, list[ev.Event]]) -> list[int]:
    """Per timeout: when the table service applied it, minus when it was due."""
    delays = []
    for events in hands.values():
        due: dict[tuple[int, int], tuple[int, int]] = {}
        for e in events:
            if isinstance(e, ev.ClockStarted):
                for d in e.seats:
                    due[(e.decision_seq, d.seat)] = (e.at_ms, d.deadline_ms + e.grace_ms)
            elif isinstance(e, ev.ClockStopped) and e.timeout:
                offered, due_ms = due[(e.decision_seq, e.seat)]
                delays.append(offered + e.used_ms - due_ms)
    return delays


async def _silent(log: KafkaLog, run: str) -> dict[str, Any]:
    tables = [f"bench-silent-{run}-{i}" for i in range(SILENT_TABLES)]
    # Spread the starts over 5 s: a thousand tables that started in the same millisecond
    # would measure one burst of 4,000 simultaneous deadlines, not a thousand tables.
    for i in range(0, len(tables), 50):
        await log.produce([_start(t, "bullet") for t in tables[i : i + 50]])
        await asyncio.sleep(0.25)
    await asyncio.sleep(float(os.environ.get("MAHJONG_BENCH_CLOCK_S", SILENT_S)))
    hands = await _events_of(log, set(tables))
    delays = firing_delays(hands)
    # Leave nothing running: a silent hand left unfinished stays in every later recovery.
    for _ in range(80):
        if all(events and isinstance(events[-1], ev.HandEnded) for events in hands.values()):
            break
        await asyncio.sleep(5)
        hands = await _events_of(log, set(tables))
    return {
        "tables": SILENT_TABLES,
        "timeouts": len(delays),
        "p50_ms": statistics.median(delays),
        "p99_ms": _percentile([float(d) for d in delays], 0.99),
        "max_ms": max(delays),
    }


async def _lag(log: KafkaLog, run: str) -> dict[str, Any]:
    """Tables whose four seats answer (with the §8 default, sent as their own command) the
    moment a decision is offered; the lag is what the table service charged them."""
    tables = {f"bench-lag-{run}-{i}" for i in range(LAG_TABLES)}
    follower = log.follower([TABLE_EVENTS])
    await follower.start()
    states: dict[str, HandState] = {}
    answered: set[str] = set()
    rng = random.Random(5)
    await log.produce([_start(t, "relaxed") for t in sorted(tables)])
    until = time.monotonic() + LAG_S
    try:
        while time.monotonic() < until or states:  # then let the hands in play finish
            out = []
            for r in await follower.poll(0.05):
                if r.key not in tables:
                    continue
                e = decode_event(r.value)
                state = states.setdefault(e.table_id, HandState())
                apply(state, e)
                if isinstance(e, ev.HandEnded):
                    del states[e.table_id]
                    if time.monotonic() < until:
                        out.append(_start(e.table_id, "relaxed"))
                    continue
                if not isinstance(e, ev.ClockStarted):
                    continue
                for d in e.seats:
                    answer = default_command(state, d.seat)
                    answer = msgspec.structs.replace(
                        answer,
                        table_id=e.table_id,
                        hand_id=e.hand_id,
                        decision_seq=e.decision_seq,
                        command_id=f"lag-{rng.getrandbits(64):x}",
                    )
                    answered.add(answer.command_id)
                    out.append(
                        Outgoing(
                            TABLE_COMMANDS, e.table_id, encode(CommandEnvelope(command=answer))
                        )
                    )
            if out:
                await log.produce(out)
    finally:
        await follower.stop()
    hands = await _events_of(log, tables)
    lags = [
        float(e.used_ms)
        for events in hands.values()
        for e in events
        if isinstance(e, ev.ClockStopped) and not e.timeout and e.command_id in answered
    ]
    return {
        "tables": LAG_TABLES,
        "answers": len(lags),
        "p50_ms": statistics.median(lags),
        "p99_ms": _percentile(lags, 0.99),
    }


async def _run(broker: str) -> dict[str, Any]:
    log = KafkaLog(broker)
    await log.start()
    await log.create_topics(TOPICS)
    table = _process("table", "--kafka", broker)
    clock = _process("clock", "--kafka", broker)
    run = uuid.uuid4().hex[:6]
    try:
        await asyncio.sleep(5)  # let both join their groups and recover
        lag = await _lag(log, run)
        silent = await _silent(log, run)
    finally:
        for proc in (table, clock):
            proc.terminate()
            proc.wait(timeout=60)
        await log.close()
    return {f"kafka_{SILENT_TABLES}_timed_tables": silent, "answer_lag": lag}


def run_all() -> dict[str, Any]:
    return asyncio.run(_run(_broker()))


if __name__ == "__main__":
    print(run_all())
