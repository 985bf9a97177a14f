"""Quick Play in the lobby: the player chooses the computers that fill the table after a
minute without a match; the choice goes with the request and is remembered on the device.
Screenshots of the lobby at three sizes go to ``docs/images/lobby-*.png``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.test_table_layout import DOC_IMAGES

SIZES = [(1920, 1080), (1366, 768), (390, 844)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_quick_play_sends_the_chosen_computers_and_remembers_them(
    browser: Any, server: str, size: tuple[int, int]
) -> None:
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale="en-GB")
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    choice = page.locator("select[name='quick-computers']")
    assert choice.input_value() == "normal"
    assert choice.locator("option").all_inner_texts() == ["easy", "normal", "strong", "expert"]
    choice.select_option("strong")
    with page.expect_request(
        lambda r: r.url.endswith("/api/quickplay") and r.method == "POST"
    ) as asked:
        page.click("[data-action='quick-play']")
    assert json.loads(asked.value.post_data or "{}") == {
        "computers_after_s": 60,
        "computers": "strong",
    }
    page.wait_for_selector("[data-testid='quick-status']:has-text('Waiting')")
    page.screenshot(path=str(DOC_IMAGES / f"lobby-{size[0]}x{size[1]}.png"), full_page=True)
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("select[name='quick-computers']").input_value() == "strong"
    page.click("[data-action='leave-queue']")
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=quick-status]').textContent"
    )
    assert page.errors == []
    ctx.close()
