"""Hand-audit benchmarks: finished hands audited per second, in one process and over two.

The command figures audit bot-played hands from an embedded log as ``mahjong-planet audit``
does. The other hands are eager random hands with 5% timeouts (wins, kongs and settlements
happen), given as decoded events, as one msgspec JSON array per hand, or as their
``table.events`` records (what ``mahjong-planet audit`` reads). The floor is what
re-deciding alone costs: ``start_hand`` plus one ``handle`` per logged decision, with the
commands built beforehand.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from collections.abc import Callable
from typing import Any

import msgspec

from schemas import commands as cmd
from schemas import events as ev
from schemas.table import EventEnvelope, encode
from services.audit import audit_encoded_hands, audit_hand, audit_hands, decode_hand
from services.audit.encoded_audit import audit_if_exact
from services.audit.redecide import OPENING, command_for
from services.rules.hand import handle, start_hand
from services.rules.selfplay import play_random_hand
from services.rules.shuffle import shuffle

Figures = dict[str, Any]


def sample_hands(n: int, seed: int = 7) -> list[list[ev.Event]]:
    rng = random.Random(seed)
    return [play_random_hand(rng, eager=True, timeout_rate=0.05)[1] for _ in range(n)]


def _rate(fn: Callable[[], int], runs: int = 5) -> float:
    """Hands per second of ``fn`` (which returns how many it audited), best of ``runs``."""
    best = 0.0
    for _ in range(runs):
        start = time.perf_counter()
        done = fn()
        best = max(best, done / (time.perf_counter() - start))
    return best


def _decisions(events: list[ev.Event]) -> tuple[bytes, list[cmd.HandCommand]]:
    """The seed and the commands of a hand's decisions, found by re-deciding it once."""
    wall = events[OPENING - 1]
    assert isinstance(wall, ev.WallBuilt) and wall.seed is not None
    seed = bytes.fromhex(wall.seed)
    state, _ = start_hand("table", "hand", shuffle(seed), seed=seed)
    commands, pos = [], OPENING
    while pos < len(events):
        command = command_for(events[pos], state.decision_seq)
        assert command is not None
        result = handle(state, command)
        assert not isinstance(result, cmd.Rejection)
        commands.append(command)
        pos += len(result)
    return seed, commands


def bench_audit(hands: list[list[ev.Event]]) -> Figures:
    encoded = [msgspec.json.encode(h) for h in hands]
    records = [[encode(EventEnvelope(event=e)) for e in h] for h in hands]
    plans = [(shuffle(seed), seed, commands) for seed, commands in map(_decisions, hands)]
    check = audit_hands(hands)
    assert check.passed == len(hands), check.problems[:3]
    exact = sum(audit_if_exact(r) is not None for r in records)

    def in_memory() -> int:
        return audit_hands(hands).passed

    def encoded_one() -> int:
        return audit_encoded_hands(encoded, processes=1).passed

    def encoded_two() -> int:
        return audit_encoded_hands(encoded, processes=2).passed

    def records_one() -> int:
        return audit_encoded_hands(records, processes=1).passed

    def records_two() -> int:
        return audit_encoded_hands(records, processes=2).passed

    def decoded_in_full() -> int:
        # What a log that is not byte for byte the re-decided one costs: every event decoded
        # (the schema's checks included), then the full audit.
        return sum(audit_hand(decode_hand(e)).ok for e in encoded)

    def floor() -> int:
        for deal, seed, commands in plans:
            state, _ = start_hand("table", "hand", deal, seed=seed)
            for c in commands:
                handle(state, c)
        return len(plans)

    return {
        "audit_records_hands_per_s_parallel": round(_rate(records_two)),
        "audit_records_hands_per_s_one_process": round(_rate(records_one)),
        "audit_hands_per_s_parallel": round(_rate(encoded_two)),
        "audit_encoded_hands_per_s_one_process": round(_rate(encoded_one)),
        "audit_hands_per_s": round(_rate(in_memory)),
        "audit_decoded_in_full_hands_per_s": round(_rate(decoded_in_full)),
        "redecide_floor_hands_per_s": round(_rate(floor)),
        "audit_exact_logs": exact,
        "audit_events_per_hand": round(sum(map(len, hands)) / len(hands), 1),
        "audit_decisions_per_hand": round(sum(len(p[2]) for p in plans) / len(plans), 1),
        "audit_json_bytes_per_hand": round(sum(map(len, encoded)) / len(encoded)),
    }


async def _played_hands(n: int) -> list[list[bytes]]:
    """The ``table.events`` records of ``n`` hands played by normal bots through the table
    service on an embedded log (what ``mahjong-planet simulate`` writes), as
    ``mahjong-planet audit`` reads them."""
    from services.audit.reader import hand_records
    from services.runtime.embedded import EmbeddedLog
    from services.runtime.topics import TOPICS
    from services.simulate import simulate
    from services.table.service import TableService

    log = EmbeddedLog(tempfile.mkdtemp(prefix="mp-audit-bench-"))
    await log.start()
    await log.create_topics(TOPICS)
    stop = asyncio.Event()
    service = TableService(log)
    task = asyncio.create_task(service.run(stop))
    try:
        await service.ready.wait()
        await simulate(log, hands=n, tables=50)
    finally:
        stop.set()
        await task
    hands = await hand_records(log)
    await log.close()
    return list(hands.values())


def bench_command(n: int) -> Figures:
    """``mahjong-planet audit --processes 2`` on bot-played hands, reading the log untimed as
    the command does."""
    records = asyncio.run(_played_hands(n))
    assert audit_encoded_hands(records, processes=1).passed == len(records)
    return {
        "audit_command_hands_per_s": round(
            _rate(lambda: audit_encoded_hands(records, processes=2).passed)
        ),
        "audit_command_hands_per_s_one_process": round(
            _rate(lambda: audit_encoded_hands(records, processes=1).passed)
        ),
        "audit_command_hands": len(records),
        "audit_command_events_per_hand": round(sum(map(len, records)) / len(records), 1),
    }


def run_all(n: int = 2000) -> Figures:
    return bench_command(n) | bench_audit(sample_hands(n))


if __name__ == "__main__":
    for name, value in run_all().items():
        print(f"{name:<40} {value:>12,}")
