"""The command line of ratings: ``mahjong-planet rating`` (the service) and
``mahjong-planet ratings recompute|show|leaderboard``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from services.rating.store import DSN_ENV, RatingStore, open_store, postgres_dsn
from services.runtime.config import DEFAULT_DATA, add_log_command, add_store_options, opened_log
from services.runtime.topics import RATING_RESULTS

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


@asynccontextmanager
async def opened_store(args: argparse.Namespace) -> AsyncIterator[RatingStore]:
    """The store the options select, started (migrations applied), closed on the way out."""
    store = open_store(postgres_dsn(args.postgres), args.data or DEFAULT_DATA, args.pg_schema)
    await store.start()
    try:
        yield store
    finally:
        await store.close()


def cmd_rating(args: argparse.Namespace) -> int:
    from services.rating.service import RatingService
    from services.runtime.serve import serve

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    store = open_store(postgres_dsn(args.postgres), args.data or DEFAULT_DATA, args.pg_schema)
    return serve(
        args, "rating", lambda log: RatingService(log, store, topic=args.topic), store=store
    )


def cmd_recompute(args: argparse.Namespace) -> int:
    from services.rating.service import recompute

    async def go() -> bool:
        async with opened_store(args) as store, opened_log(args) as event_log:
            report = await recompute(event_log, store, args.topic, args.catch_up_s)
        print(report.summary())
        if report.behind:
            print(
                f"ratings recompute: the live position {report.live_position:,} is behind the "
                f"log (records wait from offset {report.waiting_from:,}); the rating service "
                "is stuck or slow",
                file=sys.stderr,
            )
        return report.ok

    return 0 if asyncio.run(go()) else 1


def _plain(value: Any) -> Any:
    fields = getattr(value, "__dataclass_fields__", None)
    return {name: getattr(value, name) for name in fields} if fields else value


def cmd_show(args: argparse.Namespace) -> int:
    from services.rating.read import profile

    async def go() -> int:
        async with opened_store(args) as store:
            found = await profile(store, args.player, args.variant, args.history)
        s = found.standing
        if args.json:
            out = {**_plain(s), "history": [_plain(h) for h in found.history]}
            print(json.dumps(out, indent=1))
            return 0
        state = "provisional" if s.provisional else "established"
        print(f"{s.player} ({s.variant}): {s.rating:.1f}, {s.rated_hands} rated hands, {state}")
        for h in found.history:
            print(
                f"  #{h.seq:<8} {h.hand_id:<24} seat {h.seat} points {h.points:>4}  "
                f"{h.rating_before:8.1f} → {h.rating_after:8.1f} ({h.delta:+.2f})"
            )
        return 0

    return asyncio.run(go())


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from services.rating.read import leaderboard

    async def go() -> int:
        async with opened_store(args) as store:
            rows = await leaderboard(store, args.variant, args.limit, args.offset)
        if args.json:
            print(json.dumps([{"rank": r.rank, **_plain(r.standing)} for r in rows], indent=1))
            return 0
        for r in rows:
            s = r.standing
            print(f"{r.rank:>5}. {s.player:<24} {s.rating:8.1f}  {s.rated_hands:>6} hands")
        if not rows:
            print("no established players yet (10 rated hands make a player established)")
        return 0

    return asyncio.run(go())


def _store_options(parser: argparse.ArgumentParser) -> None:
    add_store_options(parser, "rating", "ratings.sqlite3", "rating", DSN_ENV)


def _read_options(parser: argparse.ArgumentParser) -> None:
    """The store a read-only tool opens (without the log's options) and the variant it reads."""
    parser.add_argument("--data", metavar="DIR", default=None, help="the embedded store's folder")
    _store_options(parser)
    parser.add_argument("--variant", default="sichuan", help="rating variant (default sichuan)")


def _topic_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--topic", default=RATING_RESULTS, help=f"the results topic (default {RATING_RESULTS})"
    )


def add_parsers(sub: Any) -> None:
    """Add ``rating`` and ``ratings`` to the ``mahjong-planet`` subcommands."""
    p = add_log_command(
        sub,
        "rating",
        cmd_rating,
        help="run the rating service",
        description="Read rating.results in log order and apply each rated hand's result to "
        "the ratings (RULES.md §9) exactly once: every batch is one store transaction that "
        "also stores the next input offset. Results of casual hands, hands with computer "
        "seats, untimed or practice hands, and repeated hands change nothing. The store is "
        "PostgreSQL with --postgres (migrations applied at start), else SQLite in the --data "
        "folder. Logs to stderr; stops cleanly on SIGTERM or SIGINT.",
    )
    _store_options(p)
    _topic_option(p)

    p = sub.add_parser(
        "ratings",
        help="recompute, show and rank ratings",
        description="Tools over the rating store.",
    )
    tools = p.add_subparsers(dest="ratings_command", required=True, metavar="TOOL")

    t = add_log_command(
        tools,
        "recompute",
        cmd_recompute,
        help="rebuild every rating from the log and compare with the live tables",
        description="Fold rating.results from offset 0 up to the live position into fresh "
        "tables (PostgreSQL: schema <schema>_recompute; SQLite: ratings-recompute.sqlite3) and "
        "compare every row with the live tables, floats bit for bit, against one consistent "
        "snapshot of the live ones. Offsets the rating service set aside as refused by the "
        "store (rating.results.dlq) are skipped as it skipped them. Prints a summary; exits "
        "1 on any difference, and when the live position is behind the log's end (BEHIND: "
        "records wait that the rating service has not applied; it is stuck or slow).",
    )
    _store_options(t)
    _topic_option(t)
    t.add_argument(
        "--catch-up-s",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="wait this long for the live position to reach the log's end before comparing "
        "(default 10)",
    )

    t = tools.add_parser(
        "show",
        help="a player's rating, provisional flag and history",
        description="Print a player's rating, rated hands, provisional flag and the latest "
        "changes (newest first). A player without a rated hand is at 1500, provisional.",
    )
    t.add_argument("player", metavar="PLAYER")
    _read_options(t)
    t.add_argument("--history", type=int, default=20, help="changes to show (default 20)")
    t.add_argument("--json", action="store_true", help="print JSON")
    t.set_defaults(func=cmd_show)

    t = tools.add_parser(
        "leaderboard",
        help="non-provisional players by rating",
        description="Print the established (non-provisional) players by rating, highest "
        "first; ties by player id.",
    )
    _read_options(t)
    t.add_argument("--limit", type=int, default=20, help="lines (default 20)")
    t.add_argument("--offset", type=int, default=0, help="skip this many first")
    t.add_argument("--json", action="store_true", help="print JSON")
    t.set_defaults(func=cmd_leaderboard)
