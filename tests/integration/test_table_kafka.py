"""The table service on a real Kafka broker: exactly once through kill -9, rebalances,
duplicates, stale and malformed commands; and the audit of what it wrote."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from schemas import commands as cmd
from schemas import events as ev
from schemas.table import CommandEnvelope, EventEnvelope, StartHand, encode
from services.audit import audit_hands
from services.rules.hand import replay
from services.runtime.kafka import KafkaLog
from services.runtime.log import Outgoing
from services.runtime.topics import TABLE_COMMANDS, TABLE_EVENTS
from services.simulate import simulate
from services.table.service import TableService
from tests.service.logs import assert_exactly_once, dead_letters, hand_logs, replies, started

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]
ROOT = Path(__file__).resolve().parents[2]
# The production group: offsets carry over from test to test, as they would between deploys.
GROUP = "table-service"


def kafka(bootstrap: str) -> contextlib.AbstractAsyncContextManager[KafkaLog]:
    return started(KafkaLog(bootstrap))


@contextlib.asynccontextmanager
async def service(log: KafkaLog, group: str) -> AsyncIterator[TableService]:
    svc = TableService(log, group=group)
    stop = asyncio.Event()
    task = asyncio.create_task(svc.run(stop))
    await asyncio.wait_for(svc.ready.wait(), 60)
    try:
        yield svc
    finally:
        stop.set()
        await task


def _ours(hands: dict[tuple[str, str], list[ev.Event]], prefix: str) -> dict:
    return {k: v for k, v in hands.items() if k[0].startswith(prefix)}


def _table_process(bootstrap: str, group: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", "table", "--kafka", bootstrap, "--group", group],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def test_full_hands_through_kafka_topics_are_exactly_once_and_audit_clean(
    kafka_bootstrap: str,
) -> None:
    async def go() -> None:
        async with kafka(kafka_bootstrap) as log:
            async with service(log, GROUP):
                result = await simulate(log, hands=24, tables=8, deadline_s=240)
            hands = _ours(await hand_logs(log), f"sim-{result.run_id}")
        assert result.hands == 24 and result.rejections == 0
        mine = {k: v for k, v in hands.items() if isinstance(v[-1], ev.HandEnded)}
        assert len(mine) >= 24
        assert_exactly_once(hands)
        summary = audit_hands(list(mine.values()))
        assert summary.failed == 0, summary.problems[:3]

    asyncio.run(go())


def test_kill_9_mid_hand_then_restart_completes_every_hand_exactly_once(
    kafka_bootstrap: str,
) -> None:
    group = GROUP

    async def go() -> None:
        async with kafka(kafka_bootstrap) as log:
            proc = _table_process(kafka_bootstrap, group)
            kills = 0
            done = asyncio.Event()

            async def killer() -> None:
                nonlocal proc, kills
                while not done.is_set() and kills < 2:
                    await asyncio.sleep(4.0)
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    kills += 1
                    proc = _table_process(kafka_bootstrap, group)

            task = asyncio.create_task(killer())
            try:
                result = await simulate(log, hands=16, tables=8, deadline_s=300)
            finally:
                done.set()
                await task
                proc.terminate()
                proc.wait(timeout=60)
            hands = _ours(await hand_logs(log), f"sim-{result.run_id}")
        assert result.hands == 16 and kills >= 1
        assert_exactly_once(hands)

    asyncio.run(go())


def test_a_second_instance_takes_partitions_over_in_a_rebalance(kafka_bootstrap: str) -> None:
    group = GROUP

    async def go() -> None:
        async with kafka(kafka_bootstrap) as log:
            first = _table_process(kafka_bootstrap, group)
            second: subprocess.Popen[bytes] | None = None

            async def churn() -> None:
                nonlocal second
                await asyncio.sleep(3)
                second = _table_process(kafka_bootstrap, group)  # rebalance: share partitions
                await asyncio.sleep(8)
                first.send_signal(signal.SIGTERM)  # leave cleanly: the second takes all
                first.wait(timeout=60)

            task = asyncio.create_task(churn())
            try:
                result = await simulate(log, hands=20, tables=8, deadline_s=300)
            finally:
                await task
                for proc in (first, second):
                    if proc is not None and proc.poll() is None:
                        proc.terminate()
                        proc.wait(timeout=60)
            hands = _ours(await hand_logs(log), f"sim-{result.run_id}")
        assert result.hands == 20
        assert first.returncode == 0  # SIGTERM: a clean exit
        assert_exactly_once(hands)

    asyncio.run(go())


def test_duplicate_stale_and_malformed_commands_over_kafka(kafka_bootstrap: str) -> None:
    table = f"t-{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        async with kafka(kafka_bootstrap) as log, service(log, GROUP):
            start = StartHand(table_id=table, players=list("abcd"), command_id=f"{table}-s")
            stale = cmd.Pass(seat=1, table_id=table, command_id=f"{table}-x", decision_seq=1)
            await log.produce(
                [
                    Outgoing(TABLE_COMMANDS, table, encode(CommandEnvelope(command=start))),
                    Outgoing(TABLE_COMMANDS, table, encode(CommandEnvelope(command=start))),
                    Outgoing(TABLE_COMMANDS, table, encode(CommandEnvelope(command=stale))),
                    Outgoing(TABLE_COMMANDS, table, b"{broken"),
                ]
            )
            for _ in range(100):
                answers = [r.rejected for r in await replies(log) if r.rejected.table_id == table]
                letters = [d for d in await dead_letters(log) if d.raw == "{broken"]
                if len(answers) >= 2 and letters:
                    break
                await asyncio.sleep(0.2)
            hands = _ours(await hand_logs(log), table)
        assert sorted(a.code for a in answers) == ["duplicate", "stale_decision"]
        assert letters and letters[0].reason
        assert len(hands) == 1 and len(next(iter(hands.values()))) == 6

    asyncio.run(go())


def test_audit_passes_on_a_thousand_hands_and_detects_a_tampered_event(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    async def go() -> dict[tuple[str, str], list[ev.Event]]:
        async with kafka(kafka_bootstrap) as log:
            async with service(log, GROUP):
                result = await simulate(log, hands=1000, tables=60, deadline_s=900)
            assert result.hands == 1000
            return await hand_logs(log)

    hands = asyncio.run(go())
    audit = [sys.executable, "-m", "services.cli", "audit", "--kafka", kafka_bootstrap]
    clean = subprocess.run(audit, cwd=ROOT, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stdout[-2000:]
    audited = int(clean.stdout.split("audited ")[1].split()[0])
    assert audited >= 1000

    # Forge one payment: the log of a copy of a real hand, one of its wins doctored.
    (table, _), events = next(
        (k, v)
        for k, v in hands.items()
        if isinstance(v[-1], ev.HandEnded) and any(isinstance(e, ev.Won) for e in v)
    )
    won = next(e for e in events if isinstance(e, ev.Won))
    forged = [e if e is not won else _doctored(won) for e in events]

    async def tamper() -> None:
        async with kafka(kafka_bootstrap) as log:
            fake_table = f"{table}-forged"
            records = [
                Outgoing(
                    TABLE_EVENTS,
                    fake_table,
                    encode(EventEnvelope(event=_retable(e, fake_table))),
                )
                for e in forged
            ]
            await log.produce(records)

    asyncio.run(tamper())
    tampered = subprocess.run(audit, cwd=ROOT, capture_output=True, text=True)
    assert tampered.returncode == 1
    assert "forged" in tampered.stdout and "MISMATCH" in tampered.stdout


def _doctored(won: ev.Won) -> ev.Won:
    import msgspec

    payments = [msgspec.structs.replace(p, amount=p.amount + 1) for p in won.payments]
    return msgspec.structs.replace(won, payments=payments)


def _retable(e: ev.Event, table: str) -> ev.Event:
    import msgspec

    return msgspec.structs.replace(e, table_id=table)


def test_replayed_state_matches_the_log(kafka_bootstrap: str) -> None:
    async def go() -> None:
        async with kafka(kafka_bootstrap) as log:
            async with service(log, GROUP):
                result = await simulate(log, hands=4, tables=4, deadline_s=120)
            hands = _ours(await hand_logs(log), f"sim-{result.run_id}")
        assert len(hands) == 4
        for events in hands.values():
            assert isinstance(events[-1], ev.HandEnded)
            assert replay(events).scores == events[-1].scores

    asyncio.run(go())


def test_hands_survive_a_broker_restart(kafka_bootstrap: str) -> None:
    """The broker is stopped and started again mid-hand; services reconnect, nothing is lost
    or repeated."""
    script = ROOT / "deploy" / "kafka" / "kafka.sh"
    if subprocess.run(["bash", str(script), "status"], capture_output=True).returncode != 0:
        pytest.fail("this test restarts the broker, so it needs the one deploy/kafka/kafka.sh runs")

    async def go() -> None:
        async with kafka(kafka_bootstrap) as log:
            proc = _table_process(kafka_bootstrap, GROUP)

            async def restart_broker() -> None:
                await asyncio.sleep(6)
                down = await asyncio.create_subprocess_exec("bash", str(script), "down")
                await down.wait()
                await asyncio.sleep(2)
                up = await asyncio.create_subprocess_exec(
                    "bash", str(script), "up", stdout=asyncio.subprocess.DEVNULL
                )
                assert await up.wait() == 0

            task = asyncio.create_task(restart_broker())
            try:
                result = await simulate(log, hands=12, tables=6, deadline_s=400)
            finally:
                await task
                proc.terminate()
                proc.wait(timeout=60)
            hands = _ours(await hand_logs(log), f"sim-{result.run_id}")
        assert result.hands == 12
        assert_exactly_once(hands)
        assert all(isinstance(v[-1], ev.HandEnded) for v in hands.values())

    asyncio.run(go())
