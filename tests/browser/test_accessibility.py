"""Languages and accessibility of the web client, in headless Debian Chromium.

- a practice hand played in German through the UI with the keyboard only, to its end (its
  table view is the README's screenshot, ``docs/images/table-view-de.png``);
- the language from the browser, switched in the header, remembered;
- server refusals and rejections shown in the chosen language, with their parameters;
- an axe-core audit (vendored in ``tests/browser/vendor/axe-core``, served from here, never
  fetched) of the lobby and the table: no serious or critical violation;
- contrast on the felt (which axe cannot judge: a gradient) measured in the page, and the
  colour pairs of ``style.css`` that are not always on screen;
- reduced motion: nothing moves.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import ARTIFACTS, ROOT
from tests.browser.keyboard import FOCUSED, KeyboardPlayer, focused, tab_to
from tests.browser.players import ui_play, ui_step

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
DOC_IMAGES = ROOT / "docs" / "images"
CSS = ROOT / "services" / "gateway" / "static" / "style.css"


def open_page(browser: Any, url: str, locale: str, **context: Any) -> Any:
    """A page in its own context; ``wait_for_function`` takes arrow functions only here (a
    bare expression is eval'd in the page, which its Content-Security-Policy forbids)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale=locale, **context)
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    # A message key the catalogues lack is logged by i18n.js: that is an error here too.
    page.on(
        "console",
        lambda m: page.errors.append(m.text) if "missing message" in m.text else None,
    )
    page.goto(url + "/")
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    return page


def start_practice(page: Any, pace: str = "fast") -> None:
    page.select_option("select[name=pace]", pace)
    page.click("[data-action='start-practice']")
    page.wait_for_url(re.compile(r".*#/table/.+"))
    page.wait_for_selector(".my-hand")


# --- the keyboard-only hand in German -------------------------------------------------------


def test_a_practice_hand_in_german_with_the_keyboard_only(
    browser: Any, server: str, shot: Any
) -> None:
    page = open_page(browser, server, "de-DE")
    # The browser says German: the page is German without anyone choosing.
    assert page.get_attribute("html", "lang") == "de"
    assert page.input_value("#lang") == "de"
    assert "Übung" in page.inner_text("main")
    assert page.title() == "Mahjong Planet — Sichuan-Blutkampf"

    # The first Tab reaches the skip link; it moves focus to the page's content.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Zum Spiel springen"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    assert page.url.endswith("/") or page.url.endswith("#/lobby")

    # Lobby: choose the computers' pace and start, by keyboard.
    tab_to(page, "select[name=pace]")
    page.keyboard.type("schnell")  # a closed select takes typed option text
    assert page.input_value("select[name=pace]") == "fast"
    tab_to(page, "[data-action='start-practice']")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*#/table/.+"))
    page.wait_for_selector(".my-hand button.tile")

    # The table: focus lands in the hand, which is one toolbar with a single tab stop.
    page.wait_for_function("() => document.activeElement?.closest('.my-hand') !== null")
    assert page.get_attribute(".my-hand", "role") == "toolbar"
    assert page.locator(".my-hand button.tile[tabindex='0']").count() == 1
    label = focused(page)["label"]
    assert re.fullmatch(r"[1-9] (Zeichen|Kreise|Bambus)(, gerade gezogen)?", label), label
    assert "Tauschen Sie drei aus 换三张" in page.inner_text("[data-testid='phase']")
    exchange = page.locator("[data-action='exchange']")
    assert exchange.get_attribute("aria-keyshortcuts") == "E"
    assert "换三张" in exchange.inner_text()
    # The seats are named by wind and player.
    assert sorted(page.locator(".seat-wind").all_inner_texts()) == ["Nord", "Ost", "Süd", "West"]

    player = KeyboardPlayer(page)
    pictured = settled = False
    while not page.locator("dialog[open] .result").count():
        player.step()
        page.wait_for_timeout(60)
        # The README's picture: the player to discard with a tile focused, as late as
        # twelve discards on the table. Each such moment replaces the last until then, so a
        # hand that ends early (a quick win) still leaves its latest moment pictured.
        discards = page.locator(".discards .tile").count()
        if (
            not settled
            and page.locator(".my-hand .legal").count()
            and (focused(page) or {}).get("inHand")
        ):
            page.mouse.move(0, 0)
            DOC_IMAGES.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOC_IMAGES / "table-view-de.png"))
            shot(page, "table-de")
            pictured = True
            settled = discards >= 12
        if player.keys_used.total() > 2000:
            raise AssertionError("the hand did not end")
    player.listen()
    assert pictured, "no moment to take the table view"
    assert player.keys_used["Enter"] >= 3 and player.keys_used["e"] >= 1
    assert any(k in player.keys_used for k in "123")

    # The end: the result dialog has the focus; German settlement lines.
    dialog = page.locator("dialog[open]")
    assert dialog.count() == 1
    f = focused(page)
    assert f and f["inDialog"] and f["action"] == "dismiss", f
    text = dialog.inner_text()
    assert "Ergebnis der Hand" in text and "Abrechnung" in text and "Gesamt" in text
    assert re.search(r"Ihre Punkte: [+-]?\d+", text)
    shot(page, "result-de")
    # Screen readers heard the turns and the table's events, in German.
    heard = "\n".join(player.announcements)
    assert "Tasten:" in heard, heard[-2000:]
    assert re.search(r"wirft [1-9] (Zeichen|Kreise|Bambus) ab", heard), heard[-2000:]
    assert "Die Hand ist vorbei" in heard

    # Esc closes the dialog; focus goes to the settlement, whose lines are all there.
    page.keyboard.press("Escape")
    page.wait_for_selector("dialog[open]", state="detached")
    assert page.evaluate("document.activeElement.id") == "settlement"
    # The German settlement's long headers wrap: the page does not scroll sideways.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    # Back to the lobby by keyboard: the result is in the last-ten list, in German.
    tab_to(page, "a.button[href='#/lobby']", backwards=True)
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid='practice-results'] li")
    assert "Punkte, Platz" in page.inner_text("[data-testid='practice-results']")
    assert page.errors == []


# --- languages --------------------------------------------------------------------------------


def test_the_language_comes_from_the_browser_is_switched_and_remembered(
    browser: Any, server: str
) -> None:
    page = open_page(browser, server, "en-GB")
    assert page.get_attribute("html", "lang") == "en"
    assert page.inner_text("nav a[data-nav='ratings']") == "Ratings"
    assert page.evaluate("localStorage.getItem('mp.lang')") is None  # nobody chose yet
    # Switch in the header, by keyboard.
    page.focus("#lang")
    page.keyboard.type("Deutsch")
    page.wait_for_function("() => document.documentElement.lang === 'de'")
    assert page.inner_text("nav a[data-nav='ratings']") == "Wertungen"
    assert "Übung" in page.inner_text("main")
    assert page.evaluate("localStorage.getItem('mp.lang')") == "de"
    assert "Sprache: Deutsch" in page.inner_text("#announce-polite")
    # Remembered: German after a reload, though the browser says English.
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.get_attribute("html", "lang") == "de"
    assert page.input_value("#lang") == "de"
    # And the other way round in a German browser.
    other = open_page(browser, server, "de-AT")
    assert other.get_attribute("html", "lang") == "de"
    other.select_option("#lang", "en")
    other.wait_for_function("() => document.documentElement.lang === 'en'")
    other.reload()
    other.wait_for_selector("body[data-ready='1']")
    assert other.inner_text("nav a[data-nav='history']") == "My hands"
    assert page.errors == [] and other.errors == []


def test_refusals_and_rejections_are_shown_in_the_chosen_language(
    browser: Any, server: str
) -> None:
    page = open_page(browser, server, "de-DE")
    # Matchmaking refuses (REST 409 with a code): German.
    page.fill("input[name=table]", "t-does-not-exist")
    page.press("input[name=table]", "Enter")
    page.wait_for_selector(".notice:not(:empty)")
    assert page.inner_text(".notice") == "Diesen Tisch gibt es nicht (oder der Code ist falsch)."
    # The gateway refuses a registration, with parameters (min, max): German, filled in.
    page.click("#who button:has-text('Registrieren')")
    page.fill("dialog input[name=name]", "Spielerin_A")
    page.fill("dialog input[name=password]", "kurz")
    page.evaluate("document.querySelector('dialog input[name=password]').minLength = 0")
    page.press("dialog input[name=password]", "Enter")
    page.wait_for_selector("dialog .notice:not(:empty)")
    assert page.inner_text("dialog .notice") == "Ein Passwort hat 8 bis 256 Zeichen."
    page.keyboard.press("Escape")

    # The table refuses a command (a rejected frame with a code) on a second socket of the
    # same player: the client renders it in German.
    start_practice(page)
    seat, frames = page.evaluate(
        """async (tableId) => {
          const token = JSON.parse(localStorage.getItem('mp.session')).token;
          const ws = new WebSocket(`ws://${location.host}/ws`);
          const got = [];
          await new Promise((ok) => (ws.onopen = ok));
          ws.onmessage = (m) => got.push(JSON.parse(m.data));
          ws.send(JSON.stringify({type: 'hello', v: 1, token, table_id: tableId}));
          await new Promise((ok) => setTimeout(ok, 500));
          ws.send(JSON.stringify({type: 'command', command_id: 'x1',
            body: {type: 'choose_exchange', tiles: ['1m', '2p', '3s']}}));
          const seat = got.find((f) => f.type === 'view').view.seat;
          ws.send(JSON.stringify({type: 'command', command_id: 'x2',
            body: {type: 'hu', seat: (seat + 1) % 4}}));
          for (let i = 0; i < 50 && got.filter((f) => f.command_id).length < 2; i++) {
            await new Promise((ok) => setTimeout(ok, 100));
          }
          ws.close();
          return [seat, got.filter((f) => f.type === 'rejected' || f.type === 'error')];
        }""",
        page.url.split("#/table/")[1],
    )
    by_id = {f["command_id"]: f for f in frames}
    assert by_id["x1"]["code"] == "exchange_one_suit"
    assert by_id["x2"]["code"] == "not_your_seat" and by_id["x2"]["params"] == {"seat": seat}
    shown = page.evaluate(
        """async (frames) => {
          const { serverMessage } = await import('/js/i18n.js');
          return frames.map((f) => serverMessage(f.code, f.params, f.reason));
        }""",
        [by_id["x1"], by_id["x2"]],
    )
    assert shown == [
        "Die drei Steine müssen von einer Farbe sein.",
        "Sie können nur für Ihren eigenen Platz handeln.",
    ]
    # Parameters are shown in the language too: tiles and suits by name, never "5s" or "p".
    localised = page.evaluate(
        """async () => {
          const { serverMessage } = await import('/js/i18n.js');
          return [
            serverMessage('must_discard_missing', {suit: 'p'}),
            serverMessage('pung_blocked', {tile: '5s'}),
            serverMessage('bad_wait', {min: 5, max: 600}),
            serverMessage('some_future_code', {}, 'an English reason'),
          ];
        }"""
    )
    assert localised == [
        "Werfen Sie zuerst Ihre fehlende Farbe (Kreise) ab.",
        "Sie haben ein Pung 碰 mit 5 Bambus ausgelassen: erst nach Ihrem nächsten Zug wieder.",
        "Wählen Sie eine Wartezeit zwischen 5 und 600 Sekunden.",
        "Der Server hat abgelehnt (some_future_code).",
    ]
    assert page.errors == []


LABELS = """async () => {
  const { tileLabel } = await import('/js/tiles.js');
  const { clockText } = await import('/js/board.js');
  const now = 1_000_000;
  const view = {
    clocks: [
      {seat: 0, reserve_ms: 12_000, deadline_ms: now + 16_000},
      {seat: 1, reserve_ms: 1_000},
    ],
    window: null,
  };
  return [tileLabel('5s'), tileLabel('1m'), tileLabel('9p'), tileLabel(null),
          clockText(view, 0, now).spoken, clockText(view, 1, now).spoken];
}"""


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        (
            "en-GB",
            [
                "5 bamboo",
                "1 characters",
                "9 circles",
                "hidden tile",
                "East: 4 seconds, reserve 12 seconds",
                "South: reserve 1 second",
            ],
        ),
        (
            "de-DE",
            [
                "5 Bambus",
                "1 Zeichen",
                "9 Kreise",
                "verdeckter Stein",
                "Ost: 4 Sekunden, Reserve 12 Sekunden",
                "Süd: Reserve 1 Sekunde",
            ],
        ),
    ],
)
def test_screen_reader_labels_of_tiles_and_clocks(
    browser: Any, server: str, locale: str, expected: list[str]
) -> None:
    page = open_page(browser, server, locale)
    assert page.evaluate(LABELS) == expected


# --- axe-core ----------------------------------------------------------------------------------


AXE_SHA256 = "b511cd9dec01c76f4b2ad1723b66b6db37d4c2eb4ed199076e1829d9ee7b75e3"


def test_the_vendored_axe_core_is_the_published_file() -> None:
    """axe-core 4.10.2 from npm, unchanged (tests/browser/vendor/axe-core/README.md)."""
    assert hashlib.sha256(AXE.read_bytes()).hexdigest() == AXE_SHA256
    assert (AXE.parent / "LICENSE").read_text(encoding="utf-8").startswith("Mozilla Public")


def axe(page: Any, name: str) -> list[dict[str, Any]]:
    """Run axe-core (WCAG 2.x A and AA, and best practices) on the page as it is; the
    violations, saved as a test artifact."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    violations: list[dict[str, Any]] = page.evaluate(
        """async () => {
          const r = await axe.run(document, {
            runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa',
                                           'wcag22aa', 'best-practice']},
            resultTypes: ['violations'],
          });
          return r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 5).map((n) => [n.target.join(' '), n.failureSummary])}));
        }"""
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"axe-{name}.json").write_text(json.dumps(violations, indent=1))
    return violations


def serious(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in violations if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("locale", ["de-DE", "en-GB"])
def test_axe_finds_no_serious_violation_in_the_lobby_and_at_the_table(
    browser: Any, server: str, shot: Any, locale: str
) -> None:
    # The page's Content-Security-Policy allows no inline script: the audit context lifts it
    # to inject axe (the served page is unchanged).
    page = open_page(browser, server, locale, bypass_csp=True)
    found: dict[str, list[dict[str, Any]]] = {}
    found["lobby"] = axe(page, f"lobby-{locale}")
    start_practice(page)
    # The exchange, once the computers have chosen (the hand then waits for the player).
    page.wait_for_function(
        "() => [...document.querySelectorAll('.seat:not(.is-me) .status-text')]"
        ".every((n) => n.textContent.trim())"
    )
    page.wait_for_timeout(800)
    found["exchange"] = axe(page, f"exchange-{locale}")
    # Play (by clicking) until the player is to discard with discards on the table.
    ui_play(
        page,
        until=lambda pg: (
            pg.locator(".discards .tile").count() >= 4 and pg.locator(".my-hand .legal").count() > 0
        ),
    )
    page.wait_for_timeout(300)
    found["turn"] = axe(page, f"turn-{locale}")
    shot(page, f"audit-turn-{locale}")
    page.click("[data-action='pause']")
    page.wait_for_selector("dialog[open] [data-action='resume']")
    found["paused"] = axe(page, f"paused-{locale}")
    page.click("[data-action='resume']")
    ui_play(page)
    found["result"] = axe(page, f"result-{locale}")
    # And the pages after a hand: its replay, the player's hands.
    page.click("dialog[open] [data-action='replay']")
    page.wait_for_selector(".replay-bar")
    found["replay"] = axe(page, f"replay-{locale}")
    page.click("nav a[data-nav='history']")
    page.wait_for_selector(".hands .hand-card")
    found["history"] = axe(page, f"history-{locale}")
    page.click("nav a[data-nav='profile']")
    page.wait_for_selector("[data-testid='figures']")
    found["profile"] = axe(page, f"profile-{locale}")
    problems = {k: serious(v) for k, v in found.items() if serious(v)}
    assert problems == {}, json.dumps(problems, indent=1)
    assert page.errors == []


# --- contrast ---------------------------------------------------------------------------------

# In the page: every text on the felt against every colour its (gradient) background can
# show through, after compositing the translucent layers above it; and the tile faces' text.
CONTRAST_ON_FELT = """() => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(',').map((x) => parseFloat(x));
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) =>
    top.slice(0, 3).map((c, i) => c * top[3] + under[i] * (1 - top[3])).concat([1]);
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  // The colours an element's background can be: its layers from the nearest opaque one up.
  const backgrounds = (el) => {
    const layers = [];
    for (let n = el; n; n = n.parentElement) {
      const s = getComputedStyle(n);
      const img = s.backgroundImage;
      if (img && img.includes('gradient')) {
        layers.push({stops: (img.match(/rgba?\\([^)]+\\)/g) || []).map(parse)});
        break;
      }
      const c = parse(s.backgroundColor);
      if (c && c[3] > 0) { layers.push({colour: c}); if (c[3] === 1) break; }
    }
    const last = layers.pop();
    let bases = last ? (last.stops || [last.colour]) : [[255, 255, 255, 1]];
    for (const layer of layers.reverse()) bases = bases.map((b) => over(layer.colour, b));
    return bases;
  };
  const out = [];
  const visible = (n) => n.getClientRects().length > 0 && !n.closest('.sr-only');
  const wrap = document.querySelector('.board-wrap');
  for (const el of wrap.querySelectorAll('*')) {
    if (el.closest('svg') || !visible(el)) continue;
    const own = [...el.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (!own) continue;
    const s = getComputedStyle(el);
    const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const fg = parse(s.color);
    for (const bg of backgrounds(el)) {
      const r = ratio(fg[3] < 1 ? over(fg, bg) : fg, bg);
      out.push({text: el.textContent.trim().slice(0, 40), cls: el.className, ratio: r, need});
    }
  }
  for (const text of wrap.querySelectorAll('svg text')) {
    const face = text.closest('svg').querySelector('.tile-face');
    if (!face || !visible(text.closest('.tile'))) continue;
    const s = getComputedStyle(text);
    const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const r = ratio(parse(s.fill), parse(getComputedStyle(face).fill));
    out.push({text: text.textContent, cls: text.getAttribute('class'), ratio: r, need});
  }
  return out;
}"""


def test_text_on_the_felt_and_on_tiles_meets_wcag_aa(browser: Any, server: str) -> None:
    page = open_page(browser, server, "de-DE")
    start_practice(page)
    ui_play(page, until=lambda pg: pg.locator(".discards .tile").count() >= 6)
    checked = page.evaluate(CONTRAST_ON_FELT)
    assert len(checked) > 40
    assert {c["cls"].split()[0] for c in checked if c["cls"]} >= {"seat-wind", "tile-corner"}
    low = [c for c in checked if c["ratio"] < c["need"]]
    assert low == [], low[:10]


def _hex(colour: str) -> tuple[float, float, float]:
    colour = colour.lstrip("#")
    return tuple(int(colour[i : i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]


def _ratio(a: str, b: str) -> float:
    def lum(c: str) -> float:
        r, g, bl = (v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in _hex(c))
        return 0.2126 * r + 0.7152 * g + 0.0722 * bl

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_colour_pairs_of_the_style_sheet_meet_wcag_aa() -> None:
    """Pairs not always on screen (an urgent clock, a selected tile, a focus ring on each
    surface): text 4.5:1, focus rings and control borders 3:1 (WCAG 1.4.3, 1.4.11)."""
    css = CSS.read_text(encoding="utf-8")
    var = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", css))
    felt, felt_dark, page_bg = var["felt"], var["felt-dark"], "#f1ede2"
    assert re.search(r"background:\s*#f1ede2", css)
    text_pairs = [
        (var["ink"], page_bg),
        (var["muted"], page_bg),
        (var["muted"], var["card"]),
        (var["accent-ink"], var["accent"]),
        (var["accent"], page_bg),
        (var["urgent"], felt),
        (var["focus"], felt),
        ("#ffffff", felt),
        (var["muted"], var["paper"]),  # the tiles' corner index
    ]
    ui_pairs = [
        (var["ring"], page_bg),
        (var["ring"], var["card"]),
        (var["ring-dark"], felt),
        (var["ring-dark"], felt_dark),
        (var["selected"], felt_dark),
        (var["control-line"], var["card"]),
    ]
    low = [(a, b, round(_ratio(a, b), 2)) for a, b in text_pairs if _ratio(a, b) < 4.5]
    low += [(a, b, round(_ratio(a, b), 2)) for a, b in ui_pairs if _ratio(a, b) < 3]
    assert low == []


# --- motion -----------------------------------------------------------------------------------


def test_reduced_motion_is_respected(browser: Any, server: str) -> None:
    page = open_page(browser, server, "en-GB", reduced_motion="reduce")
    start_practice(page)
    for _ in range(200):
        if page.locator(".my-hand button.tile.legal").count():
            break
        ui_step(page)
        page.wait_for_timeout(50)
    tile = page.locator(".my-hand button.tile.legal").first
    tile.hover()
    style = tile.evaluate(
        "n => ({t: getComputedStyle(n).transform, d: getComputedStyle(n).transitionDuration})"
    )
    assert style == {"t": "none", "d": "0s"}, style
    # Without the preference the tile lifts, in a short transition.
    normal = open_page(browser, server, "en-GB")
    start_practice(normal)
    for _ in range(200):
        if normal.locator(".my-hand button.tile.legal").count():
            break
        ui_step(normal)
        normal.wait_for_timeout(50)
    t2 = normal.locator(".my-hand button.tile.legal").first
    t2.hover()
    normal.wait_for_timeout(200)
    assert t2.evaluate("n => getComputedStyle(n).transform") != "none"
    assert page.errors == [] and normal.errors == []


def test_focus_stays_on_the_table_while_the_computers_play(browser: Any, server: str) -> None:
    """Redrawing the board on every frame never drops the keyboard focus to the page."""
    page = open_page(browser, server, "en-GB")
    start_practice(page)
    page.wait_for_function("() => document.activeElement?.closest('.my-hand') !== null")
    player = KeyboardPlayer(page)
    lost = 0
    for _ in range(150):
        player.step()
        page.wait_for_timeout(40)
        if page.locator("dialog[open]").count():
            break
        if page.evaluate(FOCUSED) is None:
            lost += 1
    assert lost == 0
    assert page.errors == []
