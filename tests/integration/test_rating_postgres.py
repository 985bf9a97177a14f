"""The rating service on a real Kafka broker and a real PostgreSQL database: migrations,
exactly-once application through redelivery, failures, kill -9 and restarts, two services
at once, results written inside Kafka transactions, and recompute equal to live."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaProducer

from schemas.rating import RatedHandResult, encode_result
from services.cli import main
from services.rating.postgres import PostgresRatingStore
from services.rating.read import leaderboard, profile
from services.rating.service import RatingService, recompute
from services.rating.store import Batch
from services.runtime.kafka import KafkaLog
from services.runtime.log import TopicSpec
from tests.service.rating_results import (
    board_sample,
    check_board,
    expected,
    fold_of,
    produce,
    run_until,
    sample,
    standings,
)

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]
ROOT = Path(__file__).resolve().parents[2]
HANDS = 12_000  # the kill -9 test: six batches of the service's 2,000


@pytest.fixture
def names() -> Iterator[tuple[str, str]]:
    """A fresh topic and PostgreSQL schema for one test."""
    tag = uuid.uuid4().hex[:8]
    yield f"rating.results.test-{tag}", f"rating_test_{tag}"


@pytest.fixture(autouse=True)
def _drop_schema(postgres_dsn: str, names: tuple[str, str]) -> Iterator[None]:
    yield

    async def drop() -> None:
        conn = await asyncpg.connect(postgres_dsn)
        try:
            for schema in (names[1], f"{names[1]}_recompute"):
                await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()

    asyncio.run(drop())


@contextlib.asynccontextmanager
async def opened(
    bootstrap: str, dsn: str, topic: str, schema: str
) -> AsyncIterator[tuple[KafkaLog, PostgresRatingStore]]:
    log = KafkaLog(bootstrap)
    await log.start()
    await log.create_topics([TopicSpec(topic, 1)])
    store = PostgresRatingStore(dsn, schema)
    await store.start()
    try:
        yield log, store
    finally:
        await store.close()
        await log.close()


async def _rows(dsn: str, schema: str) -> dict[str, list[tuple[object, ...]]]:
    conn = await asyncpg.connect(dsn)
    try:
        return {
            t: [
                tuple(r) for r in await conn.fetch(f'SELECT * FROM "{schema}".{t} ORDER BY 1, 2, 3')
            ]
            for t in ("ratings", "history", "hands")
        }
    finally:
        await conn.close()


def test_migrations_apply_once_even_when_started_together(
    postgres_dsn: str, names: tuple[str, str]
) -> None:
    _, schema = names

    async def go() -> None:
        stores = [PostgresRatingStore(postgres_dsn, schema) for _ in range(3)]
        await asyncio.gather(*(s.start() for s in stores))
        try:
            assert await stores[0].migrate() == []
            conn = await asyncpg.connect(postgres_dsn)
            try:
                versions = await conn.fetch(
                    f'SELECT version FROM "{schema}".schema_migrations ORDER BY version'
                )
                columns = {
                    r["column_name"]: r["data_type"]
                    for r in await conn.fetch(
                        "SELECT column_name, data_type FROM information_schema.columns "
                        "WHERE table_schema = $1 AND table_name = 'ratings'",
                        schema,
                    )
                }
            finally:
                await conn.close()
            assert [r["version"] for r in versions] == [1, 2]
            assert columns["rating"] == "double precision"
            assert columns["provisional"] == "boolean"
        finally:
            for s in stores:
                await s.close()

    asyncio.run(go())


def test_leaderboard_on_postgres_lists_established_then_provisional_and_ranks_each(
    postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    results = board_sample()

    async def go() -> None:
        store = PostgresRatingStore(postgres_dsn, schema)
        await store.start()
        try:
            records = [(seq, encode_result(r)) for seq, r in enumerate(results)]
            assert await store.apply(topic, 0, len(records), Batch.decode(records)) is not None
            await check_board(store, fold_of(results))
        finally:
            await store.close()

    asyncio.run(go())


def test_results_apply_once_in_log_order_and_recompute_equals_live(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    results = sample(300, seed=11, players=16, unrated_every=8)

    async def go() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            service = RatingService(log, store, topic=topic, max_batch=64)
            stop = asyncio.Event()
            task = asyncio.create_task(service.run(stop))
            await asyncio.wait_for(service.ready.wait(), 30)
            for i in range(0, 300, 50):
                await produce(log, results[i : i + 50], topic)
            async with asyncio.timeout(120):
                while service.position < 300:
                    await asyncio.sleep(0.05)
            stop.set()
            await task
            fold = fold_of(results)
            ignored = sum(fold.reasons.values())
            assert set(fold.reasons) == {"casual", "computer_seats", "untimed", "practice"}
            assert await standings(store, fold) == expected(fold)
            position = await store.position(topic)
            assert (position.applied, position.ignored) == (300 - ignored, ignored)
            report = await recompute(log, store, topic)
            assert report.ok, report.summary()
            assert report.rows["history"] == (4 * (300 - ignored),) * 2
            assert report.rows["ratings"] == (16, 16)
            # The read side on PostgreSQL.
            player = fold.rating_rows()[0][1]
            found = await profile(store, player, history=5)
            assert found.rating == expected(fold)[player][0] and len(found.history) == 5
            assert [h.seq for h in found.history] == sorted(
                (h.seq for h in found.history), reverse=True
            )
            board = await leaderboard(store, limit=5)
            assert [r.rank for r in board] == [1, 2, 3, 4, 5]
            assert [r.standing.rating for r in board] == sorted(
                (row[2] for row in fold.rating_rows() if not row[4]), reverse=True
            )[:5]

    asyncio.run(go())
    # The command line agrees, then notices one changed bit.
    args = ["--kafka", kafka_bootstrap, "--postgres", postgres_dsn, "--pg-schema", schema]
    assert main(["ratings", "recompute", *args, "--topic", topic]) == 0

    async def tamper() -> None:
        conn = await asyncpg.connect(postgres_dsn)
        try:
            await conn.execute(
                f'UPDATE "{schema}".history SET delta = delta * (1 + 1e-15) '
                "WHERE seq = (SELECT min(seq) FROM " + f'"{schema}".history)'
            )
        finally:
            await conn.close()

    asyncio.run(tamper())
    assert main(["ratings", "recompute", *args, "--topic", topic]) == 1


def test_redelivery_is_idempotent(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    results = sample(80, seed=12)

    async def go() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            await produce(log, results, topic)
            service = RatingService(log, store, topic=topic)
            await service.catch_up()
            before = await _rows(postgres_dsn, schema)
            assert len(before["history"]) == 320
            # The same hands published again, later in the log.
            await produce(log, results[20:50], topic)
            await service.catch_up()
            assert await _rows(postgres_dsn, schema) == before
            position = await store.position(topic)
            assert (position.next_offset, position.applied, position.ignored) == (110, 80, 30)
            # The same records delivered again at their own offsets: refused by position.
            records = await log.read(topic, 0, 0, 40)
            batch = Batch.decode([(r.offset, r.value) for r in records])
            assert await store.apply(topic, 0, 40, batch) is None
            assert await _rows(postgres_dsn, schema) == before
            assert (await recompute(log, store, topic)).ok

    asyncio.run(go())


def test_restart_resumes_without_double_applying(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    results = sample(200, seed=13)

    async def go() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            await produce(log, results[:90], topic)
            await run_until(RatingService(log, store, topic=topic, max_batch=25), 90)
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            await produce(log, results[90:], topic)
            service = RatingService(log, store, topic=topic, max_batch=25)
            await run_until(service, 200)
            assert service.applied == 110
            fold = fold_of(results)
            assert await standings(store, fold) == expected(fold)
            assert len((await _rows(postgres_dsn, schema))["history"]) == 800
            assert (await recompute(log, store, topic)).ok

    asyncio.run(go())


def test_two_services_at_once_apply_each_result_once(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    results = sample(400, seed=14, players=20)

    async def go() -> None:
        async with (
            opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log_a, store_a),
            opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log_b, store_b),
        ):
            a = RatingService(log_a, store_a, topic=topic, max_batch=7)
            b = RatingService(log_b, store_b, topic=topic, max_batch=11)
            stop = asyncio.Event()
            tasks = [asyncio.create_task(s.run(stop)) for s in (a, b)]
            for i in range(0, 400, 40):
                await produce(log_a, results[i : i + 40], topic)
            async with asyncio.timeout(120):
                while min(a.position, b.position) < 400:
                    await asyncio.sleep(0.05)
            stop.set()
            await asyncio.gather(*tasks)
            assert a.applied + b.applied == 400
            fold = fold_of(results)
            assert await standings(store_a, fold) == expected(fold)
            assert (await recompute(log_a, store_a, topic)).ok

    asyncio.run(go())


def test_results_written_in_kafka_transactions(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    """As the table service will write them: inside transactions, so offsets skip commit
    markers; an aborted transaction's results are never read."""
    topic, schema = names
    results = sample(60, seed=15)
    aborted = sample(5, seed=99, prefix="ghost-")

    async def go() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            producer = AIOKafkaProducer(
                bootstrap_servers=kafka_bootstrap, transactional_id=f"test-{topic}"
            )
            await producer.start()
            try:
                for i in range(0, 60, 6):
                    if i == 30:
                        await _transaction(producer, topic, aborted, commit=False)
                    await _transaction(producer, topic, results[i : i + 6], commit=True)
            finally:
                await producer.stop()
            end = await log.end_offset(topic, 0)
            assert end > 60  # markers and the aborted records take offsets too
            service = RatingService(log, store, topic=topic, max_batch=16)
            await service.catch_up()
            fold = fold_of(results)
            assert await standings(store, fold) == expected(fold)
            assert await store.rating("ghost-p0") is None
            position = await store.position(topic)
            assert (position.applied, position.ignored) == (60, 0)
            report = await recompute(log, store, topic)
            assert report.ok, report.summary()
            assert report.folded.records == 60

    asyncio.run(go())


async def _transaction(
    producer: AIOKafkaProducer, topic: str, results: list[RatedHandResult], commit: bool
) -> None:
    await producer.begin_transaction()
    for r in results:
        await producer.send(topic, encode_result(r), key=r.table_id.encode(), partition=0)
    if commit:
        await producer.commit_transaction()
    else:
        await producer.abort_transaction()


def test_kill_9_and_restart_apply_every_result_once(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    results = sample(HANDS, seed=16, players=40)
    command = [
        sys.executable,
        "-m",
        "services.cli",
        "rating",
        "--kafka",
        kafka_bootstrap,
        "--postgres",
        postgres_dsn,
        "--pg-schema",
        schema,
        "--topic",
        topic,
    ]

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    async def position() -> int:
        conn = await asyncpg.connect(postgres_dsn)
        try:
            with contextlib.suppress(asyncpg.UndefinedTableError):
                value = await conn.fetchval(
                    f'SELECT next_offset FROM "{schema}".positions WHERE topic = $1', topic
                )
                return int(value or 0)
            return 0
        finally:
            await conn.close()

    async def fill() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, _):
            for i in range(0, HANDS, 2000):
                await produce(log, results[i : i + 2000], topic)

    asyncio.run(fill())
    kills = 0
    for _ in range(3):
        proc = start()
        try:
            deadline = time.monotonic() + 60
            begin = asyncio.run(position())
            while time.monotonic() < deadline and asyncio.run(position()) <= begin:
                time.sleep(0.05)
            if asyncio.run(position()) >= HANDS:
                break
            proc.send_signal(signal.SIGKILL)  # mid-stream, possibly mid-transaction
            kills += 1
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)
    assert kills >= 1
    proc = start()
    try:
        deadline = time.monotonic() + 120
        while asyncio.run(position()) < HANDS:
            assert time.monotonic() < deadline, "the restarted service did not catch up"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()

    async def check() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            fold = fold_of(results)
            assert await standings(store, fold) == expected(fold)
            assert len((await _rows(postgres_dsn, schema))["history"]) == 4 * HANDS
            assert (await recompute(log, store, topic)).ok

    asyncio.run(check())
