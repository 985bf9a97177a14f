"""The flow around a hand in the browser (issue 16): straight to the table, one-hand rated
games, no deal behind the result, clear states instead of hanging, one seat per tab, live
tables in the lobby. Screenshots of each new screen at three sizes."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx

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
    matched = time.monotonic()
    pages[3].click("[data-action='quick-play']")
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
