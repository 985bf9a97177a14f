"""``Gateway``: the gateway's state and background loops; ``create_app``: its Litestar app.

One follower reads ``table.events``, ``table.replies``, ``lobby.events`` and
``match.replies`` and hands each record to the table watcher or the lobby watcher. The app
serves the REST routes (``api.py``), the WebSocket (``/ws``, ``connection.py``), the
OpenAPI document (``/schema/openapi.json``) and the web client (``static/``) on one port.

``Gateway.run(stop)`` starts everything and an in-process uvicorn server; ``mahjong-planet
gateway`` runs it alone, ``mahjong-planet run`` beside the other services.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from litestar import Litestar, WebSocket, websocket
from litestar.datastructures import State
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router

from services.gateway.accounts import Accounts, AccountStore, open_account_store
from services.gateway.api import ROUTES, ApiError, api_error_handler
from services.gateway.config import GatewayConfig
from services.gateway.connection import Connection
from services.gateway.history import HandLogs
from services.gateway.limits import (
    ASGIApp,
    Counter,
    LoginAttempts,
    PathGuard,
    RateLimitMiddleware,
    client_address,
)
from services.gateway.lobby import LobbyWatcher
from services.gateway.metrics import WebSocketMetrics
from services.gateway.protocol import WS_CLOSE_TRY_AGAIN
from services.gateway.ratings import Ratings
from services.gateway.sessions import SocketSessions
from services.gateway.tables import TableWatcher
from services.history.store import HistoryStore
from services.history.store import open_store as open_history_store
from services.runtime.backoff import away_errors, until_done
from services.runtime.log import EventLog, Follower
from services.runtime.service import Health
from services.runtime.topics import (
    LOBBY_EVENTS,
    MATCH_REPLIES,
    TABLE_EVENTS,
    TABLE_REPLIES,
    TOPICS,
)

log = logging.getLogger("mahjong.gateway")

STATIC = Path(__file__).parent / "static"
PATH_PARAMETER = "^[^\\u0000-\\u001f\\u007f]*$"  # what PathGuard lets through
HOUSEKEEPING_S = 30.0
NAMES_CACHED = 20_000


class Gateway:
    """Everything one gateway process holds; shared by the routes and sockets."""

    def __init__(
        self,
        event_log: EventLog,
        config: GatewayConfig,
        account_store: AccountStore | None = None,
        listen: socket.socket | None = None,
    ) -> None:
        self.log = event_log
        self.owns_log = False  # start (and so wait for) the log itself: ``mahjong-planet gateway``
        self.listen = listen  # bound and listening already (``mahjong-planet run``)
        self.config = config
        store = account_store or open_account_store(config.postgres_dsn, config.data_dir)
        attempts = LoginAttempts(config.limits.login_free, config.limits.login_cap_s)
        self.accounts = Accounts(store, config.session_ttl_s, config.guest_ttl_s, attempts)
        self.sessions = SocketSessions(store, config.session_check_s)
        self.tables = TableWatcher(event_log)
        self.lobby = LobbyWatcher(event_log, config.request_timeout_s)
        # Players' hands: the history projection's rows (services/history), read only here.
        self.history: HistoryStore = open_history_store(config.postgres_dsn, config.data_dir)
        self.hand_logs = HandLogs(event_log, self.tables, self.history)
        self.ratings = Ratings(event_log, config.postgres_dsn, config.data_dir)
        self.ws_open = Counter()
        self.sockets = 0
        self.commands_sent = 0
        self.ready = asyncio.Event()
        self.follower: Follower | None = None
        self._task: asyncio.Task[None] | None = None
        self._sessions_task: asyncio.Task[None] | None = None
        self._names: OrderedDict[str, str] = OrderedDict()
        self._last_poll = time.monotonic()
        self.port: int | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the stores, start following the log (before any table is loaded, so nothing
        appended meanwhile is missed), rebuild the lobby. While PostgreSQL or the broker is
        away each step is tried again with backoff, not ready meanwhile (the process waits
        instead of exiting for its supervisor to restart it)."""
        away = away_errors()

        async def step(what: str, attempt: Any) -> None:
            await until_done(what, attempt, log, retry_on=away)

        if self.owns_log:
            await step("connecting to the log", self._open_log)
        await step("opening the account store", self.accounts.store.start)
        await step("opening the rating store", self.ratings.start)
        await step("opening the hand history", self.history.start)
        follower = self.log.follower([TABLE_EVENTS, TABLE_REPLIES, LOBBY_EVENTS, MATCH_REPLIES])
        await step("following the log", follower.start)
        self.follower = follower
        await step("loading the tables", self.tables.start)
        await step("loading the lobby", self.lobby.start)
        self._task = asyncio.create_task(self._follow(follower))
        self._sessions_task = asyncio.create_task(self.sessions.run())
        self.ready.set()

    async def _open_log(self) -> None:
        await self.log.start()
        await self.log.create_topics(TOPICS)

    async def stop(self) -> None:
        self.ready.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._sessions_task is not None:
            self._sessions_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sessions_task
        self.sessions.close()
        if self.follower is not None:
            await self.follower.stop()
        await self.ratings.close()
        await self.history.close()
        await self.accounts.store.close()

    async def _follow(self, follower: Follower) -> None:
        housekeeping = time.monotonic()
        while True:
            try:
                records = await follower.poll(0.5)
                self._last_poll = time.monotonic()
                tables = [r for r in records if r.topic in (TABLE_EVENTS, TABLE_REPLIES)]
                lobby = [r for r in records if r.topic in (LOBBY_EVENTS, MATCH_REPLIES)]
                if lobby:
                    self.lobby.on_records(lobby)
                if tables:
                    await self.tables.on_records(tables)
                if time.monotonic() - housekeeping > HOUSEKEEPING_S:
                    housekeeping = time.monotonic()
                    self.tables.drop_idle()
                    await self.accounts.store.delete_expired(int(time.time() * 1000))
                if any(w.broken for w in self.tables.tables.values()):
                    await self.tables.reload_broken()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the gateway's follower failed; going on")
                await asyncio.sleep(1.0)

    def healthy(self) -> bool:
        return self.ready.is_set() and time.monotonic() - self._last_poll < 30

    def probe(self) -> Health:
        """For the sampler (``services.runtime.service.Service``): the gateway answers its
        own ``/readyz``; it holds no partitions and watches its clients' tables."""
        return Health(started=self.ready.is_set(), active=len(self.tables.tables))

    # --- helpers for routes and sockets ---------------------------------------------------------

    async def names(self, players: list[str]) -> dict[str, str]:
        """Display names of player ids (computers keep their id; the client names them)."""
        out: dict[str, str] = {}
        missing = []
        for p in players:
            if p.startswith("computer:"):
                out[p] = p
            elif p in self._names:
                out[p] = self._names[p]
            else:
                missing.append(p)
        if missing:
            found = await self.accounts.store.accounts(missing)
            for p in missing:
                name = found[p].name if p in found else p
                out[p] = self._names[p] = name
            while len(self._names) > NAMES_CACHED:
                self._names.popitem(last=False)
        return out

    def forget_name(self, player: str) -> None:
        self._names.pop(player, None)

    async def rating_of(self, player: str) -> float:
        return await self.ratings.rating(player)

    async def audit(self) -> Any:
        from services.audit import audit_encoded_hands
        from services.audit.reader import hand_records

        hands = await hand_records(self.log)
        return await asyncio.to_thread(audit_encoded_hands, list(hands.values()), processes=1)

    # --- serving --------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event, sock: socket.socket | None = None) -> None:
        """Start, serve HTTP on ``config.host:port`` (or ``sock``) until ``stop``, then stop."""
        import uvicorn

        app = create_app(self)
        server = _Server(
            uvicorn.Config(
                app,
                host=self.config.host,
                port=self.config.port,
                ws_max_size=self.config.limits.ws_hard_max_bytes,
                proxy_headers=False,
                server_header=False,
                log_level="warning",
                log_config=None,  # uvicorn's records go to the process's handlers (JSON)
                timeout_graceful_shutdown=3,
                lifespan="off",
            )
        )
        sock = sock or self.listen
        if sock is None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.config.host, self.config.port))
        self.port = sock.getsockname()[1]
        # Serve at once: /healthz and /readyz answer (503) while the start waits out an
        # outage; everything else is refused with 503 ``starting`` until it is ready.
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        stopping = asyncio.create_task(stop.wait())
        starting = asyncio.create_task(self.start())
        try:
            await asyncio.wait({serving, stopping, starting}, return_when=asyncio.FIRST_COMPLETED)
            if starting.done():
                starting.result()  # a start that failed for good (not an outage) stops it
                await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            server.should_exit = True
            stopping.cancel()
            if not starting.done():
                starting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await starting
            with contextlib.suppress(Exception):
                await serving
            await self.stop()


class _Server:
    """uvicorn's server without its signal handlers: the CLI owns the signals and stops
    every service in the process together."""

    def __new__(cls, config: Any) -> Any:
        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

        return Server(config)


# --- the app ---------------------------------------------------------------------------------

SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'",
    ),
]


class SecurityHeaders:
    """ASGI middleware: security headers on every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


@websocket("/ws")
async def table_socket(socket: WebSocket[Any, Any, Any]) -> None:
    """The table WebSocket: see docs/gateway.md and ``protocol.py``."""
    gw: Gateway = socket.app.state.gateway
    address = client_address(socket.scope, gw.config.trusted_proxies)  # type: ignore[arg-type]
    if not gw.ws_open.acquire(address, gw.config.limits.ws_per_address):
        # Accepted first: closing before the handshake completes would refuse it with a bare
        # HTTP 403, and the client could not tell "try again later" (1013) from "forbidden".
        with contextlib.suppress(Exception):
            await socket.accept()
            await socket.close(WS_CLOSE_TRY_AGAIN, "too_many_sockets")
        return
    gw.sockets += 1
    try:
        await Connection(gw, socket, address).run()
    finally:
        gw.sockets -= 1
        gw.ws_open.release(address)


class NotYetReady:
    """ASGI middleware: until the gateway has started (its stores open, the log followed),
    only the health endpoints answer; any other request gets 503 ``starting`` and a socket
    is closed with 1013 (try again), so nothing reads a store that is not open yet."""

    OPEN = frozenset({"/healthz", "/readyz", "/metrics"})

    def __init__(self, app: Any, ready: asyncio.Event) -> None:
        self.app, self.ready = app, ready

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self.ready.is_set() or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": WS_CLOSE_TRY_AGAIN})
            return
        if scope.get("path", "") in self.OPEN:
            await self.app(scope, receive, send)
            return
        body = b'{"code":"starting","reason":"the gateway is starting; try again","params":{}}'
        await send(
            {
                "type": "http.response.start",
                "status": 503,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", b"2"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def create_app(gateway: Gateway) -> Litestar:
    """The Litestar app of a started (or starting) ``Gateway``."""
    config = gateway.config
    static = config.static_dir or STATIC
    app = Litestar(
        route_handlers=[
            *ROUTES,
            table_socket,
            create_static_files_router(path="/", directories=[static], html_mode=True),
        ],
        middleware=[  # plain ASGI middleware; Litestar's protocol types are stricter
            cast(Any, SecurityHeaders),
            DefineMiddleware(cast(Any, NotYetReady), ready=gateway.ready),
            cast(Any, PathGuard),
            cast(Any, WebSocketMetrics),
            DefineMiddleware(
                cast(Any, RateLimitMiddleware),
                limits=config.limits,
                trusted_proxies=config.trusted_proxies,
            ),
        ],
        exception_handlers={ApiError: api_error_handler, Exception: api_error_handler},
        request_max_body_size=config.limits.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="Mahjong Planet gateway",
            version="1.0.0",
            description="Accounts, lobby, tables, Quick Play, practice, profiles, ratings and "
            "hand history of Mahjong Planet (Sichuan Blood Battle). The live table is a "
            "WebSocket at /ws; its frames: /api/protocol.schema.json.",
            path="/schema",
            components=Components(
                security_schemes={
                    "session": SecurityScheme(
                        type="http",
                        scheme="bearer",
                        description="a session token from /api/auth/register, login or guest",
                    ),
                    "admin": SecurityScheme(
                        type="http",
                        scheme="bearer",
                        description="the MAHJONG_ADMIN_TOKEN of the gateway's environment",
                    ),
                }
            ),
        ),
        state=State({"gateway": gateway}),
        debug=False,
        logging_config=None,  # the CLI configures logging (JSON lines); Litestar must not
    )
    _document_path_guard(app)
    return app


def _document_path_guard(app: Litestar) -> None:
    """Say in the OpenAPI document what ``PathGuard`` refuses (400 ``bad_path``): no path
    parameter holds a control character."""
    for item in (app.openapi_schema.paths or {}).values():
        for operation in (item.get, item.post, item.put, item.patch, item.delete):
            for parameter in (operation.parameters or []) if operation else []:
                schema = getattr(parameter, "schema", None)
                if getattr(parameter, "param_in", None) == "path" and schema is not None:
                    schema.pattern = PATH_PARAMETER
