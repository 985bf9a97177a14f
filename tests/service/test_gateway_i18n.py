"""The web client's message catalogues: one file per language, the same keys in each, and
every key the client's code names is in them."""

from __future__ import annotations

import json
import re
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "services" / "gateway" / "static"


def _catalogue(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((STATIC / "i18n" / f"{lang}.json").read_text())
    return data


def test_every_language_has_every_key() -> None:
    en, de = _catalogue("en"), _catalogue("de")
    assert sorted(set(en) - set(de)) == []
    assert sorted(set(de) - set(en)) == []
    for key in en:  # the same placeholders, in any order
        assert set(re.findall(r"\{(\w+)\}", en[key])) == set(re.findall(r"\{(\w+)\}", de[key])), key


def test_every_key_the_client_names_exists() -> None:
    en = _catalogue("en")
    code = "\n".join(p.read_text() for p in (STATIC / "js").glob("*.js"))
    html = (STATIC / "index.html").read_text()
    named = set(re.findall(r"\bt\(\"([a-z_]+\.[a-z_.0-9]+)\"", code))
    named |= set(re.findall(r'data-i18n(?:-label)?="([a-z_.]+)"', html))
    assert named, "no keys found: the pattern is out of date"
    assert sorted(k for k in named if k not in en) == []


def test_server_error_codes_are_translated() -> None:
    en = _catalogue("en")
    for code in (
        "not_your_seat",
        "bad_frame",
        "too_large",
        "rate_limited",
        "flood",
        "no_such_table",
        "stale_decision",
        "name_taken",
        "bad_credentials",
    ):
        assert f"error.{code}" in en
