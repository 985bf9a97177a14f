"""Unicode display names in the browser (issue 20): registering as 李小龙 through the header's
dialog, the name at a table with three players of long Chinese names (seat labels at a
phone's size) and in a practice hand's settlement, and a name that is too long refused with
the reason while the typed name stays whole. Screenshots of each screen at three sizes."""

from __future__ import annotations

from typing import Any

import httpx

from tests.browser.players import WsGuests, ui_play
from tests.browser.test_match_flow import _create, shots, start_practice
from tests.browser.test_web_client import open_page

LONG_NAMES = ("诸葛孔明" * 6, "司马懿仲达" * 4 + "司马懿仲", "欧阳修" * 8)  # 24 characters each


def open_register(page: Any) -> Any:
    page.locator("#who button").nth(1).click()  # a guest's: log in, register
    dialog = page.locator("dialog.auth")
    dialog.wait_for()
    return dialog


def register(page: Any, name: str) -> Any:
    dialog = open_register(page)
    dialog.locator("input[name=name]").fill(name)
    dialog.locator("input[name=password]").fill("s3cret-pw")
    dialog.locator("button[type=submit]").click()
    return dialog


def test_a_chinese_name_registers_and_shows_at_the_table(
    browser: Any, server: str, shot: Any
) -> None:
    page = open_page(browser, server)
    register(page, "李小龙")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=who]')?.textContent === '李小龙'"
    )
    assert page.locator("dialog.auth").count() == 0
    table_id = _create(page, {"public": True, "clock": None, "pace": "slow"})["table_id"]
    guests = WsGuests(server, 3)
    for user, name in zip(guests.users, LONG_NAMES, strict=True):
        r = httpx.post(
            f"{server}/api/auth/register",
            json={"name": name, "password": "s3cret-pw"},
            headers=user.auth,
            timeout=10,
        )
        assert r.status_code == 201, r.text
    page.goto(f"{server}/#/table/{table_id}")
    page.wait_for_selector("[data-action='leave']")
    guests.join(table_id, None)
    page.wait_for_selector(".my-hand", timeout=20_000)  # dealt once the others' 10 s are up
    labels = page.locator(".seat-name")
    page.wait_for_function("() => document.querySelectorAll('.seat-name').length === 4")
    shown = labels.all_inner_texts()
    assert any("李小龙" in text for text in shown), shown
    for name in LONG_NAMES:  # whole, not cut
        assert any(name in text.replace("\n", "") for text in shown), (name, shown)
    shots(page, shot, "table")
    # On a phone (a page opened at 390×844, so with the log closed as a phone opens it) every
    # label stays on the screen, inside its seat, in three lines at most (the whole name in
    # its text and title).
    phone = browser.new_context(
        viewport={"width": 390, "height": 844},
        locale="en-GB",
        storage_state=page.context.storage_state(),
    ).new_page()
    phone.errors = []
    phone.on("pageerror", lambda e: phone.errors.append(str(e)))
    phone.goto(f"{server}/#/table/{table_id}")
    phone.wait_for_selector(".my-hand", timeout=20_000)
    phone.wait_for_function("() => document.querySelectorAll('.seat-name').length === 4")
    phone.wait_for_timeout(300)
    shot(phone, "table-phone-390x844")
    boxes = phone.evaluate(
        """() => [...document.querySelectorAll('.seat-name')].map((n) => {
          const r = n.getBoundingClientRect(), seat = n.closest('.seat').getBoundingClientRect();
          const line = parseFloat(getComputedStyle(n).lineHeight) || 12;
          return {left: r.left, right: r.right, lines: Math.round(r.height / line),
                  seatLeft: seat.left, seatRight: seat.right, text: n.textContent,
                  title: n.querySelector('.seat-player').title};
        })"""
    )
    for box in boxes:
        assert box["left"] >= 0 and box["right"] <= 390, box
        assert box["seatLeft"] - 1 <= box["left"] and box["right"] <= box["seatRight"] + 1, box
        assert box["lines"] <= 3, box
    titles = {box["title"] for box in boxes}
    assert set(LONG_NAMES) <= titles and "李小龙" in titles, titles
    assert not page.errors and not phone.errors


def test_a_chinese_name_is_in_the_settlement_of_a_practice_hand(
    browser: Any, server: str, shot: Any
) -> None:
    page = open_page(browser, server)
    register(page, "李小龙")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=who]')?.textContent === '李小龙'"
    )
    start_practice(page)
    assert "李小龙" in page.inner_text(".board")
    ui_play(page)
    page.wait_for_selector(".overlay .result")
    assert "李小龙" in page.inner_text(".overlay .result")
    shots(page, shot, "settlement")
    assert not page.errors


def test_a_too_long_name_is_refused_with_the_reason_and_nothing_is_cut(
    browser: Any, server: str, shot: Any
) -> None:
    page = open_page(browser, server)
    who = page.inner_text("[data-testid='who']")
    dialog = open_register(page)
    typed = "Abcdefghijklmnopqrstuvwxyz1234"  # 30 characters
    name = dialog.locator("input[name=name]")
    name.fill(typed)
    notice = dialog.locator("[data-testid='auth-notice']")
    assert notice.inner_text() == "A name has at most 24 characters."  # while typing
    assert dialog.locator("[data-testid='name-count']").inner_text() == "30 of 24 characters"
    assert name.input_value() == typed and name.get_attribute("aria-invalid") == "true"
    dialog.locator("input[name=password]").fill("s3cret-pw")
    dialog.locator("button[type=submit]").click()
    page.wait_for_timeout(300)
    assert notice.inner_text() == "A name has at most 24 characters."
    assert name.input_value() == typed  # still all 30, to shorten as the player likes
    assert page.inner_text("[data-testid='who']") == who  # nothing registered
    shots(page, shot, "too-long")
    # A rule only the server knows: its reason, in the player's language.
    name.fill("Admin")
    assert notice.inner_text() == ""
    dialog.locator("button[type=submit]").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=auth-notice]').textContent !== ''"
    )
    assert notice.inner_text() == "That name is reserved."
    dialog.locator("button[type=button]").click()  # cancel, switch to German, try again
    page.select_option("#lang", "de")
    page.wait_for_function("() => document.documentElement.lang === 'de'")
    dialog = open_register(page)
    dialog.locator("input[name=name]").fill("x" * 25)
    notice = dialog.locator("[data-testid='auth-notice']")
    assert notice.inner_text() == "Ein Name hat höchstens 24 Zeichen."
    assert not page.errors
