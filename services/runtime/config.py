"""Choosing the event log from the command line and the environment."""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from services.runtime.log import EventLog
from services.runtime.topics import TOPICS

DEFAULT_DATA = "./data"


def add_log_options(parser: argparse.ArgumentParser) -> None:
    """``--data DIR`` (the embedded log, the default) or ``--kafka HOST:PORT``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--data",
        metavar="DIR",
        default=None,
        help=f"use the embedded event log in DIR (default {DEFAULT_DATA})",
    )
    group.add_argument(
        "--kafka",
        metavar="HOST:PORT",
        default=None,
        help="use Apache Kafka at HOST:PORT instead (also: KAFKA_BOOTSTRAP_SERVERS)",
    )


def add_log_command(
    sub: Any,
    name: str,
    func: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
) -> argparse.ArgumentParser:
    """The subcommand ``name`` of a command that works on the event log: its parser, with the
    log's options (``add_log_options``), running ``func``; the caller adds the rest."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help, description=description)
    add_log_options(parser)
    parser.set_defaults(func=func)
    return parser


def add_store_options(
    parser: argparse.ArgumentParser,
    store: str,
    sqlite_file: str,
    schema: str,
    dsn_env: Sequence[str],
) -> None:
    """``--postgres DSN`` and ``--pg-schema`` of a service's store (without a DSN: the SQLite
    file ``sqlite_file`` in the --data folder); ``store`` names it in the help."""
    parser.add_argument(
        "--postgres",
        metavar="DSN",
        default=None,
        help=f"the {store} store in PostgreSQL (also: {' or '.join(dsn_env)}); without one, "
        f"{sqlite_file} in the --data folder",
    )
    parser.add_argument(
        "--pg-schema", default=schema, help=f"PostgreSQL schema of the tables (default {schema})"
    )


def _bootstrap(args: argparse.Namespace) -> str | None:
    return args.kafka or (None if args.data else os.environ.get("KAFKA_BOOTSTRAP_SERVERS"))


def uses_embedded_log(args: argparse.Namespace) -> bool:
    """Whether the options select the embedded log (in ``--data``) rather than Kafka."""
    return not _bootstrap(args)


def open_log(args: argparse.Namespace, *, wait: bool = False) -> EventLog:
    """The log the options select; Kafka when ``--kafka`` or the environment names a broker
    (``wait``: a service, which waits for a broker that is away instead of exiting)."""
    bootstrap = _bootstrap(args)
    if bootstrap:
        from services.runtime.kafka import KafkaLog

        return KafkaLog(bootstrap, wait_for_broker=wait)
    from services.runtime.embedded import EmbeddedLog

    return EmbeddedLog(args.data or DEFAULT_DATA)


@asynccontextmanager
async def opened_log(args: argparse.Namespace, *, wait: bool = False) -> AsyncIterator[EventLog]:
    """The selected log, started, with every topic created; closed on the way out."""
    event_log = open_log(args, wait=wait)
    await event_log.start()
    try:
        await event_log.create_topics(TOPICS)
        yield event_log
    finally:
        await event_log.close()
