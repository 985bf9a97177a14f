"""The analysis service's reviewer on a real Kafka broker: every request reviewed once, with
its review and the request's offset in one transaction, through ``kill -9`` of its process
in the middle of reviews (the finished-hands side is the same code as on the embedded log,
tests/service/test_analysis_embedded.py; here the test sends the requests itself, so that
the hands other tests left in table.events are not reviewed)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest

from schemas import analysis as an
from services.runtime.kafka import KafkaLog
from services.runtime.log import Outgoing, read_through
from services.runtime.topics import ANALYSIS_PARTITIONS, ANALYSIS_REQUESTS, ANALYSIS_RESULTS
from tests.integration.test_table_kafka import kafka
from tests.service.analysis_support import hand, write_hands

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]
ROOT = Path(__file__).resolve().parents[2]


async def _results(log: KafkaLog, hand_ids: set[str]) -> Counter[str]:
    """How many reviews of each of these hands are on analysis.results (compaction runs
    lazily and never on the active segment: a doubled review would still be there)."""
    found: Counter[str] = Counter()
    for p in range(ANALYSIS_PARTITIONS):
        async for r in read_through(log, ANALYSIS_RESULTS, p, 0):
            if r.key in hand_ids:
                assert an.decode_review(r.value).hand_id == r.key
                found[r.key] += 1
    return found


def test_kill_9_of_the_reviewer_on_kafka_loses_and_doubles_no_review(
    kafka_bootstrap: str,
) -> None:
    run = uuid.uuid4().hex[:6]
    group = f"analysis-{run}"
    hands = [hand(40 + n, table=f"a-{run}-{n}") for n in range(8)]
    hand_ids = {events[0].hand_id for events in hands}

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.service.analysis_support",
                "--kafka",
                kafka_bootstrap,
                group,
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    async def go() -> None:
        lifetimes = random.Random(11)
        kills = 0
        async with kafka(kafka_bootstrap) as log:
            await write_hands(log, hands)
            requests = [
                an.ReviewRequest(
                    request_id=f"r-{e[0].hand_id}",
                    hand_id=e[0].hand_id,
                    table_id=e[0].table_id,
                    seats=[0, 1, 2, 3],
                )
                for e in hands
            ]
            await log.produce(
                [Outgoing(ANALYSIS_REQUESTS, q.hand_id, an.encode(q)) for q in requests]
            )
            proc = start()
            try:
                async with asyncio.timeout(300):
                    while len(await _results(log, hand_ids)) < len(hand_ids):
                        await asyncio.sleep(lifetimes.uniform(4.0, 8.0))
                        if len(await _results(log, hand_ids)) < len(hand_ids):
                            proc.send_signal(signal.SIGKILL)
                            proc.wait()
                            kills += 1
                            proc = start()
                await asyncio.sleep(3.0)
                found = await _results(log, hand_ids)
            finally:
                proc.terminate()
                proc.wait(timeout=60)
        assert found == dict.fromkeys(hand_ids, 1)
        assert kills >= 1

    asyncio.run(go())
