"""``mahjong-planet``: the command line of the service.

Subcommands grow with the platform; each one's ``--help`` explains it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from services.rules import commitment, first_difference, format_tiles, run_scenario, shuffle
from services.runtime.config import add_log_command, opened_log
from services.runtime.ops import add_ops_options, configure_logging, exit_cleanly_on_sigterm
from services.runtime.serve import serve


def _scenario_files(paths: Sequence[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(path.rglob("*.json"))
        else:
            yield path


def cmd_scenario(args: argparse.Namespace) -> int:
    if not args.check:
        if len(args.paths) != 1:
            print("give one scenario file, or --check with files and folders", file=sys.stderr)
            return 2
        data = json.loads(Path(args.paths[0]).read_text())
        print(json.dumps(run_scenario(data), indent=1))
        return 0
    passed = failed = skipped = 0
    for path in _scenario_files(args.paths):
        problem: str | None
        try:
            data = json.loads(path.read_text())
            if isinstance(data, dict) and "deal" not in data and "actions" not in data:
                skipped += 1  # another kind of vector (e.g. ratings/), not a scenario
                continue
            expect = data.get("expect")
            if not isinstance(expect, dict):
                problem = "no expect object"
            else:
                problem = first_difference(expect, run_scenario(data))
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            problem = f"error: {type(exc).__name__}: {exc}"
        if problem is None:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {path}: {problem}")
    if skipped:
        print(f"skipped {skipped} JSON files that are not scenarios")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


def cmd_shuffle(args: argparse.Namespace) -> int:
    try:
        seed = bytes.fromhex(args.seed)
    except ValueError:
        seed = b""
    if len(seed) != 32:
        print("SEED_HEX must be 64 hex digits (32 bytes)", file=sys.stderr)
        return 2
    deal = shuffle(seed)
    print(
        json.dumps(
            {
                "commitment": commitment(seed),
                "direction": deal.direction,
                "deal": [format_tiles(h) for h in deal.hands],
                "wall": format_tiles(deal.wall),
            }
        )
    )
    return 0


def cmd_schemas(args: argparse.Namespace) -> int:
    import schemas.publish as publish

    if args.write:
        for path in publish.write():
            print(f"wrote {path}")
        return 0
    stale = publish.stale()
    for path in stale:
        print(f"out of date: {path} (run `make schemas`)")
    return 1 if stale else 0


def cmd_topics(args: argparse.Namespace) -> int:
    from services.runtime.topics import TOPICS

    async def go() -> None:
        async with opened_log(args):
            pass

    asyncio.run(go())
    for spec in TOPICS:
        retention = "forever" if spec.retention_ms < 0 else f"{spec.retention_ms // 86_400_000} d"
        policy = "compacted" if spec.compacted else f"retention {retention}"
        print(f"{spec.name:<22} {spec.partitions:>3} partitions  {policy:<18} {spec.description}")
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from services.table.service import TableService

    return serve(args, "table", lambda log: TableService(log, group=args.group))


def cmd_clock(args: argparse.Namespace) -> int:
    from services.clock.service import ClockService

    return serve(
        args, "clock", lambda log: ClockService(log, group=args.group, table_group=args.table_group)
    )


def cmd_simulate(args: argparse.Namespace) -> int:
    from services.simulate import simulate
    from services.table.service import TableService

    def progress(done: int, total: int) -> None:
        width = 30
        filled = width * done // total
        print(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} hands",
            end="",
            file=sys.stderr,
            flush=True,
        )

    async def go() -> int:
        stop = asyncio.Event()
        async with opened_log(args) as event_log:
            service_task = None
            if not args.external_table_service:
                service = TableService(event_log)
                service_task = asyncio.create_task(service.run(stop))
                await asyncio.wait_for(service.ready.wait(), 60)
            result = await simulate(
                event_log, args.hands, args.tables, progress=progress, bots=args.bots
            )
            stop.set()
            if service_task is not None:
                await service_task
        print(file=sys.stderr)
        rate = result.hands / result.seconds if result.seconds else 0.0
        ends = ", ".join(f"{k}: {v}" for k, v in sorted(result.ends.items()))
        print(
            f"{result.hands} hands in {result.seconds:.1f} s ({rate:.1f} hands/s); "
            f"{result.commands} commands, {result.rejections} rejected; {ends}"
        )
        return 0

    return asyncio.run(go())


def _bot_strengths(text: str) -> list[str]:
    from services.bots import parse_strengths

    try:
        return parse_strengths(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_audit(args: argparse.Namespace) -> int:
    import time

    from services.audit import audit_encoded_hands
    from services.audit.reader import hand_records

    async def collect() -> dict[tuple[str, str], list[bytes]]:
        async with opened_log(args) as event_log:
            return await hand_records(event_log)

    hands = asyncio.run(collect())
    if args.table:
        wanted = set(args.table)
        hands = {key: records for key, records in hands.items() if key[0] in wanted}
    began = time.perf_counter()
    summary = audit_encoded_hands(list(hands.values()), processes=args.processes)
    seconds = time.perf_counter() - began
    rate = summary.hands / seconds if seconds else 0.0
    shown = summary.problems[: args.show]
    for problem in shown:
        print(f"MISMATCH {problem}")
    if len(summary.problems) > len(shown):
        print(f"... and more mismatches in {summary.failed} failed hands")
    print(
        f"audited {summary.hands} hands in {seconds:.2f} s ({rate:,.0f} hands/s): "
        f"{summary.passed} passed, {summary.failed} failed, {summary.skipped} unfinished"
    )
    return 0 if summary.ok else 1


def cmd_run(args: argparse.Namespace) -> int:
    """Every service built so far, in this process, on the selected log.

    Before anything starts, the process binds its HTTP port and locks its data directory
    (``services.runtime.datadir``); when either is taken it exits at once, having changed
    nothing."""
    from services.gateway.cli import listening_socket
    from services.rating.store import postgres_dsn
    from services.runtime.config import DEFAULT_DATA, uses_embedded_log
    from services.runtime.datadir import DataDirInUse, lock_data_dir

    data = args.data or DEFAULT_DATA
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        print(f"mahjong-planet: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    try:
        # The data directory holds the embedded log, and the accounts and ratings in SQLite
        # when no PostgreSQL is configured: one process at a time.
        held = None
        if uses_embedded_log(args) or postgres_dsn(None) is None:
            held = lock_data_dir(data)
    except DataDirInUse as exc:
        sock.close()
        print(f"mahjong-planet: {exc}", file=sys.stderr)
        return 1
    from services.runtime.position import PositionBeyondEnd, refuse_to_mix

    try:
        asyncio.run(_run_all(args, data, sock))
    except PositionBeyondEnd as exc:
        refuse_to_mix("mahjong-planet run", exc)
        return 1
    finally:
        if held is not None:
            held.release()
    return 0


async def _run_all(args: argparse.Namespace, data: str, sock: Any) -> None:
    from services.analysis.service import AnalysisService
    from services.bots.service import BotService
    from services.clock.service import ClockService
    from services.gateway.cli import gateway_for
    from services.history.service import HistoryService
    from services.history.store import open_store as open_history_store
    from services.matchmaking.service import MatchmakingService
    from services.rating.service import RatingService
    from services.rating.store import open_store, postgres_dsn
    from services.runtime.ops import run_service, stop_on_signals
    from services.table.service import TableService

    store = open_store(postgres_dsn(getattr(args, "postgres", None)), data, "rating")
    await store.start()
    async with opened_log(args) as event_log:
        stop = stop_on_signals()
        services = {
            "table": TableService(event_log),
            "clock": ClockService(event_log),
            "matchmaking": MatchmakingService(event_log),
            "bots": BotService(event_log),
            "rating": RatingService(event_log, store),
            "history": HistoryService(
                event_log, open_history_store(postgres_dsn(getattr(args, "postgres", None)), data)
            ),
            "analysis": AnalysisService(event_log),
            "gateway": gateway_for(event_log, args, sock),
        }
        print(
            f"mahjong-planet: {', '.join(services)} running (Ctrl-C stops them)",
            file=sys.stderr,
        )
        try:
            await asyncio.gather(
                *(run_service(name, service, stop) for name, service in services.items())
            )
        finally:
            await store.close()


def cmd_matchmaking(args: argparse.Namespace) -> int:
    from services.matchmaking.service import MatchmakingService

    return serve(args, "matchmaking", lambda log: MatchmakingService(log, group=args.group))


def cmd_bots(args: argparse.Namespace) -> int:
    from services.bots.service import BotService

    return serve(args, "bots", lambda log: BotService(log, group=args.group, pace=args.pace))


def cmd_lobby_projector(args: argparse.Namespace) -> int:
    from services.matchmaking.projection import LobbyProjection
    from services.rating.store import postgres_dsn

    dsn = postgres_dsn(args.postgres)
    if dsn is None:
        print("lobby-projector needs --postgres DSN (or MAHJONG_POSTGRES_DSN)", file=sys.stderr)
        return 2

    return serve(args, "lobby-projector", lambda log: LobbyProjection(log, dsn))


def _consumer_parser(
    sub: Any,
    name: str,
    func: Callable[[argparse.Namespace], int],
    *,
    group: str,
    help: str,
    description: str,
) -> argparse.ArgumentParser:
    """The subcommand of a service that consumes the log in its own consumer group: the log's
    options and ``--group`` (default ``group``); the caller adds the rest."""
    p = add_log_command(sub, name, func, help=help, description=description)
    p.add_argument("--group", default=group, help=f"consumer group (default {group})")
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mahjong-planet",
        description="Mahjong Planet: Sichuan Blood Battle (Planet-Blood-Battle-v1).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "scenario",
        help="run conformance scenarios",
        description="Run a scenario file and print its outcome as JSON, or with --check compare "
        "each file's outcome with its 'expect' (folders are searched recursively). --check "
        "prints one line per failing file and a closing 'N passed, M failed'; it exits 1 "
        "when anything failed.",
    )
    p.add_argument("--check", action="store_true", help="compare outcomes with 'expect'")
    p.add_argument("paths", nargs="+", metavar="PATH", help="scenario files or folders")
    p.set_defaults(func=cmd_scenario)

    p = sub.add_parser(
        "shuffle",
        help="derive the deal of a seed (RULES.md §1.1)",
        description="Print the commitment, exchange direction, the four dealt hands (in dealt "
        "order) and the live wall of a 32-byte seed given as 64 hex digits.",
    )
    p.add_argument("seed", metavar="SEED_HEX")
    p.set_defaults(func=cmd_shuffle)

    p = sub.add_parser(
        "schemas",
        help="check or regenerate the published JSON Schema files",
        description="Without options: exit 1 if a published schema under schemas/ differs "
        "from the one generated from the code. With --write: regenerate them.",
    )
    p.add_argument("--write", action="store_true")
    p.set_defaults(func=cmd_schemas)

    p = add_log_command(
        sub,
        "topics",
        cmd_topics,
        help="create the topics",
        description="Create every topic with its partitions and retention (idempotent) and "
        "list them.",
    )

    p = _consumer_parser(
        sub,
        "table",
        cmd_table,
        group="table-service",
        help="run the table service",
        description="Consume table.commands, decide with the rules engine and append to "
        "table.events exactly once. Stops cleanly on SIGTERM or SIGINT.",
    )
    add_ops_options(p)

    p = _consumer_parser(
        sub,
        "clock",
        cmd_clock,
        group="clock-service",
        help="run the clock service",
        description="Follow table.events, keep the deadline of every timed decision "
        "(RULES.md §8 clocks), and send the seat's timeout to table.commands when it passes. "
        "On start it rebuilds the running clocks from the log and fires at once whatever "
        "passed while it was down. Stops cleanly on SIGTERM or SIGINT.",
    )
    p.add_argument(
        "--table-group",
        default="table-service",
        help="the table service's consumer group, to find timeouts it has not read yet",
    )
    add_ops_options(p)

    p = _consumer_parser(
        sub,
        "matchmaking",
        cmd_matchmaking,
        group="matchmaking",
        help="run the matchmaking service",
        description="Consume match.requests (create, join and leave tables, fill with "
        "computers, Quick Play), decide them against the whole lobby, and append lobby.events "
        "and the start_hand of every filled table exactly once. Quick Play groups four players "
        "whose ratings lie within everyone's allowed gap (±50, 10 points wider per second "
        "waited, no cap). Stops cleanly on SIGTERM or SIGINT.",
    )
    add_ops_options(p)

    p = _consumer_parser(
        sub,
        "bots",
        cmd_bots,
        group="bots",
        help="run the computer players' service",
        description="Follow table.events and play every computer seat (players named "
        "computer:<strength>:<n>): the seat's view goes to a bot of that strength, whose "
        "command is sent after the table's pace. Rebuilds from the active hands on start. "
        "Stops cleanly on SIGTERM or SIGINT.",
    )
    p.add_argument(
        "--pace",
        choices=["instant", "fast", "normal", "slow"],
        default=None,
        help="override every table's pace (default: each table's own)",
    )
    add_ops_options(p)

    p = add_log_command(
        sub,
        "lobby-projector",
        cmd_lobby_projector,
        help="project lobby.events into PostgreSQL (the lobby list)",
        description="Follow lobby.events and keep the PostgreSQL tables lobby.tables (open and "
        "playing tables; never invite codes) and lobby.position up to date, exactly once. "
        "Migrations are applied at start.",
    )
    p.add_argument("--postgres", metavar="DSN", help="PostgreSQL DSN (or MAHJONG_POSTGRES_DSN)")
    add_ops_options(p)

    p = add_log_command(
        sub,
        "simulate",
        cmd_simulate,
        help="play hands between simulated players through the service path",
        description="Start hands at simulated tables and play them with computer players "
        "(services.bots, deciding from their seat views) by sending commands to "
        "table.commands and reading table.events. Runs the table service in-process unless "
        "told otherwise.",
    )
    p.add_argument("--hands", type=int, default=100, help="hands to play (default 100)")
    p.add_argument("--tables", type=int, default=20, help="tables at once (default 20)")
    p.add_argument(
        "--bots",
        type=_bot_strengths,
        default="normal",
        help="bot strength for every seat (easy, normal, strong), or four comma-separated "
        "for seats 0-3, e.g. easy,normal,strong,normal (default normal)",
    )
    p.add_argument(
        "--external-table-service",
        action="store_true",
        help="do not run a table service here (one is running against the same log)",
    )

    p = add_log_command(
        sub,
        "audit",
        cmd_audit,
        help="re-verify every finished hand in the log",
        description="Read table.events and check every finished hand: the revealed seed "
        "matches its commitment, the wall re-derived from the seed matches the deal, and "
        "re-deciding every recorded decision with the rules engine reproduces every event, "
        "payment and final score. Prints a summary; exits 1 on any mismatch.",
    )
    p.add_argument(
        "--processes",
        type=int,
        default=2,
        help="processes auditing, this one included (default 2)",
    )
    p.add_argument("--show", type=int, default=20, help="mismatches to print (default 20)")
    p.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="TABLE_ID",
        help="audit only the hands of this table (repeatable; default: every table)",
    )

    p = add_log_command(
        sub,
        "run",
        cmd_run,
        help="run the platform in one process",
        description="Run every service in this process on the embedded log (default ./data) "
        "or on Kafka: table, clock, matchmaking, bots, rating, history, analysis and the "
        "gateway, which "
        "serves the web client at http://127.0.0.1:8000/ (--host, --port).",
    )
    from services.gateway.cli import add_gateway_options
    from services.gateway.cli import add_parsers as add_gateway_parsers

    add_gateway_options(p)  # --host, --port (default 127.0.0.1:8000)
    add_ops_options(p, metrics=False, log_default="text")  # metrics: the gateway's /metrics
    add_gateway_parsers(sub)  # `gateway`
    add_ops_options(sub.choices["gateway"], metrics=False)  # /metrics on its own port

    from services.bots.cli import add_parsers as add_bot_parsers

    add_bot_parsers(sub)  # `ladder`

    from services.rating.commands import add_parsers as add_rating_parsers

    add_rating_parsers(sub)  # `rating` (the service) and `ratings recompute|show|leaderboard`
    add_ops_options(sub.choices["rating"])

    from services.history.commands import add_parsers as add_history_parsers

    add_ops_options(add_history_parsers(sub))  # `history` (the projection) and `history rebuild`

    from services.analysis.commands import add_parsers as add_analysis_parsers

    add_ops_options(add_analysis_parsers(sub))  # `analysis` (the service) and `analyse`
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "log_format", None):  # a service: logs configured once, here
        configure_logging(args.log_format, service=args.command)
        exit_cleanly_on_sigterm()
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
