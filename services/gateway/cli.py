"""``mahjong-planet gateway``, and the gateway's options for ``mahjong-planet run``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from services.gateway.config import ADMIN_TOKEN_ENV, DEFAULT_HOST, DEFAULT_PORT, GatewayConfig
from services.runtime.config import DEFAULT_DATA, add_log_command, open_log
from services.runtime.log import EventLog


def add_gateway_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--trust-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="a reverse proxy whose X-Forwarded-For is believed for rate limits (repeatable)",
    )


def listening_socket(host: str, port: int) -> socket.socket:
    """The gateway's socket, bound and listening, so a taken port fails before any service
    starts (``OSError``: the address is in use, or not this machine's)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        # Listening at once: two sockets with SO_REUSEADDR may both bind a port nobody
        # listens on yet.
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    return sock


def gateway_for(
    event_log: EventLog, args: argparse.Namespace, sock: socket.socket | None = None
) -> Any:
    """A ``GatewayService`` configured from the options and the environment (serving on ``sock``
    when given, else binding ``--host``/``--port`` when it starts)."""
    from services.gateway.app import GatewayService

    config = GatewayConfig.from_env(
        host=args.host,
        port=args.port,
        data_dir=Path(args.data or DEFAULT_DATA),
        trusted_proxies=frozenset(args.trust_proxy or ()),
    )
    logging.getLogger("mahjong.gateway").info("web client at http://%s:%d/", args.host, args.port)
    return GatewayService(event_log, config, listen=sock)


def cmd_gateway(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")

    async def go() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        from services.runtime.ops import run_service

        # The gateway opens the log itself, after it serves /healthz and /readyz: a broker
        # that is away is waited for, not ready meanwhile, instead of exiting.
        event_log = open_log(args, wait=True)
        gateway = gateway_for(event_log, args, sock)
        gateway.owns_log = True
        try:
            await run_service("gateway", gateway, stop)
        finally:
            with contextlib.suppress(Exception):
                await event_log.close()

    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        print(f"mahjong-planet: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    asyncio.run(go())
    return 0


def add_parsers(sub: Any) -> None:
    """Add ``gateway`` to the ``mahjong-planet`` subcommands."""
    p = add_log_command(
        sub,
        "gateway",
        cmd_gateway,
        help="run the gateway and serve the web client",
        description="Serve the REST API (OpenAPI at /schema/openapi.json), the table WebSocket "
        "(/ws) and the web client (/) on one port. Follows table.events, table.replies, "
        "lobby.events and match.replies; sends commands to table.commands and requests to "
        "match.requests. Accounts live in SQLite in the --data folder, or in PostgreSQL when "
        "MAHJONG_POSTGRES_DSN is set; admin routes need "
        f"{ADMIN_TOKEN_ENV} in the environment. Alone on the embedded log it only makes sense "
        "for development (the other services run in other processes on Kafka, or all in "
        "`mahjong-planet run`). Stops cleanly on SIGTERM or SIGINT.",
    )
    add_gateway_options(p)
