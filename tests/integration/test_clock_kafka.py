"""The clock service on a real Kafka broker, in real time: silent bullet tables finish by
timeouts alone, through a ``kill -9`` of the clock service mid-hand."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from schemas import commands as cmd
from schemas import events as ev
from schemas.table import CommandEnvelope, StartHand, decode_command, encode
from services.audit import audit_hands
from services.clock.service import timeout_id
from services.runtime.log import Outgoing
from services.runtime.topics import TABLE_COMMANDS
from tests.integration.test_table_kafka import GROUP, kafka, service
from tests.service.logs import assert_exactly_once, hand_logs, records

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]
ROOT = Path(__file__).resolve().parents[2]


def _clock_process(bootstrap: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", "clock", "--kafka", bootstrap],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def test_silent_bullet_tables_finish_by_timeouts_alone_through_a_clock_kill_9(
    kafka_bootstrap: str,
) -> None:
    run = uuid.uuid4().hex[:8]
    tables = [f"silent-{run}-{i}" for i in range(2)]

    async def go() -> None:
        async with kafka(kafka_bootstrap) as log, service(log, GROUP):
            clock = _clock_process(kafka_bootstrap)
            try:
                await log.produce(
                    [
                        Outgoing(
                            TABLE_COMMANDS,
                            t,
                            encode(
                                CommandEnvelope(
                                    command=StartHand(
                                        table_id=t,
                                        players=["a", "b", "c", "d"],
                                        clock="bullet",
                                        rated=True,
                                        command_id=f"start-{t}",
                                    )
                                )
                            ),
                        )
                        for t in tables
                    ]
                )
                began = time.monotonic()
                killed = False
                while True:
                    hands = {k: v for k, v in (await hand_logs(log)).items() if k[0] in tables}
                    ended = [v for v in hands.values() if isinstance(v[-1], ev.HandEnded)]
                    if len(ended) == len(tables):
                        break
                    elapsed = time.monotonic() - began
                    assert elapsed < 600, "the silent hands did not finish"
                    if not killed and elapsed > 45:  # in the play phase: turns of 2 s
                        clock.send_signal(signal.SIGKILL)
                        clock.wait()
                        await asyncio.sleep(3)  # deadlines pass while no clock runs
                        clock = _clock_process(kafka_bootstrap)
                        killed = True
                    await asyncio.sleep(1.0)
            finally:
                clock.terminate()
                clock.wait(timeout=60)
            sent: Counter[str] = Counter()
            for r in await records(log, TABLE_COMMANDS):
                if r.key in tables:
                    c = decode_command(r.value)
                    if isinstance(c, cmd.Timeout):
                        sent[c.command_id] += 1
        assert killed
        assert_exactly_once(hands)
        summary = audit_hands(list(hands.values()))
        assert summary.failed == 0, summary.problems[:3]
        for events in hands.values():
            decided = [
                e
                for e in events[6:]
                if e.command_id and not isinstance(e, (ev.ClockStarted, ev.ClockStopped))
            ]
            # Nobody spoke: every decision in the hand is the clock's.
            assert decided and all(e.command_id.startswith("timeout:") for e in decided)
        # Each decision timed out once. A timeout the table service has not applied within
        # RETRY_MS is sent again with the same id (it may be recovering its partitions);
        # the log shows the effect once, and the restart sent nothing twice at once.
        stops = Counter(
            (e.hand_id, e.decision_seq, e.seat)
            for events in hands.values()
            for e in events
            if isinstance(e, ev.ClockStopped) and e.timeout
        )
        assert stops and set(stops.values()) == {1}
        assert sent and all(timeout_id(h, d, s) in sent for h, d, s in stops), (
            "a timeout took effect that the clock never sent"
        )

    asyncio.run(go())
