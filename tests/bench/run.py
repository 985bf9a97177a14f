"""``make bench``: run every benchmark, print a table, write JSON and docs/benchmarks.md."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.bench import audit, clock, ladder, matchmaking, ratings, rules, service

TARGETS = {
    "complete_checks_per_s": (">=", 300_000),
    "speedup_vs_mahjong_pkg": (">=", 10),
    "random_hands_per_s": (">=", 500),
    "audit_command_hands_per_s": (">=", 5_000),
    "kafka_100_tables_paced.p99_ms": ("<=", 50),
    "kafka_1000_timed_tables.p99_ms": ("<=", 100),
    "kafka_postgres.recompute_s": ("<=", 60),
    "selfplay_normal_hands_per_s": (">=", 300),
    "strong_normal_easy_separated": (">=", 1),
}

SECTIONS = {
    "rules": "Rules engine",
    "audit": "Hand audit",
    "service": "Service path",
    "clock": "Clocks",
    "ratings": "Ratings",
    "bots": "Computer players",
    "matchmaking": "Matchmaking",
}


def flatten(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{"kafka_100_tables": {"p99_ms": 40}}`` → ``{"kafka_100_tables.p99_ms": 40}``."""
    return {
        f"{name}.{k}": v
        for name, row in rows.items()
        for k, v in row.items()
        if k not in ("tables",)
    }


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def verdict(name: str, value: float) -> str:
    if name not in TARGETS:
        return ""
    op, target = TARGETS[name]
    ok = value >= target if op == ">=" else value <= target
    return f"{'met' if ok else 'MISSED'} ({op} {target:,})"


def table(figures: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (
            name,
            f"{value:,}" if isinstance(value, (int, float)) else str(value),
            verdict(name, value),
        )
        for name, value in figures.items()
    ]


NOTES = {
    "matchmaking": [
        "Quick Play on Kafka, the matchmaking service as its own process: 10 players a "
        "second for 40 s, ratings drawn from N(1500, 150). Time to seat is from "
        "`queue_joined` to `table_started` (both stamped by the service); the gap allowed "
        "widens by 10 points a second from ±50 (docs/matchmaking.md), so the tails are the "
        "players far from the mean.",
    ],
    "bots": [
        "*selfplay*: four bots of one strength play fresh deals in one process, in-process on "
        "the pure engine (`start_hand`, `handle`), each bot fed by its seat's incremental view "
        "(`SeatTracker`); instant, no I/O, the bots' lazy shanten tables filled during the run. "
        "*per CPU s* divides by this process's CPU time: steadier when the machine is shared.",
        "*ladder*: `mahjong-planet ladder --hands 4800`. Duplicate deals: each deal is played "
        "12 times (lineups a b c a, a b c b, a b c c, each in four rotations), so every "
        "strength sits in every seat equally often on the same walls. The 95% intervals are "
        "mean ± 1.96·sd/√deals over per-deal means; *separated* is 1 when strong's interval "
        "lies above normal's and normal's above easy's. What each strength does: docs/bots.md.",
    ],
    "rules": [
        "Each side checks the same hands in its own representation, converted before "
        "timing: the peer gets its 34-count array, the engine its three per-suit base-5 keys "
        "(the form the hand state keeps up to date as tiles move, so a live check never "
        "converts). *from 27 counts* includes that conversion in the timing (plain counts "
        "packed to bytes and looked up per suit): the honest figure for a caller that holds "
        "only counts.",
        "The peer is the `mahjong` PyPI package (`Agari.is_agari`). Disagreements are hands "
        "of seven pairs containing a quad: riichi wants seven different pairs, RULES.md §4 "
        "counts a quad as two pairs.",
        "*random hands* are whole hands from shuffle to settlement between players picking "
        "uniformly among `legal_actions` (nearly all end by exhaustion); *eager* players always "
        "win and often claim, so wins, kongs and robbing windows happen.",
    ],
    "audit": [
        "*command*: what `mahjong-planet audit --processes 2` does (the issue's 5,000 hands/s "
        "target) on 2,000 hands that normal bots played through the table service on an "
        "embedded log (`simulate`), read from `table.events` as the command reads them; "
        "reading is not timed, as in the command's own figure. The other rows are a harder "
        "mix, eager random hands with a third more events per hand.",
        "`services.audit` audits finished eager random hands with 5% timeouts: seqs, the "
        "seed's commitment, the shuffle, re-deciding every logged decision through "
        "`handle` and comparing every event, and the money.",
        "*records* are the hands as `table.events` holds them (one `EventEnvelope` JSON "
        "record per event), which is what `mahjong-planet audit` reads; the unmarked encoded "
        "figures take one msgspec JSON array per hand. *parallel* shares chunks between this "
        "process and one forked worker that inherits the hands (the fork and the merge "
        "included); *one process* is the same work without the worker. Reading the log is "
        "not timed, as in the command.",
        "An encoded hand is first proven by its bytes (`services/audit/encoded_audit.py`): "
        "peek at the fields re-deciding needs, re-decide, encode the re-decided events and "
        "compare them with the log, every record with its own. Any log that is not byte for "
        "byte what re-deciding writes gets the full audit (every event decoded with the "
        "schema's checks, then compared field by field), which names its problems: "
        "*decoded in full* is that path's speed. *exact logs* counts the hands proven by "
        "their bytes.",
        "*audit hands* audits decoded events in one process: the engine's cost plus the "
        "field-by-field comparison. *re-decide floor* is `start_hand` plus one `handle` per "
        "decision with the commands built beforehand: the engine's own cost, which bounds "
        "any audit that re-decides.",
    ],
    "service": [
        "The table service runs as its own process (`mahjong-planet table`); simulated "
        "players (easy bots, the cheapest legal players) in the bench process keep N tables "
        "busy for a fixed window (60 s). Plain rows: each answers as soon as its decision "
        "appears, which saturates the two cores and measures throughput; the latency there "
        "is mostly queueing. *paced* rows: each decision (and each hand's start) is sent 0.5–1.5 s "
        "after it is offered, as people play; the latency target applies to those. *p50/p99* is per "
        "command, from handing it to the log to "
        "reading its first event back (read-committed on Kafka), so it includes the players' "
        "own queueing when the bench process is the bottleneck.",
        "Kafka: a single-node KRaft broker on this machine (`deploy/kafka/kafka.sh`), one "
        "transaction per poll and partition. Embedded: SQLite in WAL mode, `synchronous=FULL`.",
        "Embedded with the service in another process: the log's wake-ups are in-process, so "
        "the service polls every 100 ms; that, not SQLite, is the ~100 ms p50. In one process "
        "(`mahjong-planet run`, `simulate`) a command is answered within the same loop turn.",
        "Broker, service and players share the two cores, and the players' own work (a seat "
        "view and a choice per decision) is inside every latency. An earlier run with a 6 s "
        "consumer session timeout had p99s of about 34 s: CPU-starved members were evicted "
        "and their tables waited for the rebalance; with 10 s that is gone.",
    ],
    "clock": [
        "Table and clock services as their own processes on the Kafka broker; figures read "
        "back from the hand logs, stamped by the table service's clock.",
        "*timed tables*: 1,000 bullet tables whose seats never answer, started over 5 s and "
        "watched for 75 s (the opening's timeouts at 20 s and 35 s, then one every 2 s per "
        "table). *firing delay* is when the table service applied each timeout minus its "
        "deadline (the lag allowance is 0): timer, send, Kafka and the table's queue.",
        "*answer lag*: 100 relaxed tables whose seats answer the moment a decision is read; "
        "the time the table service charged them, from offering the decision to the answer "
        "arriving. This is the server-side lag of docs/clocks.md.",
    ],
    "ratings": ratings.NOTES,
}


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`tests/bench/`); figures are from one run on one core "
        "(the parallel audit figures use two).",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['platform']}; "
        f"commit `{m['commit']}`, {m['date']}.",
    ]
    for key, title in SECTIONS.items():
        lines += ["", f"## {title}", "", "| figure | value | target |", "|---|---:|---|"]
        lines += [f"| {n} | {v} | {t} |" for n, v, t in table(report[key])]
        lines += ["", *(f"- {note}" for note in NOTES[key])]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", default="bench-results.json", help="where to write figures")
    parser.add_argument("--markdown", default="docs/benchmarks.md", help="the report to write")
    args = parser.parse_args()
    report = {
        "machine": machine(),
        "rules": rules.run_all(),
        "audit": audit.run_all(),
        "service": flatten(service.run_all()),
        "clock": flatten(clock.run_all()),
        "ratings": ratings.run_all(),
        "bots": ladder.run_all(),
        "matchmaking": flatten(matchmaking.run_all()),
    }
    width = max(len(n) for key in SECTIONS for n in report[key])
    for key, title in SECTIONS.items():
        print(f"\n{title}\n{'figure':<{width}}  {'value':>14}  target")
        for name, value, target in table(report[key]):
            print(f"{name:<{width}}  {value:>14}  {target}")
    Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
    Path(args.markdown).write_text(markdown(report))
    print(f"\nwrote {args.json} and {args.markdown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
