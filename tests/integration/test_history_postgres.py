"""The hand-history projection on a real Kafka broker and a real PostgreSQL database: hands
that end while PostgreSQL restarts, a kill -9 of the projection mid-stream, and a rebuild
from the log equal to the live rows (issue 17, defect 3) and to every player's live figures
(issue 20); the figures' columns of migration 2 on PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from schemas import events as ev
from services.history.figures import figures
from services.history.migrations import POSTGRES
from services.history.postgres import PostgresHistoryStore
from services.history.service import HistoryService, fold_log, rebuild
from services.runtime.kafka import KafkaLog
from services.simulate import simulate
from services.table.service import TableService
from tests.cluster_support import free_ports
from tests.service.history_pages import check_pages
from tests.service.history_store_checks import OLD_COLUMNS, check_figures_columns, old_values
from tests.service.logs import hand_logs

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]
ROOT = Path(__file__).resolve().parents[2]
POSTGRES_SH = ROOT / "deploy" / "postgres" / "postgres.sh"
GROUP = "table-service"


def _pg(action: str, port: int) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG_")}
    env |= {"PG_PORT": str(port), "PG_DATA_DIR": f"/tmp/mahjong-planet-pg-{port}"}
    r = subprocess.run(
        ["bash", str(POSTGRES_SH), action],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert action != "up" or r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""


@pytest.fixture
def own_postgres() -> Iterator[tuple[str, int]]:
    """A PostgreSQL of this test's own, on a free port: this one may be restarted."""
    (port,) = free_ports(1)
    dsn = _pg("up", port)
    try:
        yield dsn, port
    finally:
        _pg("down", port)
        shutil.rmtree(f"/tmp/mahjong-planet-pg-{port}", ignore_errors=True)


@pytest.fixture
def schema(postgres_dsn: str) -> Iterator[str]:
    name = f"history_test_{uuid.uuid4().hex[:8]}"
    yield name

    async def drop() -> None:
        conn = await asyncpg.connect(postgres_dsn)
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        finally:
            await conn.close()

    asyncio.run(drop())


def test_a_players_hands_on_postgres_by_kind_in_pages_with_their_count(
    postgres_dsn: str, schema: str
) -> None:
    async def go() -> None:
        store = PostgresHistoryStore(postgres_dsn, schema)
        await store.start()
        try:
            await check_pages(store)
        finally:
            await store.close()

    asyncio.run(go())


async def _ended(log: KafkaLog, prefix: str) -> set[str]:
    hands = await hand_logs(log)
    return {
        events[-1].hand_id
        for (table_id, _), events in hands.items()
        if table_id.startswith(prefix) and isinstance(events[-1], ev.HandEnded)
    }


async def _rows(dsn: str, schema: str, prefix: str) -> list[tuple[str, int]]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            f'SELECT hand_id, seat FROM "{schema}".hands WHERE table_id LIKE $1', prefix + "%"
        )
    finally:
        await conn.close()
    return [(r[0], r[1]) for r in rows]


async def _until_all(dsn: str, schema: str, prefix: str, want: int, timeout_s: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        with contextlib.suppress(OSError, asyncpg.PostgresError):
            if len(await _rows(dsn, schema, prefix)) >= want:
                return
        await asyncio.sleep(0.5)


def _assert_each_hand_once(rows: list[tuple[str, int]], ended: set[str]) -> None:
    assert len(rows) == len(set(rows)), "a row written twice"
    per_hand = Counter(h for h, _ in rows)
    assert set(per_hand) == ended, f"missing {sorted(ended - set(per_hand))[:5]}"
    assert set(per_hand.values()) == {4}


def test_hands_ending_while_postgres_restarts_all_appear_once(
    kafka_bootstrap: str, own_postgres: tuple[str, int]
) -> None:
    dsn, port = own_postgres

    async def go() -> None:
        log = KafkaLog(kafka_bootstrap)
        await log.start()
        stop = asyncio.Event()
        table = TableService(log, group=GROUP)
        history = HistoryService(log, PostgresHistoryStore(dsn), retry_s=0.2, max_retry_s=1.0)
        tasks = [asyncio.create_task(s.run(stop)) for s in (table, history)]
        try:
            await asyncio.wait_for(table.ready.wait(), 60)
            await asyncio.wait_for(history.ready.wait(), 300)  # caught up with the log so far
            seen_not_ready = False

            async def restart() -> None:
                nonlocal seen_not_ready
                while history.hands < 3:
                    await asyncio.sleep(0.1)
                await asyncio.to_thread(_pg, "down", port)
                before = history.hands
                for _ in range(40):  # hands keep ending while the database is away
                    await asyncio.sleep(0.1)
                    seen_not_ready |= not history.ready.is_set()
                assert history.hands == before
                await asyncio.to_thread(_pg, "up", port)

            restarter = asyncio.create_task(restart())
            result = await simulate(log, hands=30, tables=6, deadline_s=300, think_s=0.01)
            await restarter
            prefix = f"sim-{result.run_id}"
            ended = await _ended(log, prefix)
            assert len(ended) == 30
            await _until_all(dsn, "history", prefix, 4 * len(ended), 120)
            assert seen_not_ready, "the projection stayed ready while the database was down"
            assert history.failures >= 1
            _assert_each_hand_once(await _rows(dsn, "history", prefix), ended)
            report = await rebuild(log, history.store)
            assert report.ok, report.summary()
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
            await log.close()

    asyncio.run(go())


def _projection(bootstrap: str, dsn: str, schema: str, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "services.cli", "history", "--kafka", bootstrap),
            *("--postgres", dsn, "--pg-schema", schema, "--log-format", "text"),
            *("--metrics-port", str(port)),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


async def _until_ready(port: int, timeout_s: float) -> None:
    """Until the projection's ``/readyz`` answers 200: it has caught up with the log."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        with contextlib.suppress(OSError, IndexError, ValueError):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
            await writer.drain()
            head = await reader.read()
            writer.close()
            if int(head.split()[1]) == 200:
                return
        await asyncio.sleep(0.5)
    raise AssertionError(f"the projection was not ready within {timeout_s} s")


def test_kill_9_of_the_projection_mid_stream_loses_and_doubles_nothing(
    kafka_bootstrap: str, postgres_dsn: str, schema: str
) -> None:
    async def go() -> None:
        log = KafkaLog(kafka_bootstrap)
        await log.start()
        stop = asyncio.Event()
        table = TableService(log, group=GROUP)
        task = asyncio.create_task(table.run(stop))
        (port,) = free_ports(1)
        proc = _projection(kafka_bootstrap, postgres_dsn, schema, port)
        kills = 0
        done = asyncio.Event()

        async def killer() -> None:
            nonlocal proc, kills
            while not done.is_set() or kills < 3:
                await asyncio.sleep(2.5)
                proc.send_signal(signal.SIGKILL)  # mid-stream, possibly mid-transaction
                await asyncio.to_thread(proc.wait)
                kills += 1
                proc = _projection(kafka_bootstrap, postgres_dsn, schema, port)

        try:
            await asyncio.wait_for(table.ready.wait(), 60)
            killing = asyncio.create_task(killer())
            result = await simulate(log, hands=24, tables=6, deadline_s=300, think_s=0.01)
            done.set()
            await killing
            prefix = f"sim-{result.run_id}"
            ended = await _ended(log, prefix)
            assert len(ended) == 24 and kills >= 3
            await _until_all(postgres_dsn, schema, prefix, 4 * len(ended), 300)
            # The last restart may be a moment old: stop the projection once it is up, so
            # the exit code tells of its graceful stop, not of a signal during its start.
            await _until_ready(port, 120)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(proc.wait, 60) == 0
            _assert_each_hand_once(await _rows(postgres_dsn, schema, prefix), ended)
            await _assert_live_figures_equal_the_logs(log, postgres_dsn, schema, prefix)
        finally:
            stop.set()
            await task
            await log.close()
            if proc.poll() is None:
                proc.kill()
        rebuilt = subprocess.run(
            [
                *(sys.executable, "-m", "services.cli", "history", "rebuild"),
                *("--kafka", kafka_bootstrap, "--postgres", postgres_dsn, "--pg-schema", schema),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
        assert "IDENTICAL" in rebuilt.stdout

    asyncio.run(go())


async def _assert_live_figures_equal_the_logs(
    log: KafkaLog, dsn: str, schema: str, prefix: str
) -> None:
    """Every player's ``PlayerFigures`` from the live store (its ``figure_rows``) equal the
    figures of the rows folded again from the log up to the live positions."""
    store = PostgresHistoryStore(dsn, schema)
    await store.start()
    try:
        snapshot = await store.snapshot()
        fresh = await fold_log(log, snapshot.positions)
        players = {r.player for r in snapshot.rows if r.table_id.startswith(prefix)}
        assert len(players) >= 4
        totals = {"wins": 0, "deal_ins": 0, "self_drawn": 0, "exhausted": 0}
        for player in sorted(players):
            live = figures(await store.figure_rows(player, player))
            again = figures(r for r in fresh.rows if r.player == player)
            assert live == again, player
            assert live.hands == sum(live.places) > 0
            totals["wins"] += live.wins
            totals["deal_ins"] += live.deal_ins
            totals["self_drawn"] += live.self_drawn
            totals["exhausted"] += live.exhausted_remaining
        # The hands played give the figures something to count, and add up.
        assert totals["wins"] > 0, totals
        assert totals["wins"] == totals["self_drawn"] + totals["deal_ins"], totals
    finally:
        await store.close()


def test_migration_2_on_postgres_keeps_old_rows_and_stores_the_figures_facts(
    postgres_dsn: str, schema: str
) -> None:
    async def go() -> None:
        old = PostgresHistoryStore(postgres_dsn, schema)
        old.migrations = POSTGRES[:1]
        await old.start()
        await old.pool.execute(
            f"INSERT INTO {old.s}.hands ({OLD_COLUMNS}) VALUES "
            f"({', '.join(f'${i + 1}' for i in range(16))})",
            *old_values(),
        )
        await old.close()
        store = PostgresHistoryStore(postgres_dsn, schema)
        await store.start()
        try:
            await check_figures_columns(store)
        finally:
            await store.close()

    asyncio.run(go())
