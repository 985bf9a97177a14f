"""End-to-end check that aiokafka's transactional producer works against the pinned broker.

    .venv/bin/python deploy/kafka/verify_transactions.py [--bootstrap HOST:PORT] [--commits 50]

What it does, on fresh uniquely named topics:
  1. prints the transactional request versions the broker accepts (aiokafka only speaks v0);
  2. consume-transform-produce: a consumer group reads an input topic with
     enable_auto_commit=False; each getmany() batch is answered in ONE transaction that sends
     the outputs and send_offsets_to_transaction({tp: offset + 1}, group_id);
  3. an aborted transaction whose messages must stay invisible;
  4. a read_committed consumer sees exactly the committed outputs, a read_uncommitted one
     also sees the aborted ones (so they really were written), and the group's committed
     offset is the end of the input;
  5. a second producer with the same transactional_id fences the first (zombie fencing);
  6. commit latency: N small transactions (one record + the offsets each), p50/p90/max.

Exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import ProducerFenced

sys.path.insert(0, str(Path(__file__).resolve().parent))
import probe


async def create_topics(bootstrap: str, *names: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(n, num_partitions=1, replication_factor=1) for n in names]
        )
    finally:
        await admin.close()


async def read_all(bootstrap: str, topic: str, isolation: str) -> list[bytes]:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        isolation_level=isolation,
    )
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        values: list[bytes] = []
        deadline = time.monotonic() + 15
        # For read_committed the end offset is the last stable offset.
        while time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=500)
            for records in batch.values():
                values.extend(r.value for r in records if r.value is not None)
            end = (await consumer.end_offsets([tp]))[tp]
            if await consumer.position(tp) >= end and not batch:
                break
        return values
    finally:
        await consumer.stop()


async def run(bootstrap: str, commits: int, retry_backoff_ms: int) -> None:
    # The fenced producer's internal futures end in ProducerFenced nobody awaits: expected.
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(
        lambda lp, ctx: (
            None
            if isinstance(ctx.get("exception"), ProducerFenced)
            else lp.default_exception_handler(ctx)
        )
    )
    suffix = uuid.uuid4().hex[:8]
    src, dst, lat = f"verify-in-{suffix}", f"verify-out-{suffix}", f"verify-lat-{suffix}"
    group = f"verify-group-{suffix}"
    n_inputs = 20
    await create_topics(bootstrap, src, dst, lat)

    plain = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await plain.start()
    try:
        for i in range(n_inputs):
            await plain.send_and_wait(src, f"cmd-{i}".encode())
    finally:
        await plain.stop()

    consumer = AIOKafkaConsumer(
        src,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        transactional_id=f"verify-table-0-{suffix}",
        linger_ms=0,
        retry_backoff_ms=retry_backoff_ms,
    )
    await consumer.start()
    await producer.start()
    try:
        # 2. consume-transform-produce, one transaction per poll
        seen = 0
        transactions = 0
        deadline = time.monotonic() + 30
        while seen < n_inputs:
            if time.monotonic() > deadline:
                raise AssertionError(f"only consumed {seen}/{n_inputs} inputs")
            batch = await consumer.getmany(timeout_ms=1000, max_records=7)
            if not batch:
                continue
            async with producer.transaction():
                offsets = {}
                for tp, records in batch.items():
                    for r in records:
                        await producer.send(dst, b"out-" + r.value)
                    offsets[tp] = records[-1].offset + 1
                    seen += len(records)
                await producer.send_offsets_to_transaction(offsets, group)
            transactions += 1
        print(f"consume-transform-produce: {seen} inputs in {transactions} transactions")

        # 3. an aborted transaction
        try:
            async with producer.transaction():
                for i in range(3):
                    await producer.send(dst, f"aborted-{i}".encode())
                raise _Abort
        except _Abort:
            pass
        print("aborted one transaction of 3 messages")

        # 4. what a read_committed reader sees, and the group's committed offset
        tp_in = TopicPartition(src, 0)
        committed = await consumer.committed(tp_in)
    finally:
        await consumer.stop()

    committed_out = await read_all(bootstrap, dst, "read_committed")
    uncommitted_out = await read_all(bootstrap, dst, "read_uncommitted")
    expected = [f"out-cmd-{i}".encode() for i in range(n_inputs)]
    assert committed_out == expected, f"read_committed saw {committed_out!r}"
    aborted = [v for v in uncommitted_out if v.startswith(b"aborted-")]
    assert len(aborted) == 3, f"read_uncommitted saw {uncommitted_out!r}"
    assert committed == n_inputs, f"group committed offset {committed}, expected {n_inputs}"
    print(
        f"read_committed sees the {len(committed_out)} committed outputs and none of the aborted; "
        f"read_uncommitted also sees the {len(aborted)} aborted; group offset = {committed}"
    )

    try:
        # 6. commit latency (before fencing, on the same producer)
        tp_lat = TopicPartition(lat, 0)
        durations: list[float] = []
        commit_only: list[float] = []
        for i in range(commits):
            t0 = time.perf_counter()
            await producer.begin_transaction()
            await producer.send(dst, f"lat-{i}".encode())
            await producer.send_offsets_to_transaction({tp_lat: i + 1}, group)
            t1 = time.perf_counter()
            await producer.commit_transaction()
            t2 = time.perf_counter()
            durations.append(t2 - t0)
            commit_only.append(t2 - t1)
        _report("transaction (send + offsets + commit)", durations)
        _report("commit_transaction() alone", commit_only)

        # 5. zombie fencing: a new producer with the same transactional_id
        zombie_id = producer._txn_manager.transactional_id
        successor = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=zombie_id)
        await successor.start()
        try:
            try:
                async with producer.transaction():
                    await producer.send(dst, b"zombie")
                raise AssertionError("the old producer was not fenced")
            except ProducerFenced:
                print("a second producer with the same transactional_id fences the first")
            async with successor.transaction():
                await successor.send(dst, b"successor")
        finally:
            await successor.stop()
    finally:
        await producer.stop()

    final = await read_all(bootstrap, dst, "read_committed")
    assert b"zombie" not in final and final[-1] == b"successor", final[-3:]
    print("OK: aiokafka transactions work end to end against this broker")


class _Abort(Exception):
    pass


def _report(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p50 = statistics.median(ms)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    print(
        f"{label}: n={len(ms)} p50={p50:.1f} ms p90={p90:.1f} ms "
        f"min={ms[0]:.1f} ms max={ms[-1]:.1f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bootstrap",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:19092"),
    )
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument(
        "--retry-backoff-ms",
        type=int,
        default=100,
        help="the producer's retry_backoff_ms (aiokafka's default is 100)",
    )
    args = parser.parse_args()
    host, _, port = args.bootstrap.split(",")[0].rpartition(":")
    print(f"broker {args.bootstrap}; transactional request versions it accepts:")
    probe.probe(host, int(port), show_versions=True)
    asyncio.run(run(args.bootstrap, args.commits, args.retry_backoff_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
