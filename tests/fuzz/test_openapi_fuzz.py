"""schemathesis against the gateway's OpenAPI document (``/schema/openapi.json``).

The whole platform runs on the embedded log (table service, matchmaking, gateway on a free
port, from a background thread); schemathesis loads the document the gateway serves and,
for every operation, sends schema-valid requests (positive) and schema-breaking ones
(negative: wrong types, missing fields, bad paths and queries), with a guest's session
token (a fresh one for ``logout``; the admin token for admin routes). Every response must
pass every schemathesis check: no 5xx, a documented status code, a body that fits the
documented schema for that status, the documented content type, valid input accepted,
invalid input refused.

Its ``ignored_auth`` check is replaced by a stricter one of our own: every operation that
declares a security requirement answers 401 to the same valid request without a token,
and with a token that is not one.

Beside it, what the generators do not reach: bodies nested thousands deep on every operation
that takes one, and NUL and other control characters in every path, each answered with a
coded 4xx and logged.

Hypothesis is derandomized (a run is repeatable); ``MAHJONG_FUZZ_SCALE`` multiplies the
examples per operation.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from argon2 import PasswordHasher
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.specs.openapi.checks import ignored_auth, positive_data_acceptance

from schemas.codes import CODES
from services.gateway.config import Limits, Rate
from tests.fuzz import tally as fuzz_tally
from tests.fuzz.live import live_platform
from tests.service.gateway_harness import ADMIN, guest, platform

SCALE = float(os.environ.get("MAHJONG_FUZZ_SCALE", "1"))
POSITIVE = max(1, int(15 * SCALE))
NEGATIVE = max(1, int(8 * SCALE))
UNLIMITED = Rate(1e6, 1e6)


REGISTER = "/api/auth/register"
NAME_CODES = frozenset(c for c in CODES if c.startswith("name_")) | {"reserved_name"}


@schemathesis.check
def names_refused_by_their_rules(ctx: Any, response: Any, case: Any) -> None:
    """``positive_data_acceptance`` for register: a name the document allows (a string) may
    still break a rule JSON Schema cannot state (Unicode categories, scripts, look-alikes,
    reserved names: docs/gateway.md), and is then refused with 400 and its name code;
    anything else valid is accepted (or its name taken). (Registered for every operation,
    as schemathesis checks are; it looks at register only.)"""
    if case.operation.path != REGISTER:
        return
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    status = response.status_code
    if status == 400:
        code = response.json().get("code")
        assert code in NAME_CODES, f"valid register data refused with {code}"
    else:
        assert status in (201, 409, 429), f"valid register data answered {status}"


def _failures(exc: BaseException) -> list[BaseException]:
    return list(getattr(exc, "exceptions", [exc]))


class Run:
    """What a schemathesis run met: failures by operation, mode and check; statuses."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.token = self.guest_token()
        self.failures: dict[tuple[str, str, str], str] = {}
        self.statuses: Counter[tuple[str, int]] = Counter()
        self.cases: Counter[str] = Counter()

    def guest_token(self) -> str:
        r = httpx.post(f"{self.url}/api/auth/guest")
        assert r.status_code == 201, r.text
        return str(r.json()["token"])

    def bearer(self, op: Any, secured: list[dict[str, list[str]]]) -> str:
        if op.path == "/api/auth/logout":
            return self.guest_token()  # logging out must not end the shared session
        if {"admin": []} in secured:
            return ADMIN
        return self.token

    def fuzz(self, op: Any, mode: Any, examples: int, secured: list[Any]) -> None:
        @settings(
            max_examples=examples,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(op.as_strategy(generation_mode=mode))
        def run(case: Any) -> None:
            bearer = self.bearer(op, secured)
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {bearer}"}
            self.cases[str(mode)] += 1
            fuzz_tally.add("openapi_requests")
            try:
                if op.path == REGISTER:
                    response = case.call_and_validate(  # names_refused_by_their_rules instead
                        excluded_checks=[ignored_auth, positive_data_acceptance]
                    )
                else:
                    response = case.call_and_validate(excluded_checks=[ignored_auth])
                self.statuses[(op.label, response.status_code)] += 1
            except (Exception, BaseExceptionGroup) as exc:  # every failure, collected
                for failure in _failures(exc):
                    title = str(failure).split("\n")[0]
                    self.failures.setdefault((op.label, str(mode), title), str(exc)[:3000])

        try:
            run()
        except Unsatisfiable:
            assert mode == schemathesis.GenerationMode.NEGATIVE  # nothing there to break

    def refused_without_credentials(self, op: Any) -> None:
        """The first valid case of a secured operation, without a token and with bad ones."""
        seen: list[Any] = []

        @settings(max_examples=1, derandomize=True, database=None, deadline=None)
        @given(op.as_strategy())
        def first(case: Any) -> None:
            seen.append(case)

        first()
        case = seen[0]
        for headers in (
            {},
            {"Authorization": "Bearer not-a-token"},
            {"Authorization": "Basic eA=="},
        ):
            kept = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
            case.headers = {**kept, **headers}
            response = case.call()
            self.cases["no_credentials"] += 1
            fuzz_tally.add("openapi_requests")
            if response.status_code != 401:
                key = (op.label, "auth", f"{headers} answered {response.status_code}")
                self.failures[key] = response.text[:500]


def test_every_operation_holds_to_its_openapi_document(tmp_path: Path) -> None:
    limits = Limits(http=UNLIMITED, static=UNLIMITED, auth=UNLIMITED, admin=UNLIMITED)
    with live_platform(tmp_path, limits) as live:
        # argon2 at its cheapest: this test is about the API's shape, and the default costs
        # (tests/security checks them) would make register and login most of its time.
        live.platform.gateway.accounts.hasher = PasswordHasher(
            time_cost=1, memory_cost=64, parallelism=1
        )
        schema = schemathesis.openapi.from_url(f"{live.url}/schema/openapi.json")
        run = Run(live.url)
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 25
        for op in operations:
            secured = schema.raw_schema["paths"][op.path][op.method.lower()].get("security") or []
            run.fuzz(op, schemathesis.GenerationMode.POSITIVE, POSITIVE, secured)
            run.fuzz(op, schemathesis.GenerationMode.NEGATIVE, NEGATIVE, secured)
            if secured and {} not in secured:
                run.refused_without_credentials(op)
        health = httpx.get(f"{live.url}/healthz").json()
    seen = Counter(status for _, status in run.statuses.elements())
    print(
        f"\nschemathesis: {len(operations)} operations, {sum(run.cases.values())} requests "
        f"{dict(run.cases)}; statuses {sorted(seen.items())}"
    )
    assert not run.failures, "\n\n".join(
        f"== {label} [{mode}] {title}\n{text}"
        for (label, mode, title), text in run.failures.items()
    )
    assert not [status for status in seen if status >= 500]
    assert health["ok"]


# --- hostile input the generators do not reach --------------------------------------------------

DEPTHS = (3_000, 5_000)


def _nested(depth: int, kind: str) -> bytes:
    """JSON nested ``depth`` levels deep, small enough for the body limit (16 KiB)."""
    if kind == "array":
        return b"[" * depth + b"]" * depth
    return b'{"":' * depth + b"0" + b"}" * depth


def _refusals(records: list[logging.LogRecord], status: int, code: str, path: str) -> int:
    return sum(
        1
        for r in records
        if getattr(r, "status", None) == status
        and getattr(r, "code", None) == code
        and getattr(r, "path", None) == path
    )


def test_deep_bodies_and_control_characters_in_paths_get_a_coded_4xx_and_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every operation of the document that takes a body, with JSON nested thousands deep
    (past the decoder's recursion limit), and every path of the document and of the web
    client with NUL or another control character in it: a 4xx with an ``ErrorOut`` code,
    and one log line saying so; nothing reaches a store or a file lookup."""
    limits = Limits(http=UNLIMITED, static=UNLIMITED, auth=UNLIMITED, admin=UNLIMITED)

    async def go() -> None:
        async with platform(tmp_path, limits=limits) as p:
            user = await guest(p)
            document = (await p.http.get("/schema/openapi.json")).json()
            with_body = [
                (path, method)
                for path, ops in document["paths"].items()
                for method, op in ops.items()
                if "requestBody" in op
            ]
            assert len(with_body) >= 6
            tried: list[tuple[str, str, int, dict[str, Any]]] = []
            for path, method in with_body:
                url = re.sub(r"\{[^}]+\}", "t-1", path)
                for depth in DEPTHS:
                    for kind in ("array", "object"):
                        r = await p.http.request(
                            method.upper(),
                            url,
                            content=_nested(depth, kind),
                            headers={**user.auth, "content-type": "application/json"},
                        )
                        tried.append((method, url, r.status_code, r.json()))
            templates = [
                (path, method) for path, ops in document["paths"].items() for method in ops
            ]
            paths = [
                (method, re.sub(r"\{[^}]+\}", bad, path))
                for path, method in templates
                if "{" in path
                for bad in ("%00", "x%00y", "%0a", "%7f")
            ]
            paths += [
                ("get", bad)
                for bad in ("/index.html%00.js", "/%00", "/js/%00", "/api/players/%00", "/%1f")
            ]
            for method, url in paths:
                r = await p.http.request(method.upper(), url, headers=user.auth)
                tried.append((method, url, r.status_code, r.json()))
            records = list(caplog.records)
            wrong = []
            for method, url, status, body in tried:
                code = body.get("code") if isinstance(body, dict) else None
                shaped = isinstance(code, str) and code and isinstance(body.get("reason"), str)
                decoded = url.replace("%00", "\x00").replace("%0a", "\n")
                decoded = decoded.replace("%7f", "\x7f").replace("%1f", "\x1f")
                logged = _refusals(records, status, str(code), decoded) >= 1
                if not (400 <= status < 500 and shaped and logged):
                    wrong.append((method, url, status, body, logged))
            assert not wrong, wrong
            assert (await p.http.get("/healthz")).json()["ok"]

    with caplog.at_level(logging.INFO, logger="mahjong.gateway"):
        asyncio.run(go())
