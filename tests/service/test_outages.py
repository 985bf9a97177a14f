"""While the broker or the database is away, a service waits inside the process, not ready,
instead of exiting for its supervisor to restart it (issue 17); the Kafka client's repeated
error lines are held back meanwhile."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from services.matchmaking.projection import LobbyProjection
from services.rating.store import DSN_ENV
from services.runtime.backoff import Quieter
from services.runtime.embedded import EmbeddedLog
from services.runtime.topics import TOPICS

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_lobby_projector_waits_not_ready_while_postgresql_is_away(tmp_path: Path) -> None:
    nobody = f"postgresql://mahjong:mahjong@127.0.0.1:{_free_port()}/mahjong"

    async def go() -> None:
        log = EmbeddedLog(tmp_path)
        await log.start()
        await log.create_topics(TOPICS)
        projection = LobbyProjection(log, nobody)
        stop = asyncio.Event()
        task = asyncio.create_task(projection.run(stop))
        try:
            await asyncio.sleep(2.0)
            assert not task.done(), task.exception()
            assert not projection.ready.is_set()
        finally:
            stop.set()
            await asyncio.wait_for(task, 15)
            await log.close()

    asyncio.run(go())


@pytest.mark.parametrize(
    "command",
    [["bots"], ["rating", "--postgres", "{nobody}"], ["history", "--postgres", "{nobody}"]],
    ids=["bots", "rating", "history"],
)
def test_a_service_started_while_the_broker_is_away_waits_not_ready(
    tmp_path: Path, command: list[str]
) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_BOOTSTRAP_SERVERS", *DSN_ENV)}
    nobody = f"postgresql://mahjong:mahjong@127.0.0.1:{_free_port()}/mahjong"
    argv = [part.format(nobody=nobody) for part in command]
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli", *argv, "--kafka", f"127.0.0.1:{_free_port()}",
         "--metrics-port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=(tmp_path / "bots.log").open("wb"),
    )  # fmt: skip
    try:
        ready, alive = None, None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code
                alive = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code
                break
            except httpx.HTTPError:
                time.sleep(0.3)
        time.sleep(3.0)  # several attempts to connect later: still waiting, still alive
        assert proc.poll() is None, (tmp_path / "bots.log").read_text()[-2000:]
        assert (ready, alive) == (503, 200)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = (tmp_path / "bots.log").read_text()
    assert "retrying with backoff" in said


def test_repeated_kafka_client_lines_are_held_back_and_counted() -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    handler.addFilter(Quieter(every_s=60))
    client = logging.getLogger("aiokafka.test-quieter")
    ours = logging.getLogger("mahjong.test-quieter")
    for lg in (client, ours):
        lg.addHandler(handler)
        lg.propagate = False
    try:
        for _ in range(100):
            client.error("Unable connect to node with id %s", 1)
            ours.error("a line of our own")
        client.warning("another line")
    finally:
        for lg in (client, ours):
            lg.removeHandler(handler)
    from_client = [r.getMessage() for r in records if r.name.startswith("aiokafka")]
    assert from_client == ["Unable connect to node with id 1", "another line"]
    assert sum(1 for r in records if r.name.startswith("mahjong")) == 100


def test_the_gateway_started_while_the_broker_and_database_are_away_waits_not_ready(
    tmp_path: Path,
) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_BOOTSTRAP_SERVERS"}
    env["MAHJONG_POSTGRES_DSN"] = f"postgresql://mahjong:mahjong@127.0.0.1:{_free_port()}/mahjong"
    env["PYTHONPATH"] = str(ROOT)  # run from an empty folder: nothing lands in the checkout
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "gateway", "--kafka", f"127.0.0.1:{_free_port()}",
         "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=(tmp_path / "gw.log").open("wb"),
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        answers: tuple[int, int, int] | None = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                answers = (
                    httpx.get(f"{base}/healthz", timeout=2).status_code,
                    httpx.get(f"{base}/readyz", timeout=2).status_code,
                    httpx.get(f"{base}/api/lobby", timeout=2).status_code,
                )
                break
            except httpx.HTTPError:
                time.sleep(0.3)
        time.sleep(3.0)  # several attempts later: still waiting, still alive, still refusing
        assert proc.poll() is None, (tmp_path / "gw.log").read_text()[-2000:]
        assert answers == (200, 503, 503)
        refused = httpx.post(f"{base}/api/auth/guest", timeout=2)
        assert refused.status_code == 503 and refused.json()["code"] == "starting"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "retrying with backoff" in (tmp_path / "gw.log").read_text()
