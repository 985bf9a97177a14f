"""The computer review of a hand in the replay viewer (issue 21): a player of a finished
practice hand asks for it, waits while it is pending, then sees each reviewed decision's mark
on its step (the step line, the seat on the board, the marks strip), the options with their
values and the expert's choice, the seat's accuracy, and the accuracy on the hand's My hands
card. Screenshots at three sizes.

The review is the real one: ``mahjong-planet run`` runs the analysis service in-process, which
takes the gateway's request from ``analysis.requests``, reviews the hand with the expert and
writes it to ``analysis.results``. Its marks are the engine's, so the page is checked against
the review the API returns, not against fixed marks. The test's player (``ui_play``) passes
every claim and discards the drawn tile, so the expert finds something to mark.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.players import open_practice
from tests.browser.test_match_flow import shots
from tests.browser.test_replay import play_to_replay

FETCH = """async ([path, method]) => {
  const s = JSON.parse(localStorage.getItem("mp.session"));
  const r = await fetch(path, {method, headers: {authorization: `Bearer ${s.token}`}});
  return {status: r.status, body: await r.json()};
}"""

FEW = 5
"""The options a table shows before "show all" (``FEW_OPTIONS`` in js/review-state.js)."""
ORDER = ["best", "inaccuracy", "mistake", "blunder"]
MARKS = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}


def approx(x: float) -> Any:
    """One decimal as the page rounds it (half away from zero, where Python's float
    formatting may round the other way)."""
    return pytest.approx(x, abs=0.051)


def _percent(text: str) -> float:
    """The percentage in a line such as ``accuracy 68.9%``."""
    found = re.search(r"(\d+(?:\.\d+)?)\s*%", text)
    assert found, text
    return float(found.group(1))


def _api(page: Any, path: str, method: str = "GET") -> dict[str, Any]:
    answer: dict[str, Any] = page.evaluate(FETCH, [path, method])
    return answer


def test_a_practice_hands_review_is_asked_for_and_marks_the_steps_with_their_options(
    browser: Any, server: str, shot: Any
) -> None:
    page = open_practice(browser, server, size=(1366, 768))
    hand_id = play_to_replay(page)
    path = f"/api/hands/{hand_id.replace('#', '%23')}/review"
    review_card = "[data-testid='review']"
    page.wait_for_selector(f"{review_card} [data-action='review-request']")
    assert "Computer review" in page.inner_text(review_card)
    assert _api(page, path)["status"] == 404  # nothing asked for yet

    page.click("[data-action='review-request']")
    page.wait_for_selector("[data-testid='review-pending']")
    # The page polls; the analysis service reviews the hand in the background (seconds, more
    # on a busy machine).
    page.wait_for_selector("[data-testid='review-summary']", timeout=180_000)
    answer = _api(page, path)
    assert answer["status"] == 200 and answer["body"]["status"] == "done", answer
    review = answer["body"]["review"]
    me = page.evaluate("JSON.parse(localStorage.getItem('mp.session')).account.id")
    [mine] = review["seats"]  # a practice hand: only the human seat is reviewed
    assert mine["player_id"] == me and mine["decisions"] == len(review["decisions"]) > 0
    seat = mine["seat"]
    assert all(d["seat"] == seat for d in review["decisions"])
    assert _percent(page.inner_text("[data-testid='review-accuracy']")) == approx(mine["accuracy"])

    # A decision sits on the last replay step at or before its seq: the seat's own exchange
    # choice, not a step of the public replay, shows on the deal.
    steps = page.evaluate(
        """async (path) => { const s = JSON.parse(localStorage.getItem("mp.session"));
          const r = await fetch(path, {headers: {authorization: `Bearer ${s.token}`}});
          return (await r.json()).steps.map((x) => x.seq); }""",
        path.replace("/review", "/replay"),
    )

    def at(d: dict[str, Any]) -> int:
        return max(i for i, q in enumerate(steps) if q <= d["seq"])

    worst_at: dict[int, str] = {}
    for d in review["decisions"]:
        worst_at[at(d)] = max(worst_at.get(at(d), "best"), d["mark"], key=ORDER.index)

    # The marks strip: one tick per step whose decisions were not all the best, in order.
    marked = [d for d in review["decisions"] if d["mark"] != "best"]
    assert marked, "a player who passes every claim and discards what it draws is marked"
    ticks = page.locator("[data-testid='review-tick']")
    expected = [(i, m) for i, m in sorted(worst_at.items()) if m != "best"]
    shown = [
        (int(ticks.nth(i).get_attribute("data-at") or -1), ticks.nth(i).get_attribute("data-mark"))
        for i in range(ticks.count())
    ]
    assert shown == expected

    # The worst decision's step: its mark in the step line, on the seat's name and in the list.
    worst = max(marked, key=lambda d: d["loss"])
    # By keyboard: ticks close together may overlap, and a tick is a button either way.
    ticks.nth([i for i, _ in expected].index(at(worst))).press("Enter")
    mark = worst["mark"]
    page.wait_for_selector(f"[data-testid='step-mark'][data-mark='{mark}']")
    assert MARKS[mark] in page.inner_text("[data-testid='replay-step']")
    on_board = page.locator(f".board [data-seat='{seat}'] [data-part='review-mark']")
    assert on_board.get_attribute("data-mark") == mark
    line = page.inner_text(f"[data-testid='review-decision'][data-mark='{mark}']")
    assert "the computer:" in line and f"gives up {worst['loss']:.2f} points" in line, line
    # Show options: every option with its value, the expert's choice highlighted.
    page.click("[data-action='review-options']")
    rows = page.locator("[data-testid='review-option']")
    options = len(worst["options"])
    assert options >= 2
    # A long list shows the best few and the one played, then every option on demand.
    more = page.locator("[data-action='review-all-options']")
    if options > FEW + 2:
        assert more.count() == 1 and rows.count() in (FEW, FEW + 1)
    shots(page, shot, "review-marked")
    if more.count():
        assert rows.count() < options
        more.click()
    assert rows.count() == options
    best = page.locator("[data-testid='review-option'][data-best='true']")
    assert best.count() == 1 and "computer's choice" in best.inner_text()
    # The best is the best of the options valued in full: a screened-out option's rough value
    # (on a few worlds) may read higher, and is shown as such, below them.
    full = [o for o in worst["options"] if not o.get("screened")]
    top = max(o["value"] for o in full)
    assert f"{top:+.2f}" in best.inner_text()
    assert page.locator("[data-testid='review-option'] .is-screened").count() == (
        len(worst["options"]) - len(full)
    )
    assert all(
        "≈" in t
        for t in page.locator("[data-testid='review-option'] .is-screened").all_inner_texts()
    )
    played = page.locator("[data-testid='review-option'][data-played='true']")
    assert played.count() == 1 and f"{worst['loss']:.2f}" in played.inner_text()

    # A step whose decisions were all the best shows a ✓.
    good = [i for i, m in worst_at.items() if m == "best"]
    assert good, "the player's only choices (a lone legal discard) are the computer's too"
    page.evaluate(
        """(n) => { const s = document.querySelector("[data-testid='replay-slider']");
          s.value = String(n); s.dispatchEvent(new Event("input", {bubbles: true})); }""",
        1 + good[0],
    )
    page.wait_for_selector("[data-testid='step-mark'][data-mark='best']")
    assert "✓" in page.inner_text("[data-testid='replay-step']")

    # My hands: the hand's card shows the accuracy.
    page.goto(f"{server}/#/history")
    page.wait_for_selector("[data-testid='hand-accuracy']")
    assert _percent(page.inner_text("[data-testid='hand-accuracy']")) == approx(mine["accuracy"])
    shots(page, shot, "review-my-hands")
    assert not page.errors
