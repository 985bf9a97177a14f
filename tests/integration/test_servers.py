"""Smoke tests of the real servers the integration fixtures provide."""

from __future__ import annotations

import asyncio
import time
import uuid
from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.integration


class _Abort(Exception):
    pass


async def _read_to_end(bootstrap: str, topic: str, isolation_level: str) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        isolation_level=isolation_level,
    )
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        values: list[bytes] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=300)
            for records in batch.values():
                values.extend(r.value for r in records if r.value is not None)
            # For read_committed, end_offsets is the last stable offset.
            if not batch and await consumer.position(tp) >= (await consumer.end_offsets([tp]))[tp]:
                break
        return values
    finally:
        await consumer.stop()


async def _kafka_round_trip(bootstrap: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    suffix = uuid.uuid4().hex[:10]
    commands, events, group = f"it-commands-{suffix}", f"it-events-{suffix}", f"it-{suffix}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(t, num_partitions=1, replication_factor=1) for t in (commands, events)]
        )
    finally:
        await admin.close()

    plain = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await plain.start()
    try:
        for i in range(3):
            await plain.send_and_wait(commands, f"cmd-{i}".encode())
    finally:
        await plain.stop()

    consumer = AIOKafkaConsumer(
        commands,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"it-{suffix}-0")
    await consumer.start()
    await producer.start()
    try:
        # consume -> produce + offsets, atomically, until all three commands are handled
        handled = 0
        deadline = time.monotonic() + 30
        while handled < 3:
            assert time.monotonic() < deadline, f"consumed only {handled}/3 commands"
            batch = await consumer.getmany(timeout_ms=500)
            if not batch:
                continue
            async with producer.transaction():
                offsets = {}
                for tp, records in batch.items():
                    for r in records:
                        await producer.send(events, b"ev-" + r.value)
                    offsets[tp] = records[-1].offset + 1
                    handled += len(records)
                await producer.send_offsets_to_transaction(offsets, group)

        # an aborted transaction: its record must never be visible to read_committed readers
        with pytest.raises(_Abort):
            async with producer.transaction():
                await producer.send(events, b"aborted")
                raise _Abort

        async with producer.transaction():
            await producer.send(events, b"after-abort")

        committed_offset = await consumer.committed(TopicPartition(commands, 0))
    finally:
        await producer.stop()
        await consumer.stop()

    assert committed_offset == 3
    assert await _read_to_end(bootstrap, events, "read_committed") == [
        b"ev-cmd-0",
        b"ev-cmd-1",
        b"ev-cmd-2",
        b"after-abort",
    ]
    # The aborted record was written to the log, only hidden from read_committed.
    assert b"aborted" in await _read_to_end(bootstrap, events, "read_uncommitted")


def test_kafka_transactions_read_committed(kafka_bootstrap: str) -> None:
    asyncio.run(_kafka_round_trip(kafka_bootstrap))


async def _a_read_leaves_nothing_fetching(bootstrap: str) -> None:
    from services.runtime.kafka import KafkaLog
    from services.runtime.log import Outgoing, TopicSpec

    topic = f"it.read.{uuid.uuid4().hex[:8]}"
    log = KafkaLog(bootstrap, client_id="it-read")
    await log.start()
    try:
        await log.create_topics([TopicSpec(topic, 2)])
        await log.produce([Outgoing(topic, "k", b"one", 0), Outgoing(topic, "k", b"two", 0)])
        assert [r.value for r in await log.read(topic, 0, 0, 10)] == [b"one", b"two"]
        assert [r.value for r in await log.read(topic, 0, 1, 10)] == [b"two"]
        assert await log.read(topic, 1, 0, 10) == []
        # Nothing is fetched in the background: what stays assigned to the reader is paused
        # (an idle partition fetched is polled every 5 ms, at a fifth of a broker core).
        assert log._reader is not None
        assert log._reader.assignment() - log._reader.paused() == set()
    finally:
        await log.close()


def test_a_random_access_read_leaves_no_partition_fetched_behind_it(kafka_bootstrap: str) -> None:
    asyncio.run(_a_read_leaves_nothing_fetching(kafka_bootstrap))


async def _postgres_round_trip(dsn: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        table = f"it_{uuid.uuid4().hex[:10]}"
        await conn.execute(f"CREATE TEMP TABLE {table} (id bigint PRIMARY KEY, payload jsonb)")
        async with conn.transaction():
            await conn.executemany(
                f"INSERT INTO {table} (id, payload) VALUES ($1, $2::jsonb)",
                [(1, '{"tile": "1m"}'), (2, '{"tile": "9p"}')],
            )
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute(f"INSERT INTO {table} (id, payload) VALUES (1, 'null')")
        rows = await conn.fetch(f"SELECT id, payload->>'tile' AS tile FROM {table} ORDER BY id")
        assert [(r["id"], r["tile"]) for r in rows] == [(1, "1m"), (2, "9p")]
        assert await conn.fetchval("SELECT current_database()") == urlsplit(dsn).path.lstrip("/")
    finally:
        await conn.close()


def test_postgres_round_trip(postgres_dsn: str) -> None:
    asyncio.run(_postgres_round_trip(postgres_dsn))
