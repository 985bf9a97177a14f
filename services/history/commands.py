"""The command line of the hand history: ``mahjong-planet history`` (the projection) and
``mahjong-planet history rebuild`` (fold the log again and compare with the live rows)."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from services.history.store import open_store
from services.rating.store import DSN_ENV, postgres_dsn
from services.runtime.config import DEFAULT_DATA, add_log_options, add_store_options, opened_log


def _store(args: argparse.Namespace) -> Any:
    return open_store(postgres_dsn(args.postgres), args.data or DEFAULT_DATA, args.pg_schema)


def cmd_history(args: argparse.Namespace) -> int:
    if args.action == "rebuild":
        return cmd_rebuild(args)
    from services.history.service import HistoryService
    from services.runtime.serve import serve

    # The projection opens (and reopens) its store itself, waiting while it is away.
    store = _store(args)
    return serve(args, "history", lambda log: HistoryService(log, store))


def cmd_rebuild(args: argparse.Namespace) -> int:
    from services.history.service import rebuild

    async def go() -> bool:
        store = _store(args)
        await store.start()
        try:
            async with opened_log(args) as event_log:
                report = await rebuild(event_log, store)
        finally:
            await store.close()
        print(report.summary())
        return report.ok

    return 0 if asyncio.run(go()) else 1


def add_parsers(sub: Any) -> argparse.ArgumentParser:
    """Add ``history`` to the ``mahjong-planet`` subcommands."""
    p: argparse.ArgumentParser = sub.add_parser(
        "history",
        help="run the hand-history projection (or rebuild it from the log and compare)",
        description="Follow every table.events partition (and lobby.events for which tables "
        "are private or Quick Play) and write one row per seat of every finished hand: its "
        "table, end time, kind (practice, casual, rated, quick_play), the players in seat "
        "order, the player's points, place and best fan, and where its log is. Each batch is "
        "one store transaction that also stores the input positions: every hand exactly "
        "once, however often the service or the database restarts; while the database is "
        "away it is not ready and retries with backoff, then catches up. The store is "
        "PostgreSQL with --postgres (schema history; migrations applied at start), else "
        "history.sqlite3 in the --data folder. `history rebuild` folds the log from the "
        "start up to the live positions and compares every row; it exits 1 on a difference.",
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=["serve", "rebuild"],
        default="serve",
        help="serve (default): run the projection; rebuild: compare it with the log",
    )
    add_log_options(p)
    add_store_options(p, "history", "history.sqlite3", "history", DSN_ENV)
    p.set_defaults(func=cmd_history)
    return p
