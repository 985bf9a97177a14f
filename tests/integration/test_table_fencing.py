"""A paused table member that wakes up never fences its partitions' new owner (issue 17,
defect 5), on a real Kafka broker.

The member is SIGSTOP'd in the middle of play; a second instance takes its partitions over
when its session expires; then it is SIGCONT'd. Its open transactions fail with
``ProducerFenced``, as they must. It then gives those partitions back and rejoins the
group: it never initialises their transactional ids again itself, so the new owner keeps
committing (not one failed transaction), nothing is written twice and the audit passes.

It runs on a broker of its own (``deploy/kafka/kafka.sh`` on ``FENCING_KAFKA_PORT``, default
29392), started fresh and stopped afterwards: the test needs to be the only table-service
group member, and members of other tests on the shared broker would take partitions.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from schemas import events as ev
from services.audit import audit_hands
from services.runtime.kafka import KafkaLog
from services.runtime.ops import scrape
from services.runtime.topics import TABLE_COMMANDS
from services.simulate import simulate
from tests.service.logs import assert_exactly_once, hand_logs, started

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]
ROOT = Path(__file__).resolve().parents[2]
GROUP = "table-service"
KAFKA_SH = ROOT / "deploy" / "kafka" / "kafka.sh"


@pytest.fixture(scope="module")
def own_broker() -> Iterator[str]:
    """A fresh broker of this module's own, stopped (and its data removed) afterwards."""
    port = int(os.environ.get("FENCING_KAFKA_PORT", "29392"))
    run_dir = Path(f"/tmp/mahjong-planet-kafka-{port}")
    base = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_")}
    env = {**base, "KAFKA_PORT": str(port), "KAFKA_RUN_DIR": str(run_dir)}

    def script(action: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(KAFKA_SH), action],
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    if script("status").returncode == 0:
        pytest.fail(f"a broker already runs on port {port}: set FENCING_KAFKA_PORT")
    up = script("up", KAFKA_FRESH="1")
    if up.returncode != 0:
        pytest.fail(f"kafka.sh up failed:\n{up.stderr[-2000:]}")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        script("down")
        subprocess.run(["rm", "-rf", str(run_dir)], check=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Member:
    """``mahjong-planet table`` as its own process, with its metrics port and log file."""

    def __init__(self, bootstrap: str, log_file: Path) -> None:
        self.port = _free_port()
        self.log_file = log_file
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "services.cli",
                "table",
                "--kafka",
                bootstrap,
                *("--group", GROUP, "--metrics-port", str(self.port)),
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=log_file.open("wb"),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def partitions(self) -> list[int]:
        try:
            r = httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=2)
        except httpx.HTTPError:
            return []
        return list(r.json().get("partitions", [])) if r.status_code == 200 else []

    def transactions(self, outcome: str) -> float:
        text = httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=5).text
        return sum(
            v
            for name, labels, v in scrape(text)
            if name == "mahjong_table_transactions_total" and labels.get("outcome") == outcome
        )

    def log_lines(self) -> list[dict[str, object]]:
        out = []
        for line in self.log_file.read_text(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append({"msg": line})
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


async def _until(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(check):  # type: ignore[arg-type]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.5)


def test_a_woken_zombie_member_never_fences_the_new_owner(own_broker: str, tmp_path: Path) -> None:
    kafka_bootstrap = own_broker

    async def go() -> None:
        async with started(KafkaLog(kafka_bootstrap)) as log:
            partitions = list(range(await log.partition_count(TABLE_COMMANDS)))
            zombie = Member(kafka_bootstrap, tmp_path / "zombie.log")
            owner: Member | None = None
            try:
                await _until(lambda: zombie.partitions() == partitions, 90, "the first member")
                play = asyncio.create_task(simulate(log, hands=48, tables=12, deadline_s=400))
                # Mid-play: it commits, has transactions open and batches fetched.
                await _until(lambda: zombie.transactions("committed") >= 20, 120, "play")
                zombie.proc.send_signal(signal.SIGSTOP)
                owner = Member(kafka_bootstrap, tmp_path / "owner.log")
                new = owner
                # The paused member's session expires (10 s): the new one holds everything.
                await _until(lambda: new.partitions() == partitions, 120, "the takeover")
                await asyncio.sleep(3)  # the new owner commits a while alone
                zombie.proc.send_signal(signal.SIGCONT)
                result = await play
                committed = await asyncio.to_thread(owner.transactions, "committed")
                failed = await asyncio.to_thread(owner.transactions, "failed")
                woken_failed = await asyncio.to_thread(zombie.transactions, "failed")
            finally:
                for member in (zombie, owner):
                    if member is not None:
                        member.stop()
            hands = {
                k: v
                for k, v in (await hand_logs(log)).items()
                if k[0].startswith(f"sim-{result.run_id}")
            }
        owner_log = owner.log_lines()
        fenced = [x for x in owner_log if "Fenced" in str(x)]
        assert failed == 0 and not fenced, (failed, fenced[:3])  # the new owner never fenced
        assert committed > 0
        print(f"woken member: {woken_failed:.0f} failed transactions (fenced, given back)")
        assert result.hands == 48
        assert_exactly_once(hands)
        finished = [v for v in hands.values() if isinstance(v[-1], ev.HandEnded)]
        assert len(finished) == 48
        summary = audit_hands(finished)
        assert summary.failed == 0, summary.problems[:3]

    asyncio.run(go())
