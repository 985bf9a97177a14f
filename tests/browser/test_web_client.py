"""The web client in headless Debian Chromium against ``mahjong-planet run``."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.browser.conftest import ROOT
from tests.browser.players import WsGuests, ui_play


def open_page(browser: Any, url: str, hash_: str = "") -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    page.goto(url + "/" + hash_)
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    return page


def create_table_in_ui(page: Any, *, private: bool, clock: str = "") -> str:
    page.select_option("select[name=visibility]", "private" if private else "public")
    page.select_option("select[name=clock]", clock)
    page.click("[data-action='create-table']")
    page.wait_for_url(re.compile(r".*#/table/.+"))
    return page.url.split("#/table/")[1]


def test_a_hand_is_played_to_its_end_through_the_ui(browser: Any, server: str, shot: Any) -> None:
    page = open_page(browser, server)
    shot(page, "lobby")
    table_id = create_table_in_ui(page, private=True)
    page.wait_for_selector("[data-testid='invite-code']")
    code = page.inner_text("[data-testid='invite-code']")
    shot(page, "waiting")
    guests = WsGuests(server, 3)
    guests.join(table_id, code)
    guests.play(table_id)
    page.wait_for_selector(".my-hand")
    shot(page, "exchange")
    ui_play(page)
    shot(page, "result")
    result = page.inner_text(".overlay .result")
    assert "Settlement" in result
    guests.wait()
    # The replay steps through the finished hand, every hand shown, with the seed.
    page.click(".overlay a:has-text('Replay')")
    page.wait_for_selector(".replay-bar")
    assert page.inner_text(".replay-step").startswith("Step 1 of")
    page.keyboard.press("End")
    assert re.search(r"Step (\d+) of \1", page.inner_text(".replay-step"))
    page.keyboard.press("Home")
    assert page.inner_text(".replay-step").startswith("Step 1 of")
    for _ in range(60):
        page.keyboard.press("ArrowRight")
    assert page.locator(".board .concealed .tile:not(.tile-back)").count() > 13
    assert len(page.inner_text(".fairness code >> nth=1")) == 64
    shot(page, "replay")
    # The hand is in the history; the ratings page shows the (casual: unchanged) rating.
    page.click("nav a[data-nav='history']")
    page.wait_for_selector(".hands .hand-card")
    page.click("nav a[data-nav='ratings']")
    page.wait_for_selector("[data-testid='my-rating']")
    assert page.inner_text("[data-testid='my-rating']") == "1500"
    assert not page.errors


def test_a_private_table_cannot_be_joined_without_its_code(
    browser: Any, server: str, shot: Any
) -> None:
    owner = open_page(browser, server)
    table_id = create_table_in_ui(owner, private=True, clock="standard")
    owner.wait_for_selector("[data-testid='invite-code']")
    code = owner.inner_text("[data-testid='invite-code']")
    other = open_page(browser, server)
    other.fill("input[name=table]", table_id)
    other.click("[data-action='join-code']")
    other.wait_for_selector(".notice:not(:empty)")
    assert "no such table" in other.inner_text(".notice").lower()
    assert "#/table/" not in other.url
    shot(other, "refused")
    # Not in the public list either, and the socket refuses a stranger.
    assert table_id not in other.inner_text("[data-testid='public-tables']")
    other.goto(f"{server}/#/table/{table_id}")
    other.wait_for_selector(".connection")
    other.wait_for_timeout(500)
    assert other.locator(".my-hand").count() == 0
    # With the code, the same player gets the seat.
    other.goto(f"{server}/#/join/{table_id}/{code}")
    other.wait_for_url(re.compile(r".*#/table/.+"))
    other.wait_for_selector(".seats li")
    assert other.locator(".seats li:not(.empty)").count() == 2
    r = httpx.get(f"{server}/api/lobby", headers={"authorization": "Bearer x"})
    assert r.status_code == 401


def _held_tiles(page: Any) -> list[str]:
    """The seat's concealed tiles, in the order the table shows them."""
    return page.eval_on_selector_all(".my-hand .tile", "ns => ns.map(n => n.dataset.tile)")


def test_practice_against_computers_pauses_resumes_and_keeps_its_result(
    browser: Any, server: str, shot: Any
) -> None:
    page = open_page(browser, server)
    page.select_option("select[name=pace]", "fast")
    page.click("[data-action='start-practice']")
    page.wait_for_url(re.compile(r".*#/table/.+"))
    table_url = page.url
    page.wait_for_selector(".my-hand")
    names = page.inner_text(".board")
    assert names.count("Computer") == 3
    # Play a while, pause, then reload mid-hand: the same hand comes back, still paused.
    # (Paused first, so the computers cannot move, and the seat cannot draw, between the
    # look before the reload and the look after it.)
    ui_play(page, until=lambda pg: pg.locator(".discards .tile").count() >= 8)
    page.click("[data-action='pause']")
    page.wait_for_selector(".overlay [data-action='resume']")
    before = page.inner_text(".hand-id")
    held = _held_tiles(page)
    rivers = page.locator(".discards .tile").count()
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector(".overlay [data-action='resume']")
    page.wait_for_selector(".my-hand")
    assert page.url == table_url and page.inner_text(".hand-id") == before
    assert _held_tiles(page) == held
    assert page.locator(".discards .tile").count() == rivers
    shot(page, "paused")
    page.click(".overlay [data-action='resume']")
    page.wait_for_selector(".overlay [data-action='resume']", state="detached")
    shot(page, "resumed")
    # The English table view of the README (the German one: test_accessibility.py).
    page.mouse.move(0, 0)
    page.screenshot(path=str(ROOT / "docs" / "images" / "table-view.png"))
    ui_play(page)
    shot(page, "result")
    score = page.inner_text("[data-testid='result-score']")
    # The result is in the last-ten list, and stays there after a reload.
    page.goto(server + "/#/lobby")
    page.wait_for_selector("[data-testid='practice-results'] li")
    assert page.locator("[data-testid='practice-results'] li").count() == 1
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    results = page.inner_text("[data-testid='practice-results']")
    assert score.split(":")[-1].strip().lstrip("+") in results
    shot(page, "results")
    assert not page.errors


def test_four_browsers_play_a_hand_with_clocks(browser: Any, server: str, shot: Any) -> None:
    pages = [open_page(browser, server) for _ in range(4)]
    table_id = create_table_in_ui(pages[0], private=False, clock="standard")
    for page in pages[1:]:
        page.wait_for_selector("[data-testid='public-tables'] li:has-text('Join')")
        page.locator("[data-testid='public-tables'] li button").first.click()
        page.wait_for_url(re.compile(f".*#/table/{table_id}"))
    for page in pages:
        page.wait_for_selector(".my-hand", timeout=20_000)
    assert pages[0].locator(".clock").count() == 4
    shot(pages[0], "opening")
    from tests.browser.players import ui_step

    running_seen = False
    for _ in range(3000):
        done = [p.locator(".overlay .result").count() > 0 for p in pages]
        if all(done):
            break
        for page, finished in zip(pages, done, strict=True):
            if not finished:
                ui_step(page)
        running_seen = running_seen or pages[0].locator(".clock.running").count() > 0
    else:
        raise AssertionError("the hand did not end")
    assert running_seen
    shot(pages[0], "result")
    for page in pages:
        assert "Settlement" in page.inner_text(".overlay .result")
        assert not page.errors
