"""The command line of the review: ``mahjong-planet analysis`` (the service) and
``mahjong-planet analyse --hand HAND_ID`` (one hand, offline, printed as a table)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from schemas import analysis as an
from schemas import commands as cmd
from services.runtime.config import add_log_command, opened_log


def cmd_analysis(args: argparse.Namespace) -> int:
    from services.analysis.service import AnalysisService
    from services.runtime.serve import serve

    return serve(
        args,
        "analysis",
        lambda log: AnalysisService(
            log,
            group=args.group,
            hands_group=args.hands_group,
            worlds=args.worlds,
            follow_hands=not args.requests_only,
        ),
    )


def cmd_analyse(args: argparse.Namespace) -> int:
    from services.analysis.hands import hand_log, human_seats
    from services.analysis.review import (
        HandNotReviewable,
        review_hand,
    )

    async def read() -> list[Any]:
        async with opened_log(args) as event_log:
            return await hand_log(event_log, args.hand)

    events = asyncio.run(read())
    if not events:
        print(f"mahjong-planet analyse: no hand {args.hand} in the log", file=sys.stderr)
        return 1
    seats = args.seat or human_seats(events[0]) or [0, 1, 2, 3]
    try:
        review = review_hand(events, seats, worlds=args.worlds)
    except HandNotReviewable as exc:
        print(f"mahjong-planet analyse: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(an.encode(review).decode())
    else:
        print(render(review))
    return 0


def option_text(c: cmd.HandCommand) -> str:
    """An option as the table prints it: ``discard 5s``, ``exchange 1m 2m 3m``, ``pass``."""
    if isinstance(c, cmd.ChooseExchange):
        return "exchange " + " ".join(c.tiles)
    if isinstance(c, cmd.DeclareMissing):
        return f"missing {c.suit}"
    if isinstance(c, cmd.Discard):
        return f"discard {c.tile}"
    if isinstance(c, cmd.Kong):
        return f"kong {c.tile}"
    if isinstance(c, cmd.ClaimKong):
        return "kong (claim)"
    return {cmd.Hu: "hu", cmd.Pung: "pung", cmd.Pass: "pass"}.get(type(c), type(c).__name__)


def render(review: an.HandReview) -> str:
    """The review as a text table: one line per decision, then each seat's summary."""
    lines = [
        f"hand {review.hand_id} ({review.engine})",
        f"{'seat':>4} {'seq':>4}  {'kind':<8} {'played':<18} {'expert':<18} {'loss':>6}  mark",
    ]
    for d in review.decisions:
        flag = " (timeout)" if d.timeout else ""
        lines.append(
            f"{d.seat:>4} {d.seq:>4}  {d.kind:<8} {option_text(d.played):<18} "
            f"{option_text(d.best):<18} {d.loss:>6.2f}  {d.mark}{flag}"
        )
    lines.append("")
    for s in review.seats:
        lines.append(
            f"seat {s.seat} ({s.player_id}): accuracy {s.accuracy:.1f}, {s.decisions} decisions, "
            f"{s.inaccuracies} inaccuracies, {s.mistakes} mistakes, {s.blunders} blunders, "
            f"{s.points_lost:.2f} points given up"
        )
    return "\n".join(lines)


def _worlds(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--worlds",
        type=int,
        default=None,
        metavar="N",
        help="sampled worlds per option of the expert's valuation (default: the expert's own; "
        "fewer is faster and noisier)",
    )


def add_parsers(sub: Any) -> argparse.ArgumentParser:
    """Add ``analysis`` (the service; returned, for the caller's ops options) and ``analyse``."""
    p = add_log_command(
        sub,
        "analysis",
        cmd_analysis,
        help="run the computer review service",
        description="Review finished hands with the expert computer, exactly once. Follows "
        "table.events (consumer group analysis-hands) and, when a hand with a person at it "
        "ends (practice hands excepted: those only on request), appends a review request for "
        "its human seats to analysis.requests. Consumes analysis.requests (group analysis): "
        "reads the hand's log, values every legal option of every decision of the requested "
        "seats from that seat's view at that moment (never the hidden tiles), marks each "
        "decision best, inaccuracy, mistake or blunder by the expected points it gave up, and "
        "appends the typed HandReview to analysis.results (key: hand id) in the same "
        "transaction as the request's offset. Reviews run one at a time in a worker process. "
        "A request that cannot be reviewed goes to analysis.requests.dlq. See docs/analysis.md.",
    )
    p.add_argument("--group", default="analysis", help="consumer group of the requests")
    p.add_argument(
        "--hands-group", default="analysis-hands", help="consumer group following table.events"
    )
    p.add_argument(
        "--requests-only",
        action="store_true",
        help="review requests only; do not follow table.events (another instance does)",
    )
    _worlds(p)

    q = add_log_command(
        sub,
        "analyse",
        cmd_analyse,
        help="review one finished hand offline and print the table",
        description="Read a finished hand from the log and review it as the analysis service "
        "does: one line per decision (seat, seq of its event, kind, the option played, the "
        "expert's choice, the expected points given up and the mark), then each seat's "
        "accuracy. Nothing is written to the log.",
    )
    q.add_argument("--hand", required=True, metavar="HAND_ID", help="the hand (table_id#n)")
    q.add_argument(
        "--seat",
        type=int,
        action="append",
        choices=range(4),
        default=[],
        help="a seat to review (repeatable; default: every human seat, or all four)",
    )
    q.add_argument("--json", action="store_true", help="print the HandReview as JSON")
    _worlds(q)
    return p
