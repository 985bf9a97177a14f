"""``mahjong-planet``: the command line of the service.

Subcommands grow with the platform; each one's ``--help`` explains it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from services.rules import scenario as scenarios
from services.rules.shuffle import commitment, shuffle
from services.rules.tiles import format_tiles


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
    passed = failed = 0
    for path in _scenario_files(args.paths):
        problem: str | None
        try:
            data = json.loads(path.read_text())
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


def cmd_run(args: argparse.Namespace) -> int:
    print(
        "The one-process platform (table service, gateway and web client) is not built yet;\n"
        "today this project ships the rules engine: see `mahjong-planet scenario --help`.",
        file=sys.stderr,
    )
    return 2


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

    p = sub.add_parser("run", help="run the whole platform in one process (not built yet)")
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
