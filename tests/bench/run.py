"""``make bench``: run every benchmark, print a table, write JSON and docs/benchmarks.md.

``--only audit,load`` re-runs those sections and keeps the others' figures from the JSON
file (each section records when and at which commit it was measured). The soak's outcome
is not measured here: it is read from ``make soak``'s JSON file when one exists.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.bench import audit, clock, embedded, fuzz, ladder, matchmaking, ratings, rules, service

TARGETS = {
    "complete_checks_per_s": (">=", 300_000),
    "speedup_vs_mahjong_pkg": (">=", 10),
    "random_hands_per_s": (">=", 500),
    "audit_command_hands_per_s": (">=", 5_000),
    "kafka_100_tables_paced.p99_ms": ("<=", 50),
    "kafka_1000_timed_tables.p99_ms": ("<=", 100),
    "kafka_postgres.recompute_s": ("<=", 60),
    "selfplay_normal_hands_per_s": (">=", 300),
    "selfplay_ratio": (">=", 0.333),  # the embedded path: a third of in-process self-play
    "strong_normal_easy_separated": (">=", 1),
    "expert_vs_3_strong_points_per_hand": (">=", 0.25),
    "expert_vs_3_strong_above_zero": (">=", 1),
    "expert_vs_3_strong_decision_p50_ms": ("<=", 100),
    "expert_vs_3_strong_decision_p99_ms": ("<=", 1000),
    "passed": (">=", 1),  # the soak
    "load_100_tables.p99_ms": ("<=", 100),
    "load_500_tables.p99_ms": ("<=", 100),
    "load_1000_tables.p99_ms": ("<=", 100),
}

SECTIONS = {
    "rules": "Rules engine",
    "audit": "Hand audit",
    "service": "Service path",
    "embedded": "Embedded service path against self-play",
    "clock": "Clocks",
    "ratings": "Ratings",
    "bots": "Computer players",
    "matchmaking": "Matchmaking",
    "load": "Load through the gateway",
    "fuzz": "Fuzzing",
    "soak": "Soak with faults",
}


def _load() -> dict[str, Any]:
    from tests.bench import load  # its own module: it needs the whole cluster

    return flatten_deep(load.run_all())


RUNNERS: dict[str, Callable[[], dict[str, Any]]] = {
    "rules": rules.run_all,
    "audit": audit.run_all,
    "service": lambda: flatten(service.run_all()),
    "embedded": embedded.run_all,
    "clock": lambda: flatten(clock.run_all()),
    "ratings": ratings.run_all,
    "bots": ladder.run_all,
    "matchmaking": lambda: flatten(matchmaking.run_all()),
    "load": _load,
    "fuzz": fuzz.run_all,
}
"""Every measured section; ``soak`` is read from ``make soak``'s file instead."""


def flatten(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{"kafka_100_tables": {"p99_ms": 40}}`` → ``{"kafka_100_tables.p99_ms": 40}``."""
    return {
        f"{name}.{k}": v
        for name, row in rows.items()
        for k, v in row.items()
        if k not in ("tables",)
    }


def flatten_deep(rows: dict[str, Any]) -> dict[str, Any]:
    """Nested figures flattened with dotted names; lists are left out (not figures)."""
    out: dict[str, Any] = {}
    for name, value in rows.items():
        if isinstance(value, dict):
            out.update({f"{name}.{k}": v for k, v in flatten_deep(value).items()})
        elif not isinstance(value, list):
            out[name] = value
    return out


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024**2:.0f} GiB"
    except OSError:
        pass
    return "unknown"


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
        "memory": _memory(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def verdict(name: str, value: float) -> str:
    """``met``/``MISSED`` against a target, looked up as ``figure`` or ``section.figure``."""
    key = name if name in TARGETS else name.split(".", 1)[-1]
    if key not in TARGETS or not isinstance(value, (int, float)):
        return ""
    op, target = TARGETS[key]
    ok = value >= target if op == ">=" else value <= target
    return f"{'met' if ok else 'MISSED'} ({op} {target:,})"


def table(figures: dict[str, Any], section: str = "") -> list[tuple[str, str, str]]:
    return [
        (
            name,
            f"{value:,}" if isinstance(value, (int, float)) else str(value),
            verdict(f"{section}.{name}" if section else name, value),
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
        "*X_vs_3_Y*: `mahjong-planet ladder --one-vs-three X:Y`. One-versus-three duplicate "
        "play: each deal four times, the challenger X in each seat in turn and three Y in the "
        "others; points per hand are X's, with the 95% interval over per-deal means, on seed "
        "20261201 (the expert was tuned on seeds below 100). The decision times are the "
        "expert's CPU time per decision over all its decisions (most are the strong bot's "
        "discards; the tail is its play-outs at claims, kongs and the opening).",
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
        "is mostly queueing. *paced* rows: each decision (and each hand's start) is sent "
        "0.5–1.5 s after it is offered, as people play; the latency target applies to those. "
        "*p50/p99* is per command, from handing it to the log to "
        "reading its first event back (read-committed on Kafka), so it includes the players' "
        "own queueing when the bench process is the bottleneck.",
        "Kafka: a single-node KRaft broker on this machine (`deploy/kafka/kafka.sh`), one "
        "transaction per poll and partition. Embedded: SQLite in WAL mode, `synchronous=FULL`.",
        "Embedded with the service in another process: the log's wake-ups are in-process, so "
        "the service polls every 100 ms; that, not SQLite, is the ~100 ms p50. In one process "
        "(`mahjong-planet run`, `simulate`) a command is answered within the same loop turn.",
        "Broker, service and players share the two cores, and the players' own work (each "
        "seat's tracked view and a choice per decision) is inside every latency. An earlier "
        "run with a 6 s consumer session timeout had p99s of about 34 s: CPU-starved members "
        "were evicted and their tables waited for the rebalance; with 10 s that is gone.",
    ],
    "embedded": [
        "*simulate_easy*: what `mahjong-planet simulate --bots easy` does on the embedded log "
        "(its default 20 tables, 600 hands): the table service in the same process, every "
        "command through `table.commands` and every event back through `table.events`, each "
        "transaction a durable SQLite commit (WAL, `synchronous=FULL`). The bots are fed by "
        "each seat's `SeatTracker`, as in self-play. *selfplay_easy* is the bots section's "
        "in-process self-play (1,000 hands, pure engine, no I/O), measured in the same run. "
        "Both per second of this process's CPU time (user and system: the commits' fsyncs "
        "count); *selfplay_ratio* is the first over the second.",
        "Where simulate's CPU goes (20 tables, a shared machine, about 19 ms a hand): a "
        "fifth in SQLite's commits (about 7 a hand: one per poll of the table service, its "
        "partitions' transactions savepoints of one commit, and one per poll of the "
        "players; each an fsync), a fifth in the other statements (mostly inserting the "
        "records), the rest in Python: the table service (decode, `handle`, encode, metrics) "
        "and the players (decode, `apply`, four trackers, `legal_actions`, the bot). Before "
        "issue 22 (commit `6b34964`: about 30 commits a hand, three statements a record, a "
        "full `seat_view` per decision), measured the same way on the same day: 25.1 against "
        "403.4 hands per CPU s, a ratio of 0.062.",
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
    "load": [
        "`make load` (`tests/bench/load.py`): the distributed mode, every service its own "
        "process (`deploy/cluster.py`), on a fresh broker and database per level. Every seat "
        "of every table is a WebSocket guest, like the web client (a private casual table, "
        "`standard` clock, 4 hands), answering each decision 0.5–1.5 s after its `view` "
        "offers it with the easy bot's choice; each guest has its own `X-Forwarded-For` "
        "behind a trusted proxy, so the shipped per-address limits stand. Two load-client "
        "processes drive them; their own CPU is reported (`cpu_pct.load_clients`).",
        "Tables open over a ramp of tables/5 s; the window opens once every table is in "
        "play. *p50/p99*: from sending a `command` frame to the first `view` frame showing it "
        "applied (the hand or `decision_seq` moved on, or the seat no longer pending). *cpu_pct* "
        "and *rss_mb*: from `/proc`, per service, the broker's JVM, PostgreSQL and the load "
        "clients, over the window. *lag*: each service's `mahjong_consumer_lag`, sampled every "
        "3 s (a transactional partition at rest reads 1: its last commit marker).",
        "*load_limit_tables*: the most tables with p99 < 100 ms, bisected between the largest "
        "level that held and the smallest that did not (shorter windows). The gateway is the "
        "process that grows with tables (a seat view per socket per change, 4 sockets per "
        "table); the table service stays under 20 % of a core; the broker costs ~30 % even at "
        "25 tables. Past the limit every action still got its broadcast, only later: the "
        "refusals at 500 and 1,000 tables are decisions answered after they had passed.",
    ],
    "soak": [
        "`make soak` (`tests/soak/soak.py`), 30 minutes: its own fresh broker and database, "
        "every service its own process, WebSocket players through the gateway at 0.3–1.5 s a "
        "decision (rated private blitz tables of four guests, Quick Play groups, bullet "
        "tables of one guest and three computers), reconnecting with their last seq. About "
        "every 60 s a `kill -9` of a service (a shuffled bag: each is hit before any twice), "
        "restarted 1–5 s later; the broker restarted at a third, PostgreSQL at two thirds. "
        "Also (issue 17): a second embedded `run` on the first one's data directory at the "
        "start (it must exit at once and change nothing); a poison record on each input "
        "topic at a fifth; a table member SIGSTOP'd at half-way while another takes over, "
        "then woken (the new owner must never be fenced).",
        "Then the traffic stops, every table plays to its end, consumers catch up, and: every "
        "hand in `table.events` ended; `mahjong-planet audit` passes on all; per hand the seqs "
        "are exactly 1..n and every command's events one unbroken run (none lost, none applied "
        "twice); one `rating.results` record per rated hand; every event stream a player "
        "received through the gateway equals the log; `ratings recompute` is identical to the "
        "live ratings bit for bit; every Quick Play player was seated exactly once; the hand "
        "history holds every ended hand exactly once and `history rebuild` is identical; each "
        "poison record was set aside with its reason. "
        "`tests/integration/test_soak.py` runs the same for 2.5 minutes in `make test`.",
    ],
    "fuzz": [
        "`tests/fuzz` and `tests/security` run once in a pytest of their own, each fuzzer "
        "counting what it fed (`tests/fuzz/tally.py`); `make test` runs the same suites. "
        "*engine commands*: random and Hypothesis-drawn commands against live hands, every "
        "one answered by events or a clean rejection, replay equal to the state after each; "
        "*decoder inputs*: arbitrary bytes, JSON, spoiled and mangled messages fed to every "
        "decoder (each either decodes to its type or raises `DecodeError`); *openapi "
        "requests*: schemathesis against the gateway's OpenAPI document; *websocket hostile "
        "frames*: malformed, oversized and mistyped frames on a live table, each answered "
        "while the hand plays on; *view leak hands*: hands whose every seat view is checked "
        "against what RULES.md §10 hides, with hidden tiles scrambled.",
        "Seven bugs the fuzzers found (all fixed): deeply nested JSON raised `RecursionError`, "
        "and one such record stalled a partition; a non-ASCII invite code crashed matchmaking; "
        "lone "
        "surrogates in frames dropped the socket, huge integers in queries gave a 500, the "
        "OpenAPI document did not match the API, and too many sockets got a bare 403.",
    ],
}


HEADLINES = (
    ("Rules engine: complete-hand checks/s", "rules", "complete_checks_per_s"),
    ("Rules engine: random hands/s", "rules", "random_hands_per_s"),
    ("Self-play, four normal bots: hands/s", "bots", "selfplay_normal_hands_per_s"),
    ("Expert vs three strong: points/hand", "bots", "expert_vs_3_strong_points_per_hand"),
    ("Audit command, two processes: hands/s", "audit", "audit_command_hands_per_s"),
    ("Embedded simulate / self-play, easy: hands per CPU s", "embedded", "selfplay_ratio"),
    ("Kafka, 100 paced tables: p99 ms", "service", "kafka_100_tables_paced.p99_ms"),
    ("Kafka, 1,000 tables (saturated): p99 ms", "service", "kafka_1000_tables.p99_ms"),
    ("Timer, 1,000 bullet tables: p99 ms late", "clock", "kafka_1000_timed_tables.p99_ms"),
    ("Quick Play time to seat: p50 s", "matchmaking", "quick_play.p50_s"),
    ("Quick Play time to seat: p99 s", "matchmaking", "quick_play.p99_s"),
    ("Rating recompute, 1,000,000 hands: s", "ratings", "kafka_postgres.recompute_s"),
    ("Load: most tables at p99 < 100 ms", "load", "load_limit_tables"),
    ("Soak: passed", "soak", "passed"),
    ("Fuzz: engine commands", "fuzz", "engine_commands"),
    ("Fuzz: decoder inputs", "fuzz", "decoder_inputs"),
)
"""The summary table's rows: (what, section, figure); a missing figure is left out."""


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`tests/bench/`): every figure is in `bench-results.json`. "
        "Single-process figures use one core; the parallel audit, the services and the "
        "broker share both.",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m.get('memory', '?')} memory, Python "
        f"{m['python']}, {m['platform']}; Kafka and PostgreSQL on the same machine.",
        "",
        "## Summary",
        "",
        "| figure | value | target |",
        "|---|---:|---|",
    ]
    for what, key, name in HEADLINES:
        value = report.get(key, {}).get(name)
        if value is not None:
            shown = f"{value:,}" if isinstance(value, (int, float)) else str(value)
            lines.append(f"| {what} | {shown} | {verdict(f'{key}.{name}', value)} |")
    for key, title in SECTIONS.items():
        if key not in report:
            continue
        when = report.get("measured", {}).get(key, {})
        lines += ["", f"## {title}", ""]
        if when:
            lines += [f"Measured {when['date']} at commit `{when['commit']}`.", ""]
        lines += ["| figure | value | target |", "|---|---:|---|"]
        lines += [f"| {n} | {v} | {t} |" for n, v, t in table(report[key], key)]
        lines += ["", *(f"- {note}" for note in NOTES.get(key, ()))]
    return "\n".join(lines) + "\n"


def _soak(path: Path) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The soak's outcome from ``make soak``'s file, and when it ran."""
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    faults = data.get("faults", [])
    checks = data.get("checks", {})
    figures: dict[str, Any] = {
        "passed": data.get("passed"),
        "fault_window_s": data.get("fault_window_s"),
        "drain_s": data.get("drain_s"),
        "faults": sum(f.get("phase") != "stopping" for f in faults),
        **{f"kills.{k}": v for k, v in sorted(data.get("kills", {}).items())},
        **{
            f"{f['target']}_restart_down_s": f["down_s"]
            for f in faults
            if f.get("phase") == "up" and "down_s" in f
        },
        **{f"hands.{k}": v for k, v in data.get("hands", {}).items()},
        **flatten_deep({"tables": data.get("client", {}).get("tables", {})}),
        **{f"check.{k}": v.get("ok") for k, v in checks.items() if isinstance(v, dict)},
        "audit": checks.get("audit", {}).get("summary", ""),
    }
    when = {"date": data.get("date", "?"), "commit": data.get("commit", "?")}
    return {k: v for k, v in figures.items() if v is not None}, when


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", default="bench-results.json", help="where to write figures")
    parser.add_argument("--markdown", default="docs/benchmarks.md", help="the report to write")
    parser.add_argument(
        "--only",
        default="",
        help=f"comma-separated sections to re-run ({', '.join(RUNNERS)}); the others are "
        "kept from --json",
    )
    parser.add_argument("--soak", default="soak-results.json", help="make soak's results")
    args = parser.parse_args()
    only = [k for k in args.only.split(",") if k]
    unknown = set(only) - set(RUNNERS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    previous: dict[str, Any] = {}
    if only and Path(args.json).exists():
        previous = json.loads(Path(args.json).read_text())
    report: dict[str, Any] = {"machine": machine(), "measured": previous.get("measured", {})}
    for key in RUNNERS:
        if only and key not in only:
            if key in previous:
                report[key] = previous[key]
            continue
        print(f"running {key} ...", file=sys.stderr, flush=True)
        report[key] = RUNNERS[key]()
        report["measured"][key] = {
            "date": report["machine"]["date"],
            "commit": report["machine"]["commit"],
        }
    soak = _soak(Path(args.soak))
    if soak is not None:
        report["soak"], report["measured"]["soak"] = soak
    shown = [k for k in SECTIONS if k in report]
    width = max(len(n) for key in shown for n in report[key])
    for key in shown:
        print(f"\n{SECTIONS[key]}\n{'figure':<{width}}  {'value':>14}  target")
        for name, value, target in table(report[key], key):
            print(f"{name:<{width}}  {value:>14}  {target}")
    Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
    Path(args.markdown).write_text(markdown(report))
    print(f"\nwrote {args.json} and {args.markdown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
