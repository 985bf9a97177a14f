"""Poison records on ``rating.results``, on a real Kafka broker and a real PostgreSQL
database (issue 17, defect 2).

A well-formed ``rated_hand_result`` with points beyond int32, or a player id holding NUL,
used to fail every batch and be retried once a second for ever: the real results behind it
were never applied, ``/readyz`` stayed 200, and ``ratings recompute`` said IDENTICAL. Now
such a record is refused at decoding and goes to ``rating.results.dlq`` with its reason; a
record the store itself refuses is found by applying its batch one record at a time and
goes there too; the position moves past both. A service that still cannot advance answers
``/readyz`` 503 with the reason, and recompute fails while the live position is behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Iterator

import asyncpg
import msgspec
import pytest

from schemas.rating import RatedHandResult, encode_result
from schemas.table import DeadLetter
from services.cli import main
from services.rating.postgres import PostgresRatingStore
from services.rating.service import RatingService, recompute
from services.runtime.kafka import KafkaLog
from services.runtime.log import EventLog, Outgoing, TopicSpec
from services.runtime.ops import observed
from tests.cluster_support import free_ports
from tests.service.rating_results import expected, fold_of, produce, sample, standings

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]


@pytest.fixture
def names(postgres_dsn: str) -> Iterator[tuple[str, str]]:
    """A fresh topic and PostgreSQL schema for one test (dropped after it)."""
    tag = uuid.uuid4().hex[:8]
    schema = f"rating_poison_{tag}"
    yield f"rating.results.poison-{tag}", schema

    async def drop() -> None:
        conn = await asyncpg.connect(postgres_dsn)
        try:
            for name in (schema, f"{schema}_recompute"):
                await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        finally:
            await conn.close()

    asyncio.run(drop())


@contextlib.asynccontextmanager
async def opened(
    bootstrap: str, dsn: str, topic: str, schema: str
) -> AsyncIterator[tuple[KafkaLog, PostgresRatingStore]]:
    log = KafkaLog(bootstrap)
    await log.start()
    await log.create_topics([TopicSpec(topic, 1), TopicSpec(f"{topic}.dlq", 1)])
    store = PostgresRatingStore(dsn, schema)
    await store.start()
    try:
        yield log, store
    finally:
        await store.close()
        await log.close()


def _raw(result: RatedHandResult, **changes: object) -> bytes:
    """A result's JSON with some fields replaced, bounds or not."""
    data = json.loads(encode_result(result))
    data.update(changes)
    return json.dumps(data).encode()


async def _letters(log: EventLog, topic: str) -> list[DeadLetter]:
    end = await log.end_offset(f"{topic}.dlq", 0)
    records = await log.read(f"{topic}.dlq", 0, 0, 1000) if end else []
    return [msgspec.json.decode(r.value, type=DeadLetter) for r in records]


async def _running_until(service: RatingService, end: int, timeout_s: float = 60) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    try:
        async with asyncio.timeout(timeout_s):
            while service.position < end:
                if task.done():
                    task.result()
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await task


def test_poison_results_go_to_the_dead_letter_topic_and_the_results_behind_them_apply(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    real = sample(12, seed=31, players=8)
    beyond_int32 = _raw(real[0], hand_id="poison#1", points=[2**40, -(2**40), 0, 0])
    nul_player = _raw(real[0], hand_id="poison#2", players=["a\u0000b", "c", "d", "e"])

    async def go() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            await produce(log, real[:3], topic)
            await log.produce([Outgoing(topic, "t", beyond_int32, 0)])
            await produce(log, real[3:7], topic)
            await log.produce([Outgoing(topic, "t", nul_player, 0)])
            await produce(log, real[7:], topic)
            service = RatingService(log, store, topic=topic, max_batch=5)
            await _running_until(service, 14)
            fold = fold_of(real)
            assert await standings(store, fold) == expected(fold)
            position = await store.position(topic)
            assert (position.next_offset, position.applied, position.ignored) == (14, 12, 2)
            letters = await _letters(log, topic)
            assert [(x.source_topic, x.source_offset) for x in letters] == [(topic, 3), (topic, 8)]
            assert "points" in letters[0].reason and "<= 1000000" in letters[0].reason
            assert "players" in letters[1].reason and "regex" in letters[1].reason
            assert letters[1].raw == nul_player.decode()
            report = await recompute(log, store, topic, catch_up_s=0)
            assert report.ok, report.summary()

    asyncio.run(go())


def test_a_result_the_store_refuses_is_found_alone_and_set_aside(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    results = sample(9, seed=32, players=8)
    refused = msgspec.structs.replace(results[4], hand_id="refused-by-the-store")

    async def go() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            # A bound of the store's that the schema does not know: a poison record that
            # decodes, the kind the decoder's bounds exist to make rare.
            await store.pool.execute(
                f'ALTER TABLE "{schema}".hands ADD CONSTRAINT refuse '
                "CHECK (hand_id <> 'refused-by-the-store')"
            )
            await produce(log, [*results[:4], refused, *results[5:]], topic)
            service = RatingService(log, store, topic=topic, retry_s=0.05)
            await _running_until(service, 9)
            kept = [*results[:4], *results[5:]]
            fold = fold_of(kept)
            assert await standings(store, fold) == expected(fold)
            position = await store.position(topic)
            assert (position.applied, position.ignored) == (8, 1)
            letters = await _letters(log, topic)
            assert [x.source_offset for x in letters] == [4]
            assert "refused" in letters[0].reason and "refuse" in letters[0].reason
            report = await recompute(log, store, topic, catch_up_s=0)
            assert report.ok, report.summary()

    asyncio.run(go())


async def _get(port: int, path: str) -> tuple[int, dict[str, object]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_a_rating_service_that_cannot_advance_is_not_ready_and_says_why(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    results = sample(6, seed=33)

    async def go() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            service = RatingService(log, store, topic=topic, stall_after_s=1.0)
            (port,) = free_ports(1)
            stop = asyncio.Event()
            async with observed("rating", service, metrics_port=port, every_s=0.2):
                task = asyncio.create_task(service.run(stop))
                await asyncio.wait_for(service.ready.wait(), 30)
                await asyncio.sleep(1.5)  # idle, nothing waits: ready
                assert (await _get(port, "/readyz"))[0] == 200
                # Another writer holds the position's row: every batch waits behind it.
                blocker = await asyncpg.connect(postgres_dsn)
                holding = blocker.transaction()
                await holding.start()
                await blocker.execute(
                    f'SELECT * FROM "{schema}".positions WHERE topic = $1 FOR UPDATE', topic
                )
                await produce(log, results, topic)
                await asyncio.sleep(2.0)
                status, body = await _get(port, "/readyz")
                _, metrics = await _get_text(port)
                await holding.rollback()
                await blocker.close()
                async with asyncio.timeout(30):
                    while service.position < 6:
                        await asyncio.sleep(0.05)
                await asyncio.sleep(0.3)
                after, _ = await _get(port, "/readyz")
                stop.set()
                await task
        assert status == 503, body
        assert body["ready"] is False and topic in str(body["reason"])
        assert "no progress past offset 0" in str(body["reason"])
        stalled = [
            line for line in metrics.splitlines() if line.startswith("mahjong_consumer_stalled")
        ]
        assert any(topic in line and float(line.split()[-1]) >= 1.0 for line in stalled)
        assert after == 200

    asyncio.run(go())


async def _get_text(port: int) -> tuple[int, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode()


def test_recompute_fails_while_the_live_position_is_behind_the_log(
    kafka_bootstrap: str,
    postgres_dsn: str,
    names: tuple[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic, schema = names
    results = sample(10, seed=34)

    async def go() -> None:
        async with opened(kafka_bootstrap, postgres_dsn, topic, schema) as (log, store):
            await produce(log, results[:6], topic)
            await RatingService(log, store, topic=topic).catch_up()
            await produce(log, results[6:], topic)  # the service is not running: they wait

    asyncio.run(go())
    args = ["--kafka", kafka_bootstrap, "--postgres", postgres_dsn, "--pg-schema", schema]
    code = main(["ratings", "recompute", *args, "--topic", topic, "--catch-up-s", "0.5"])
    out = capsys.readouterr()
    assert code == 1, out.out
    assert "BEHIND" in out.out and "records from offset 6" in out.out
    assert "is behind the log" in out.err


def test_a_database_that_goes_away_is_waited_for_not_taken_for_poison(
    kafka_bootstrap: str, postgres_dsn: str, names: tuple[str, str]
) -> None:
    topic, schema = names
    results = sample(60, seed=35, players=12)
    app = f"rating-poison-{uuid.uuid4().hex[:8]}"
    dsn = f"{postgres_dsn}{'&' if '?' in postgres_dsn else '?'}application_name={app}"

    async def go() -> None:
        async with opened(kafka_bootstrap, dsn, topic, schema) as (log, store):
            await produce(log, results, topic)
            service = RatingService(log, store, topic=topic, max_batch=10, retry_s=0.05)
            stop = asyncio.Event()
            task = asyncio.create_task(service.run(stop))
            killer = await asyncpg.connect(postgres_dsn)
            kills = 0
            try:
                async with asyncio.timeout(90):
                    for _ in range(6):  # every connection of its pool ends, mid-batch or not
                        await asyncio.sleep(0.3)
                        kills += await killer.fetchval(
                            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            "WHERE application_name = $1",
                            app,
                        )
                    while service.position < 60:
                        await asyncio.sleep(0.05)
            finally:
                await killer.close()
                stop.set()
                await task
            fold = fold_of(results)
            # Read through a fresh pool: a connection the kills cut mid-query may still be
            # settling in the service's pool.
            await store.close()
            await store.start()
            assert await standings(store, fold) == expected(fold)
            assert await _letters(log, topic) == []
            assert kills > 0 and service.dead_letters == 0

    asyncio.run(go())
