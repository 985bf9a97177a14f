"""The site's header at three sizes: on a wide screen the links, the account and the language
are one row; on a phone they fold behind ☰, so the header is one row that nothing is cut off
from, and the menu shows the whole name, works by touch and by keyboard, and closes when a
link is followed. Screenshots go to ``docs/images/header-*.png``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_table_layout import DOC_IMAGES

CUT = """(sel) => [...document.querySelectorAll(sel)].filter((n) => n.offsetParent !== null)
  .map((n) => { const r = n.getBoundingClientRect();
    return {text: n.textContent.trim(), left: r.left, right: r.right,
            clipped: n.scrollWidth > n.clientWidth + 1}; })"""


def _open(browser: Any, server: str, size: tuple[int, int], locale: str = "en-GB") -> Any:
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale=locale)
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    page.wait_for_selector("[data-testid='who']", state="attached")
    return page


def _inside(page: Any, selector: str, width: int) -> list[dict[str, Any]]:
    boxes = page.evaluate(CUT, selector)
    assert boxes, selector
    for box in boxes:
        assert box["left"] >= 0 and box["right"] <= width + 0.5, box
        assert not box["clipped"], box
    return list(boxes)


@pytest.mark.parametrize("size", [(1920, 1080), (1366, 768)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_on_a_wide_screen_the_header_is_one_row_with_every_link(
    browser: Any, server: str, size: tuple[int, int]
) -> None:
    page = _open(browser, server, size)
    assert not page.locator("#menu-toggle").is_visible()
    header = page.locator("header.top").bounding_box()
    assert header is not None and header["height"] < 70  # one row
    _inside(page, "header.top nav a, [data-testid='who'], #who button, #lang", size[0])
    page.screenshot(path=str(DOC_IMAGES / f"header-{size[0]}x{size[1]}.png"))
    page.click("nav a[data-nav='ratings']")
    page.wait_for_url("**#/ratings")
    assert page.errors == []


@pytest.mark.parametrize("locale", ["en-GB", "de-DE"])
def test_on_a_phone_the_header_folds_behind_a_menu_that_shows_the_whole_name(
    browser: Any, server: str, locale: str
) -> None:
    page = _open(browser, server, (390, 844), locale)
    toggle = page.locator("#menu-toggle")
    assert toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false"
    assert not page.locator("header.top nav").is_visible()
    header = page.locator("header.top").bounding_box()
    assert header is not None and header["height"] < 60  # one short row
    # Nothing in the header runs past the screen, and the header does not scroll sideways.
    assert page.evaluate(
        "() => { const h = document.querySelector('header.top');"
        " return h.scrollWidth <= h.clientWidth + 1; }"
    )
    _inside(page, "header.top .brand, #menu-toggle", 390)

    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    name = page.inner_text("[data-testid='who']")
    assert name.startswith("Guest-") and name.endswith(")"), name  # "(guest)", "(Gast)"
    boxes = _inside(page, "#menu nav a, [data-testid='who'], #who button, #lang", 390)
    assert any(b["text"] == name for b in boxes)  # the whole name, on the screen
    label = "Menü" if locale == "de-DE" else "Menu"
    assert toggle.get_attribute("aria-label") == label
    if locale == "en-GB":
        page.screenshot(path=str(DOC_IMAGES / "header-menu-390x844.png"))
    # A link closes the menu.
    page.click("#menu nav a[data-nav='history']")
    page.wait_for_url("**#/history")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not page.locator("header.top nav").is_visible()
    # By keyboard: Enter opens it, Escape closes it and gives the focus back to ☰.
    toggle.focus()
    page.keyboard.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "true"
    page.keyboard.press("Escape")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("() => document.activeElement.id") == "menu-toggle"
    # Log in from the menu: the menu gives way to the dialog.
    toggle.click()
    page.locator("#who button").first.click()
    page.wait_for_selector("dialog.auth[open]")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert page.errors == []
