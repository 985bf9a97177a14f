"""``ReviewIndex``: the computer reviews of finished hands as the gateway serves them (issue 21).

The analysis service writes one ``HandReview`` per hand to ``analysis.results`` (compacted,
keyed by hand id: a later review replaces the earlier). The gateway reads that topic from its
start at offset 0 and then follows it, and keeps for every reviewed hand only what its lists
need (where the newest review is, and each reviewed seat's accuracy); a review itself is read
back from its offset when asked for, and the newest few are cached.

Requests go to ``analysis.requests``. The gateway reads that topic too (from offset 0: it is
kept a week), so that any gateway process, and one restarted, knows a hand is waiting for its
review: *pending* while a request is not covered by the hand's newest review and not older
than ``PENDING_MS`` (an analysis service that is down or refused the hand does not leave a
hand pending for ever; the player may ask again).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

import msgspec

from schemas import analysis as an
from services.runtime.log import EventLog, Outgoing, Record, read_through
from services.runtime.topics import ANALYSIS_REQUESTS, ANALYSIS_RESULTS

log = logging.getLogger("mahjong.gateway.reviews")

PENDING_MS = 10 * 60 * 1000
"""How long a request waits for its review before the hand counts as not reviewed again."""

CACHED_REVIEWS = 128

ReviewStatus = Literal["done", "pending", "none"]


@dataclass(frozen=True, slots=True)
class Reviewed:
    """What the index keeps of a hand's newest review."""

    offset: int
    reviewed_at_ms: int
    request_id: str
    accuracy: dict[int, float]
    """Each reviewed seat's accuracy (0-100)."""


class ReviewIndex:
    """The newest review of every hand on ``analysis.results``, and the requests waiting."""

    def __init__(self, event_log: EventLog) -> None:
        self.log = event_log
        self.reviewed: dict[str, Reviewed] = {}
        self.requested: dict[str, an.ReviewRequest] = {}  # hand id -> its newest request
        self.positions = {ANALYSIS_REQUESTS: 0, ANALYSIS_RESULTS: 0}  # next offsets to fold
        self.cache: OrderedDict[str, an.HandReview] = OrderedDict()

    async def start(self) -> None:
        """Fold both topics from offset 0 (the follower, started before, goes on from there;
        what it hands over twice is folded once, by offset)."""
        for topic in (ANALYSIS_REQUESTS, ANALYSIS_RESULTS):
            async for r in read_through(self.log, topic, 0, 0):
                self._fold(r)
        log.info(
            "reviews: %d hands reviewed, %d requested", len(self.reviewed), len(self.requested)
        )

    # --- following ---------------------------------------------------------------------------

    def on_records(self, records: list[Record]) -> None:
        for r in records:
            self._fold(r)

    def _fold(self, r: Record) -> None:
        if r.offset < self.positions.get(r.topic, 0):
            return
        self.positions[r.topic] = r.offset + 1
        try:
            if r.topic == ANALYSIS_RESULTS:
                self._reviewed(r.offset, an.decode_review(r.value))
            elif r.topic == ANALYSIS_REQUESTS:
                self._requested(an.decode_request(r.value))
        except msgspec.DecodeError:
            log.warning("unreadable record on %s at offset %d", r.topic, r.offset)

    def _reviewed(self, offset: int, review: an.HandReview) -> None:
        self.reviewed[review.hand_id] = Reviewed(
            offset=offset,
            reviewed_at_ms=review.reviewed_at_ms,
            request_id=review.request_id,
            accuracy={s.seat: s.accuracy for s in review.seats},
        )
        self.cache.pop(review.hand_id, None)
        self._remember(review)

    def _requested(self, request: an.ReviewRequest) -> None:
        newest = self.requested.get(request.hand_id)
        if newest is None or request.requested_at_ms >= newest.requested_at_ms:
            self.requested[request.hand_id] = request

    def forget_old_requests(self, now_ms: int | None = None) -> None:
        """Drop the requests no longer pending (the gateway's housekeeping)."""
        now = _now_ms() if now_ms is None else now_ms
        old = [h for h, q in self.requested.items() if now - q.requested_at_ms > PENDING_MS]
        for hand_id in old:
            del self.requested[hand_id]

    def _remember(self, review: an.HandReview) -> None:
        self.cache[review.hand_id] = review
        while len(self.cache) > CACHED_REVIEWS:
            self.cache.popitem(last=False)

    # --- asking ------------------------------------------------------------------------------

    def status(self, hand_id: str, now_ms: int | None = None) -> ReviewStatus:
        """``done``: a review is there that covers the newest request; ``pending``: a request
        waits (not older than ``PENDING_MS``) that no review covers yet; ``none``: neither.

        A review covers a request for every human seat (``seats`` empty, what the gateway
        sends) whenever it was written, and one for named seats when it reviewed them all: the
        analysis service answers a request it has already covered with nothing (a review is
        deterministic), so a request that crossed the review on its way must not wait."""
        now = _now_ms() if now_ms is None else now_ms
        request = self.requested.get(hand_id)
        done = self.reviewed.get(hand_id)
        covered = done is not None and (
            request is None or not request.seats or set(request.seats) <= set(done.accuracy)
        )
        if request is not None and now - request.requested_at_ms <= PENDING_MS and not covered:
            return "pending"
        return "done" if done is not None else "none"

    def accuracy(self, hand_id: str, seat: int) -> float | None:
        """A seat's accuracy in its hand's newest review (None: not reviewed)."""
        done = self.reviewed.get(hand_id)
        return None if done is None else done.accuracy.get(seat)

    async def review(self, hand_id: str) -> an.HandReview | None:
        """The hand's newest review (None: none)."""
        cached = self.cache.get(hand_id)
        if cached is not None:
            self.cache.move_to_end(hand_id)
            return cached
        done = self.reviewed.get(hand_id)
        if done is None:
            return None
        for r in await self.log.read(ANALYSIS_RESULTS, 0, done.offset, 1):
            if r.offset == done.offset and r.key == hand_id:
                review = an.decode_review(r.value)
                self._remember(review)
                return review
        return None  # compacted away meanwhile: the follower brings the newer one

    async def request(
        self, hand_id: str, table_id: str, player: str, now_ms: int | None = None
    ) -> an.ReviewRequest:
        """Ask the analysis service to review the hand for every human seat (``seats`` empty):
        one review serves every player of the hand, and a later request by another player
        does not replace it with a review of fewer seats."""
        request = an.ReviewRequest(
            request_id=f"rv-{secrets.token_hex(8)}",
            hand_id=hand_id,
            table_id=table_id,
            requested_by=player,
            requested_at_ms=_now_ms() if now_ms is None else now_ms,
        )
        await self.log.produce([Outgoing(ANALYSIS_REQUESTS, hand_id, an.encode(request))])
        self._requested(request)  # pending at once, before the follower brings it back
        return request


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
