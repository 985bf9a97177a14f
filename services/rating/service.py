"""``RatingService``: fold ``rating.results`` into the rating store, exactly once, in order.

``rating.results`` has one partition, so the log is one fixed order; the service reads it
from the position stored in the rating store and applies each batch in one store
transaction that also moves that position (``RatingStore.apply``). The store is the sink,
so the input position lives there, not in a consumer group: after a crash the service
resumes where the last committed batch ended, and a batch that did not commit is read and
folded again from the same stored ratings. A result whose hand was applied before (the
same ``hand_id`` delivered again at a later offset) changes nothing.

``ratings recompute`` folds the same log from offset 0 with the same ``Fold`` and compares.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections import Counter

import prometheus_client as prom

from services.rating.formula import Fold
from services.rating.store import Batch, FoldedLog, LogFold, RatingStore, RecomputeReport
from services.runtime.log import EventLog
from services.runtime.position import check_position
from services.runtime.topics import RATING_RESULTS

log = logging.getLogger("mahjong.rating")

APPLIED = prom.Counter("mahjong_rating_results_applied", "Rated results applied to the ratings")
IGNORED = prom.Counter(
    "mahjong_rating_results_ignored", "Results that changed nothing, by reason", ["reason"]
)
BATCHES = prom.Counter("mahjong_rating_batches", "Store transactions committed")

PARTITION = 0
READ_CHUNK = 5000


class RatingService:
    """The rating service: one loop, one partition, one store transaction per batch."""

    def __init__(
        self,
        event_log: EventLog,
        store: RatingStore,
        *,
        topic: str = RATING_RESULTS,
        max_batch: int = 2000,
        idle_s: float = 0.2,
        retry_s: float = 1.0,
    ) -> None:
        self.log = event_log
        self.store = store
        self.topic = topic
        self.max_batch = max_batch
        self.idle_s = idle_s
        self.retry_s = retry_s
        self.position = 0
        self.ready = asyncio.Event()
        self.applied = 0
        self.ignored = 0
        self.batches = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Apply results until ``stop`` is set; the store must be started."""
        start = await self.store.position(self.topic)
        await check_position(self.log, self.topic, PARTITION, start.next_offset, "the rating store")
        self.position = start.next_offset
        log.info(
            "rating service started: topic=%s position=%d applied=%d ignored=%d",
            self.topic,
            start.next_offset,
            start.applied,
            start.ignored,
        )
        self.ready.set()
        try:
            while not stop.is_set():
                try:
                    handled = await self.step()
                except Exception:
                    # The transaction may or may not have committed: the store knows.
                    log.exception("rating batch failed at offset %d; retrying", self.position)
                    await self._pause(stop, self.retry_s)
                    await self._resync()
                    continue
                if not handled:
                    await self._idle(stop)
        finally:
            self.ready.clear()
            log.info("rating service stopped: topic=%s position=%d", self.topic, self.position)

    async def step(self) -> int:
        """Read and apply one batch from the current position; returns the records read."""
        records = await self.log.read(self.topic, PARTITION, self.position, self.max_batch)
        if not records:
            return 0
        start, next_offset = self.position, records[-1].offset + 1
        batch = Batch.decode([(r.offset, r.value) for r in records])
        outcome = await self.store.apply(self.topic, start, next_offset, batch)
        if outcome is None:
            log.warning(
                "position of %s moved past %d (another rating service?); resynchronising",
                self.topic,
                start,
            )
            await self._resync()
            return len(records)
        self.position = outcome.next_offset
        self.applied += outcome.applied
        self.ignored += len(outcome.ignored)
        self.batches += 1
        APPLIED.inc(outcome.applied)
        BATCHES.inc()
        for ignored in outcome.ignored:
            IGNORED.labels(ignored.reason).inc()
            log.info(
                "result ignored: offset=%d hand_id=%s reason=%s",
                ignored.seq,
                ignored.hand_id,
                ignored.reason,
                extra={"hand_id": ignored.hand_id, "offset": ignored.seq},
            )
        if outcome.ignored:
            reasons = Counter(i.reason for i in outcome.ignored)
            log.warning(
                "ignored %d results at offsets %d..%d: %s",
                len(outcome.ignored),
                start,
                next_offset - 1,
                " ".join(f"{k}={v}" for k, v in sorted(reasons.items())),
            )
        log.info(
            "applied batch: offsets=%d..%d applied=%d ignored=%d",
            start,
            next_offset - 1,
            outcome.applied,
            len(outcome.ignored),
        )
        return len(records)

    async def catch_up(self) -> None:
        """Apply everything up to the log's current end (tests, tools)."""
        await self._resync()
        end = await self.log.end_offset(self.topic, PARTITION)
        while self.position < end and await self.step():
            pass

    async def _resync(self) -> None:
        try:
            self.position = (await self.store.position(self.topic)).next_offset
        except Exception:
            log.exception("could not read the stored position of %s", self.topic)

    async def _idle(self, stop: asyncio.Event) -> None:
        waiter = asyncio.ensure_future(self.log.wait_for_change(self.topic, self.idle_s))
        stopper = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            stopper.cancel()

    @staticmethod
    async def _pause(stop: asyncio.Event, seconds: float) -> None:
        stopper = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({stopper}, timeout=seconds)
        finally:
            stopper.cancel()


def log_fold(event_log: EventLog, topic: str = RATING_RESULTS, chunk: int = READ_CHUNK) -> LogFold:
    """Folds the log from offset 0 up to ``end`` in memory: a tight loop with the garbage
    collector paused (the fold builds millions of rows and no reference cycles)."""

    async def fold_to(end: int) -> FoldedLog:
        began = time.perf_counter()
        fold = Fold()
        position = records = 0
        collecting = gc.isenabled()
        gc.disable()
        try:
            while position < end:
                batch = await event_log.read(topic, PARTITION, position, chunk)
                if not batch:
                    break
                for record in batch:
                    if record.offset >= end:
                        break
                    fold.apply_record(record.offset, record.value)
                    records += 1
                position = min(batch[-1].offset + 1, end)
        finally:
            if collecting:
                gc.enable()
        return FoldedLog(fold, records, position, time.perf_counter() - began)

    return fold_to


async def recompute(
    event_log: EventLog, store: RatingStore, topic: str = RATING_RESULTS
) -> RecomputeReport:
    """Rebuild every rating from ``topic`` into fresh tables and compare with the live."""
    return await store.recompute(topic, log_fold(event_log, topic))
