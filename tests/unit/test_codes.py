"""The closed set of codes (``schemas/codes.py``) against every place that sends one.

``mypy`` holds every typed place that refuses (``Rejection``, ``CommandRejected``,
``RequestRefused``, ``ApiError``, ``AccountError``, the socket's error frames and closings)
to the set. This test reads the server's sources for what ``mypy`` cannot see: the
parameters each place sends with a code (``PARAMS`` names those every place sends), and
the codes written into hand-built bodies and close reasons. It also finds that every code
in the set is sent somewhere, so the set holds no dead code.
"""

from __future__ import annotations

import ast
import json
import re
import typing
from functools import cache
from pathlib import Path

from schemas import codes

ROOT = Path(__file__).resolve().parents[2]

CODE = re.compile(r"[a-z][a-z0-9_]*")
# Calls whose first string argument (or ``code=``) is a code sent on to clients.
EMITTERS = {
    "_reject",  # rules engine, clock allowances, table service
    "_refuse",  # matchmaking
    "Rejection",
    "CommandRejected",
    "RequestRefused",
    "ApiError",  # gateway REST
    "AccountError",
    "ErrorOut",
    "Closing",  # gateway WebSocket, closing
    "_error",  # gateway WebSocket, staying open
    "ErrorFrame",
    "Rejected",
    "NameRefused",  # gateway display names
}
# Messages whose other fields are not parameters: theirs come in ``params=``.
STRUCTS = {"Rejection", "CommandRejected", "RequestRefused", "ErrorOut", "ErrorFrame", "Rejected"}
SERVER_SOURCES = [
    path
    for part in ("rules", "table", "matchmaking", "gateway")
    for path in sorted((ROOT / "services" / part).rglob("*.py"))
]


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _codes_of(node: ast.expr) -> set[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} if CODE.fullmatch(node.value) else set()
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return set()
    # Anything else is passed through (exc.code, answer.code, *problem): counted where it
    # starts. A code built at run time (an f-string) is a ``str``, which mypy refuses, and
    # codes kept in a variable would not be found: ``test_every_code_in_the_set_is_sent``.
    return None


@cache
def server_codes() -> dict[str, list[set[str] | None]]:
    """code → for each place that emits it, the parameter names it sends (None: unknown)."""
    found: dict[str, list[set[str] | None]] = {}

    def add(codes: set[str], params: set[str] | None) -> None:
        for code in codes:
            found.setdefault(code, []).append(params)

    for path in SERVER_SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        tables = {  # by_status: dict[int, Code] = {413: "too_large", ...}: codes by key
            node.target.id
            for node in ast.walk(tree)
            if isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and re.search(r"\bdict\[.*Code\]", ast.unparse(node.annotation))
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _name(node.func)
                if name in EMITTERS:
                    codes: set[str] | None = None
                    code_kw = [kw.value for kw in node.keywords if kw.arg == "code"]
                    if code_kw:
                        codes = _codes_of(code_kw[0])
                    else:  # the first string: after an HTTP status, or txn, table, request …
                        for arg in node.args:
                            if isinstance(arg, ast.Starred):
                                break
                            codes = _codes_of(arg)
                            if codes is not None and not (
                                isinstance(arg, ast.Constant) and isinstance(arg.value, int)
                            ):
                                break
                            codes = None
                    if not codes:
                        continue
                    params: set[str] | None = set()
                    for kw in node.keywords:
                        if kw.arg is None or kw.arg == "params":
                            params = None  # **params / params=...: whatever the caller had
                        elif params is not None and not (name in STRUCTS or kw.arg == "code"):
                            params.add(kw.arg)  # a helper's keyword arguments are its params
                    add(codes, params)
                elif name == "close" and len(node.args) == 2:
                    reason = _codes_of(node.args[1])  # WebSocket close reason: a code
                    if reason:
                        add(reason, set())
                elif (
                    name == "get"
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in tables
                ):  # by_status.get(status, "bad_request"): the default
                    for v in node.args[1:]:
                        add(_codes_of(v) or set(), set())
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id in tables
                and isinstance(node.value, ast.Dict)
            ):
                for v in node.value.values:
                    add(_codes_of(v) or set(), set())
            elif isinstance(node, ast.FunctionDef) and node.name.endswith("_problem"):
                for ret in ast.walk(node):  # "code", "reason" tuples, refused by the caller
                    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple):
                        add(_codes_of(ret.value.elts[0]) or set(), set())
            elif isinstance(node, ast.Dict):
                keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
                if "code" in keys and "reason" in keys:  # a hand-built error body
                    codes = _codes_of(node.values[keys.index("code")])
                    params_node = node.values[keys.index("params")] if "params" in keys else None
                    params = (
                        {k.value for k in params_node.keys if isinstance(k, ast.Constant)}
                        if isinstance(params_node, ast.Dict)
                        else set()
                    )
                    add(codes or set(), params)
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, bytes)
                and node.value.startswith(b'{"code"')
            ):  # a hand-built body as bytes
                body = json.loads(node.value)
                add({body["code"]}, set(body.get("params", {})))
    return found


def test_the_scanner_finds_codes_from_every_service() -> None:
    codes = server_codes()
    for code in (
        "not_your_turn",  # rules engine
        "no_pung",  # rules engine, chosen by the claim
        "time_up",  # clock allowances
        "table_unavailable",  # table service
        "need_four_players",  # table service, a problem tuple
        "table_full",  # matchmaking
        "rated_needs_clock",  # matchmaking, a problem tuple
        "name_taken",  # gateway accounts
        "not_your_seat",  # gateway socket
        "unsupported_version",  # gateway socket, closing
        "rate_limited",  # gateway limits, a hand-built body
        "too_many_sockets",  # gateway socket close reason
        "method_not_allowed",  # gateway HTTP errors
        "starting",  # gateway starting, a body as bytes
    ):
        assert code in codes, code
    assert len(codes) > 70


def test_every_code_sent_is_in_the_set() -> None:
    assert sorted(set(server_codes()) - codes.CODES) == [], "add these to schemas/codes.py"


def test_every_code_in_the_set_is_sent() -> None:
    assert sorted(codes.CODES - set(server_codes())) == [], "no place sends these"


def test_params_name_what_every_place_sends() -> None:
    params: dict[str, tuple[str, ...]] = {str(c): p for c, p in codes.PARAMS.items()}
    for code, sites in server_codes().items():
        known = [s for s in sites if s is not None]
        assert known, f"{code}: no place with known parameters"
        every = set.intersection(*known)
        assert set(params[code]) == every, f"{code}: every place sends {sorted(every)}"


def test_params_cover_the_set_in_order() -> None:
    assert set(codes.PARAMS) == codes.CODES
    for code, params in codes.PARAMS.items():
        assert list(params) == sorted(set(params)), code


def test_each_code_is_written_once() -> None:
    """``Code`` is the union of the parts' ``Literal`` types, and no two parts write the same
    code (a code shared by two parts, such as ``SeatingCode``, is its own part)."""
    literals = typing.get_args(codes.Code)  # unions flattened, a part named twice once
    assert all(typing.get_origin(part) is typing.Literal for part in literals)
    written = [code for part in literals for code in typing.get_args(part)]
    assert len(written) == len(set(written)) == len(codes.CODES)
