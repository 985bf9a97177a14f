"""My hands and the leaderboard in the browser (issue 20): a card per finished hand with its
date, kind, the other players by name, points, place and best fan; the kind filter; pages;
a card opens the replay. The leaderboard lists a provisional player, marked, and the
player's own rank. Screenshots at three sizes."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser.players import WsGuests, ui_play
from tests.browser.test_match_flow import shots, start_practice
from tests.browser.test_web_client import open_page
from tests.service.gateway_harness import User, connect, play_with_bot

PAGE = 10  # hands per page (pages.js HAND_PAGE)
QUICK_PRACTICE = {"public": False, "clock": None, "computers": "easy", "pace": "instant"}


def _me(page: Any) -> User:
    s = page.evaluate("JSON.parse(localStorage.getItem('mp.session'))")
    return User(s["token"], s["account"]["id"], s["account"]["name"])


def _post(url: str, user: User, path: str, body: Any = None) -> dict[str, Any]:
    r = httpx.post(url + path, json=body, headers=user.auth, timeout=30)
    assert r.status_code in (200, 201), r.text
    out: dict[str, Any] = r.json()
    return out


def _leave(url: str, user: User, table_id: str) -> None:
    """Leave the table, unless the end of its hand freed the seat already."""
    r = httpx.post(f"{url}/api/tables/{table_id}/leave", headers=user.auth, timeout=30)
    assert r.status_code == 200 or r.json()["code"] == "not_seated", r.text


def _play(url: str, users: list[User], table_id: str) -> None:
    """The users' seats at ``table_id`` played by bots through the WebSocket to the end."""
    ws_url = url.replace("http://", "ws://") + "/ws"

    async def go() -> None:
        sockets = [await connect(ws_url, u, table_id) for u in users]
        await asyncio.wait_for(asyncio.gather(*(play_with_bot(s) for s in sockets)), 150)
        for s in sockets:
            await s.close()

    # In a thread of its own: Playwright's sync API holds this thread's event loop.
    errors: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(go())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(180)
    assert not thread.is_alive(), "the hand did not end in time"
    if errors:
        raise errors[0]


def _practice_hands(url: str, me: User, n: int) -> None:
    """``n`` practice hands for real: a private table with computers at the instant pace,
    the player's seat played by a bot, then left."""
    for _ in range(n):
        table_id = _post(url, me, "/api/tables", {"options": QUICK_PRACTICE})["table_id"]
        _post(url, me, f"/api/tables/{table_id}/fill")
        _play(url, [me], table_id)
        _leave(url, me, table_id)


def _rated_hand(url: str, me: User) -> list[User]:
    """One rated hand of ``me`` and three guests (each then provisional: one rated hand)."""
    opened = _post(url, me, "/api/tables", {"options": {"rated": True, "clock": "bullet"}})
    table_id = opened["table_id"]
    guests = WsGuests(url, 3)
    guests.join(table_id, opened.get("code"))
    _play(url, [me, *guests.users], table_id)
    _leave(url, me, table_id)
    return guests.users


def _until_listed(url: str, me: User, n: int) -> None:
    """The history projection has the player's ``n`` hands."""
    for _ in range(200):
        r = httpx.get(f"{url}/api/players/{me.id}/hands?limit=1", headers=me.auth, timeout=10)
        if r.headers.get("x-total-count") == str(n):
            return
        time.sleep(0.1)
    raise AssertionError(f"the history does not list {n} hands")


def test_my_hands_shows_who_played_when_filters_by_kind_pages_and_opens_the_replay(
    browser: Any, server: str, shot: Any
) -> None:
    page = open_page(browser, server)
    me = _me(page)
    # Away from the page while bots play the seat: the page would follow it to the table.
    page.goto("about:blank")
    others = _rated_hand(server, me)
    _practice_hands(server, me, PAGE - 1)
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    # And one practice hand played through the page, to its result.
    practice = start_practice(page)
    ui_play(page)
    _leave(server, me, practice)
    _until_listed(server, me, PAGE + 1)

    page.goto(server + "/#/history")
    page.wait_for_selector("[data-testid=hand]")
    cards = page.locator("[data-testid=hand]")
    assert cards.count() == PAGE
    status = page.locator("[data-testid=hands-range]")
    assert status.inner_text() == f"Hands 1–{PAGE} of {PAGE + 1} · page 1 of 2"
    # The newest first: the practice hand just played, against the computers by name.
    first = cards.nth(0)
    assert first.get_attribute("data-kind") == "practice"
    text = first.inner_text()
    assert "Practice" in text and "with Computer" in text and "computer:" not in text
    assert re.search(r"\b20\d\d\b", text)  # the date, in the page's language
    assert re.search(r"\d{1,2}:\d\d", text)  # and the time
    assert re.search(r"place [1-4]", text)
    assert page.locator("[data-testid=hands-previous]").is_disabled()
    shots(page, shot, "my-hands")

    # The next page: the oldest hand, the rated one, with the other players by name.
    page.click("[data-testid=hands-next]")
    expect(status).to_contain_text("page 2")
    assert status.inner_text() == f"Hands {PAGE + 1}–{PAGE + 1} of {PAGE + 1} · page 2 of 2"
    assert cards.count() == 1
    rated = cards.nth(0).locator("[data-testid=hand-others]").inner_text()
    assert rated.startswith("with ") and all(u.name in rated for u in others), rated
    assert me.name not in rated
    assert page.locator("[data-testid=hands-next]").is_disabled()
    page.click("[data-testid=hands-previous]")
    expect(status).to_contain_text("page 1")

    # The kind filter: rated only, then practice only (one page of ten).
    page.click(".hands-kinds [data-kind=rated]")
    expect(cards).to_have_count(1)
    assert cards.nth(0).get_attribute("data-kind") == "rated"
    assert page.locator(".hands-kinds [data-kind=rated]").get_attribute("aria-pressed") == "true"
    assert status.inner_text() == "Hands 1–1 of 1 · page 1 of 1"
    shots(page, shot, "my-hands-rated")
    page.click(".hands-kinds [data-kind=quick_play]")
    expect(cards).to_have_count(0)
    assert status.inner_text() == "No finished hand of the kind Quick Play yet."
    page.click(".hands-kinds [data-kind=practice]")
    expect(status).to_contain_text(f"of {PAGE} ")
    expect(cards).to_have_count(PAGE)
    kinds = {cards.nth(i).get_attribute("data-kind") for i in range(PAGE)}
    assert kinds == {"practice"}
    assert page.locator("[data-testid=hands-next]").is_disabled()

    # No sideways scroll on a phone.
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(200)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.set_viewport_size({"width": 1280, "height": 900})

    # A card opens that hand's replay.
    hand_id = cards.nth(0).get_attribute("data-hand")
    assert hand_id
    cards.nth(0).locator("a.hand-open").click()
    page.wait_for_url(re.compile(r".*#/replay/.+"))
    assert page.url.endswith("#/replay/" + hand_id.replace("#", "%23"))
    page.wait_for_selector(".replay-step")
    assert not page.errors, page.errors

    # The leaderboard: everyone of the rated hand, provisional and marked, with my rank.
    page.goto(server + "/#/ratings")
    page.wait_for_selector("[data-testid=leader]")
    lines = page.locator("[data-testid=leader]")
    assert lines.count() == 4
    assert page.locator("[data-testid=leader] .badge.provisional").count() == 4
    mine = page.locator("tr.is-me[data-testid=leader]")
    assert mine.count() == 1
    rank = mine.locator("td").nth(0).inner_text()
    assert (
        page.locator("[data-testid=my-rank]").inner_text() == f"Rank {rank} of 4 on the leaderboard"
    )
    link = mine.locator("a")
    assert link.inner_text() == me.name
    assert link.get_attribute("href") == f"#/player/{me.id}"
    change = page.locator("[data-testid=rating-change]").first.inner_text()
    assert not change.startswith("-0") and change != "-0.0"
    shots(page, shot, "leaderboard")
    assert not page.errors, page.errors
