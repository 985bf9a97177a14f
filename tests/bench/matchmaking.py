"""Quick Play time to seat on Kafka: players arrive at a steady rate with ratings drawn from
N(1500, 150) and wait until seated. Time to seat is ``table_started.at_ms`` minus the
player's ``queue_joined.at_ms``, both stamped by the matchmaking service."""

from __future__ import annotations

import asyncio
import random
import statistics
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import msgspec

from schemas import lobby as lb
from services.runtime.kafka import KafkaLog
from services.runtime.log import Outgoing, read_through
from services.runtime.topics import LOBBY_EVENTS, MATCH_REQUESTS, TOPICS
from tests.bench.service import _broker, _percentile

ROOT = Path(__file__).resolve().parents[2]
RATE_PER_S = 10
SECONDS = 40


async def _run(broker: str) -> dict[str, Any]:
    log = KafkaLog(broker)
    await log.start()
    await log.create_topics(TOPICS)
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "matchmaking", "--kafka", broker],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    run = uuid.uuid4().hex[:6]
    rng = random.Random(4)
    start = await log.end_offset(LOBBY_EVENTS, 0)
    players: list[str] = []
    try:
        await asyncio.sleep(5)  # join the group, recover the lobby
        for i in range(RATE_PER_S * SECONDS):
            player = f"bench-{run}-{i}"
            players.append(player)
            request = lb.JoinQueue(
                player=player, request_id=f"q-{player}", rating=rng.gauss(1500, 150)
            )
            body = msgspec.json.encode(lb.RequestEnvelope(request=request))
            await log.produce([Outgoing(MATCH_REQUESTS, player, body)])
            await asyncio.sleep(1 / RATE_PER_S)
        await asyncio.sleep(60)  # the last arrivals' window widens; most are seated by then
        joined: dict[str, int] = {}
        seated: dict[str, int] = {}
        async for r in read_through(log, LOBBY_EVENTS, 0, start):
            e = lb.decode_lobby_event(r.value)
            if isinstance(e, lb.QueueJoined) and e.player.startswith(f"bench-{run}"):
                joined[e.player] = e.at_ms
            elif isinstance(e, lb.TableStarted):
                for p in e.players:
                    if p in joined:
                        seated[p] = e.at_ms - joined[p]
        left = [lb.LeaveQueue(player=p, request_id=f"l-{p}") for p in players if p not in seated]
        await log.produce(
            [
                Outgoing(
                    MATCH_REQUESTS, r.player, msgspec.json.encode(lb.RequestEnvelope(request=r))
                )
                for r in left
            ]
        )
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        await log.close()
    waits = [float(w) for w in seated.values()]
    return {
        "quick_play": {
            "arrivals_per_s": RATE_PER_S,
            "players": len(players),
            "seated": len(seated),
            "p50_s": round(statistics.median(waits) / 1000, 2),
            "p90_s": round(_percentile(waits, 0.90) / 1000, 2),
            "p99_s": round(_percentile(waits, 0.99) / 1000, 2),
            "max_s": round(max(waits) / 1000, 2),
        }
    }


def run_all() -> dict[str, Any]:
    return asyncio.run(_run(_broker()))


if __name__ == "__main__":
    print(run_all())
