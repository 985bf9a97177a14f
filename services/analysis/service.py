"""``AnalysisService``: computer reviews of finished hands, exactly once (issue 21).

Two consumer-group members in one service:

- ``FinishedHands`` (group ``analysis-hands`` on ``table.events``) follows every hand and, at
  the ``hand_ended`` of a hand that had a person at it and was not practice
  (``hands.is_practice``), appends a ``ReviewRequest`` for its human seats to
  ``analysis.requests`` (``request_id`` ``auto:<hand_id>``), in the same log transaction as
  the group's position past that event. Practice hands are reviewed only when their player
  asks (the gateway sends the request).
- ``Reviewer`` (group ``analysis`` on ``analysis.requests``) reads the requested hand's log
  from ``table.events``, reviews it (``review.review_hand``) in a worker process, so the
  event loop keeps heartbeating through reviews of seconds, and appends the ``HandReview``
  to ``analysis.results`` (key ``hand_id``) in the same log transaction as the position
  past the request. One review at a time per process.

Exactly once: a request's review and the position past it commit together or not at all,
so after ``kill -9``, a restart or a rebalance, a request whose review committed is never
reviewed again and one whose review did not is reviewed again from scratch (the review is
pure and deterministic: the same hand gives the same values). Likewise each finished hand's
automatic request is appended once.

Duplicates: on assignment the reviewer reads the ``analysis.results`` partition of the same
number (requests and results share their partition count, so a hand's request and review
are in partitions of one number) and keeps, per hand, the seats already reviewed. A request
for seats all reviewed already writes nothing; one that asks for more reviews the union of
the seats, since ``analysis.results`` is compacted and its newest record of a hand must cover
every seat reviewed so far.

A request that cannot be reviewed (unreadable, naming a hand that does not exist, or one that
has not ended) goes to ``analysis.requests.dlq`` with the reason, in the same transaction as
the position past it: the gateway only asks about hands it found ended, so such a request is
a bug or a forgery, for an operator to see, not an answer a player waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import BrokenExecutor, Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import cast

import msgspec
from prometheus_client import Counter, Histogram

from schemas import analysis as an
from schemas import events as ev
from schemas.table import decode_event
from services.analysis.hands import find_start, hand_log, human_seats, is_practice, table_of
from services.analysis.review import (
    Evaluate,
    review_hand,
)
from services.runtime import dead_letters
from services.runtime.backoff import Backoff
from services.runtime.log import EventLog, Outgoing, Processor, Record, Transaction, read_through
from services.runtime.service import GroupMember, Health, known, pause, transact
from services.runtime.topics import ANALYSIS_REQUESTS, ANALYSIS_RESULTS, TABLE_EVENTS

log = logging.getLogger("mahjong.analysis")

REVIEWS = Counter("mahjong_analysis_reviews", "Hand reviews, by outcome", ["outcome"])
REVIEW_SECONDS = Histogram(
    "mahjong_analysis_review_seconds",
    "Wall-clock time of one hand's review (in the worker)",
    buckets=(0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0),
)
DECISIONS = Counter("mahjong_analysis_decisions", "Decisions reviewed, by mark", ["mark"])
REQUESTED = Counter(
    "mahjong_analysis_requested", "Review requests appended for hands that finished"
)

HANDS_GROUP = "analysis-hands"
REVIEW_GROUP = "analysis"
COMMIT_EVERY = 5000
"""Records of table.events read without a request to append, after which the position is
committed anyway (so a restart does not read them again)."""
COMMIT_AFTER_S = 5.0


def auto_request_id(hand_id: str) -> str:
    """The request id of the review the service asks for when a hand finishes."""
    return f"auto:{hand_id}"


# --- hands that finish ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Started:
    offset: int
    event: ev.HandStarted


class FinishedHands(GroupMember):
    """Asks for the review of every finished hand with a person at it (see the module note)."""

    max_records = 2000
    poll_s = 0.25

    def __init__(
        self,
        event_log: EventLog,
        *,
        group: str = HANDS_GROUP,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(event_log, group, TABLE_EVENTS)
        self.now = now
        self.starts: dict[int, dict[str, Started]] = {}
        """Per partition, each table's newest ``hand_started`` seen since assignment."""
        self.positions: dict[int, int] = {}
        self.unsaved: dict[int, int] = {}
        self.saved_at: dict[int, float] = {}
        self.requested = 0

    def probe(self) -> Health:
        return self.health(positions=known(self.positions), counters={"requested": self.requested})

    async def handle(self, processor: Processor, batch: dict[int, list[Record]]) -> None:
        for partition, records in batch.items():
            if partition not in processor.assignment():
                continue
            await self._process(processor, partition, records)
        # A quiet partition's position is saved after a while too.
        for partition in list(self.unsaved):
            if partition not in batch and self._due(partition):
                await self._commit(processor, partition, [], self.positions[partition])

    def _due(self, partition: int) -> bool:
        unsaved = self.unsaved.get(partition, 0)
        waited = self.now() - self.saved_at.get(partition, 0.0)
        return unsaved >= COMMIT_EVERY or (unsaved > 0 and waited >= COMMIT_AFTER_S)

    async def _process(self, processor: Processor, partition: int, records: list[Record]) -> None:
        starts = self.starts.setdefault(partition, {})
        requests: list[an.ReviewRequest] = []
        for r in records:
            if b'"hand_started"' in r.value:
                e = decode_event(r.value)
                if isinstance(e, ev.HandStarted):
                    starts[e.table_id] = Started(r.offset, e)
            elif b'"hand_ended"' in r.value:
                e = decode_event(r.value)
                if isinstance(e, ev.HandEnded):
                    request = await self._request_for(partition, r, e, starts)
                    if request is not None:
                        requests.append(request)
        next_offset = records[-1].offset + 1
        self.positions[partition] = next_offset
        self.unsaved[partition] = self.unsaved.get(partition, 0) + len(records)
        if requests or self._due(partition):
            await self._commit(processor, partition, requests, next_offset)

    async def _request_for(
        self, partition: int, r: Record, end: ev.HandEnded, starts: dict[str, Started]
    ) -> an.ReviewRequest | None:
        started = starts.get(end.table_id)
        if started is None or started.event.hand_id != end.hand_id:
            # Begun before the position this member took the partition over at.
            found = await find_start(self.log, partition, end.table_id, end.hand_id, r.offset)
            if found is None:
                log.warning("hand %s ended but its start was not found: not reviewed", end.hand_id)
                return None
            started = Started(*found)
        starts.pop(end.table_id, None)
        start = started.event
        seats = human_seats(start)
        if not seats or is_practice(start):
            return None
        return an.ReviewRequest(
            request_id=auto_request_id(end.hand_id),
            hand_id=end.hand_id,
            table_id=end.table_id,
            seats=seats,
            requested_at_ms=r.timestamp_ms,
            start_offset=started.offset,
        )

    async def _commit(
        self,
        processor: Processor,
        partition: int,
        requests: list[an.ReviewRequest],
        next_offset: int,
    ) -> None:
        async def write(txn: Transaction) -> None:
            for q in requests:
                txn.send_soon(Outgoing(ANALYSIS_REQUESTS, q.hand_id, an.encode(q)))

        if await transact(
            processor,
            partition,
            next_offset,
            write,
            holds=lambda: partition in processor.assignment(),
            log=log,
            failed=lambda: None,
            giving_back=f"transaction failed; giving table.events partition {partition} back",
        ):
            self.unsaved[partition] = 0
            self.saved_at[partition] = self.now()
            self.requested += len(requests)
            REQUESTED.inc(len(requests))

    async def _assigned(self, partitions: set[int]) -> None:
        committed = await self.log.group_positions(self.group, TABLE_EVENTS)
        for p in partitions:
            self.starts[p] = {}
            self.positions[p] = committed.get(p, 0)
            self.unsaved[p] = 0
            self.saved_at[p] = self.now()

    async def _revoked(self, partitions: set[int]) -> None:
        for p in partitions:
            self.starts.pop(p, None)
            self.positions.pop(p, None)
            self.unsaved.pop(p, None)
            self.saved_at.pop(p, None)


# --- reviews -------------------------------------------------------------------------------


REVIEW_NICENESS = 10
"""How much lower the review worker's CPU priority is than the services' (``nice``)."""


def review_worker_started() -> None:
    """The review worker's start: a lower CPU priority. A review is seconds of pure Python
    that nobody waits for at once, while the table, clock and gateway answer players within
    milliseconds: on a machine they share (``make run``, a small cluster), reviews take the
    CPU the services leave over, instead of half of it."""
    with contextlib.suppress(OSError):  # a platform without nice: same priority
        os.nice(REVIEW_NICENESS)


def review_job(
    events: list[ev.Event],
    seats: list[int],
    request_id: str,
    worlds: int | None,
    evaluate: Evaluate | None,
) -> tuple[an.HandReview, float]:
    """One review, in the worker: the review and the seconds it took."""
    began = time.perf_counter()
    review = review_hand(events, seats, evaluate=evaluate, worlds=worlds, request_id=request_id)
    return review, time.perf_counter() - began


class ReviewCutOff(Exception):
    """The service stopped during a review: nothing was written; the request is read again."""


class Reviewer(GroupMember):
    """Reviews the requested hands (see the module note)."""

    max_records = 1  # one review at a time: a poll's batch never outlasts the poll interval
    poll_s = 0.25

    def __init__(
        self,
        event_log: EventLog,
        *,
        group: str = REVIEW_GROUP,
        worlds: int | None = None,
        evaluate: Evaluate | None = None,
        worker: str = "process",
    ) -> None:
        super().__init__(event_log, group, ANALYSIS_REQUESTS)
        self.worlds = worlds
        self.evaluate = evaluate
        self.worker = worker
        self.pool: Executor | None = None
        self.stop = asyncio.Event()
        self.retry = Backoff(1.0, 30.0)
        self.reviewed: dict[int, dict[str, frozenset[int]]] = {}
        """Per partition held, the seats already reviewed of each hand (from analysis.results)."""
        self.positions: dict[int, int] = {}
        self.done = 0
        self.skipped = 0
        self.dead = 0

    def probe(self) -> Health:
        return self.health(
            positions=known(self.positions),
            counters={"reviews": self.done, "duplicates": self.skipped, "dead_letters": self.dead},
        )

    @contextlib.asynccontextmanager
    async def beside(self, stop: asyncio.Event) -> AsyncIterator[None]:
        self.stop = stop
        self._open_pool()
        try:
            yield
        finally:
            self._close_pool()

    def _close_pool(self) -> None:
        """Stop the worker now, a review in it too: the interpreter's exit would otherwise
        wait for that review (tens of seconds on a busy machine) and a supervisor's stop
        timeout would kill the whole service. A review cut off was not committed, so it is
        done again after the restart (see the module note)."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        if isinstance(pool, ProcessPoolExecutor):
            # No public way before Python 3.14 (terminate_workers); the processes are the
            # executor's own, and it is shut down right after.
            for worker in list(getattr(pool, "_processes", {}).values()):
                worker.terminate()
        pool.shutdown(wait=False, cancel_futures=True)

    def _open_pool(self) -> None:
        # A worker process, not a thread: a review is pure Python for seconds, and a thread
        # would hold the GIL from the event loop (and from every service sharing it in
        # `mahjong-planet run`). Spawned, so that it forks nothing of this process's loop.
        self._close_pool()
        if self.worker == "process":
            self.pool = ProcessPoolExecutor(
                1, mp_context=get_context("spawn"), initializer=review_worker_started
            )
        else:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="analysis-review")

    async def handle(self, processor: Processor, batch: dict[int, list[Record]]) -> None:
        for partition, records in batch.items():
            for r in records:
                if partition not in processor.assignment():
                    break  # revoked: the new owner reads these requests
                if not await self._one(processor, partition, r):
                    break  # rewound: the rest is read again

    async def _one(self, processor: Processor, partition: int, r: Record) -> bool:
        try:
            outgoing, seats, hand_id = await self._decide(r)
        except ReviewCutOff:
            log.info(
                "stopping: the review of the request at %d@%d is left for the restart",
                partition,
                r.offset,
            )
            if partition in processor.assignment():
                processor.seek(partition, r.offset)
            return False
        except Exception as exc:
            if isinstance(exc, BrokenExecutor):
                self._open_pool()  # the worker died (killed, out of memory): a new one
            # A review that fails is a bug (or the worker died): the request is neither
            # reviewed nor set aside but tried again after a pause, so the reviewer stalls
            # (its lag grows, the alert fires) while every other service, in `make run` too,
            # plays on. Nothing was written: read the request again.
            REVIEWS.labels("failed").inc()
            delay = self.retry.pause_s()
            log.exception(
                "review of the request at %d@%d failed; again in %.0f s", partition, r.offset, delay
            )
            if partition in processor.assignment():
                processor.seek(partition, r.offset)
            await pause(self.stop, delay)
            return False
        self.retry.reset()
        if partition not in processor.assignment():
            return False  # revoked during the review: its new owner reviews it again

        async def write(txn: Transaction) -> None:
            for o in outgoing:
                txn.send_soon(o)

        committed = await transact(
            processor,
            partition,
            r.offset + 1,
            write,
            holds=lambda: partition in processor.assignment(),
            log=log,
            failed=lambda: REVIEWS.labels("failed").inc(),
            giving_back=f"transaction failed; giving analysis.requests partition {partition} back",
        )
        if committed:
            self.positions[partition] = r.offset + 1
            if seats is not None:
                self.reviewed.setdefault(partition, {})[hand_id] = seats
        return committed

    async def _decide(self, r: Record) -> tuple[list[Outgoing], frozenset[int] | None, str]:
        """What a request makes: the review (with the seats it covers), nothing (a duplicate)
        or a dead letter."""
        try:
            request = an.decode_request(r.value)
        except msgspec.DecodeError as exc:
            return self._dead(r, f"unreadable request: {exc}"), None, ""
        if table_of(request.hand_id) != request.table_id:
            reason = f"hand {request.hand_id} is not of table {request.table_id}"
            return self._dead(r, reason), None, ""
        events = await hand_log(self.log, request.hand_id, request.start_offset)
        if not events or not isinstance(events[0], ev.HandStarted):
            return self._dead(r, f"no_such_hand: {request.hand_id}"), None, ""
        if not isinstance(events[-1], ev.HandEnded):
            return self._dead(r, f"hand_not_ended: {request.hand_id}"), None, ""
        wanted = frozenset(request.seats or human_seats(events[0]))
        prior = self.reviewed.get(r.partition, {}).get(request.hand_id, frozenset())
        if wanted <= prior:
            self.skipped += 1
            REVIEWS.labels("duplicate").inc()
            log.info("hand %s already reviewed for seats %s", request.hand_id, sorted(wanted))
            return [], None, request.hand_id
        seats = wanted | prior
        review, seconds = await self._review(events, sorted(seats), request.request_id)
        self.done += 1
        REVIEWS.labels("done").inc()
        REVIEW_SECONDS.observe(seconds)
        for d in review.decisions:
            DECISIONS.labels(d.mark).inc()
        log.info(
            "reviewed hand %s for seats %s: %d decisions in %.1f s",
            review.hand_id,
            sorted(seats),
            len(review.decisions),
            seconds,
            extra={"hand_id": review.hand_id, "seconds": round(seconds, 3)},
        )
        out = Outgoing(ANALYSIS_RESULTS, review.hand_id, an.encode(review), r.partition)
        return [out], seats, review.hand_id

    async def _review(
        self, events: list[ev.Event], seats: list[int], request_id: str
    ) -> tuple[an.HandReview, float]:
        assert self.pool is not None
        loop = asyncio.get_running_loop()
        job = loop.run_in_executor(
            self.pool, review_job, events, seats, request_id, self.worlds, self.evaluate
        )
        stopping: asyncio.Future[object] = asyncio.ensure_future(self.stop.wait())
        racing: set[asyncio.Future[object]] = {cast(asyncio.Future[object], job), stopping}
        try:
            await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if not job.done():
            # The service stops: the review is cut off rather than waited for (it may take
            # tens of seconds); nothing of it was written, so it is done again on restart.
            job.cancel()
            self._close_pool()
            raise ReviewCutOff(request_id)
        return job.result()

    def _dead(self, r: Record, reason: str) -> list[Outgoing]:
        self.dead += 1
        REVIEWS.labels("dead_letter").inc()
        log.warning("request at %s/%d@%d set aside: %s", r.topic, r.partition, r.offset, reason)
        return [dead_letters.outgoing("analysis", r, reason)]

    async def _assigned(self, partitions: set[int]) -> None:
        committed = await self.log.group_positions(self.group, ANALYSIS_REQUESTS)
        for p in partitions:
            reviewed: dict[str, frozenset[int]] = {}
            async for record in read_through(self.log, ANALYSIS_RESULTS, p, 0):
                try:
                    review = an.decode_review(record.value)
                except msgspec.DecodeError:
                    continue  # not one of ours: nothing reviewed
                reviewed[review.hand_id] = frozenset(s.seat for s in review.seats)
            self.reviewed[p] = reviewed
            self.positions[p] = committed.get(p, 0)

    async def _revoked(self, partitions: set[int]) -> None:
        for p in partitions:
            self.reviewed.pop(p, None)
            self.positions.pop(p, None)


# --- the service ---------------------------------------------------------------------------


class AnalysisService:
    """Both members in one service: ready when both are, stopped together."""

    def __init__(
        self,
        event_log: EventLog,
        *,
        group: str = REVIEW_GROUP,
        hands_group: str = HANDS_GROUP,
        worlds: int | None = None,
        evaluate: Evaluate | None = None,
        worker: str = "process",
        follow_hands: bool = True,
    ) -> None:
        self.hands = FinishedHands(event_log, group=hands_group) if follow_hands else None
        self.reviewer = Reviewer(
            event_log, group=group, worlds=worlds, evaluate=evaluate, worker=worker
        )
        self.ready = asyncio.Event()

    def _members(self) -> list[GroupMember]:
        return [m for m in (self.hands, self.reviewer) if m is not None]

    async def run(self, stop: asyncio.Event) -> None:
        members = self._members()
        tasks = [asyncio.create_task(m.run(stop)) for m in members]

        async def both_ready() -> None:
            await asyncio.gather(*(m.ready.wait() for m in members))
            self.ready.set()

        marker = asyncio.create_task(both_ready())
        try:
            await asyncio.gather(*tasks)
        finally:
            marker.cancel()
            self.ready.clear()

    def probe(self) -> Health:
        parts = [m.probe() for m in self._members()]  # type: ignore[attr-defined]
        counters: dict[str, int] = {}
        for h in parts:
            counters.update(h.counters)
        review = self.reviewer.probe()
        return Health(
            started=self.ready.is_set() and all(h.started for h in parts),
            partitions=review.partitions,
            lag=review.lag,
            counters=counters,
        )

    @property
    def counters(self) -> Mapping[str, int]:
        return self.probe().counters
