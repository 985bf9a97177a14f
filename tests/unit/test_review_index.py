"""The gateway's review index (services/gateway/reviews.py): when a hand reads *pending* and
when *done*, folded from the records of ``analysis.requests`` and ``analysis.results``."""

from __future__ import annotations

from typing import Any, cast

from schemas import analysis as an
from services.gateway.reviews import PENDING_MS, ReviewIndex
from services.runtime.log import EventLog, Record
from services.runtime.topics import ANALYSIS_REQUESTS, ANALYSIS_RESULTS

HAND = "t-1#1"
NOW = 10**12


def _request(request_id: str, at_ms: int, seats: list[int] | None = None) -> an.ReviewRequest:
    return an.ReviewRequest(
        request_id=request_id,
        hand_id=HAND,
        table_id="t-1",
        requested_by="p-1",
        requested_at_ms=at_ms,
        seats=seats or [],
    )


def _review(request_id: str, at_ms: int, seats: list[int]) -> an.HandReview:
    return an.HandReview(
        hand_id=HAND,
        table_id="t-1",
        request_id=request_id,
        seats=[
            an.SeatReview(
                seat=s,
                player_id=f"p-{s}",
                decisions=0,
                best=0,
                inaccuracies=0,
                mistakes=0,
                blunders=0,
                accuracy=100.0,
                points_lost=0.0,
            )
            for s in seats
        ],
        decisions=[],
        reviewed_at_ms=at_ms,
    )


def _index(*items: an.ReviewRequest | an.HandReview) -> ReviewIndex:
    index = ReviewIndex(cast(EventLog, None))
    offsets = {ANALYSIS_REQUESTS: 0, ANALYSIS_RESULTS: 0}
    records: list[Any] = []
    for item in items:
        topic = ANALYSIS_REQUESTS if isinstance(item, an.ReviewRequest) else ANALYSIS_RESULTS
        records.append(Record(topic, 0, offsets[topic], HAND, an.encode(item)))
        offsets[topic] += 1
    index.on_records(records)
    return index


def test_a_request_with_no_review_is_pending() -> None:
    assert _index(_request("a", NOW - 1000)).status(HAND, NOW) == "pending"


def test_a_request_older_than_the_pending_time_is_no_longer_pending() -> None:
    index = _index(_request("a", NOW - PENDING_MS - 1))
    assert index.status(HAND, NOW) == "none"


def test_its_review_makes_the_hand_done() -> None:
    index = _index(_request("a", NOW - 5000), _review("a", NOW - 1000, [0]))
    assert index.status(HAND, NOW) == "done"


def test_a_request_for_the_human_seats_that_crossed_the_review_is_covered_by_it() -> None:
    """Another gateway asked before it saw the review: the analysis service writes nothing
    for it (the seats are reviewed), so the hand must not wait for an answer."""
    index = _index(
        _request("a", NOW - 5000), _review("a", NOW - 3000, [0, 2]), _request("b", NOW - 1000)
    )
    assert index.status(HAND, NOW) == "done"


def test_a_request_for_a_seat_the_review_left_out_is_pending() -> None:
    index = _index(_review("a", NOW - 3000, [0]), _request("b", NOW - 1000, seats=[0, 1]))
    assert index.status(HAND, NOW) == "pending"
    assert index.accuracy(HAND, 0) == 100.0 and index.accuracy(HAND, 1) is None
