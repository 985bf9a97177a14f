"""``mahjong-planet ladder``: the bots' strengths measured on duplicate deals, and their speed."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from services.bots import STRENGTHS, make_bot
from services.bots.ladder import (
    LadderResult,
    OneVsThree,
    Throughput,
    one_vs_three,
    run_ladder,
    self_play,
)

DEFAULT_HANDS = 4800  # 400 deals of 12 seatings


def _strengths(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in STRENGTHS]
    if unknown or not 1 <= len(names) <= 4 or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"give one to four different strengths of {', '.join(STRENGTHS)}, best last"
        )
    return names


def _pairing(text: str) -> tuple[str, str]:
    challenger, _, opponent = text.partition(":")
    if challenger not in STRENGTHS or opponent not in STRENGTHS:
        raise argparse.ArgumentTypeError(
            f"give CHALLENGER:OPPONENT, each one of {', '.join(STRENGTHS)}; got {text!r}"
        )
    return challenger, opponent


def one_vs_three_report(result: OneVsThree) -> dict[str, Any]:
    """A one-versus-three run as plain data (what ``--json`` prints)."""
    return {
        "mode": "one_vs_three",
        "challenger": result.challenger,
        "opponent": result.opponent,
        "deals": result.deals,
        "hands": result.hands,
        "mean": round(result.mean, 3),
        "ci95": [round(result.low, 3), round(result.high, 3)],
        "above_zero": result.above_zero,
        "decision_p50_ms": result.decision_p50_ms,
        "decision_p99_ms": result.decision_p99_ms,
        "seconds": round(result.seconds, 1),
    }


def cmd_one_vs_three(args: argparse.Namespace) -> int:
    """Run the challenger against three opponents on duplicate deals; print the result."""
    challenger, opponent = args.one_vs_three
    result = one_vs_three(
        challenger,
        opponent,
        args.deals,
        args.seed,
        None if args.json else _progress,
        workers=args.workers,
    )
    data = one_vs_three_report(result)
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(file=sys.stderr)
        print(
            f"{result.challenger} against three {result.opponent}: {result.deals} deals, "
            f"each played four times with the {result.challenger} in every seat "
            f"({result.hands} hands, {result.seconds:.0f} s)"
        )
        print(
            f"{result.challenger} points/hand {result.mean:+.3f}   95% interval "
            f"[{result.low:+.3f}, {result.high:+.3f}]   "
            f"{'above zero' if result.above_zero else 'NOT above zero'}"
        )
        print(
            f"{result.challenger} decision time (CPU, one core): p50 "
            f"{result.decision_p50_ms:.1f} ms, p99 {result.decision_p99_ms:.1f} ms"
        )
    return 1 if args.check and not result.above_zero else 0


def _progress(done: int, total: int) -> None:
    if done % 50 == 0 or done == total:
        print(f"\r{done}/{total} hands", end="", file=sys.stderr, flush=True)


def report(result: LadderResult, order: list[str], speed: Throughput | None) -> dict[str, Any]:
    """The ladder's figures as plain data (what ``--json`` prints)."""
    out: dict[str, Any] = {
        "hands": result.hands,
        "deals": result.deals,
        "hands_per_s": round(result.hands_per_s, 1),
        "standings": [
            {
                "strength": s.strength,
                "mean": round(s.mean, 3),
                "ci95": [round(s.low, 3), round(s.high, 3)],
                "seat_hands": s.seat_hands,
            }
            for s in result.standings
        ],
        "order": " > ".join(reversed(order)),
        "separated": result.ordered(list(reversed(order))),
    }
    if speed is not None:
        out["self_play"] = {
            "hands": speed.hands,
            "hands_per_s": round(speed.hands_per_s, 1),
            "hands_per_cpu_s": round(speed.hands_per_cpu_s, 1),
            "decisions_per_hand": round(speed.decisions / speed.hands, 1),
        }
    return out


def cmd_ladder(args: argparse.Namespace) -> int:
    """Run the ladder and the self-play measurement; print them (or JSON)."""
    if args.one_vs_three is not None:
        return cmd_one_vs_three(args)
    order: list[str] = args.strengths
    bots = {name: make_bot(name) for name in order}
    result = run_ladder(bots, args.hands, args.seed, None if args.json else _progress)
    speed = None
    if args.self_play_hands:
        speed = self_play(make_bot(args.self_play_bot), args.self_play_hands, args.seed)
    data = report(result, order, speed)
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(file=sys.stderr)
        _print(data, result, speed, args.self_play_bot)
    return 1 if args.check and not data["separated"] else 0


def _print(data: dict[str, Any], result: LadderResult, speed: Throughput | None, bot: str) -> None:
    print(
        f"{result.hands} hands: {result.deals} deals, each replayed with the strengths "
        f"rotated through the seats ({result.hands_per_s:.0f} hands/s)"
    )
    print(f"{'strength':<9} {'points/hand':>11}   {'95% interval':<18} seat-hands")
    for s in result.standings:
        print(
            f"{s.strength:<9} {s.mean:>+11.3f}   [{s.low:+.3f}, {s.high:+.3f}]  {s.seat_hands:>8}"
        )
    verdict = "intervals separated" if data["separated"] else "intervals OVERLAP"
    print(f"order {data['order']}: {verdict}")
    if speed is not None:
        print(
            f"self-play, four {bot} bots: {speed.hands} hands, {speed.hands_per_s:.0f} hands/s "
            f"({speed.hands_per_cpu_s:.0f} per CPU second), "
            f"{speed.decisions / speed.hands:.1f} decisions/hand"
        )


def add_parsers(sub: Any) -> None:
    """Add ``ladder`` to the command line's subcommands."""
    p = sub.add_parser(
        "ladder",
        help="measure the bots' strengths on duplicate deals, and self-play speed",
        description="Play duplicate deals in-process on the pure engine: every deal is "
        "replayed with the strengths rotated through the seats. Prints each strength's mean "
        "points per hand with a 95%% confidence interval over deals, whether the intervals "
        "are separated in the given order, and the self-play speed of four bots of one "
        "strength (instant, no I/O).",
    )
    p.add_argument(
        "--hands",
        type=int,
        default=DEFAULT_HANDS,
        help=f"hands to play at least (default {DEFAULT_HANDS})",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    p.add_argument(
        "--strengths",
        type=_strengths,
        default=["easy", "normal", "strong"],
        help="the strengths compared, weakest first (default easy,normal,strong)",
    )
    p.add_argument(
        "--self-play-hands",
        type=int,
        default=1000,
        help="hands of the self-play speed measurement; 0 skips it (default 1000)",
    )
    p.add_argument(
        "--self-play-bot",
        choices=sorted(STRENGTHS),
        default="normal",
        help="the strength of the four self-play bots (default normal)",
    )
    p.add_argument(
        "--one-vs-three",
        type=_pairing,
        metavar="CHALLENGER:OPPONENT",
        help="instead of the ladder: one-versus-three duplicate play, e.g. expert:strong; "
        "each deal is played four times, the challenger in each seat with three copies of "
        "the opponent, and the challenger's mean points per hand is reported with its 95%% "
        "interval over deals (with --check: exit 1 unless the interval is above zero)",
    )
    p.add_argument(
        "--deals",
        type=int,
        default=1000,
        help="deals of --one-vs-three (four hands each; default 1000)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes sharing the --one-vs-three deals (default 1)",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless the intervals are separated in the given order (or, with "
        "--one-vs-three, unless the challenger's interval is above zero)",
    )
    p.set_defaults(func=cmd_ladder)
