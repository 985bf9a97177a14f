"""Rating benchmarks: the pure fold, the live service, and ``ratings recompute`` of
1,000,000 generated rated hands on Kafka + PostgreSQL (200,000 on the embedded log + SQLite).

The hands are generated (50,000 players drawn uniformly, four per hand, points in −20..20,
1 in 200 flagged casual so the ignore path is on the clock too), encoded as the
``rating.results`` records the table service writes, and appended to a fresh topic. Then:

- *fold*: ``Fold.apply_record`` over the encoded records in memory (decode, checks, the
  formula, the history rows): the floor of any recompute;
- *live*: the rating service catches up on the whole topic from offset 0, one store
  transaction per 2,000 records: the live path's throughput;
- *recompute*: ``mahjong-planet ratings recompute``'s work — read the topic from offset 0
  through the log port, fold it, bulk-write fresh tables, compare every row with the live
  tables — timed end to end, with its three parts.

The embedded run is smaller because its *live* part, the setup of the comparison, slows
down as SQLite's history B-tree outgrows the cache: one transaction per 2,000 results
dirties ~8,000 scattered pages (the live service's real load is a few results a second).

The broker and the database are those of ``KAFKA_BOOTSTRAP_SERVERS`` / ``MAHJONG_POSTGRES_DSN``
(or ``MAHJONG_PG_DSN``) or, failing that, ``deploy/``'s scripts. ``MAHJONG_BENCH_RATING_HANDS``
and ``MAHJONG_BENCH_RATING_EMBEDDED_HANDS`` change the sizes.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import random
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schemas.rating import RatedHandResult, encode_result
from services.rating.embedded import EmbeddedRatingStore
from services.rating.formula import Fold
from services.rating.service import RatingService, recompute
from services.rating.store import RatingStore, postgres_dsn
from services.runtime.log import EventLog, Outgoing, TopicSpec

ROOT = Path(__file__).resolve().parents[2]
HANDS = int(os.environ.get("MAHJONG_BENCH_RATING_HANDS", "1000000"))
EMBEDDED_HANDS = int(os.environ.get("MAHJONG_BENCH_RATING_EMBEDDED_HANDS", "200000"))
PLAYERS = 50_000
CASUAL_EVERY = 200
PRODUCE_CHUNK = 20_000

Figures = dict[str, Any]

NOTES = [
    "1,000,000 generated rated hands (50,000 players, four drawn per hand, 1 in 200 flagged "
    "casual) as `rating.results` records. *fold* is `Fold.apply_record` over the encoded "
    "records in memory: decoding, the §9 checks, the formula and the history rows.",
    "*kafka_postgres*: the topic on the local single-node broker, the store in the local "
    "PostgreSQL (`deploy/`, fsync off). *recompute* is all of `ratings recompute`'s work, "
    "timed end to end: read the topic from offset 0 through the log port (`KafkaLog.read`), "
    "fold it in memory, COPY the fresh tables (3.98 M history rows), compare every row of "
    "all four tables with the live ones in SQL (floats by their IEEE bytes, `float8send`). "
    "*read_fold* / *write* / *compare* are its parts.",
    "*live* is the rating service catching up on the whole topic from offset 0, one "
    "PostgreSQL transaction per 2,000 results (the comparison's setup; its real load is a "
    "few results a second). *produce* is the bench writing the topic, not timed elsewhere.",
    "*embedded*: the same on the embedded log and the SQLite store with 200,000 hands: "
    "its live part slows down as the history B-tree outgrows SQLite's cache (each "
    "transaction dirties thousands of scattered pages), so 1,000,000 would take many "
    "minutes of setup. The embedded recompute of 1,000,000 is not measured here.",
    "Measured on the 2-core machine while other work shared it; the broker and PostgreSQL "
    "run on the same two cores as the bench.",
]


def sample_results(
    hands: int, players: int = PLAYERS, seed: int = 9, casual_every: int = CASUAL_EVERY
) -> list[bytes]:
    """``hands`` encoded results, deterministic in ``seed``; every ``casual_every``-th is
    casual (0: none)."""
    rng = random.Random(seed)
    names = [f"player-{i:06d}" for i in range(players)]
    out = []
    for n in range(hands):
        table = f"table-{n % 5000:04d}"
        out.append(
            encode_result(
                RatedHandResult(
                    table_id=table,
                    hand_id=f"{table}#{n // 5000 + 1}",
                    players=[names[i] for i in rng.sample(range(players), 4)],
                    points=[rng.randint(-20, 20) for _ in range(4)],
                    rated=not (casual_every and n % casual_every == casual_every - 1),
                    clock="standard",
                )
            )
        )
    return out


def _timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def bench_fold(records: list[bytes]) -> Figures:
    fold = Fold()

    def run() -> None:
        gc.disable()
        try:
            for seq, raw in enumerate(records):
                fold.apply_record(seq, raw)
        finally:
            gc.enable()

    seconds = _timed(run)
    return {
        "fold_hands_per_s": round(len(records) / seconds),
        "fold_s": round(seconds, 2),
        "fold_history_rows": len(fold.history),
    }


async def _fill(log: EventLog, topic: str, records: list[bytes]) -> float:
    began = time.perf_counter()
    for i in range(0, len(records), PRODUCE_CHUNK):
        await log.produce([Outgoing(topic, "r", raw, 0) for raw in records[i : i + PRODUCE_CHUNK]])
    return time.perf_counter() - began


async def bench_path(
    log: EventLog, store: RatingStore, topic: str, records: list[bytes]
) -> Figures:
    """Fill ``topic``, run the live service over it, then recompute and compare."""
    await log.create_topics([TopicSpec(topic, 1)])
    produce_s = await _fill(log, topic, records)
    service = RatingService(log, store, topic=topic)
    began = time.perf_counter()
    await service.catch_up()
    live_s = time.perf_counter() - began
    assert service.position == len(records), (service.position, len(records))
    began = time.perf_counter()
    report = await recompute(log, store, topic)
    total_s = time.perf_counter() - began
    print(report.summary())
    return {
        "recompute_s": round(total_s, 2),
        "recompute_read_fold_s": round(report.folded.seconds, 2),
        "recompute_write_s": round(report.write_s, 2),
        "recompute_compare_s": round(report.compare_s, 2),
        "recompute_result": "identical" if report.ok else "DIFFERENT",
        "recompute_hands_per_s": round(len(records) / total_s),
        "live_hands_per_s": round(len(records) / live_s),
        "produce_records_per_s": round(len(records) / produce_s),
    }


def _server(script: str, env: str | None) -> str:
    if env:
        return env
    up = subprocess.run(
        ["bash", str(ROOT / script), "up"], capture_output=True, text=True, check=True
    )
    return up.stdout.strip().splitlines()[-1]


async def _kafka_postgres(records: list[bytes]) -> Figures:
    import asyncpg
    from aiokafka.admin import AIOKafkaAdminClient

    from services.rating.postgres import PostgresRatingStore
    from services.runtime.kafka import KafkaLog

    bootstrap = _server("deploy/kafka/kafka.sh", os.environ.get("KAFKA_BOOTSTRAP_SERVERS"))
    dsn = _server("deploy/postgres/postgres.sh", postgres_dsn(None))
    schema = "rating_bench"
    topic = f"rating.results.bench-{uuid.uuid4().hex[:8]}"

    async def drop() -> None:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema}_recompute CASCADE")
        finally:
            await conn.close()

    await drop()
    log = KafkaLog(bootstrap)
    await log.start()
    store = PostgresRatingStore(dsn, schema)
    await store.start()
    try:
        return await bench_path(log, store, topic, records)
    finally:
        await store.close()
        await log.close()
        await drop()
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            with contextlib.suppress(Exception):
                await admin.delete_topics([topic])
        finally:
            await admin.close()


async def _embedded(records: list[bytes]) -> Figures:
    from services.runtime.embedded import EmbeddedLog

    directory = Path(tempfile.mkdtemp(prefix="rating-bench-"))
    log = EmbeddedLog(directory)
    await log.start()
    store = EmbeddedRatingStore(directory)
    await store.start()
    try:
        return await bench_path(log, store, "rating.results", records)
    finally:
        await store.close()
        await log.close()
        shutil.rmtree(directory, ignore_errors=True)


def flat(prefix: str, figures: Figures) -> Figures:
    return {f"{prefix}.{k}": v for k, v in figures.items()}


def run_all() -> Figures:
    records = sample_results(HANDS)
    figures: Figures = {"hands": HANDS, "players": PLAYERS, **bench_fold(records)}
    figures.update(flat("kafka_postgres", asyncio.run(_kafka_postgres(records))))
    figures["embedded.hands"] = min(EMBEDDED_HANDS, HANDS)
    figures.update(flat("embedded", asyncio.run(_embedded(records[:EMBEDDED_HANDS]))))
    return figures


if __name__ == "__main__":
    for name, value in run_all().items():
        print(f"{name:<45} {value}")
