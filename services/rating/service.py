"""``RatingService``: fold ``rating.results`` into the rating store, exactly once, in order.

``rating.results`` has one partition, so the log is one fixed order; the service reads it
from the position stored in the rating store and applies each batch in one store
transaction that also moves that position (``RatingStore.apply``). The store is the sink,
so the input position lives there, not in a consumer group: after a crash the service
resumes where the last committed batch ended, and a batch that did not commit is read and
folded again from the same stored ratings. A result whose hand was applied before (the
same ``hand_id`` delivered again at a later offset) changes nothing.

A record that cannot be applied does not stop the service (issue 17). One that breaks a
bound of ``RatedHandResult`` (``decode_result``, the same for the live service and the
recompute) is ignored in its batch's transaction and goes to ``rating.results.dlq`` with
the reason. One that decodes but that the store refuses (a poison record: a data error,
not the database being away) fails its batch; the service then applies that batch one
record at a time, and the record that fails alone goes to the dead-letter topic and is
ignored in the transaction that moves the position past it. A failure of the store itself
is retried with backoff and changes nothing. ``Progress`` tells ``/readyz`` and
``mahjong_consumer_stalled_seconds`` when the position stops moving while records wait.

``ratings recompute`` folds the same log from offset 0 with the same ``Fold`` and compares;
it ignores the dead-lettered offsets as the live service did, and fails when the live
position is behind the log.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections import Counter

import prometheus_client as prom

from services.rating.formula import Fold
from services.rating.store import (
    DEAD_LETTER,
    Batch,
    FoldedLog,
    LogFold,
    Position,
    RatingStore,
    RecomputeReport,
)
from services.runtime import dead_letters
from services.runtime.backoff import Backoff
from services.runtime.log import EventLog, Record, read_through
from services.runtime.position import check_position
from services.runtime.progress import STALL_AFTER_S, Progress
from services.runtime.service import Health, Lag, Stall, idle, known, pause, run_stored
from services.runtime.topics import RATING_RESULTS

log = logging.getLogger("mahjong.rating")

APPLIED = prom.Counter("mahjong_rating_results_applied", "Rated results applied to the ratings")
IGNORED = prom.Counter(
    "mahjong_rating_results_ignored", "Results that changed nothing, by reason", ["reason"]
)
BATCHES = prom.Counter("mahjong_rating_batches", "Store transactions committed")

PARTITION = 0
READ_CHUNK = 5000
STORE_REFUSED = "the rating store refused it: "
"""How the reason of a letter the store refused begins (recompute ignores those offsets)."""
MAX_RETRY_S = 30.0


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
        stall_after_s: float = STALL_AFTER_S,
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
        self.dead_letters = 0
        self.progress = Progress(topic, stall_after_s)
        self._poison: dict[int, str] = {}
        """Offsets the store refused alone, with why: dead-lettered in their next batch."""
        self._single_until = 0
        """Below this offset, apply one record per batch (a batch failed; find the one)."""
        self._records: list[Record] = []

    def probe(self) -> Health:
        return Health(
            started=self.ready.is_set(),
            stall=Stall.of(self.progress),
            lag=Lag(self.log, self.topic, known({PARTITION: self.position})),
            counters={
                "applied": self.applied,
                "ignored": self.ignored,
                "batches": self.batches,
                "dead_letters": self.dead_letters,
            },
        )

    async def run(self, stop: asyncio.Event) -> None:
        """Apply results until ``stop`` is set; the store must be started."""
        start = await self._start_position(stop)
        if start is None:
            return
        # A store ahead of its log (a new broker, an old database): stop and say so.
        await check_position(self.log, self.topic, PARTITION, start.next_offset, "the rating store")
        self.position = start.next_offset
        log.info(
            "rating service started: topic=%s position=%d applied=%d ignored=%d",
            self.topic,
            start.next_offset,
            start.applied,
            start.ignored,
        )
        self.progress.advanced(self.position)

        async def failed(exc: Exception, backoff: Backoff) -> None:
            # The transaction may or may not have committed: the store knows.
            self.progress.failed(f"{type(exc).__name__}: {exc}")
            if self._set_aside(exc):
                await self._resync()
                return
            delay = backoff.pause_s()
            log.exception(
                "rating batch failed at offset %d; retrying in %.1f s", self.position, delay
            )
            await pause(stop, delay)
            await self._resync()

        try:
            await run_stored(
                stop,
                self.ready,
                self.step,
                idle=lambda: idle(self.log, self.topic, self.idle_s, stop),
                step_failed=failed,
                step_backoff=lambda: Backoff(self.retry_s, MAX_RETRY_S),
            )
        finally:
            self.ready.clear()
            log.info("rating service stopped: topic=%s position=%d", self.topic, self.position)

    async def _start_position(self, stop: asyncio.Event) -> Position | None:
        """The stored position, waiting with backoff while the store or the log is away
        (None: stopped meanwhile)."""
        backoff = Backoff(self.retry_s, MAX_RETRY_S)
        while not stop.is_set():
            try:
                await dead_letters.create_topic(self.log, self.topic)
                return await self.store.position(self.topic)
            except Exception as exc:
                self.progress.failed(f"{type(exc).__name__}: {exc}")
                delay = backoff.pause_s()
                log.warning("rating service cannot start yet (%s); retrying in %.1f s", exc, delay)
                await pause(stop, delay)
        return None

    def _set_aside(self, exc: Exception) -> bool:
        """After a failed batch: whether the failure is the data's (poison), in which case
        the next batches narrow it down to one record and that one is dead-lettered."""
        if not dead_letters.is_poison(exc) or not self._records:
            return False
        if self._records[0].offset in self._poison:
            return False  # set aside already and still failing: not this record's fault
        first, last = self._records[0].offset, self._records[-1].offset
        if len(self._records) > 1:
            log.warning(
                "rating batch %d..%d refused by the store (%s); applying it one by one",
                first,
                last,
                exc,
            )
            self._single_until = last + 1
        else:
            log.error("result at offset %d refused by the store: %s; dead-lettering", first, exc)
            self._poison[first] = f"{STORE_REFUSED}{type(exc).__name__}: {exc}"
        return True

    async def step(self) -> int:
        """Read and apply one batch from the current position; returns the records read."""
        limit = 1 if self.position < self._single_until else self.max_batch
        self._records = []  # a failed read has no batch to narrow down
        records = await self.log.read(self.topic, PARTITION, self.position, limit)
        self._records = records
        if not records:
            self.progress.caught_up(self.position)
            return 0
        start, next_offset = self.position, records[-1].offset + 1
        batch = Batch.decode([(r.offset, r.value) for r in records], self._poison)
        if batch.refused:
            # Before the commit: a crash between the two writes the letter again (same key).
            await self.log.produce(
                [
                    dead_letters.outgoing("rating", r, batch.refused[r.offset])
                    for r in records
                    if r.offset in batch.refused
                ]
            )
        outcome = await self.store.apply(self.topic, start, next_offset, batch)
        if outcome is None:
            log.warning(
                "position of %s moved past %d (another rating service?); resynchronising",
                self.topic,
                start,
            )
            await self._resync()
            return len(records)
        for seq, reason in batch.refused.items():
            self._poison.pop(seq, None)
            self.dead_letters += 1
            log.warning(
                "result at offset %d set aside on %s: %s",
                seq,
                dead_letters.dead_letter_topic(self.topic),
                reason,
                extra={"offset": seq, "topic": self.topic},
            )
        self.position = outcome.next_offset
        self.progress.advanced(self.position)
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


async def refused_offsets(event_log: EventLog, topic: str = RATING_RESULTS) -> set[int]:
    """Offsets of ``topic`` the live service dead-lettered because the store refused them
    (``rating.results.dlq``): the fold ignores them too, as the live service did. Letters
    for undecodable records need no lookup: the fold refuses those by itself."""
    dlq = dead_letters.dead_letter_topic(topic)
    try:
        end = await event_log.end_offset(dlq, PARTITION)
    except Exception:  # no such topic: nothing was ever set aside
        return set()
    offsets: set[int] = set()
    async for record in read_through(event_log, dlq, PARTITION, 0, end):
        try:
            letter = dead_letters.decode_letter(record.value)
        except Exception:
            continue
        if letter.source_topic == topic and letter.reason.startswith(STORE_REFUSED):
            offsets.add(letter.source_offset)
    return offsets


def log_fold(
    event_log: EventLog,
    topic: str = RATING_RESULTS,
    chunk: int = READ_CHUNK,
    refused: set[int] | frozenset[int] = frozenset(),
) -> LogFold:
    """Folds the log from offset 0 up to ``end`` in memory: a tight loop with the garbage
    collector paused (the fold builds millions of rows and no reference cycles). Offsets in
    ``refused`` are ignored as dead letters."""

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
                    if record.offset in refused:
                        fold.ignore(record.offset, "", DEAD_LETTER)
                    else:
                        fold.apply_record(record.offset, record.value)
                    records += 1
                position = min(batch[-1].offset + 1, end)
        finally:
            if collecting:
                gc.enable()
        return FoldedLog(fold, records, position, time.perf_counter() - began)

    return fold_to


async def waiting_from(event_log: EventLog, topic: str, position: int, end: int) -> int | None:
    """The offset of the first record in ``[position, end)``, or None when there is none
    (the end of a transactional topic is a commit marker, which holds no record)."""
    if position >= end:
        return None
    records = await event_log.read(topic, PARTITION, position, 1)
    return records[0].offset if records and records[0].offset < end else None


async def recompute(
    event_log: EventLog,
    store: RatingStore,
    topic: str = RATING_RESULTS,
    catch_up_s: float = 10.0,
) -> RecomputeReport:
    """Rebuild every rating from ``topic`` into fresh tables and compare with the live.

    First waits up to ``catch_up_s`` for the live position to reach the log's end as it is
    now (the service is usually a batch behind a busy log); the report is ``behind`` (not
    ok) when records before that end are still not applied live."""
    end = await event_log.end_offset(topic, PARTITION)
    deadline = time.monotonic() + catch_up_s
    while True:
        live = (await store.position(topic)).next_offset
        if await waiting_from(event_log, topic, live, end) is None:
            break
        if time.monotonic() >= deadline:
            break
        await asyncio.sleep(0.2)
    refused = await refused_offsets(event_log, topic)
    report = await store.recompute(topic, log_fold(event_log, topic, refused=refused))
    report.log_end = end
    report.waiting_from = await waiting_from(event_log, topic, report.live_position, end)
    return report
