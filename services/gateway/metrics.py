"""The gateway's Prometheus metrics and the ASGI middleware that counts WebSocket traffic.

``/metrics``, ``/healthz`` and ``/readyz`` are routes of the app (``api.py``); the shared
metrics (active tables, errors) are in ``services.runtime.ops``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from prometheus_client import Counter, Gauge

from services.gateway.limits import ASGIApp

WS_CONNECTIONS = Gauge("mahjong_gateway_ws_connections", "Open WebSocket connections")
WS_OPENED = Counter("mahjong_gateway_ws_connections_opened", "WebSocket connections accepted")
WS_FRAMES = Counter(
    "mahjong_gateway_ws_frames",
    "WebSocket frames, by direction (in: from clients, out: to clients)",
    ["direction"],
)
COMMANDS_SENT = Counter(
    "mahjong_gateway_commands_sent", "Client commands forwarded to table.commands"
)

_IN = WS_FRAMES.labels("in")
_OUT = WS_FRAMES.labels("out")

Message = dict[str, Any]


class WebSocketMetrics:
    """ASGI middleware: open connections, connections accepted and frames each way."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        accepted = False

        async def counted_receive() -> Message:
            message = await receive()
            if message["type"] == "websocket.receive":
                _IN.inc()
            return message

        async def counted_send(message: Message) -> None:
            nonlocal accepted
            kind = message["type"]
            if kind == "websocket.send":
                _OUT.inc()
            elif kind == "websocket.accept" and not accepted:
                accepted = True
                WS_OPENED.inc()
                WS_CONNECTIONS.inc()
            await send(message)

        try:
            await self.app(scope, counted_receive, counted_send)
        finally:
            if accepted:
                WS_CONNECTIONS.dec()
