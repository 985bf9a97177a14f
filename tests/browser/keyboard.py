"""A player who uses only the keyboard: Tab to get somewhere, arrow keys over the hand, Enter
on a tile, and the action keys (E, 1/2/3, H, P, K, N). It reads the page the way a
screen-reader user's tools would (focus, the tiles' data and ARIA state), and never clicks.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

FOCUSED = """() => {
  const a = document.activeElement;
  if (!a || a === document.body) return null;
  return {
    tag: a.tagName, key: a.dataset.key || null, tile: a.dataset.tile || null,
    action: a.dataset.action || null, label: a.getAttribute('aria-label') || a.textContent,
    inHand: Boolean(a.closest('.my-hand')), inActions: Boolean(a.closest('.actions')),
    inDialog: Boolean(a.closest('dialog[open]')),
  };
}"""

STATE = """() => {
  const tiles = [...document.querySelectorAll('.my-hand button.tile')].map((n) => ({
    key: n.dataset.key, tile: n.dataset.tile, legal: n.getAttribute('aria-disabled') !== 'true',
    pressed: n.getAttribute('aria-pressed') === 'true', drawn: n.classList.contains('drawn'),
  }));
  const actions = [...document.querySelectorAll('.actions button[data-action]')].map((b) => ({
    action: b.dataset.action, enabled: !b.disabled, key: b.getAttribute('aria-keyshortcuts'),
  }));
  return {
    tiles, actions,
    result: Boolean(document.querySelector('dialog[open] .result')),
    paused: Boolean(document.querySelector('dialog[open] [data-action="resume"]')),
  };
}"""


def focused(page: Any) -> dict[str, Any] | None:
    result: dict[str, Any] | None = page.evaluate(FOCUSED)
    return result


def tab_to(page: Any, selector: str, limit: int = 80, backwards: bool = False) -> None:
    """Press Tab (Shift+Tab) until the focused element matches ``selector``."""
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
        if page.evaluate("s => Boolean(document.activeElement?.matches(s))", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def _to_hand(page: Any) -> None:
    """From wherever focus is, into the hand (its tab stop)."""
    f = focused(page)
    if f and f["inHand"]:
        return
    if f and f["inActions"]:
        for _ in range(12):  # the hand comes right before the action buttons
            page.keyboard.press("Shift+Tab")
            f = focused(page)
            if f and f["inHand"]:
                return
    page.keyboard.press("ArrowRight")  # anywhere else on the table: arrows go to the hand


def focus_tile(page: Any, key: str) -> bool:
    """Move focus to the hand tile ``key`` with the arrow keys (Home/End to jump)."""
    for _ in range(40):
        _to_hand(page)
        f = focused(page)
        if f is None or not f["inHand"]:
            continue
        if f["key"] == key:
            return True
        keys = [t["key"] for t in page.evaluate(STATE)["tiles"]]
        if key not in keys or f["key"] not in keys:
            return False  # the hand changed under us: look again
        here, there = keys.index(f["key"]), keys.index(key)
        if there == 0:
            page.keyboard.press("Home")
        elif there == len(keys) - 1:
            page.keyboard.press("End")
        else:
            page.keyboard.press("ArrowRight" if there > here else "ArrowLeft")
    return False


class KeyboardPlayer:
    """Plays one seat with the keyboard; ``step`` makes at most one decision."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.keys_used: Counter[str] = Counter()
        self.announcements: list[str] = []

    def press(self, key: str) -> None:
        self.keys_used[key] += 1
        self.page.keyboard.press(key)

    def listen(self) -> None:
        lines = self.page.evaluate(
            "() => [...document.querySelectorAll('#announce-polite p, #announce-assertive p')]"
            ".map((p) => p.textContent)"
        )
        for line in lines:
            if not self.announcements or line not in self.announcements[-12:]:
                self.announcements.append(line)

    def step(self) -> bool:
        s = self.page.evaluate(STATE)
        self.listen()
        actions = {a["action"]: a for a in s["actions"] if a["enabled"]}
        shown = {a["action"] for a in s["actions"]}
        tiles = s["tiles"]
        if "exchange" in shown and any(t["legal"] for t in tiles):
            return self.exchange(tiles)
        missing = [a for a in actions if a.startswith("missing-")]
        if missing:
            counts = Counter(t["tile"][1] for t in tiles)
            suit = min("mps", key=lambda x: counts[x])
            self.press(str("mps".index(suit) + 1))
            return True
        if "hu" in actions:
            self.press("h")
            return True
        if "pass" in actions:
            self.press("n")
            return True
        legal = [t for t in tiles if t["legal"]]
        if legal and not s["result"]:
            drawn = [t for t in legal if t["drawn"]]
            target = (drawn or legal)[0]
            if focus_tile(self.page, target["key"]):
                self.press("Enter")
                return True
        return False

    def exchange(self, tiles: list[dict[str, Any]]) -> bool:
        counts = Counter(t["tile"][1] for t in tiles)
        chosen = [t for t in tiles if t["pressed"]]
        if len(chosen) < 3:
            suit = next(x for x in "mps" if counts[x] >= 3)
            wanted = [t for t in tiles if t["tile"][1] == suit][:3]
            for t in chosen:  # a tile of another suit: unselect it
                if t not in wanted and focus_tile(self.page, t["key"]):
                    self.press("Enter")
            for t in wanted:
                if not t["pressed"] and focus_tile(self.page, t["key"]):
                    self.press("Enter")
            return True
        self.press("e")
        return True

    def play(self, timeout_s: float = 240) -> None:
        """Until the result dialog shows."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.page.locator("dialog[open] .result").count():
                self.listen()
                return
            if not self.step():
                self.page.wait_for_timeout(100)
        raise AssertionError("the hand did not end in time")
