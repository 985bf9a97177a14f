"""The event-log port on Apache Kafka (aiokafka).

Exactly once: a processor owns one transactional producer per assigned input partition,
with the fixed ``transactional_id`` ``<group>-<topic>-<partition>``. aiokafka's offset commit
inside a transaction carries no group generation, so zombies are fenced by that id instead:
whoever is assigned the partition next initialises the same id, which aborts the old owner's
open transaction and fences its producer. Readers use ``read_committed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaConnectionError, KafkaTimeoutError, TopicAlreadyExistsError

from services.runtime.backoff import until_done
from services.runtime.log import (
    Assignment,
    Outgoing,
    Record,
    TopicSpec,
    Transaction,
    partition_for,
)

log = logging.getLogger("mahjong.kafka")

BROKER_AWAY = (KafkaConnectionError, KafkaTimeoutError, OSError)
"""What a client start raises while the broker is down or unreachable."""

COMMIT_TIMEOUT_S = 30.0
MAX_REPLICAS = 3
"""Topics are created with one copy per broker, up to this many."""
SESSION_TIMEOUT_MS = 10_000
TAKE_OVER_WITHIN_S = SESSION_TIMEOUT_MS / 1000 * 0.8
"""How long after an assignment a member may still initialise the partitions' producers.

The member sends no heartbeats during the rebalance callback, so after a session timeout
the group may have handed the partitions to someone else; initialising their ids then
would fence the new owner (a member paused mid-callback by SIGSTOP did exactly that)."""


def replication(brokers: int) -> tuple[int, int]:
    """The replication factor and ``min.insync.replicas`` of a new topic on ``brokers`` brokers.

    One copy per broker up to ``MAX_REPLICAS``. With three copies a write needs two (the
    leader's and one follower's; producers use ``acks=all``): one broker may die, or be
    restarted, without a write refused or an acknowledged record lost. With fewer copies
    every write needs only the leader's, as on the single development broker.
    """
    factor = max(1, min(MAX_REPLICAS, brokers))
    return factor, 2 if factor >= 3 else 1


def _record(r: object) -> Record:
    key = getattr(r, "key", None)
    return Record(
        topic=getattr(r, "topic"),  # noqa: B009
        partition=getattr(r, "partition"),  # noqa: B009
        offset=getattr(r, "offset"),  # noqa: B009
        key=key.decode() if isinstance(key, bytes) else "",
        value=getattr(r, "value") or b"",  # noqa: B009
        timestamp_ms=int(getattr(r, "timestamp", 0) or 0),
    )


class KafkaLog:
    """An ``EventLog`` on a Kafka cluster at ``bootstrap``."""

    def __init__(
        self, bootstrap: str, client_id: str = "mahjong-planet", *, wait_for_broker: bool = False
    ) -> None:
        self.bootstrap = bootstrap
        self.client_id = client_id
        self.wait_for_broker = wait_for_broker  # services wait; tools fail at once
        self._producer: AIOKafkaProducer | None = None
        self._reader: AIOKafkaConsumer | None = None
        self._read_lock = asyncio.Lock()
        self._partitions: dict[str, int] = {}

    async def start(self) -> None:
        """Connect. With ``wait_for_broker``, a broker that is away is waited for (with
        backoff) instead of failing the start."""
        if not self.wait_for_broker:
            await self._start()
            return
        await until_done("connecting to the broker", self._start, log, retry_on=BROKER_AWAY)

    async def _start(self) -> None:
        with contextlib.suppress(Exception):  # what a failed attempt left half started
            await self.close()
        self._producer = self._reader = None
        self._producer = AIOKafkaProducer(
            bootstrap_servers=self.bootstrap,
            client_id=self.client_id,
            acks="all",
            enable_idempotence=True,
            linger_ms=1,
        )
        await self._producer.start()
        self._reader = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            client_id=f"{self.client_id}-reader",
            enable_auto_commit=False,
            isolation_level="read_committed",
            # A broker holds a fetch up to this long when it has nothing new, and requests on
            # the connection queue behind it: with the 500 ms default every end-offset lookup
            # after a read paid half a second.
            fetch_max_wait_ms=5,
        )
        await self._reader.start()

    async def close(self) -> None:
        if self._reader is not None:
            await self._reader.stop()
        if self._producer is not None:
            await self._producer.stop()

    async def create_topics(self, specs: Sequence[TopicSpec]) -> None:
        """Create the topics of ``specs`` that do not exist yet (existing ones are left as they
        are), replicated as ``replication`` says for the brokers the cluster has now."""
        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap, client_id=self.client_id)
        await admin.start()
        try:
            existing = set(await admin.list_topics())
            brokers = len((await admin.describe_cluster())["brokers"])
            factor, min_isr = replication(brokers)
            # One broker: as it always was, the broker's defaults.
            replicated = {"min.insync.replicas": str(min_isr)} if factor > 1 else {}
            new = [
                NewTopic(
                    s.name,
                    num_partitions=s.partitions,
                    replication_factor=factor,
                    topic_configs={
                        "cleanup.policy": "compact" if s.compacted else "delete",
                        "retention.ms": str(s.retention_ms),
                        **replicated,
                    },
                )
                for s in specs
                if s.name not in existing
            ]
            if new:
                log.info(
                    "creating %d topics at replication factor %d, min.insync.replicas %d "
                    "(%d brokers)",
                    len(new),
                    factor,
                    min_isr,
                    brokers,
                )
                with contextlib.suppress(TopicAlreadyExistsError):
                    await admin.create_topics(new)
        finally:
            await admin.close()

    async def partition_count(self, topic: str) -> int:
        if topic not in self._partitions:
            assert self._producer is not None
            for _ in range(50):
                parts = await self._producer.partitions_for(topic)
                if parts:
                    self._partitions[topic] = len(parts)
                    break
                await asyncio.sleep(0.1)
            else:
                raise KeyError(f"unknown topic {topic!r}; run `mahjong-planet topics` first")
        return self._partitions[topic]

    async def produce(self, records: Sequence[Outgoing]) -> None:
        assert self._producer is not None
        futures = []
        for r in records:
            partition = r.partition
            if partition is None:
                partition = partition_for(r.key, await self.partition_count(r.topic))
            futures.append(
                await self._producer.send(r.topic, r.value, key=r.key.encode(), partition=partition)
            )
        await asyncio.gather(*futures)

    async def end_offset(self, topic: str, partition: int) -> int:
        assert self._reader is not None
        tp = TopicPartition(topic, partition)
        return int((await self._reader.end_offsets([tp]))[tp])

    async def read(self, topic: str, partition: int, start: int, limit: int) -> list[Record]:
        assert self._reader is not None
        tp = TopicPartition(topic, partition)
        async with self._read_lock:
            end = await self.end_offset(topic, partition)
            if start >= end:
                return []
            self._reader.assign([tp])
            try:
                self._reader.seek(tp, start)
                out: list[Record] = []
                while not out and await self._reader.position(tp) < end:
                    # Short waits: the last offsets before the end may be transaction markers,
                    # which return no record; a long wait here would be paid at the end of
                    # every read.
                    batch = await self._reader.getmany(tp, timeout_ms=20, max_records=limit)
                    out.extend(_record(r) for r in batch.get(tp, []))
                return out
            finally:
                # An assigned partition is fetched in the background for ever, every 5 ms
                # while it is quiet: one read of an idle partition cost the broker about 20 %
                # of a core (and this process 4 %) until the next read. Paused, it is not
                # fetched; the next read's assign resumes it. (Not ``assign([])``: changing
                # the reader's topics forces a metadata request on every read.)
                self._reader.pause(tp)

    async def wait_for_change(self, topic: str, timeout_s: float) -> None:
        await asyncio.sleep(min(timeout_s, 0.01))

    async def group_positions(self, group: str, topic: str) -> dict[int, int]:
        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap, client_id=self.client_id)
        await admin.start()
        try:
            offsets = await admin.list_consumer_group_offsets(group)
        finally:
            await admin.close()
        return {
            tp.partition: int(meta.offset)
            for tp, meta in offsets.items()
            if tp.topic == topic and meta.offset >= 0
        }

    def processor(
        self, group: str, topic: str, on_assign: Assignment, on_revoke: Assignment
    ) -> KafkaProcessor:
        return KafkaProcessor(self, group, topic, on_assign, on_revoke)

    def follower(self, topics: Sequence[str]) -> KafkaFollower:
        return KafkaFollower(self, list(topics))


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, processor: KafkaProcessor) -> None:
        self.processor = processor

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self.processor._revoke({tp.partition for tp in revoked})

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await self.processor._assign({tp.partition for tp in assigned})


class KafkaProcessor:
    """A consumer-group member with one transactional producer per assigned partition."""

    def __init__(
        self,
        log_: KafkaLog,
        group: str,
        topic: str,
        on_assign: Assignment,
        on_revoke: Assignment,
    ) -> None:
        self.log, self.group, self.topic = log_, group, topic
        self.on_assign, self.on_revoke = on_assign, on_revoke
        self.consumer: AIOKafkaConsumer | None = None
        self.producers: dict[int, AIOKafkaProducer] = {}
        self._pending: dict[int, AIOKafkaProducer] = {}  # settled, its state being rebuilt
        self._rebuilding: asyncio.Task[None] | None = None
        # Held for a whole transaction, so a revocation waits for the open one to finish.
        self.locks: dict[int, asyncio.Lock] = {}

    concurrent_partitions = True  # each partition has its own producer and transaction

    async def start(self) -> None:
        self.consumer = AIOKafkaConsumer(
            bootstrap_servers=self.log.bootstrap,
            group_id=self.group,
            client_id=f"{self.group}-member",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            # A killed member is noticed after this. 6 s (the broker's minimum) proved too
            # short on a busy 2-core machine: a starved member was evicted mid-run, and the
            # rebalance stalled its tables for seconds.
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=2000,
        )
        self.consumer.subscribe([self.topic], listener=_Listener(self))
        consumer = self.consumer
        await until_done(f"joining group {self.group}", consumer.start, log, retry_on=BROKER_AWAY)

    async def stop(self) -> None:
        if self.consumer is not None:
            await self.consumer.stop()  # leaves the group; the listener revokes everything
        await self._revoke(set(self.producers) | set(self._pending))

    def assignment(self) -> set[int]:
        return set(self.producers)

    async def _assign(self, partitions: set[int]) -> None:
        # Order matters: a new producer settles the previous owner's open transaction, the
        # service then rebuilds its tables from the settled log, and only then does the
        # partition count as ours (``poll`` holds its records back until then).
        #
        # Only the settling runs inside the rebalance callback. The rebuild can take seconds
        # (the tails of every active hand) and the member sends no heartbeats during the
        # callback: run there, it got the member evicted and the group rebalanced forever.
        began = time.monotonic()
        fresh: dict[int, AIOKafkaProducer] = {}
        for p in sorted(partitions - set(self.producers)):
            if time.monotonic() - began > TAKE_OVER_WITHIN_S:
                log.warning(
                    "taking partitions %s over took longer than %.0f s (paused or starved): "
                    "they may belong to another member by now; rejoining the group instead",
                    sorted(partitions),
                    TAKE_OVER_WITHIN_S,
                )
                for producer in fresh.values():
                    with contextlib.suppress(Exception):
                        await producer.stop()
                self._rejoin()
                return
            fresh[p] = await self._producer(p)
        self._pending.update(fresh)
        self._rebuilding = asyncio.create_task(self._rebuild(partitions))

    async def _rebuild(self, partitions: set[int]) -> None:
        try:
            await self.on_assign(partitions)
        except Exception:
            log.exception("rebuilding partitions %s failed; rejoining the group", partitions)
            self._rejoin()
            return
        ready = {p: self._pending.pop(p) for p in sorted(partitions) if p in self._pending}
        self.producers.update(ready)

    async def _revoke(self, partitions: set[int]) -> None:
        task = self._rebuilding
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        half_built = set(self._pending) & partitions
        for p in sorted(half_built):
            with contextlib.suppress(Exception):
                await self._pending.pop(p).stop()
        mine = partitions & set(self.producers)
        for p in sorted(mine):
            async with self._lock(p):
                await self.producers.pop(p).stop()
        if mine | half_built:
            await self.on_revoke(mine | half_built)

    def _lock(self, partition: int) -> asyncio.Lock:
        return self.locks.setdefault(partition, asyncio.Lock())

    async def poll(self, max_records: int, timeout_s: float) -> dict[int, list[Record]]:
        assert self.consumer is not None
        batch = await self.consumer.getmany(
            timeout_ms=int(timeout_s * 1000), max_records=max_records
        )
        out: dict[int, list[Record]] = {}
        for tp, records in batch.items():
            if not records:
                continue
            if tp.partition in self.producers:
                out[tp.partition] = [_record(r) for r in records]
            elif tp in self.consumer.assignment():
                # Fetched before this member finished taking the partition over (its
                # producer is not ready): read these again later rather than drop them.
                self.consumer.seek(tp, records[0].offset)
        return out

    async def rewind(self, partition: int) -> None:
        """After a failed transaction: give the partition back and rejoin the group.

        Whether a failed commit took effect is unknown here, and so is whether this member
        still owns the partition: a member paused past its session (SIGSTOP, a long GC, a
        frozen VM) wakes up to find its producer fenced by the partition's new owner. Taking
        the transactional id again here would fence that owner in turn, so the id is only
        ever initialised by ``_assign``, for a partition the group coordinator has just
        handed out. The service drops the partition's state now; when the rejoin gives the
        partition back (to this member or another), the new producer settles the failed
        transaction and the service rebuilds from the settled log: recovery after a failed
        transaction is the rebalance's rebuild, so the two never run at once.
        """
        async with self._lock(partition):
            old = self.producers.pop(partition, None)
            if old is None:
                return  # revoked meanwhile: the rebalance already handled it
            # No await between the pop and the revocation: nothing can re-assign the
            # partition in between and have its fresh state dropped.
            await self.on_revoke({partition})
            with contextlib.suppress(Exception):
                await old.stop()
        log.warning(
            "gave partition %d back after a failed transaction; rejoining the group",
            partition,
            extra={"partition": partition, "topic": self.topic},
        )
        self._rejoin()

    def _rejoin(self) -> None:
        """Join the group again: every partition is revoked, then assigned afresh."""
        if self.consumer is not None:
            # A new subscription to the same topic makes the coordinator rejoin: it revokes
            # the current assignment through the listener first (a member the group already
            # evicted joins as a new one).
            self.consumer.subscribe([self.topic], listener=_Listener(self))

    def seek(self, partition: int, offset: int) -> None:
        assert self.consumer is not None
        self.consumer.seek(TopicPartition(self.topic, partition), offset)

    async def _producer(self, partition: int) -> AIOKafkaProducer:
        producer = AIOKafkaProducer(
            bootstrap_servers=self.log.bootstrap,
            client_id=f"{self.group}-{partition}",
            transactional_id=f"{self.group}-{self.topic}-{partition}",
            acks="all",
            linger_ms=1,
            # The first send after a commit is refused until the commit settles; a short
            # backoff keeps that wait near the broker's, not aiokafka's default 100 ms.
            retry_backoff_ms=20,
        )
        await producer.start()  # initialises the id: fences and settles any previous owner
        return producer

    def transaction(
        self, partition: int, next_offset: int
    ) -> AbstractAsyncContextManager[Transaction]:
        return self._transaction(partition, next_offset)

    @contextlib.asynccontextmanager
    async def _transaction(self, partition: int, next_offset: int) -> AsyncIterator[Transaction]:
        async with self._lock(partition):
            producer = self.producers.get(partition)
            if producer is None:
                raise RuntimeError(f"partition {partition} is no longer assigned")
            txn = _KafkaTransaction(self.log, producer)
            await producer.begin_transaction()
            try:
                yield txn
                await txn.flush()
                tp = TopicPartition(self.topic, partition)
                async with asyncio.timeout(COMMIT_TIMEOUT_S):
                    await producer.send_offsets_to_transaction({tp: next_offset}, self.group)
                    await producer.commit_transaction()
            except BaseException:
                with contextlib.suppress(Exception):
                    await producer.abort_transaction()
                raise


class _KafkaTransaction:
    def __init__(self, log_: KafkaLog, producer: AIOKafkaProducer) -> None:
        self.log = log_
        self.producer = producer
        self.pending: list[asyncio.Future[object]] = []
        self.queued: list[Outgoing] = []

    async def _send(self, record: Outgoing) -> asyncio.Future[object]:
        partition = record.partition
        if partition is None:
            partition = partition_for(record.key, await self.log.partition_count(record.topic))
        future: asyncio.Future[object] = await self.producer.send(
            record.topic, record.value, key=record.key.encode(), partition=partition
        )
        return future

    async def send(self, record: Outgoing) -> int:
        await self.flush()
        metadata = await (await self._send(record))
        return int(getattr(metadata, "offset"))  # noqa: B009

    def send_soon(self, record: Outgoing) -> None:
        self.queued.append(record)

    async def flush(self) -> None:
        queued, self.queued = self.queued, []
        for record in queued:
            self.pending.append(await self._send(record))
        if self.pending:
            pending, self.pending = self.pending, []
            await asyncio.gather(*pending)


class KafkaFollower:
    """Reads new committed records of some topics from their current end."""

    def __init__(self, log_: KafkaLog, topics: list[str]) -> None:
        self.log, self.topics = log_, topics
        self.consumer: AIOKafkaConsumer | None = None

    async def start(self) -> None:
        self.consumer = AIOKafkaConsumer(
            bootstrap_servers=self.log.bootstrap,
            enable_auto_commit=False,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
        )
        await self.consumer.start()
        tps = [
            TopicPartition(t, p)
            for t in self.topics
            for p in range(await self.log.partition_count(t))
        ]
        self.consumer.assign(tps)
        # Start exactly at the current ends; a failed look-up is retried, never guessed,
        # or records appended meanwhile would be skipped.
        for attempt in range(50):
            try:
                ends = await self.consumer.end_offsets(tps)
                break
            except Exception:
                if attempt == 49:
                    raise
                await asyncio.sleep(0.2)
        for tp in tps:
            self.consumer.seek(tp, ends[tp])

    async def poll(self, timeout_s: float) -> list[Record]:
        assert self.consumer is not None
        batch = await self.consumer.getmany(timeout_ms=int(timeout_s * 1000), max_records=5000)
        return [_record(r) for records in batch.values() for r in records]

    async def stop(self) -> None:
        if self.consumer is not None:
            await self.consumer.stop()
