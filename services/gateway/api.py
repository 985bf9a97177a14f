"""The REST routes (all under ``/api``; OpenAPI at ``/schema/openapi.json``).

Authentication: ``Authorization: Bearer <session token>`` (from register, login or guest).
Admin routes: ``Authorization: Bearer <MAHJONG_ADMIN_TOKEN>``. Errors are JSON
``{"code", "reason", "params"}`` with a stable code for clients to translate.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal

import msgspec
from litestar import Request, Response, Router, delete, get, post
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency, Provide
from litestar.exceptions import HTTPException
from litestar.handlers import HTTPRouteHandler
from litestar.openapi import ResponseSpec
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from schemas import analysis as an
from schemas import events as ev
from schemas import lobby as lb
from schemas.codes import Code
from schemas.views import SeatView
from services.gateway import access
from services.gateway import protocol as proto
from services.gateway.accounts import (
    MAX_PASSWORD,
    MIN_PASSWORD,
    Account,
    AccountError,
    token_hash,
)
from services.gateway.gateway import Gateway
from services.gateway.history import ReplayStep, replay_frames, settlement_events
from services.gateway.limits import client_address
from services.gateway.lobby import RequestTimeout
from services.gateway.names import MAX_LENGTH as MAX_NAME
from services.gateway.names import MIN_LENGTH as MIN_NAME
from services.gateway.table_info import table_info
from services.history.figures import PlayerFigures, figures
from services.history.fold import KINDS, HandRow
from services.rules import hand_over, seat_view, seen_events

log = logging.getLogger("mahjong.gateway.api")


class ApiError(Exception):
    """An answer other than success: HTTP status, stable code, reason, params."""

    def __init__(self, status: int, code: Code, reason: str, **params: str | int) -> None:
        super().__init__(reason)
        self.status, self.code, self.reason, self.params = status, code, reason, params


class ErrorOut(msgspec.Struct, frozen=True, kw_only=True):
    """Every error answer: a stable ``code`` for clients to translate, ``params`` for the
    message, and an English ``reason``."""

    code: Code
    reason: str
    params: dict[str, str | int] = {}


_ERROR_DESCRIPTIONS = {
    400: "malformed or refused input (`bad_request`, `name_too_long`, `bad_password`, ...)",
    401: "no valid session token (`unauthorized`, `bad_credentials`)",
    403: "admin routes are off (`admin_disabled`), or only a hand's players may do this "
    "(`not_in_hand`)",
    404: "no such table, player, hand or review, or not one the caller may see",
    409: "refused by matchmaking or by the hand's state (e.g. `no_such_table`, `in_queue`, "
    "`hand_not_ended`)",
    413: "the request body is too large (`too_large`)",
    429: "rate limited (`rate_limited`; at login also `too_many_attempts`, per account name); "
    "`Retry-After` says when to try again",
    503: "a service did not answer in time (`matchmaking_unavailable`) or could not help",
}


def errors(*statuses: int) -> dict[int, ResponseSpec]:
    """The OpenAPI entries of a route's error answers (each an ``ErrorOut``); 429 always,
    since every route is rate limited."""
    return {
        status: ResponseSpec(
            data_container=ErrorOut,
            description=_ERROR_DESCRIPTIONS[status],
            generate_examples=False,
        )
        for status in sorted({*statuses, 429})
    }


MAX_QUERY_INT = 2**53 - 1
"""Bound of the integer query parameters passed on to a store (a larger one may not fit a
64-bit column: the store raised and the route answered 500); the largest integer every JSON
tool holds exactly."""

SESSION: list[dict[str, list[str]]] = [{"session": []}]
"""OpenAPI security requirement of the routes that need a session token."""
SESSION_OPTIONAL: list[dict[str, list[str]]] = [{}, {"session": []}]
ADMIN: list[dict[str, list[str]]] = [{"admin": []}]


def api_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[ErrorOut]:
    """Every refusal as an ``ErrorOut``, and one structured log line for each (a 500 with its
    traceback)."""
    response = _error_answer(exc)
    error = response.content
    status: int = response.status_code or 500
    path = str(request.scope.get("path", ""))[:200]
    fields = {"status": status, "code": error.code, "method": request.method, "path": path}
    if status >= 500:
        log.error("request failed: %s", exc, exc_info=exc, extra=fields)
    else:
        log.info("request refused: %d %s", status, error.code, extra=fields)
    return response


def _too_deep(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised by, a RecursionError (JSON nested past the
    decoder's limit: a few thousand levels)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, RecursionError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _error_answer(exc: Exception) -> Response[ErrorOut]:
    if _too_deep(exc):
        return Response(
            ErrorOut(code="too_deep", reason="the request body is nested too deeply"),
            status_code=400,
        )
    if isinstance(exc, AccountError):
        exc = ApiError(exc.status, exc.code, exc.reason, **exc.params)
    if isinstance(exc, ApiError):
        body = ErrorOut(code=exc.code, reason=exc.reason, params=exc.params)
        retry = exc.params.get("retry_after_s") if exc.status == 429 else None
        headers = {"retry-after": str(retry)} if retry is not None else None
        return Response(body, status_code=exc.status, headers=headers)
    if isinstance(exc, HTTPException):
        by_status: dict[int, Code] = {413: "too_large", 404: "not_found", 405: "method_not_allowed"}
        code = by_status.get(exc.status_code, "bad_request")
        return Response(ErrorOut(code=code, reason=str(exc.detail)), status_code=exc.status_code)
    return Response(ErrorOut(code="internal", reason="internal error"), status_code=500)


# --- what the routes are given (Litestar dependency injection) ---------------------------------

GatewayDep = NamedDependency[Gateway]
"""A ``gateway`` parameter: the process's ``Gateway`` (see ``dependencies``)."""
AccountDep = NamedDependency[Account]
"""An ``account`` parameter: the caller's account; without a valid session, 401."""
AdminDep = NamedDependency[Gateway]
"""An ``admin`` parameter: the ``Gateway``, to the admin token only."""


def _bearer(request: Request[Any, Any, Any]) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return None


async def _account(request: Request[Any, Any, Any], gateway: GatewayDep) -> Account:
    account = await gateway.accounts.authenticate(_bearer(request))
    if account is None:
        raise ApiError(401, "unauthorized", "log in first (Authorization: Bearer <token>)")
    return account


async def _admin(request: Request[Any, Any, Any], gateway: GatewayDep) -> Gateway:
    expected = gateway.config.admin_token
    given = _bearer(request) or ""
    if not expected:
        raise ApiError(403, "admin_disabled", "set MAHJONG_ADMIN_TOKEN to enable admin routes")
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise ApiError(401, "unauthorized", "the admin credential is wrong")
    return gateway


def dependencies(gateway: Gateway) -> dict[str, Provide]:
    """What a route (and the socket) may ask for by parameter name: ``gateway``, the process's
    ``Gateway``; ``account``, the caller's ``Account`` (401 ``unauthorized`` without a valid
    session token); ``admin``, the ``Gateway`` again, for the admin token only (403
    ``admin_disabled`` when none is set, else 401 ``unauthorized``)."""

    def the_gateway() -> Gateway:
        return gateway

    return {
        "gateway": Provide(the_gateway, use_cache=True, sync_to_thread=False),
        "account": Provide(_account),
        "admin": Provide(_admin),
    }


# --- accounts --------------------------------------------------------------------------------


class Credentials(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    password: str


# A new account's name and password rules, for the OpenAPI document only: ``Accounts`` checks
# them itself, so a bad name or password gets its own stable code (``name_too_long``,
# ``name_bad_character``, ``bad_password``, ...) rather than a generic validation error.
_NAME_DOC = msgspec.Meta(
    extra_json_schema={
        "description": (
            f"{MIN_NAME} to {MAX_NAME} characters (grapheme clusters, after NFC and trimming): "
            "letters, digits, single spaces, - _ . ' ’ · ・ and combining marks on letters; "
            "not reserved (admin, system, computer…, Guest-…), not confusable with a taken name "
            "(docs/gateway.md, Accounts); a name breaking a rule is refused with 400 and its "
            "own code (name_too_long, name_bad_character, reserved_name, ...)"
        ),
        "examples": ["李小龙", "Zoë"],
    }
)
_PASSWORD_DOC = msgspec.Meta(
    extra_json_schema={
        "description": f"{MIN_PASSWORD} to {MAX_PASSWORD} characters",
        "extra": {"min_length": MIN_PASSWORD, "max_length": MAX_PASSWORD},
    }
)


class NewAccount(msgspec.Struct, frozen=True, kw_only=True):
    name: Annotated[str, _NAME_DOC]
    password: Annotated[str, _PASSWORD_DOC]


class SessionOut(msgspec.Struct, frozen=True, kw_only=True):
    token: str
    expires_ms: int
    account: Account


@post("/auth/register", status_code=201, security=SESSION_OPTIONAL, responses=errors(400, 409, 413))
async def register(
    request: Request[Any, Any, Any], gateway: GatewayDep, data: JSONBody[NewAccount]
) -> SessionOut:
    """A new account; with a guest's token, that guest becomes a full account (its history
    stays)."""
    guest = await gateway.accounts.authenticate(_bearer(request))
    s = await gateway.accounts.register(
        data.name, data.password, guest if guest and guest.guest else None
    )
    gateway.forget_name(s.account.id)
    return SessionOut(token=s.token, expires_ms=s.expires_ms, account=s.account)


@post("/auth/login", status_code=200, responses=errors(400, 401, 413))
async def login(
    request: Request[Any, Any, Any], gateway: GatewayDep, data: JSONBody[Credentials]
) -> SessionOut:
    """A session for a name and password; many attempts at one name, from any addresses,
    are slowed (429 ``too_many_attempts``)."""
    address = client_address(request.scope, gateway.config.trusted_proxies)  # type: ignore[arg-type]
    s = await gateway.accounts.login(data.name, data.password, address)
    return SessionOut(token=s.token, expires_ms=s.expires_ms, account=s.account)


@post("/auth/guest", status_code=201, responses=errors(503))
async def guest(gateway: GatewayDep) -> SessionOut:
    """A guest account with a generated name, to play at once."""
    s = await gateway.accounts.guest()
    return SessionOut(token=s.token, expires_ms=s.expires_ms, account=s.account)


@post("/auth/logout", status_code=204, security=SESSION_OPTIONAL, responses=errors())
async def logout(request: Request[Any, Any, Any], gateway: GatewayDep) -> None:
    """End the session: its token opens nothing any more, and every socket bound to it is
    closed (``session_ended``), on every gateway."""
    token = _bearer(request)
    if token:
        await gateway.accounts.logout(token)
        gateway.sessions.revoke(token_hash(token))


class MeOut(msgspec.Struct, frozen=True, kw_only=True):
    account: Account
    table_id: str | None = None  # the table the account sits at (open or playing)
    queue_since_ms: int | None = None  # waiting for Quick Play since


@get("/me", security=SESSION, responses=errors(401))
async def me(gateway: GatewayDep, account: AccountDep) -> MeOut:
    return MeOut(
        account=account,
        table_id=gateway.lobby.seated_at(account.id),
        queue_since_ms=gateway.lobby.waiting_since(account.id),
    )


# --- lobby and tables ------------------------------------------------------------------------


TableOut = proto.TableInfo


class LobbyOut(msgspec.Struct, frozen=True, kw_only=True):
    tables: list[TableOut]
    version: int
    table_id: str | None = None  # the caller's own table, if any
    table_status: proto.TableStatus | None = None
    queue_since_ms: int | None = None


async def _table_out(gateway: Gateway, table_id: str, viewer: str | None) -> TableOut:
    return await table_info(gateway, table_id, viewer, proto.TableInfo)


@get("/lobby", responses=errors(401))
async def lobby(gateway: GatewayDep, account: AccountDep) -> LobbyOut:
    """Public tables, open ones and those in play (to watch; never private or Quick Play
    ones), and where the caller sits."""
    tables = [
        await _table_out(gateway, t.table_id, account.id)
        for t in gateway.lobby.public_tables()[:200]
    ]
    mine = gateway.lobby.seated_at(account.id)
    own = None if mine is None else gateway.lobby.table(mine)
    return LobbyOut(
        tables=tables,
        version=gateway.lobby.version,
        table_id=mine,
        table_status=None if own is None else own.stage,
        queue_since_ms=gateway.lobby.waiting_since(account.id),
    )


@get("/tables/{table_id:str}", responses=errors(400, 401, 404))
async def table(table_id: FromPath[str], gateway: GatewayDep, account: AccountDep) -> TableOut:
    """A table's status and seats: public tables (open, started or closed) for everyone,
    private ones for their players only. A private table the caller may not see and a table
    that does not exist get the same answer: 404 ``no_such_table``."""
    if not access.watch(gateway.lobby, table_id, account.id).sees_table:
        raise ApiError(404, "no_such_table", "there is no such table", table_id=table_id)
    return await _table_out(gateway, table_id, account.id)


class RequestOut(msgspec.Struct, frozen=True, kw_only=True):
    """Matchmaking's answer: the table concerned and, to a private table's creator, its
    invite code."""

    table_id: str | None = None
    code: str | None = None
    started: bool = False


async def _ask(
    gateway: Gateway, account: Account, kind: Callable[..., lb.Request], **fields: Any
) -> lb.Event:
    """Ask matchmaking ``kind(**fields)`` for ``account`` and wait for its word: the event
    that took the request, else its refusal (409 with matchmaking's code)."""
    request = kind(player=account.id, request_id=gateway.lobby.request_id(account.id), **fields)
    try:
        answer = await gateway.lobby.request(request)
    except RequestTimeout:
        raise ApiError(
            503, "matchmaking_unavailable", "matchmaking did not answer; try again"
        ) from None
    if isinstance(answer, lb.RequestRefused):
        raise ApiError(409, answer.code, answer.reason, **answer.params)
    return answer


def _out(event: lb.Event) -> RequestOut:
    return RequestOut(
        table_id=getattr(event, "table_id", None),
        code=getattr(event, "code", None),
        started=isinstance(event, lb.TableStarted | lb.TableFound),
    )


class CreateTableIn(msgspec.Struct, frozen=True, kw_only=True):
    options: lb.TableOptions = lb.TableOptions()


@post("/tables", status_code=201, responses=errors(400, 401, 409, 413, 503))
async def create_table(
    data: JSONBody[CreateTableIn], gateway: GatewayDep, account: AccountDep
) -> RequestOut:
    """Open a table (public or private, rated or casual, clock, computers) and sit at it."""
    return _out(await _ask(gateway, account, lb.CreateTable, options=data.options))


class JoinIn(msgspec.Struct, frozen=True, kw_only=True):
    code: str | None = None


@post("/tables/{table_id:str}/join", status_code=200, responses=errors(400, 401, 409, 413, 503))
async def join_table(
    table_id: FromPath[str], data: JSONBody[JoinIn], gateway: GatewayDep, account: AccountDep
) -> RequestOut:
    """Take a seat; a private table needs its invite code."""
    if data.code is not None and not (data.code.isascii() and len(data.code) <= 64):
        # No invite code looks like that (they are URL-safe base64): the answer to a wrong
        # code, without asking matchmaking. (Its constant-time comparison of str codes
        # raises on non-ASCII text, so such a request would fail there.)
        raise ApiError(409, "no_such_table", "there is no such table", table_id=table_id)
    return _out(await _ask(gateway, account, lb.JoinTable, table_id=table_id, code=data.code))


def _table_action(
    action: str, name: str, kind: Callable[..., lb.Request], doc: str
) -> HTTPRouteHandler:
    """``POST /api/tables/{table_id}/<action>``: the request ``kind`` for the caller at that
    table, as matchmaking answers it (it decides who may: RULES.md §9)."""

    async def route(
        table_id: FromPath[str], gateway: GatewayDep, account: AccountDep
    ) -> RequestOut:
        return _out(await _ask(gateway, account, kind, table_id=table_id))

    route.__name__ = route.__qualname__ = name  # the OpenAPI operation's id and summary
    route.__doc__ = doc
    return post(
        f"/tables/{{table_id:str}}/{action}", status_code=200, responses=errors(400, 401, 409, 503)
    )(route)


leave_table = _table_action(
    "leave",
    "leave_table",
    lb.LeaveTable,
    """Leave the table: at once before or between hands (or after winning); during a hand
    the clock plays the seat and the player is free when the hand ends.""",
)
play_again = _table_action(
    "again",
    "play_again",
    lb.PlayAgain,
    """Between hands at a casual table: ask for the next hand. It is dealt once every human
    still seated has asked.""",
)
fill_table = _table_action(
    "fill",
    "fill_table",
    lb.FillWithComputers,
    """The creator starts the table now; computers take the empty seats.""",
)


class QuickPlayIn(msgspec.Struct, frozen=True, kw_only=True):
    # 5 to 600 (checked by the route, which answers ``bad_wait``); documented only.
    computers_after_s: (
        Annotated[
            int,
            msgspec.Meta(extra_json_schema={"extra": {"minimum": 5, "maximum": 600}}),
        ]
        | None
    ) = None
    computers: lb.Strength = "normal"  # the strength of the computers that may fill the table


@post("/quickplay", status_code=200, responses=errors(400, 401, 409, 413, 503))
async def quick_play(
    data: JSONBody[QuickPlayIn], gateway: GatewayDep, account: AccountDep
) -> RequestOut:
    """Wait for a rated ``standard`` table of four humans near one's rating."""
    after = data.computers_after_s
    if after is not None and not 5 <= after <= 600:
        raise ApiError(400, "bad_wait", "computers_after_s is 5 to 600", min=5, max=600)
    rating = await gateway.rating_of(account.id)
    return _out(
        await _ask(
            gateway,
            account,
            lb.JoinQueue,
            rating=rating,
            computers_after_s=after,
            computers=data.computers,
        )
    )


@delete("/quickplay", status_code=200, responses=errors(401, 409, 503))
async def leave_quick_play(gateway: GatewayDep, account: AccountDep) -> RequestOut:
    return _out(await _ask(gateway, account, lb.LeaveQueue))


class PracticeIn(msgspec.Struct, frozen=True, kw_only=True):
    strength: lb.Strength = "normal"
    pace: Literal["fast", "normal", "slow"] = "normal"


@post("/practice", status_code=201, responses=errors(400, 401, 409, 413, 503))
async def practice(
    data: JSONBody[PracticeIn], gateway: GatewayDep, account: AccountDep
) -> RequestOut:
    """A practice hand: you against three computers, untimed and unrated (RULES.md §9): a
    private table with computers, dealt as soon as the player has it open; another hand
    after it is the player's choice (Play again)."""
    options = lb.TableOptions(
        rated=False, clock=None, public=False, computers=data.strength, pace=data.pace
    )
    opened = await _ask(gateway, account, lb.CreateTable, options=options)
    table_id = getattr(opened, "table_id", "")
    return _out(await _ask(gateway, account, lb.FillWithComputers, table_id=table_id))


# --- profiles, ratings, history ---------------------------------------------------------------


class RatingChange(msgspec.Struct, frozen=True, kw_only=True):
    """One rated hand on a profile: these fields of the rating store's ``HistoryEntry``."""

    hand_id: str
    table_id: str
    points: int
    rating_before: float
    rating_after: float
    delta: float
    rated_hands: int = 0
    """The player's rated hands after this one (10 and more: no longer provisional)."""


class ProfileOut(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    name: str
    guest: bool
    rating: float
    provisional: bool
    rated_hands: int
    history: list[RatingChange]


@get("/players/{player:str}", responses=errors(400, 401, 404))
async def player_profile(
    player: FromPath[str], gateway: GatewayDep, account: AccountDep
) -> ProfileOut:
    """A player's name, rating (1500 and provisional before 10 rated hands) and its history."""
    shown = await gateway.accounts.store.account(player)
    if shown is None:
        raise ApiError(404, "no_such_player", "there is no such player", player=player)
    found = await gateway.ratings.profile(player)
    s = found.standing
    return ProfileOut(
        player=player,
        name=shown.name,
        guest=shown.guest,
        rating=s.rating,
        provisional=s.provisional,
        rated_hands=s.rated_hands,
        history=[msgspec.convert(h, RatingChange, from_attributes=True) for h in found.history],
    )


async def _shown_player(gateway: Gateway, player: str) -> Account:
    shown = await gateway.accounts.store.account(player)
    if shown is None:
        raise ApiError(404, "no_such_player", "there is no such player", player=player)
    return shown


@get("/players/{player:str}/ratings", responses=errors(400, 401, 404))
async def player_ratings(
    player: FromPath[str], gateway: GatewayDep, account: AccountDep
) -> list[RatingChange]:
    """A player's whole rating history, oldest first: one change per rated hand (the
    profile carries only the newest 50). Empty before the first rated hand."""
    await _shown_player(gateway, player)
    changes = await gateway.ratings.history(player)
    return [msgspec.convert(h, RatingChange, from_attributes=True) for h in reversed(changes)]


@get("/players/{player:str}/stats", responses=errors(400, 401, 404))
async def player_stats(
    player: FromPath[str],
    gateway: GatewayDep,
    account: AccountDep,
    kind: FromQuery[Literal["practice", "casual", "rated", "quick_play"] | None] = None,
) -> PlayerFigures:
    """A player's figures from the hand-history projection (``services.history.figures``:
    hands, rated and casual counts, win rate, average points, deal-in rate, self-draw share,
    average fan, flower-pig and not-ready rates, places), over all kinds or one ``kind``.
    Only finished hands count; a private table's hands count when the caller is the player
    or played them too, as ``/hands`` lists them."""
    await _shown_player(gateway, player)
    return figures(await gateway.history.figure_rows(player, account.id), kind)


class Ranked(msgspec.Struct, frozen=True, kw_only=True):
    rank: int
    player: str
    name: str
    rating: float
    rated_hands: int
    provisional: bool = False
    """Fewer than 10 rated hands: listed after every established player."""


@get("/ratings/leaderboard", responses=errors(400, 401))
async def ratings_leaderboard(
    gateway: GatewayDep,
    account: AccountDep,
    limit: FromQuery[int] = 50,
    offset: Annotated[int, QueryParameter(ge=0, le=MAX_QUERY_INT)] = 0,
    provisional: FromQuery[bool] = True,
) -> list[Ranked]:
    """Established players by rating, highest first, then the provisional ones (fewer than 10
    rated hands) by rating, marked ``provisional``; ties by player id. ``rank`` counts over
    that whole order. ``provisional=false``: established players only."""
    rows = await gateway.ratings.leaderboard(
        max(1, min(limit, 200)), max(0, offset), with_provisional=provisional
    )
    names = await gateway.names([r.standing.player for r in rows])
    return [
        Ranked(
            rank=r.rank,
            player=r.standing.player,
            name=names.get(r.standing.player, r.standing.player),
            rating=r.standing.rating,
            rated_hands=r.standing.rated_hands,
            provisional=r.standing.provisional,
        )
        for r in rows
    ]


class MyRank(msgspec.Struct, frozen=True, kw_only=True):
    """The caller's line of the leaderboard, wherever it falls."""

    player: str
    name: str
    rank: int | None
    """Counted as ``/ratings/leaderboard`` lists (with the same ``provisional``); None: not
    listed (no rated hand yet)."""
    of: int
    """How many players the leaderboard lists."""
    rating: float
    rated_hands: int
    provisional: bool


@get("/ratings/leaderboard/me", responses=errors(400, 401))
async def my_rank(
    gateway: GatewayDep, account: AccountDep, provisional: FromQuery[bool] = True
) -> MyRank:
    """The caller's rank on the leaderboard, counted as the list is, even far below its
    first page."""
    place = await gateway.ratings.place(account.id, with_provisional=provisional)
    s = (await gateway.ratings.profile(account.id)).standing
    return MyRank(
        player=account.id,
        name=account.name,
        rank=place.rank,
        of=place.of,
        rating=s.rating,
        rated_hands=s.rated_hands,
        provisional=s.provisional,
    )


class ListedHand(HandRow, frozen=True, kw_only=True):
    """A row of ``/players/{player}/hands``: the history row and its players' names."""

    names: dict[str, str] = msgspec.field(default_factory=dict)
    """Display names by player id (a computer seat keeps its id: the client names it)."""
    # Litestar drops a bound of 0 from the OpenAPI document (a falsy value): it is stated
    # again for the document.
    accuracy: (
        Annotated[float, msgspec.Meta(ge=0, le=100, extra_json_schema={"extra": {"minimum": 0}})]
        | None
    ) = None
    """The player's accuracy (0-100) in the hand's computer review; null: not reviewed."""


HAND_PAGE = 100
"""The most hands one page lists."""


@get(
    "/players/{player:str}/hands",
    responses=errors(400, 401),
    response_headers=[
        ResponseHeader(
            name="x-total-count",
            description="how many hands these filters list over all pages",
            documentation_only=True,
        )
    ],
)
async def player_hands(
    player: FromPath[str],
    gateway: GatewayDep,
    account: AccountDep,
    limit: FromQuery[int] = 20,
    before_ms: Annotated[int, QueryParameter(ge=0, le=MAX_QUERY_INT)] = MAX_QUERY_INT,
    # Checked by the route (``bad_kind``, ``bad_offset``: messages a player can read); the
    # bounds are in the OpenAPI document only.
    kind: Annotated[
        str | None,
        QueryParameter(
            description="practice, casual, rated or quick_play; absent: every kind",
            schema_extra={"enum": list(KINDS)},
        ),
    ] = None,
    offset: Annotated[
        int,
        QueryParameter(
            description="how many hands to skip",
            schema_extra={"minimum": 0, "maximum": MAX_QUERY_INT},
        ),
    ] = 0,
) -> Response[list[ListedHand]]:
    """A player's finished hands, newest first, from the hand-history projection: kind,
    players in seat order and their names, points, place, best fan. A private table's hands
    are listed only to its players. Pages: ``limit`` (1-100) hands from ``offset``, only
    ``kind`` when given; the header ``X-Total-Count`` says how many there are in all."""
    if kind is not None and kind not in KINDS:
        raise ApiError(400, "bad_kind", f"kind is one of {', '.join(KINDS)}", kind=kind[:40])
    if not 0 <= offset <= MAX_QUERY_INT:
        raise ApiError(400, "bad_offset", f"offset is 0 to {MAX_QUERY_INT}")
    store = gateway.history
    page = max(1, min(limit, HAND_PAGE))
    rows, total = await asyncio.gather(
        store.hands(player, account.id, page, before_ms, kind=kind, offset=offset),
        store.count_hands(player, account.id, before_ms, kind=kind),
    )
    names = await gateway.names(sorted({p for r in rows for p in r.players}))
    listed = [
        ListedHand(
            **msgspec.structs.asdict(r),
            names={p: names.get(p, p) for p in r.players},
            accuracy=gateway.reviews.accuracy(r.hand_id, r.seat),
        )
        for r in rows
    ]
    return Response(listed, headers={"x-total-count": str(total)})


class ExportOut(msgspec.Struct, frozen=True, kw_only=True):
    """A hand's event log: whole once it has ended, else as ``seat`` may see it now
    (``seat`` null: a spectator's public log)."""

    hand_id: str
    table_id: str
    finished: bool
    seat: int | None
    players: list[str]
    events: list[proto.SeenEvent]


async def _hand(gateway: Gateway, account: Account, hand_id: str) -> tuple[list[Any], int | None]:
    events = await gateway.hand_logs.events(hand_id)
    if not events:
        raise ApiError(404, "no_such_hand", "there is no such hand", hand_id=hand_id)
    first = events[0]
    if not isinstance(first, ev.HandStarted):
        raise ApiError(404, "no_such_hand", "there is no such hand", hand_id=hand_id)
    over = hand_over(events)
    public = await _hand_public(gateway, first.table_id, first.hand_id) if over else None
    allowed, seat = access.hand_seat(
        gateway.lobby, first.table_id, first.seats, over, account.id, public
    )
    if not allowed:
        raise ApiError(404, "no_such_hand", "there is no such hand", hand_id=hand_id)
    return events, seat


async def _hand_public(gateway: Gateway, table_id: str, hand_id: str) -> bool:
    """Whether a hand's table is or was public: the lobby's word, else the hand history's,
    else public (a table nobody knows anything about, as in the hand history)."""
    known = access.table_public(gateway.lobby, table_id)
    if known is not None:
        return known
    rows = await gateway.history.hand(hand_id)
    return rows[0].public if rows else True


@get("/hands/{hand_id:str}/export", responses=errors(400, 401, 404))
async def export_hand(
    hand_id: FromPath[str], gateway: GatewayDep, account: AccountDep
) -> ExportOut:
    """The hand's JSON event log (a finished hand: everything; else filtered, RULES.md §10)."""
    events, seat = await _hand(gateway, account, hand_id)
    return ExportOut(
        hand_id=hand_id,
        table_id=events[0].table_id,
        finished=hand_over(events),
        seat=seat,
        players=list(events[0].seats),
        events=seen_events(events, seat),
    )


class ReplayOut(msgspec.Struct, frozen=True, kw_only=True):
    """A finished hand step by step (``history.STEP_EVENTS``), as ``seat`` saw it (null:
    every hand open); ``settlement``: the events its settlement is drawn from, for the last
    step; ``public``: whether anyone signed in may open it (a private table's: its players)."""

    hand_id: str
    names: dict[str, str]
    commitment: str | None
    seed: str | None
    steps: list[ReplayStep]
    seat: int | None = None
    public: bool = True
    settlement: list[ev.Event] = []


@get("/hands/{hand_id:str}/replay", responses=errors(400, 401, 404, 409))
async def replay_hand(
    hand_id: FromPath[str],
    gateway: GatewayDep,
    account: AccountDep,
    # ``int | None`` loses ge/le in the OpenAPI document, so the bounds are stated there too.
    seat: Annotated[
        int | None,
        QueryParameter(
            ge=0,
            le=3,
            description="0-3: as that seat saw it; absent: every hand open",
            schema_extra={"minimum": 0, "maximum": 3},
        ),
    ] = None,
) -> ReplayOut:
    """A finished hand step by step: every hand open, or (``?seat=``) as one seat saw it,
    with the clocks at each step, the settlement, the commitment and the seed."""
    events, _ = await _hand(gateway, account, hand_id)
    if not hand_over(events):
        raise ApiError(409, "hand_not_over", "a replay is for finished hands", hand_id=hand_id)
    steps = await asyncio.to_thread(replay_frames, events, seat)
    return ReplayOut(
        hand_id=hand_id,
        names=await gateway.names(list(events[0].seats)),
        commitment=events[0].commitment,
        seed=events[-1].seed,
        steps=steps,
        seat=seat,
        public=await _hand_public(gateway, events[0].table_id, hand_id),
        settlement=settlement_events(events),
    )


class ReviewOut(msgspec.Struct, frozen=True, kw_only=True):
    """A hand's computer review (issue 21): ``done`` with the newest ``review``, or
    ``pending``: asked for, not written yet (ask again in a few seconds)."""

    hand_id: str
    status: Literal["done", "pending"]
    review: an.HandReview | None = None


_PENDING_DOC = "the review is asked for and not written yet (`status`: pending)"


async def _review_out(gateway: Gateway, hand_id: str) -> Response[ReviewOut] | None:
    """The hand's review as answered (200 done, 202 pending); None: neither."""
    status = gateway.reviews.status(hand_id)
    if status == "pending":
        return Response(ReviewOut(hand_id=hand_id, status="pending"), status_code=202)
    review = await gateway.reviews.review(hand_id) if status == "done" else None
    if review is None:
        return None
    return Response(ReviewOut(hand_id=hand_id, status="done", review=review), status_code=200)


@post(
    "/hands/{hand_id:str}/review",
    status_code=202,
    responses={
        **errors(400, 401, 403, 404, 409),
        200: ResponseSpec(
            ReviewOut,
            description="the hand is reviewed already: the review",
            generate_examples=False,
        ),
    },
)
async def request_review(
    hand_id: FromPath[str], gateway: GatewayDep, account: AccountDep
) -> Response[ReviewOut]:
    """Ask for the computer's review of a finished hand one played (practice hands too): every
    decision of every human seat, its options valued from that seat's view at that moment,
    each marked best, inaccuracy, mistake or blunder. 202 ``pending`` (a request is waiting
    or was sent now), or 200 with the review when there is one. Others than the hand's
    players: 404 ``no_such_hand`` as the replay answers, or 403 ``not_in_hand`` for a
    public table's hand they may watch; a hand still in play: 409 ``hand_not_ended``."""
    events, seat = await _hand(gateway, account, hand_id)
    if seat is None:
        raise ApiError(403, "not_in_hand", "only the hand's players may ask for its review")
    if not hand_over(events):
        raise ApiError(409, "hand_not_ended", "a review is for finished hands", hand_id=hand_id)
    answer = await _review_out(gateway, hand_id)
    if answer is not None:
        return answer
    await gateway.reviews.request(hand_id, events[0].table_id, account.id)
    return Response(ReviewOut(hand_id=hand_id, status="pending"), status_code=202)


@get(
    "/hands/{hand_id:str}/review",
    responses={
        **errors(400, 401, 404),
        202: ResponseSpec(ReviewOut, description=_PENDING_DOC, generate_examples=False),
    },
)
async def hand_review(
    hand_id: FromPath[str], gateway: GatewayDep, account: AccountDep
) -> Response[ReviewOut]:
    """A hand's computer review, for those who may open its replay: 200 with the review,
    202 ``pending`` while one is asked for, else 404 ``review_not_found`` (ask with POST)."""
    await _hand(gateway, account, hand_id)
    answer = await _review_out(gateway, hand_id)
    if answer is None:
        raise ApiError(404, "review_not_found", "this hand has no review yet", hand_id=hand_id)
    return answer


@get("/tables/{table_id:str}/view", responses=errors(400, 401, 404))
async def table_view(table_id: FromPath[str], gateway: GatewayDep, account: AccountDep) -> SeatView:
    """The current hand of a table as the caller may see it (the same ``SeatView`` the
    WebSocket pushes)."""
    w = await gateway.tables.peek(table_id)
    if w.state is None:
        raise ApiError(404, "no_hand", "no hand at this table", table_id=table_id)
    over = w.state.phase == "ended"
    allowed, seat = access.hand_seat(gateway.lobby, table_id, w.state.players, over, account.id)
    if not allowed:
        raise ApiError(404, "no_hand", "no hand at this table", table_id=table_id)
    return seat_view(w.state, seat)


# --- admin ---------------------------------------------------------------------------------


class AuditOut(msgspec.Struct, frozen=True, kw_only=True):
    hands: int
    passed: int
    failed: int
    skipped: int
    problems: list[str]


@post("/audit", status_code=200, responses=errors(401, 403))
async def admin_audit(admin: AdminDep) -> AuditOut:
    """Re-verify every finished hand in the log (as ``mahjong-planet audit``)."""
    summary = await admin.audit()
    return AuditOut(
        hands=summary.hands,
        passed=summary.passed,
        failed=summary.failed,
        skipped=summary.skipped,
        problems=list(summary.problems[:50]),
    )


class RecomputeOut(msgspec.Struct, frozen=True, kw_only=True):
    ok: bool
    summary: str


@post("/ratings/recompute", status_code=200, responses=errors(401, 403))
async def admin_recompute(admin: AdminDep) -> RecomputeOut:
    """Rebuild every rating from ``rating.results`` and compare with the live ratings."""
    report = await admin.ratings.recompute()
    return RecomputeOut(ok=report.ok, summary=report.summary())


# --- meta ------------------------------------------------------------------------------------


@get("/api/protocol.schema.json", responses=errors())
async def protocol_schema() -> dict[str, Any]:
    """The JSON Schema of the WebSocket frames (both directions)."""
    return proto.protocol_schema()


class Health(msgspec.Struct, frozen=True, kw_only=True):
    ok: bool
    tables_watched: int
    sockets: int
    lobby_tables: int


def _health(gateway: Gateway) -> Health:
    return Health(
        ok=gateway.healthy(),
        tables_watched=len(gateway.tables.tables),
        sockets=gateway.sockets,
        lobby_tables=len(gateway.lobby.lobby.tables),
    )


@get("/healthz", responses=errors())
async def healthz(gateway: GatewayDep) -> Health:
    return _health(gateway)


@get(
    "/readyz",
    responses={
        **errors(),
        503: ResponseSpec(Health, description="starting or stalled", generate_examples=False),
    },
)
async def readyz(gateway: GatewayDep) -> Response[Health]:
    """200 when the gateway follows the log and serves; 503 while starting or stalled."""
    health = _health(gateway)
    return Response(health, status_code=200 if health.ok else 503)


@get("/metrics", include_in_schema=False)
async def metrics() -> Response[bytes]:
    """Prometheus metrics of this process."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


ROUTES = [
    Router("/api", tags=["accounts"], route_handlers=[register, login, guest, logout, me]),
    Router(
        "/api",
        tags=["lobby"],
        security=SESSION,
        route_handlers=[
            lobby,
            table,
            create_table,
            join_table,
            leave_table,
            play_again,
            fill_table,
            quick_play,
            leave_quick_play,
            practice,
        ],
    ),
    Router(
        "/api",
        tags=["profiles"],
        security=SESSION,
        route_handlers=[player_profile, player_ratings, player_stats, ratings_leaderboard, my_rank],
    ),
    Router(
        "/api",
        tags=["history"],
        security=SESSION,
        route_handlers=[
            player_hands,
            export_hand,
            replay_hand,
            request_review,
            hand_review,
            table_view,
        ],
    ),
    Router(
        "/api/admin", tags=["admin"], security=ADMIN, route_handlers=[admin_audit, admin_recompute]
    ),
    Router("/", tags=["meta"], route_handlers=[protocol_schema, healthz, readyz, metrics]),
]
"""The routes, by OpenAPI tag: each group's path prefix, tag and security requirement."""
