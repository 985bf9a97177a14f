"""The web client's message catalogues (``services/gateway/static/i18n/<lang>.json``).

- one file per language, the same keys in each, the same placeholders in each message;
- every key the client's code or page names is in them (static keys, and every prefix of a
  key built at run time);
- every code the server can send to a client (rules engine, clock, table service,
  matchmaking, gateway) has an ``error.<code>`` message in both languages, using only
  parameters that every place emitting the code sends; the codes and their parameters are
  the closed set ``schemas.codes``, so a new code without a translation fails here;
- the client has no English text outside the catalogues;
- the product's German wording and the Chinese game terms are there.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from schemas.codes import CODES, PARAMS

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "services" / "gateway" / "static"
LANGUAGES = ("en", "de")

# --- the catalogues ---------------------------------------------------------------------------


@cache
def catalogue(lang: str) -> dict[str, str]:
    data = json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in data.items())
    return data


def placeholders(message: str) -> set[str]:
    """The arguments a message names: ``{name}`` and ``{name, plural, one {…} other {…}}``
    (the ICU subset ``i18n.js`` formats), branches included."""
    names: set[str] = set()
    i = 0
    while i < len(message):
        if message[i] != "{":
            i += 1
            continue
        depth, j = 1, i + 1
        while j < len(message) and depth:
            depth += {"{": 1, "}": -1}.get(message[j], 0)
            j += 1
        assert depth == 0, f"unbalanced braces in {message!r}"
        inner = message[i + 1 : j - 1]
        m = re.fullmatch(r"\s*(\w+)\s*(?:,\s*plural\s*,(.*))?", inner, re.S)
        assert m, f"not a placeholder: {{{inner}}} in {message!r}"
        names.add(m.group(1))
        if m.group(2) is not None:
            branches = plural_branches(m.group(2))
            assert "other" in branches, f"a plural needs an 'other' branch: {message!r}"
            for text in branches.values():
                names |= placeholders(text)
        i = j
    return names


def plural_branches(spec: str) -> dict[str, str]:
    """``one {…} other {…}`` → {"one": "…", "other": "…"}."""
    branches: dict[str, str] = {}
    for m in re.finditer(r"(=\d+|zero|one|two|few|many|other)\s*\{", spec):
        depth, j = 1, m.end()
        while j < len(spec) and depth:
            depth += {"{": 1, "}": -1}.get(spec[j], 0)
            j += 1
        branches[m.group(1)] = spec[m.end() : j - 1]
    return branches


def test_every_language_has_every_key() -> None:
    en, de = catalogue("en"), catalogue("de")
    assert sorted(set(en) - set(de)) == [], "keys missing in de.json"
    assert sorted(set(de) - set(en)) == [], "keys missing in en.json"
    for key in en:
        assert en[key].strip() and de[key].strip(), f"empty message {key}"
        assert placeholders(en[key]) == placeholders(de[key]), key


def test_catalogues_are_flat_objects_without_duplicate_keys() -> None:
    for lang in LANGUAGES:
        pairs = json.loads(
            (STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"),
            object_pairs_hook=lambda kv: kv,
        )
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), f"duplicate keys in {lang}.json"
        bad = [k for k in keys if not re.fullmatch(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)*", k)]
        assert bad == [], lang


# --- keys the client names ------------------------------------------------------------------


def client_sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((STATIC / "js").glob("*.js")))


def static_keys() -> set[str]:
    code = client_sources()
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    keys = set(re.findall(r"""\bt\(\s*["']([a-z_]+(?:\.[a-z0-9_]+)+)["']""", code))
    # Keys handed around as plain strings (["ratings.hand", ...], [key, "keys.move"]): any
    # string literal in a namespace of the catalogue.
    namespaces = {k.split(".")[0] for k in catalogue("en")}
    keys |= {
        k
        for k in re.findall(r"""["']([a-z_]+(?:\.[a-z0-9_]+)+)["']""", code)
        if k.split(".")[0] in namespaces
    }
    keys |= set(re.findall(r'data-i18n(?:-[a-z]+)?="([a-z_.0-9]+)"', html))
    keys |= set(re.findall(r'i18n[A-Z]\w*:\s*"([a-z_.0-9]+)"', code))
    return keys


def dynamic_prefixes() -> set[str]:
    """``t(`suit.${x}`)``, ```error.${code}``` and the like: the fixed part of a template
    literal (with a dot: a key's namespace) before its first substitution."""
    code = client_sources()
    return set(re.findall(r"`([a-z_]+\.[a-z_.0-9]*)\$\{", code))


def test_every_key_the_client_names_exists() -> None:
    named = static_keys()
    assert len(named) > 100, "no keys found: the pattern is out of date"
    for lang in LANGUAGES:
        assert sorted(k for k in named if k not in catalogue(lang)) == [], lang


def test_every_key_prefix_the_client_builds_has_messages() -> None:
    prefixes = dynamic_prefixes()
    assert {"tile.", "suit.", "error.", "pattern.", "reason.", "event."} <= prefixes
    for prefix in prefixes:
        assert any(k.startswith(prefix) for k in catalogue("en")), prefix


def test_every_key_is_used() -> None:
    """No dead messages: each key is named whole, or begins with a prefix built at run time."""
    named, prefixes = static_keys(), dynamic_prefixes()
    unused = [
        k for k in catalogue("en") if k not in named and not any(k.startswith(p) for p in prefixes)
    ]
    assert unused == []


def test_run_time_keys_cover_every_value_they_are_built_from() -> None:
    """Keys built from data (event types, fan patterns, payment reasons, claims, ...) exist
    for every value the schemas and the rules engine allow."""
    import typing

    from schemas import events as ev
    from schemas import types as ty
    from services.rules.fan import FAN

    en = catalogue("en")

    def values(hint: object) -> set[str]:
        return {v for v in typing.get_args(hint) if isinstance(v, str)}

    wanted = {f"event.{t.__struct_config__.tag}" for t in ev.EVENT_TYPES}
    wanted |= {f"reason.{r}" for r in values(ev.PaymentReason)}
    wanted |= {f"pattern.{p}" for p in FAN} | {"pattern.standard"}
    wanted |= {f"claim.{c}" for c in values(typing.get_type_hints(ev.ClaimDeclared)["claim"])}
    wanted |= {f"kong.{k}" for k in values(typing.get_type_hints(ev.Konged)["kind"])}
    wanted |= {f"end.{e}" for e in values(typing.get_type_hints(ev.HandEnded)["end"])}
    wanted |= {f"suit.{s}" for s in "mps"} | {f"tile.{s}" for s in "mps"}  # ty.Suit: ^[mps]$
    wanted |= {f"direction.{d}" for d in values(ty.Direction)}
    assert len(wanted) > 45
    assert sorted(k for k in wanted if k not in en) == []


def test_the_client_has_a_message_for_each_event_type_and_no_other() -> None:
    """The web client's list of event types is its ``event.*`` messages: the Python one."""
    from schemas import events as ev

    for lang in LANGUAGES:
        keys = {k for k in catalogue(lang) if k.startswith("event.")}
        assert keys == {f"event.{t.__struct_config__.tag}" for t in ev.EVENT_TYPES}, lang


# --- codes the server sends -----------------------------------------------------------------
# Every code is in the closed set ``schemas.codes`` (mypy and tests/unit/test_codes.py hold
# the places that send them to it), with the parameters every place sending it fills in.


def test_the_set_holds_codes_from_every_service() -> None:
    for code in (
        "not_your_turn",  # rules engine
        "no_pung",  # rules engine
        "time_up",  # clock allowances
        "table_unavailable",  # table service
        "need_four_players",  # table service
        "table_full",  # matchmaking
        "rated_needs_clock",  # matchmaking and table service
        "name_taken",  # gateway accounts
        "not_your_seat",  # gateway socket
        "unsupported_version",  # gateway socket, closing
        "rate_limited",  # gateway limits
        "too_many_sockets",  # gateway socket close reason
        "method_not_allowed",  # gateway HTTP errors
    ):
        assert code in CODES, code
    assert len(CODES) > 70


def test_the_codes_the_client_acts_on_are_in_the_set() -> None:
    """The client's lists of codes that stop or reload the table page name server codes."""
    lists = re.findall(r"const (STOPPED|RELOAD) = \[([^\]]*)\]", client_sources())
    assert {name for name, _ in lists} == {"STOPPED", "RELOAD"}
    named = {code for _, items in lists for code in re.findall(r'"([a-z_]+)"', items)}
    assert named and sorted(named - CODES) == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_server_code_is_translated(lang: str) -> None:
    messages = catalogue(lang)
    missing = sorted(code for code in CODES if f"error.{code}" not in messages)
    assert missing == [], f"codes without a message in {lang}.json"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_error_messages_use_only_parameters_the_server_sends(lang: str) -> None:
    messages = catalogue(lang)
    for code, params in PARAMS.items():
        if f"error.{code}" not in messages:
            continue
        sent = set(params)
        used = placeholders(messages[f"error.{code}"])
        assert used <= sent, f"error.{code} uses {sorted(used - sent)}; the server sends {sent}"


def test_the_client_renders_server_messages_by_code() -> None:
    code = client_sources()
    # The rejected and error frames, REST errors and socket close reasons go through
    # serverMessage (code + params → the catalogue); the English reason is never shown.
    assert code.count("serverMessage(") >= 8
    assert not re.search(r"textContent\s*=\s*[a-z.]*reason\b", code)
    assert not re.search(r"text:\s*[a-z.]*\breason\b", code)
    assert "error.unknown" in catalogue("en")


# --- no English outside the catalogues ------------------------------------------------------


def test_the_client_has_no_text_outside_the_catalogues() -> None:
    code = client_sources()
    literal = r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)"""
    offenders: list[str] = []
    for pattern in (
        rf"\btext:\s*{literal}",
        rf"\btextContent\s*=\s*{literal}",
        rf"""["'](?:aria-label|title|placeholder|alt)["']:\s*{literal}""",
        rf"""setAttribute\(\s*["'](?:aria-label|title|placeholder|alt)["'],\s*{literal}""",
    ):
        for m in re.finditer(pattern, code):
            text = re.sub(r"\$\{[^}]*\}", "", m.group(1)[1:-1])
            if re.search(r"[A-Za-zÄÖÜäöüß]{2,}", text):
                offenders.append(m.group(0))
    assert offenders == []
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    # Page text outside data-i18n elements: only the brand, language names and link names.
    body = re.sub(r"<(\w+)[^>]*data-i18n=\"[^\"]+\"[^>]*>[^<]*</\1>", "", html.split("<body")[1])
    words = set(re.findall(r">\s*([^<>]*?[A-Za-z]{2,}[^<>]*?)\s*<", body))
    assert words <= {"English", "Deutsch", "OpenAPI"}, words


# --- wording ---------------------------------------------------------------------------------

CHINESE_TERMS = (
    "定缺",
    "换三张",
    "杠",
    "碰",
    "胡",
    "花猪",
    "查大叫",
    "根",
    "金钩钓",
    "清一色",
    "七对",
)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_game_terms_show_their_chinese_names(lang: str) -> None:
    text = "\n".join(catalogue(lang).values())
    assert [term for term in CHINESE_TERMS if term not in text] == []
    for key in ("actions.hu", "actions.pung", "actions.claim_kong", "phase.exchange_you"):
        assert re.search(r"[\u4e00-\u9fff]", catalogue(lang)[key]), key


def test_german_uses_the_products_wording() -> None:
    de = "\n".join(catalogue("de").values())
    for phrase in ("Tauschen Sie drei aus", "fehlende Farbe", "Blutkampf"):
        assert phrase.lower() in de.lower(), phrase
    seed = ROOT.parent / "shared" / "seed"
    if seed.is_dir():  # the product text the wording comes from
        product = "\n".join(p.read_text(encoding="utf-8") for p in seed.glob("*.txt"))
        assert "Tauschen Sie drei" in product and "fehlende Farbe" in product
