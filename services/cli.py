"""``mahjong-planet``: the command line of the service.

Subcommands grow with the platform; each one's ``--help`` explains it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from services.rules import scenario as scenarios
from services.rules.shuffle import commitment, shuffle
from services.rules.tiles import format_tiles
from services.runtime.config import add_log_options, opened_log


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
        print(json.dumps(scenarios.run(data), indent=1))
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
                problem = scenarios.first_difference(expect, scenarios.run(data))
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

    async def go() -> None:
        async with opened_log(args) as event_log:
            await TableService(event_log, group=args.group).run(_stop_on_signals())

    asyncio.run(go())
    return 0


def cmd_clock(args: argparse.Namespace) -> int:
    from services.clock.service import ClockService

    async def go() -> None:
        async with opened_log(args) as event_log:
            service = ClockService(event_log, group=args.group, table_group=args.table_group)
            await service.run(_stop_on_signals())

    asyncio.run(go())
    return 0


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
            result = await simulate(event_log, args.hands, args.tables, args.seed, progress)
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


def cmd_audit(args: argparse.Namespace) -> int:
    import time

    from services.audit import audit_encoded_hands
    from services.audit.reader import hand_records

    async def collect() -> dict[tuple[str, str], list[bytes]]:
        async with opened_log(args) as event_log:
            return await hand_records(event_log)

    hands = asyncio.run(collect())
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


def _stop_on_signals() -> asyncio.Event:
    """An event set by SIGTERM or SIGINT, so services finish their batch and leave cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


def cmd_run(args: argparse.Namespace) -> int:
    """Every service built so far, in this process, on the selected log."""
    from services.clock.service import ClockService
    from services.table.service import TableService

    async def go() -> None:
        async with opened_log(args) as event_log:
            stop = _stop_on_signals()
            table, clock = TableService(event_log), ClockService(event_log)
            print(
                "mahjong-planet: table and clock services running (Ctrl-C stops them)",
                file=sys.stderr,
            )
            await asyncio.gather(table.run(stop), clock.run(stop))

    asyncio.run(go())
    return 0


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

    p = sub.add_parser(
        "topics",
        help="create the topics",
        description="Create every topic with its partitions and retention (idempotent) and "
        "list them.",
    )
    add_log_options(p)
    p.set_defaults(func=cmd_topics)

    p = sub.add_parser(
        "table",
        help="run the table service",
        description="Consume table.commands, decide with the rules engine and append to "
        "table.events exactly once. Stops cleanly on SIGTERM or SIGINT.",
    )
    add_log_options(p)
    p.add_argument(
        "--group", default="table-service", help="consumer group (default table-service)"
    )
    p.set_defaults(func=cmd_table)

    p = sub.add_parser(
        "clock",
        help="run the clock service",
        description="Follow table.events, keep the deadline of every timed decision "
        "(RULES.md §8 clocks), and send the seat's timeout to table.commands when it passes. "
        "On start it rebuilds the running clocks from the log and fires at once whatever "
        "passed while it was down. Stops cleanly on SIGTERM or SIGINT.",
    )
    add_log_options(p)
    p.add_argument(
        "--group", default="clock-service", help="consumer group (default clock-service)"
    )
    p.add_argument(
        "--table-group",
        default="table-service",
        help="the table service's consumer group, to find timeouts it has not read yet",
    )
    p.set_defaults(func=cmd_clock)

    p = sub.add_parser(
        "simulate",
        help="play hands between simulated players through the service path",
        description="Start hands at simulated tables and play them with simple legal-move "
        "players (deciding from their seat views) by sending commands to table.commands and "
        "reading table.events. Runs the table service in-process unless told otherwise.",
    )
    add_log_options(p)
    p.add_argument("--hands", type=int, default=100, help="hands to play (default 100)")
    p.add_argument("--tables", type=int, default=20, help="tables at once (default 20)")
    p.add_argument("--seed", type=int, default=0, help="seed of the players' choices")
    p.add_argument(
        "--external-table-service",
        action="store_true",
        help="do not run a table service here (one is running against the same log)",
    )
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser(
        "audit",
        help="re-verify every finished hand in the log",
        description="Read table.events and check every finished hand: the revealed seed "
        "matches its commitment, the wall re-derived from the seed matches the deal, and "
        "re-deciding every recorded decision with the rules engine reproduces every event, "
        "payment and final score. Prints a summary; exits 1 on any mismatch.",
    )
    add_log_options(p)
    p.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--show", type=int, default=20, help="mismatches to print (default 20)")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser(
        "run",
        help="run the platform in one process",
        description="Run every service in this process on the embedded log (default ./data) "
        "or on Kafka. Today: the table and clock services; the gateway and web client join later.",
    )
    add_log_options(p)
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
