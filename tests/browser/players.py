"""Players for the browser tests.

``ui_play`` plays a seat through the web page the way a person would: it reads only what the
page shows (highlighted tiles, enabled buttons) and clicks (or presses keys).

``WsGuests`` seats guest users at a table through the REST API and plays them through the
gateway's WebSocket with a bot, each from its own ``SeatView``, like any other client. (A
stand-in for the humans of multi-player tests; computer seats are the bots service's.)
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx

from tests.service.gateway_harness import User, connect, play_with_bot


def open_practice(
    browser: Any,
    server: str,
    size: tuple[int, int] = (1366, 768),
    before: Callable[[Any], None] | None = None,
    **context: Any,
) -> Any:
    """A fresh guest's page at a practice table of three fast computers, its hand shown.
    ``page.errors`` collects the page's script errors; ``before(page)`` runs before the
    page loads (to listen to its socket)."""
    ctx = browser.new_context(
        viewport={"width": size[0], "height": size[1]}, locale="en-GB", **context
    )
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    if before is not None:
        before(page)
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    page.select_option("select[name=pace]", "fast")
    page.click("[data-action='start-practice']")
    page.wait_for_url(re.compile(r".*#/table/.+"))
    page.wait_for_selector(".my-hand")
    return page


class WsGuests:
    """``n`` guests who join ``table_id`` (with ``code``) and play it with bots."""

    def __init__(self, url: str, n: int) -> None:
        self.url = url
        self.users: list[User] = []
        for _ in range(n):
            r = httpx.post(f"{url}/api/auth/guest", timeout=10)
            r.raise_for_status()
            body = r.json()
            self.users.append(User(body["token"], body["account"]["id"], body["account"]["name"]))
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def join(self, table_id: str, code: str | None) -> None:
        for u in self.users:
            r = httpx.post(
                f"{self.url}/api/tables/{table_id}/join",
                json={"code": code},
                headers=u.auth,
                timeout=10,
            )
            assert r.status_code == 200, r.text

    def play(self, table_id: str, hands: int = 1) -> None:
        ws_url = self.url.replace("http://", "ws://") + "/ws"

        async def go() -> None:
            sockets = [await connect(ws_url, u, table_id) for u in self.users]
            await asyncio.gather(*(play_with_bot(s, hands=hands) for s in sockets))
            for s in sockets:
                await s.close()

        def run() -> None:
            try:
                asyncio.run(go())
            except BaseException as exc:  # reported by wait()
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def wait(self, timeout: float = 120) -> None:
        assert self.thread is not None
        self.thread.join(timeout)
        if self.error is not None:
            raise self.error


def _click(locator: Any) -> bool:
    try:
        if locator.count() and locator.first.is_enabled():
            locator.first.click(timeout=2000)
            return True
    except Exception:
        return False  # the page re-rendered under the click: look again
    return False


def ui_step(page: Any) -> bool:
    """One decision through the page, if one is offered; True if something was clicked."""
    if page.locator(".actions [data-action='exchange']").count():
        if not page.locator(".my-hand button.tile.legal").count():
            return False  # sent: waiting for the others
        try:
            tiles = page.locator(".my-hand button.tile")
            names = tiles.evaluate_all("ns => ns.map(n => n.dataset.tile)")
            if page.locator(".my-hand button.tile.selected").count() < 3:
                counts = Counter(n[1] for n in names if n)
                suit = next(s for s in "mps" if counts[s] >= 3)
                for i in [i for i, n in enumerate(names) if n and n[1] == suit][:3]:
                    if "selected" not in (tiles.nth(i).get_attribute("class") or ""):
                        tiles.nth(i).click(timeout=2000)
        except Exception:
            return False
        return _click(page.locator("[data-action='exchange']"))
    missing = page.locator("[data-action^='missing-']")
    if missing.count():
        names = page.locator(".my-hand button.tile").evaluate_all(
            "ns => ns.map(n => n.dataset.tile)"
        )
        counts = Counter(n[1] for n in names if n)
        suit = min("mps", key=lambda s: counts[s])
        return _click(page.locator(f"[data-action='missing-{suit}']"))
    for action in ("hu", "pass"):
        if _click(page.locator(f"[data-action='{action}']")):
            return True
    legal = page.locator(".my-hand button.tile.legal")
    if legal.count():
        drawn = page.locator(".my-hand button.tile.legal.drawn")
        return _click(drawn if drawn.count() else legal)
    return False


def ui_play(page: Any, timeout_s: float = 180, until: Any = None) -> None:
    """Play through the page until the result dialog shows (or ``until(page)`` is true)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if page.locator(".overlay .result").count():
            return
        if until is not None and until(page):
            return
        if not ui_step(page):
            page.wait_for_timeout(100)
    raise AssertionError("the hand did not end in time")
