"""The profile page (js/profile.js) in headless Chromium against ``mahjong-planet run``: four
guests play rated hands (bullet clock, four humans through the WebSocket, bots deciding from
their own seat views) and a private casual one; the player's page then has one chart point
per rated hand, the figures and places from the hand history, in English and German, and a
stranger's view of it leaves out the private hand."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.players import WsGuests
from tests.service.gateway_harness import User

RATED_HANDS = 3
SIZES = [(1920, 1080), (1366, 768), (390, 844)]


def _play_table(server: str, guests: WsGuests, options: dict[str, Any]) -> str:
    host = guests.users[0]
    for _ in range(100):  # the last table may still be closing: its seats free a moment later
        r = httpx.post(
            f"{server}/api/tables", json={"options": options}, headers=host.auth, timeout=10
        )
        if r.status_code == 201:
            break
        time.sleep(0.2)
    assert r.status_code == 201, r.text
    table_id, code = r.json()["table_id"], r.json()["code"]
    for u in guests.users[1:]:
        r = httpx.post(
            f"{server}/api/tables/{table_id}/join", json={"code": code}, headers=u.auth, timeout=10
        )
        assert r.status_code == 200, r.text
    guests.play(table_id)
    guests.wait(300)
    return str(table_id)


def _get(server: str, user: User, path: str) -> Any:
    r = httpx.get(f"{server}{path}", headers=user.auth, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


def _until(check: Any, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.3)


def _page(browser: Any, server: str, user: User, hash_: str, size: tuple[int, int]) -> Any:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale="en-GB")
    session = {"token": user.token, "expires_ms": 2**52, "account": {"id": user.id}}
    stored = json.dumps(json.dumps(session))
    context.add_init_script(f"localStorage.setItem('mp.session', {stored})")
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(f"{server}/{hash_}")
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    return page


def test_the_profile_chart_has_one_point_per_rated_hand_and_the_figures_show(
    browser: Any, server: str, shot: Any
) -> None:
    guests = WsGuests(server, 4)
    me = guests.users[0]
    for _ in range(RATED_HANDS):
        _play_table(server, guests, {"rated": True, "clock": "bullet", "public": True})
    _play_table(server, guests, {"rated": False, "clock": None, "public": False})
    _until(lambda: _get(server, me, f"/api/players/{me.id}")["rated_hands"] == RATED_HANDS)
    _until(lambda: _get(server, me, f"/api/players/{me.id}/stats")["hands"] == RATED_HANDS + 1)
    history = _get(server, me, f"/api/players/{me.id}/ratings")
    stats = _get(server, me, f"/api/players/{me.id}/stats")
    assert len(history) == RATED_HANDS and stats["rated"] == RATED_HANDS and stats["casual"] == 1

    page = _page(browser, server, me, "#/lobby", SIZES[0])
    page.click("nav a[data-nav='profile']")  # "My profile" leads to one's own page
    page.wait_for_selector("[data-testid='rating-chart'] circle[data-point]")
    assert page.url.endswith(f"#/player/{me.id}")
    assert page.get_attribute("nav a[data-nav='profile']", "aria-current") == "page"
    points = page.locator("[data-testid='rating-chart'] circle[data-point]")
    assert points.count() == RATED_HANDS
    assert [points.nth(i).get_attribute("data-hand") for i in range(RATED_HANDS)] == [
        c["hand_id"] for c in history
    ]
    # Each point's title names the hand, the change and the rating after it.
    first = points.nth(0).locator("title").text_content() or ""
    assert history[0]["hand_id"] in first and f"{history[0]['rating_after']:.1f}" in first
    # Axes with labelled ticks on both.
    assert page.locator("[data-testid='rating-chart'] text.tick.y").count() >= 2
    assert page.locator("[data-testid='rating-chart'] text.tick.x").count() >= 2
    # The rating, provisional, and the counts.
    assert page.inner_text("[data-testid='profile-rating']") == str(round(stats_rating(me, server)))
    assert "Provisional: 3 of 10" in page.inner_text("[data-testid='profile-provisional']")
    assert page.inner_text("[data-testid='profile-counts']").startswith(
        "3 rated hands · 1 casual hand"
    )
    cards = page.locator("[data-testid='figures'] .figure-card")
    assert cards.count() == 8
    assert page.inner_text("[data-figure='hands'] .figure-value") == "4"
    win = page.inner_text("[data-figure='win_rate'] .figure-detail")
    assert win == f"{stats['wins']} of 4 hands"
    bars = page.locator("[data-testid='places'] .place-bar")
    assert bars.count() == 4
    counts = [int(bars.nth(i).inner_text().split("\n")[-1].split(" ")[0]) for i in range(4)]
    assert counts == stats["places"] and sum(counts) == 4
    # Each bar's length is its count against the most common place's.
    widths = page.eval_on_selector_all(
        "[data-testid='places'] .bar",
        "bars => bars.map(b => b.getBoundingClientRect().width / b.parentNode.clientWidth)",
    )
    most = max(counts)
    assert [round(w, 2) for w in widths] == [round(c / most, 2) for c in counts]
    shot(page, "en-1920")
    for width, height in SIZES[1:]:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(400)  # the chart is redrawn to the new width
        box = page.locator("[data-testid='rating-chart']").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 1
        assert page.locator("[data-testid='rating-chart'] circle[data-point]").count() == (
            RATED_HANDS
        )
        shot(page, f"en-{width}")
    # Only the rated hands' figures.
    page.select_option("select[name=kind]", "rated")
    expect(page.locator("[data-figure='hands'] .figure-value")).to_have_text("3")
    expect(page.locator("[data-figure='hands'] .figure-detail")).to_have_text("3 rated · 0 casual")
    # German: every label of the page. On a phone the language is behind the ☰ menu.
    page.click("#menu-toggle")
    page.select_option("#lang", "de")
    page.keyboard.press("Escape")
    page.wait_for_selector("h2:has-text('Wertung im Verlauf')")
    assert page.locator("[data-testid='rating-chart'] circle[data-point]").count() == RATED_HANDS
    assert "Gewinnquote" in page.inner_text("[data-testid='figures']")
    assert "1." in page.inner_text("[data-testid='places']")
    shot(page, "de-390")
    assert not page.errors

    # A stranger sees the rated (public) hands, not the private casual one.
    stranger = User(**_guest(server))
    other = _page(browser, server, stranger, f"#/player/{me.id}", SIZES[1])
    other.wait_for_selector("[data-testid='rating-chart'] circle[data-point]")
    assert other.locator("[data-testid='rating-chart'] circle[data-point]").count() == 3
    assert other.inner_text("[data-figure='hands'] .figure-value") == "3"
    assert other.get_attribute("nav a[data-nav='profile']", "aria-current") is None
    shot(other, "stranger-1366")
    assert not other.errors


def stats_rating(user: User, server: str) -> float:
    return float(_get(server, user, f"/api/players/{user.id}")["rating"])


def _guest(server: str) -> dict[str, str]:
    body = httpx.post(f"{server}/api/auth/guest", timeout=10).json()
    return {"token": body["token"], "id": body["account"]["id"], "name": body["account"]["name"]}
