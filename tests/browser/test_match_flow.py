"""The flow around a hand in the browser (issue 16): straight to the table, one-hand rated
games, no deal behind the result, clear states instead of hanging, one seat per tab, live
tables in the lobby. Screenshots of each new screen at three sizes."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx

from tests.browser.players import WsGuests, ui_play
from tests.browser.test_web_client import open_page

SIZES = ((1920, 1080), (1366, 768), (390, 844))


def shots(page: Any, shot: Any, name: str) -> None:
    """The screen at a desktop, a laptop and a phone size (then back to the test's size)."""
    before = page.viewport_size
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(200)
        shot(page, f"{name}-{width}x{height}")
    page.set_viewport_size(before)


def new_tab(page: Any) -> Any:
    """Another page of the same browser (and so the same session)."""
    tab = page.context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.errors = errors
    return tab


def start_practice(page: Any) -> str:
    page.select_option("select[name=pace]", "fast")
    page.click("[data-action='start-practice']")
    page.wait_for_url(re.compile(r".*#/table/.+"))
    page.wait_for_selector(".my-hand")
    return str(page.url.split("#/table/")[1])


# --- 5: clear states instead of hanging -----------------------------------------------------


def test_a_strangers_link_to_a_private_table_says_so_at_once(
    browser: Any, server: str, shot: Any
) -> None:
    owner = open_page(browser, server)
    r = owner.evaluate(
        """async () => {
          const s = JSON.parse(localStorage.getItem("mp.session"));
          const r = await fetch("/api/tables", {method: "POST", headers: {
            "content-type": "application/json", authorization: `Bearer ${s.token}`},
            body: JSON.stringify({options: {public: false, clock: "standard"}})});
          return r.json();
        }"""
    )
    table_id = r["table_id"]
    stranger = open_page(browser, server)
    for target, title in ((table_id, "You cannot open this table"), ("t-no-such-table", None)):
        started = time.monotonic()
        stranger.evaluate(f"location.hash = '#/table/{target}'")
        stranger.wait_for_selector("[data-testid='table-gone']", timeout=1500)
        assert time.monotonic() - started < 1.5
        gone = stranger.inner_text("[data-testid='table-gone']")
        assert "private, or there is no such table" in gone
        assert title is None or title in gone
        if target == table_id:
            shots(stranger, shot, "forbidden")
        # Focus is on the way back, which leads to the lobby.
        assert stranger.evaluate("document.activeElement.dataset.action") == "to-lobby"
    stranger.click("[data-testid='table-gone'] [data-action='to-lobby']")
    stranger.wait_for_selector("[data-action='quick-play']")
    # In German too.
    stranger.select_option("#lang", "de")
    stranger.wait_for_selector("html[lang='de'] [data-action='quick-play']")
    stranger.evaluate(f"location.hash = '#/table/{table_id}'")
    stranger.wait_for_selector("[data-testid='table-gone']", timeout=1500)
    assert "Dieser Tisch lässt sich nicht öffnen" in stranger.inner_text(
        "[data-testid='table-gone']"
    )
    assert "Zurück zur Lobby" in stranger.inner_text("[data-testid='table-gone']")
    assert not stranger.errors


# --- 6: one seat, one driver ------------------------------------------------------------------


def test_a_second_tab_takes_the_seat_and_the_first_says_so(
    browser: Any, server: str, shot: Any
) -> None:
    first = open_page(browser, server)
    table_id = start_practice(first)
    second = new_tab(first)
    second.goto(f"{server}/#/table/{table_id}")
    second.wait_for_selector(".my-hand")
    first.wait_for_selector("[data-testid='opened-elsewhere']", timeout=3000)
    assert "Opened in another tab" in first.inner_text("[data-testid='opened-elsewhere']")
    # The first tab's table is covered (a modal dialog: nothing behind it can be clicked).
    assert first.evaluate("document.querySelector('dialog[open]') !== null")
    assert second.locator("[data-testid='opened-elsewhere']").count() == 0
    shots(first, shot, "opened-elsewhere")
    # The second tab plays the seat: its exchange choice is taken.
    second.wait_for_selector(".actions [data-action='exchange']")
    # "Use here" takes it back; now the second tab is told.
    first.click("[data-action='use-here']")
    first.wait_for_selector("[data-testid='opened-elsewhere']", state="detached")
    first.wait_for_selector(".my-hand")
    second.wait_for_selector("[data-testid='opened-elsewhere']", timeout=3000)
    assert first.locator("[data-testid='opened-elsewhere']").count() == 0
    assert not first.errors and not second.errors


# --- 1: straight to the table ---------------------------------------------------------------


def test_four_quick_play_players_all_see_their_hand_within_five_seconds(
    browser: Any, server: str, shot: Any
) -> None:
    pages = [open_page(browser, server) for _ in range(4)]
    for page in pages[:3]:
        page.click("[data-action='quick-play']")
        page.wait_for_selector("[data-testid='quick-status']:not(:empty)")
    pages[3].click("[data-action='quick-play']")
    # The match: the moment the gateway seats the last player (its lobby has the table).
    token = pages[3].evaluate("JSON.parse(localStorage.getItem('mp.session')).token")
    for _ in range(200):
        lobby = httpx.get(f"{server}/api/lobby", headers={"authorization": f"Bearer {token}"})
        if lobby.json()["table_id"]:
            break
        time.sleep(0.05)
    matched = time.monotonic()
    for page in pages:
        page.wait_for_selector(
            ".my-hand", timeout=max(100, (matched + 5 - time.monotonic()) * 1000)
        )
    assert time.monotonic() - matched < 5
    tables = {p.url.split("#/table/")[1] for p in pages}
    assert len(tables) == 1
    for page in pages:
        assert page.locator(".clock").count() == 4
        assert not page.errors


def _guest(url: str) -> dict[str, str]:
    r = httpx.post(f"{url}/api/auth/guest", timeout=10)
    r.raise_for_status()
    return {"authorization": f"Bearer {r.json()['token']}"}


def test_a_table_found_shows_the_players_and_ratings_until_the_deal(
    browser: Any, server: str, shot: Any
) -> None:
    # Three browsers and one player who never opens the table: the deal waits for them, at
    # most 10 s, and meanwhile the three see who they play against.
    pages = [open_page(browser, server) for _ in range(3)]
    for page in pages:
        page.click("[data-action='quick-play']")
        page.wait_for_selector("[data-testid='quick-status']:not(:empty)")
    absent = _guest(server)
    r = httpx.post(f"{server}/api/quickplay", json={"computers_after_s": 60}, headers=absent)
    assert r.status_code == 200, r.text
    for page in pages:
        page.wait_for_selector("[data-testid='table-status']:has-text('Table found')", timeout=5000)
    found = pages[0].inner_text(".waiting")
    assert found.count("Rating 1500") == 4
    assert found.count("at the table") >= 1 and "opening the table" in found
    assert pages[0].locator(".found-seat").count() == 4
    assert pages[0].locator(".found-seat.is-me").count() == 1
    shots(pages[0], shot, "table-found")
    for page in pages:
        page.wait_for_selector(".my-hand", timeout=15_000)
        assert not page.errors


# --- 2: a rated table plays one hand ----------------------------------------------------------


def _create(page: Any, options: dict[str, Any]) -> dict[str, Any]:
    """A table made through the page's session (the form's options, as the client sends them)."""
    result: dict[str, Any] = page.evaluate(
        """async (options) => {
          const s = JSON.parse(localStorage.getItem("mp.session"));
          const r = await fetch("/api/tables", {method: "POST", headers: {
            "content-type": "application/json", authorization: `Bearer ${s.token}`},
            body: JSON.stringify({options})});
          return r.json();
        }""",
        options,
    )
    return result


def test_a_rated_table_ends_after_one_hand_and_its_players_can_queue_again(
    browser: Any, server: str, shot: Any
) -> None:
    page = open_page(browser, server)
    made = _create(page, {"public": True, "rated": True, "clock": "bullet"})
    table_id = made["table_id"]
    page.goto(f"{server}/#/table/{table_id}")
    page.wait_for_selector("[data-action='leave']")
    guests = WsGuests(server, 3)
    guests.join(table_id, None)
    guests.play(table_id)
    page.wait_for_selector(".my-hand", timeout=20_000)
    ui_play(page, timeout_s=240)
    guests.wait()
    page.wait_for_selector(".overlay [data-action='quick-play-again']")
    assert page.locator(".overlay [data-action='play-again']").count() == 0
    # One hand, then the table is over: nobody is seated there any more.
    me = page.evaluate("JSON.parse(localStorage.getItem('mp.session')).token")
    auth = {"authorization": f"Bearer {me}"}
    for _ in range(50):
        status = httpx.get(f"{server}/api/tables/{table_id}", headers=auth).json()["status"]
        if status == "closed":
            break
        time.sleep(0.1)
    assert status == "closed"
    assert httpx.get(f"{server}/api/lobby", headers=auth).json()["table_id"] is None
    page.wait_for_timeout(2500)
    assert page.inner_text(".hand-id") == "Hand 1"  # and no second hand was dealt
    shots(page, shot, "rated-result")
    # Straight back into the queue, from the result (and the others over the API).
    page.click(".overlay [data-action='quick-play-again']")
    page.wait_for_selector("[data-testid='quick-status']:not(:empty)")
    assert "Waiting" in page.inner_text("[data-testid='quick-status']")
    other = guests.users[0].auth
    r = httpx.post(f"{server}/api/quickplay", json={"computers_after_s": 60}, headers=other)
    assert r.status_code == 200, r.text
    # A stranger with the table's link learns that it has ended.
    stranger = open_page(browser, server)
    stranger.evaluate(f"location.hash = '#/table/{table_id}'")
    stranger.wait_for_selector("[data-testid='table-gone']", timeout=1500)
    assert "This table has ended" in stranger.inner_text("[data-testid='table-gone']")
    shots(stranger, shot, "ended")
    assert not page.errors and not stranger.errors


# --- 3: no deal behind the result -------------------------------------------------------------


def test_no_hand_is_dealt_while_the_result_is_shown(browser: Any, server: str, shot: Any) -> None:
    page = open_page(browser, server)
    table_id = start_practice(page)
    ui_play(page)
    dialog = ".overlay[data-testid='result']"
    page.wait_for_selector(f"{dialog} [data-action='play-again']")
    # Focus is on Close: a key meant for the last discard cannot deal the next hand.
    assert page.evaluate("document.activeElement.dataset.action") == "dismiss"
    assert "Totals after 1 hand" in page.inner_text(dialog)
    page.wait_for_timeout(4000)
    # Still the first hand, its result still shown: nothing was dealt behind it.
    assert page.inner_text(".hand-id") == "Hand 1"
    assert page.locator(dialog).count() == 1
    me = page.evaluate("JSON.parse(localStorage.getItem('mp.session')).token")
    info = httpx.get(
        f"{server}/api/tables/{table_id}", headers={"authorization": f"Bearer {me}"}
    ).json()
    assert info["status"] == "results" and info["hands_played"] == 1
    shots(page, shot, "result-play-again")
    # Closing the result keeps Play again at hand, and it deals the next hand.
    page.click(f"{dialog} [data-action='dismiss']")
    page.wait_for_selector(".actions [data-action='play-again']")
    page.click(".actions [data-action='play-again']")
    page.wait_for_selector(".hand-id:has-text('Hand 2')", timeout=15_000)
    page.wait_for_selector(".my-hand")
    assert page.locator(dialog).count() == 0
    assert not page.errors


# --- 7: live tables in the lobby --------------------------------------------------------------


def test_a_started_public_table_is_listed_and_can_be_watched(
    browser: Any, server: str, shot: Any
) -> None:
    host = open_page(browser, server)
    made = _create(host, {"public": True, "computers": "easy", "clock": None, "pace": "slow"})
    host.goto(f"{server}/#/table/{made['table_id']}")
    host.click("[data-action='fill']")
    host.wait_for_selector(".my-hand", timeout=15_000)
    viewer = open_page(browser, server)
    row = f"[data-testid='public-tables'] li[data-table-id='{made['table_id']}']"
    viewer.wait_for_selector(f"{row}[data-status='started']", timeout=5000)
    text = viewer.inner_text(row)
    assert "in play" in text and "Computer" in text
    assert viewer.locator(f"{row} [data-action='join-table']").count() == 0
    shots(viewer, shot, "lobby-live-table")
    viewer.click(f"{row} [data-action='watch']")
    viewer.wait_for_selector(".board")
    assert "Spectating" in viewer.inner_text(".table-bar")
    assert viewer.locator(".my-hand").count() == 0
    assert not viewer.errors and not host.errors
