"""The computer review of a hand in the replay viewer (issue 21): a player of a finished
practice hand asks for it, waits while it is pending, then sees each reviewed decision's mark
on its step (the step line, the seat on the board, the marks strip), the options with their
values and the expert's choice, each reviewed seat's accuracy, and the accuracy on the hand's
My hands card. Screenshots at three sizes.

STAND-IN: until the analysis service (``services/analysis``, branch h21-analysis) runs in
``mahjong-planet run``, this test answers the gateway's ``ReviewRequest`` itself: it reads
the request from ``analysis.requests`` in the server's embedded log and writes a
``HandReview`` of the hand's discards (made-up values, one blunder, one mistake, one
inaccuracy) to ``analysis.results``. Once the real chain runs, ``answer_as_analysis`` goes
and the test waits for the real review (its marks are then the engine's, not fixed).
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from schemas import analysis as an
from schemas.commands import Discard
from services.runtime.embedded import EmbeddedLog
from services.runtime.log import Outgoing, read_through
from services.runtime.topics import ANALYSIS_REQUESTS, ANALYSIS_RESULTS
from tests.browser.players import open_practice
from tests.browser.test_match_flow import shots
from tests.browser.test_replay import play_to_replay

REPLAY = """async (hand) => {
  const s = JSON.parse(localStorage.getItem("mp.session"));
  const r = await fetch(`/api/hands/${encodeURIComponent(hand)}/replay`,
    {headers: {authorization: `Bearer ${s.token}`}});
  return r.json();
}"""

MARKED = {2: ("blunder", 3.2), 4: ("mistake", 1.1), 6: ("inaccuracy", 0.4)}
"""The stand-in's marks: the seat's discards by their index, with the points given up."""


def _review(replay: dict[str, Any], request: an.ReviewRequest, seat: int) -> an.HandReview:
    """A review of ``seat``'s discards: the options are the tiles it held before each one."""
    steps = replay["steps"]
    decisions: list[an.ReviewedDecision] = []
    for i, step in enumerate(steps):
        e = step["event"]
        if e["type"] != "tile_discarded" or e["seat"] != seat or i == 0:
            continue
        held = sorted(set(steps[i - 1]["view"]["players"][seat]["hand"] or [e["tile"]]))
        played = e["tile"]
        others = [t for t in held if t != played]
        mark, loss = MARKED.get(len(decisions), ("best", 0.0))
        best = others[0] if mark != "best" and others else played
        values = {t: -1.0 - 0.25 * k for k, t in enumerate(others)}
        values[best] = 2.0
        values[played] = 2.0 - loss
        options = sorted(
            (an.OptionValue(option=Discard(seat=seat, tile=t), value=v) for t, v in values.items()),
            key=lambda o: -o.value,
        )
        decisions.append(
            an.ReviewedDecision(
                seat=seat,
                seq=step["seq"],
                kind="turn",
                played=Discard(seat=seat, tile=played),
                best=Discard(seat=seat, tile=best),
                loss=loss,
                mark=mark,
                options=options,
            )
        )
    count = {m: sum(d.mark == m for d in decisions) for m in an.Mark.__args__}
    return an.HandReview(
        hand_id=request.hand_id,
        table_id=request.table_id,
        request_id=request.request_id,
        seats=[
            an.SeatReview(
                seat=seat,
                player_id=replay["steps"][0]["view"]["players"][seat]["player"],
                decisions=len(decisions),
                best=count["best"],
                inaccuracies=count["inaccuracy"],
                mistakes=count["mistake"],
                blunders=count["blunder"],
                accuracy=round(100 * count["best"] / max(1, len(decisions)), 1),
                points_lost=sum(d.loss for d in decisions),
            )
        ],
        decisions=decisions,
        engine="test stand-in",
        reviewed_at_ms=time.time_ns() // 1_000_000,
    )


def answer_as_analysis(data: Path, replay: dict[str, Any], seat: int) -> an.HandReview:
    """The analysis service's part (a stand-in, see the module's docstring): take the
    request from ``analysis.requests`` and write its review to ``analysis.results``."""

    async def go() -> an.HandReview:
        log = EmbeddedLog(data)
        await log.start()
        try:
            for _ in range(100):
                requests = [
                    an.decode_request(r.value)
                    async for r in read_through(log, ANALYSIS_REQUESTS, 0, 0)
                ]
                if requests:
                    break
                await asyncio.sleep(0.1)
            [request] = requests
            assert request.hand_id == replay["hand_id"] and request.seats == []
            review = _review(replay, request, seat)
            await log.produce([Outgoing(ANALYSIS_RESULTS, request.hand_id, an.encode(review))])
            return review
        finally:
            await log.close()

    # Playwright's sync API runs an event loop in this thread: the log's own goes beside it.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, go()).result(timeout=60)


def test_a_practice_hands_review_is_asked_for_and_marks_the_steps_with_their_options(
    browser: Any, server: str, shot: Any, tmp_path: Path
) -> None:
    page = open_practice(browser, server, size=(1366, 768))
    hand_id = play_to_replay(page)
    review_card = "[data-testid='review']"
    page.wait_for_selector(f"{review_card} [data-action='review-request']")
    assert "Computer review" in page.inner_text(review_card)

    page.click("[data-action='review-request']")
    page.wait_for_selector("[data-testid='review-pending']")
    replay = page.evaluate(REPLAY, hand_id)
    me = page.evaluate("JSON.parse(localStorage.getItem('mp.session')).account.id")
    seat = [p["player"] for p in replay["steps"][0]["view"]["players"]].index(me)
    review = answer_as_analysis(tmp_path / "data", replay, seat)

    # The poll brings the review: the summary with the seat's accuracy and counts.
    page.wait_for_selector("[data-testid='review-summary']", timeout=20_000)
    accuracy = page.inner_text("[data-testid='review-accuracy']")
    assert f"{review.seats[0].accuracy:.1f}%" in accuracy, accuracy
    # The marks strip: one tick per step with a decision that was not the best.
    ticks = page.locator("[data-testid='review-tick']")
    assert ticks.count() == 3
    assert [ticks.nth(i).get_attribute("data-mark") for i in range(3)] == [
        "blunder",
        "mistake",
        "inaccuracy",
    ]
    # The blunder's step: its mark in the step line, on the seat's name and in the list.
    ticks.nth(0).click()
    blunder = next(d for d in review.decisions if d.mark == "blunder")
    n = 1 + [s["seq"] for s in replay["steps"]].index(blunder.seq)
    page.wait_for_function(
        "(n) => document.querySelector(\"[data-testid='replay-step']\").innerText"
        ".startsWith(`Step ${n} of`)",
        arg=n,
    )
    assert page.locator("[data-testid='step-mark'][data-mark='blunder']").count() == 1
    assert "??" in page.inner_text("[data-testid='replay-step']")
    mark = page.locator(f".board [data-seat='{seat}'] [data-part='review-mark']")
    assert mark.get_attribute("data-mark") == "blunder"
    line = page.inner_text("[data-testid='review-decision']")
    assert "blunder" in line and "the computer:" in line and "gives up 3.20 points" in line
    # Show options: every option with its value, the expert's choice highlighted.
    page.click("[data-action='review-options']")
    rows = page.locator("[data-testid='review-option']")
    assert rows.count() == len(blunder.options)
    best = page.locator("[data-testid='review-option'][data-best='true']")
    assert best.count() == 1 and "computer's choice" in best.inner_text()
    assert "+2.00" in best.inner_text()
    played = page.locator("[data-testid='review-option'][data-played='true']")
    assert played.count() == 1 and "3.20" in played.inner_text()
    shots(page, shot, "review-blunder")

    # A step whose decision was the best: a ✓, and nothing at the deal.
    good = next(d for d in review.decisions if d.mark == "best")
    page.keyboard.press("Home")
    assert page.locator("[data-testid='review-no-decision']").count() == 1
    n = 1 + [s["seq"] for s in replay["steps"]].index(good.seq)
    page.evaluate(
        """(n) => { const s = document.querySelector("[data-testid='replay-slider']");
          s.value = String(n); s.dispatchEvent(new Event("input", {bubbles: true})); }""",
        n,
    )
    page.wait_for_selector("[data-testid='step-mark'][data-mark='best']")
    assert "✓" in page.inner_text("[data-testid='replay-step']")

    # My hands: the hand's card shows the accuracy.
    page.goto(f"{server}/#/history")
    page.wait_for_selector("[data-testid='hand-accuracy']")
    assert f"{review.seats[0].accuracy:.1f}%" in page.inner_text("[data-testid='hand-accuracy']")
    shots(page, shot, "review-my-hands")
    assert not page.errors
