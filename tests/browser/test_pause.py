"""Issue 16, point 4: pausing a practice hand stops the computers, and resuming continues
exactly where it stopped, after a reload and after a restart of the server on its data."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from tests.browser.conftest import ARTIFACTS, free_port, running_server
from tests.browser.players import ui_play
from tests.browser.test_web_client import open_page

SIZES = [(1920, 1080), (1366, 768), (390, 844)]


def token(page: Any) -> str:
    return str(json.loads(page.evaluate("localStorage.getItem('mp.session')"))["token"])


def seen(url: str, page: Any, table_id: str) -> dict[str, Any]:
    """What the server holds of the hand: the seat's view, and the hand's logged events."""
    auth = {"authorization": f"Bearer {token(page)}"}
    view = httpx.get(f"{url}/api/tables/{table_id}/view", headers=auth, timeout=10).json()
    export = httpx.get(
        f"{url}/api/hands/{quote(view['hand_id'], safe='')}/export", headers=auth, timeout=10
    ).json()
    return {
        "seq": view["seq"],
        "wall_left": view["wall_left"],
        "paused": view.get("paused"),
        "computers_to_play": view["phase"] == "play" and view["seat"] not in view["pending"],
        "decision_seq": view["decision_seq"],
        "events": [e["type"] for e in export["events"]],
    }


def my_turn(page: Any) -> bool:
    """The seat is to discard (its legal tiles are marked)."""
    return bool(page.locator(".my-hand button.tile.legal").count())


def paused_dialog(page: Any) -> None:
    page.wait_for_selector("dialog.overlay [data-action='resume']", timeout=20_000)


def test_a_paused_practice_hand_stays_paused_through_reloads_and_restarts(
    browser: Any, tmp_path: Path
) -> None:
    data, port, log = tmp_path / "data", free_port(), tmp_path / "server.log"
    with running_server(data, port, log) as url:
        page = open_page(browser, url)
        page.select_option("select[name=pace]", "fast")
        page.click("[data-action='start-practice']")
        page.wait_for_url(re.compile(r".*#/table/.+"))
        table_id = page.url.split("#/table/")[1]
        page.wait_for_selector(".my-hand")
        # Into the play; then discard and pause at once, so the computers are to play: the
        # socket carries the discard to the table first, then the pause.
        ui_play(page, until=lambda pg: pg.locator(".discards .tile").count() >= 6 and my_turn(pg))
        page.locator(".my-hand button.tile.legal").last.click()
        page.click("[data-action='pause']")
        paused_dialog(page)
        page.wait_for_timeout(500)  # the pause is on its way to the table
        at_pause = seen(url, page, table_id)
        # (Today's client-only pause fails here: the computers played on to our turn.)
        assert at_pause["computers_to_play"], "the computers did not stop at the pause"
        page.wait_for_timeout(8_000)
        assert seen(url, page, table_id) == at_pause, "the hand moved while paused"
        assert at_pause["paused"], "the server does not know that the hand is paused"
        assert at_pause["events"][-1] == "hand_paused"
        page.wait_for_function(
            "() => [...document.querySelectorAll('.log-box li')]"
            ".some(li => li.textContent === 'The hand is paused.')"
        )
        # A reload keeps it paused: the server says so, not this browser's storage.
        page.reload()
        paused_dialog(page)
        assert seen(url, page, table_id) == at_pause
        # So does another device signed in to the same account.
        other = another_device(browser, url, page, table_id)
        paused_dialog(other)
        assert other.locator(".my-hand").count() == 1
        other.context.close()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(400)
            page.screenshot(path=str(ARTIFACTS / f"paused-table-{width}x{height}.png"))
        page.set_viewport_size({"width": 1280, "height": 900})
    # The whole platform restarts on the same data: the hand is still paused, as it was.
    with running_server(data, port, log) as url:
        page.reload()
        page.wait_for_selector("body[data-ready='1']", timeout=15_000)
        paused_dialog(page)
        assert seen(url, page, table_id) == at_pause
        page.wait_for_timeout(3_000)  # the computers are back too, and wait
        assert seen(url, page, table_id) == at_pause
        # Resume: play goes on from the very decision that was pending.
        page.click("dialog.overlay [data-action='resume']")
        deadline = time.monotonic() + 30
        while (now := seen(url, page, table_id))["seq"] <= at_pause["seq"] + 1:
            assert time.monotonic() < deadline, "play did not continue after the resume"
            page.wait_for_timeout(200)
        assert not now["paused"]
        assert now["events"][: len(at_pause["events"]) + 1] == [
            *at_pause["events"],
            "hand_resumed",
        ]
        assert page.locator("dialog.overlay [data-action='resume']").count() == 0
        ui_play(page)
        final = seen(url, page, table_id)
        assert final["events"][-1] == "hand_ended"
        assert final["events"].count("hand_paused") == final["events"].count("hand_resumed") == 1
        # The replay steps through the game actions only: the pause and the resume are
        # bookkeeping (docs/rules-decisions.md 35), so no step names them.
        page.click(".overlay a:has-text('Replay')")
        page.wait_for_selector(".replay-bar")
        page.keyboard.press("Home")
        labels = []
        for _ in range(len(final["events"])):
            labels.append(page.inner_text(".replay-step"))
            page.keyboard.press("ArrowRight")
        assert labels[0].startswith("Step 1 of") and "The deal" in labels[0], labels[:2]
        assert not any("paused" in x or "goes on" in x for x in labels), labels
        assert page.errors == []
        page.context.close()


def another_device(browser: Any, url: str, page: Any, table_id: str) -> Any:
    """A second browser with only the session of ``page`` (no practice state of its own)."""
    session = page.evaluate("localStorage.getItem('mp.session')")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    context.add_init_script(f"localStorage.setItem('mp.session', {json.dumps(session)})")
    other = context.new_page()
    other.goto(f"{url}/#/table/{table_id}")
    other.wait_for_selector("body[data-ready='1']", timeout=15_000)
    return other
