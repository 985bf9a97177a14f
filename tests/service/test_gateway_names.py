"""Display names over the gateway's REST API: each refusal with its own code and params, as
the client shows it in English and German (the catalogues' ``error.<code>``); a Unicode
name registered, shown and logged in with; nothing stored for a refused name."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import unicodedata
from pathlib import Path
from typing import Any

from tests.service.gateway_harness import guest, platform

STATIC = Path(__file__).resolve().parents[2] / "services" / "gateway" / "static"


def message(lang: str, body: dict[str, Any]) -> str:
    """What the client shows for a refusal (i18n.js ``serverMessage``, plain placeholders)."""
    catalogue = json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    template = catalogue[f"error.{body['code']}"]
    return re.sub(r"\{(\w+)\}", lambda m: str(body["params"][m.group(1)]), template)


def test_refused_names_have_their_own_codes_and_messages(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path, matchmaking=False) as p:

            async def register(name: str) -> tuple[int, dict[str, Any]]:
                r = await p.http.post(
                    "/api/auth/register", json={"name": name, "password": "s3cret-pw"}
                )
                return r.status_code, r.json()

            status, body = await register("x" * 30)
            assert (status, body["code"], body["params"]) == (400, "name_too_long", {"max": 24})
            assert message("en", body) == "A name has at most 24 characters."
            assert message("de", body) == "Ein Name hat höchstens 24 Zeichen."

            status, body = await register("B")
            assert (status, body["code"], body["params"]) == (400, "name_too_short", {"min": 2})
            assert message("de", body) == "Ein Name hat mindestens 2 Zeichen."

            status, body = await register("Bo\u200bb")
            assert body["code"] == "name_bad_character"
            assert "(U+200B)" in message("en", body) and "(U+200B)" in message("de", body)

            status, body = await register("Administrator")
            assert (status, body["code"]) == (400, "reserved_name")
            assert message("en", body) == "That name is reserved."
            assert message("de", body) == "Dieser Name ist reserviert."

            status, body = await register("pаypal")  # a Cyrillic а
            assert body["code"] == "name_mixed_scripts"
            assert "Cyrillic" in message("en", body) and "kyrillisch" in message("de", body)

            status, body = await register("Zoë")
            assert status == 201 and body["account"]["name"] == "Zoë"
            status, body = await register(unicodedata.normalize("NFD", "ZOË"))
            assert (status, body["code"]) == (409, "name_taken")
            assert message("en", body).startswith("That name is taken")
            assert message("de", body).startswith("Dieser Name ist vergeben")

            db = sqlite3.connect(tmp_path / "gateway.sqlite3")
            try:  # only Zoë was made: nothing refused was stored, nothing cut
                assert [n for (n,) in db.execute("SELECT name FROM accounts")] == ["Zoë"]
            finally:
                db.close()

    asyncio.run(go())


def test_a_chinese_name_registers_logs_in_and_is_shown(tmp_path: Path) -> None:
    async def go() -> None:
        async with platform(tmp_path, matchmaking=False) as p:
            me = await guest(p)
            r = await p.http.post(
                "/api/auth/register",
                json={"name": " 李小龙 ", "password": "s3cret-pw"},
                headers={"authorization": f"Bearer {me.token}"},
            )
            assert r.status_code == 201, r.text
            account = r.json()["account"]
            assert (account["name"], account["id"]) == ("李小龙", me.id)  # trimmed, same player
            r = await p.http.post(
                "/api/auth/login", json={"name": "李小龙", "password": "s3cret-pw"}
            )
            assert r.status_code == 200 and r.json()["account"]["id"] == me.id
            auth = {"authorization": f"Bearer {r.json()['token']}"}
            r = await p.http.get(f"/api/players/{me.id}", headers=auth)
            assert r.status_code == 200 and "李小龙" in r.text

    asyncio.run(go())
