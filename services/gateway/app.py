"""``create_app``: the gateway's Litestar app; ``GatewayService``: a ``Gateway`` served by it.

The app serves the REST routes (``api.py``), the WebSocket (``/ws``, ``connection.py``), the
OpenAPI document (``/schema/openapi.json``) and the web client (``static/``) on one port.
Routes and the socket are given the ``Gateway`` (and the caller's account) by Litestar's
dependency injection (``api.dependencies``), never through the app object.

``GatewayService.run(stop)`` starts the gateway and an in-process uvicorn server;
``mahjong-planet gateway`` runs it alone, ``mahjong-planet run`` beside the other services.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from litestar import Litestar, WebSocket, websocket
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router

from services.gateway.api import ROUTES, ApiError, GatewayDep, api_error_handler, dependencies
from services.gateway.connection import Connection
from services.gateway.gateway import Gateway
from services.gateway.limits import (
    ASGIApp,
    PathGuard,
    RateLimitMiddleware,
    client_address,
    refuse,
)
from services.gateway.metrics import WebSocketMetrics
from services.gateway.protocol import WS_CLOSE_TRY_AGAIN

STATIC = Path(__file__).parent / "static"
PATH_PARAMETER = "^[^\\u0000-\\u001f\\u007f]*$"  # what PathGuard lets through


class GatewayService(Gateway):
    """The ``Gateway`` served: ``run(stop)`` starts it and serves its app (``create_app``) with
    an in-process uvicorn server until ``stop``."""

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
async def table_socket(socket: WebSocket[Any, Any, Any], gateway: GatewayDep) -> None:
    """The table WebSocket: see docs/gateway.md and ``protocol.py``."""
    address = client_address(socket.scope, gateway.config.trusted_proxies)  # type: ignore[arg-type]
    if not gateway.ws_open.acquire(address, gateway.config.limits.ws_per_address):
        # Accepted first: closing before the handshake completes would refuse it with a bare
        # HTTP 403, and the client could not tell "try again later" (1013) from "forbidden".
        with contextlib.suppress(Exception):
            await socket.accept()
            await socket.close(WS_CLOSE_TRY_AGAIN, "too_many_sockets")
        return
    gateway.sockets += 1
    try:
        await Connection(gateway, socket, address).run()
    finally:
        gateway.sockets -= 1
        gateway.ws_open.release(address)


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
        reason = "the gateway is starting; try again"
        error = {"code": "starting", "reason": reason, "params": {}}
        await refuse(send, 503, error, ((b"retry-after", b"2"),))


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
        dependencies=dependencies(gateway),
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
