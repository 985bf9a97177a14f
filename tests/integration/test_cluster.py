"""The distributed mode end to end: every service its own process (``deploy/cluster.py``) on
the real Kafka broker and PostgreSQL database of the fixtures.

WebSocket clients play through the gateway beside the computer players of the bots
service: a Quick Play table of four guests (rated, so the rating service applies its
results), a timed table of one guest and three computers where the guest first lets the
clock time them out, and after every service was stopped with SIGTERM and started again,
one more table. Then ``mahjong-planet audit`` passes on those hands, each service's
``/metrics`` shows its counters moved, and every SIGTERM ended its service with exit code 0
after it left its consumer group.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from services.runtime.kafka import KafkaLog
from services.runtime.ops import scrape
from services.runtime.topics import LOBBY_EVENTS
from tests.cluster_support import cluster_module, free_ports
from tests.service.gateway_harness import Socket, User, connect, play_with_bot

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]

ROOT = Path(__file__).resolve().parents[2]
STOP_TIMEOUT_S = 30.0
READY_TIMEOUT_S = 120.0
CONSUMER_GROUP_SERVICES = ("table", "clock", "bots", "matchmaking")


def total(text: str, name: str, **labels: str) -> float:
    """The sum of a metric's samples whose labels include ``labels``."""
    return sum(
        value
        for sample, have, value in scrape(text)
        if sample == name and all(have.get(k) == v for k, v in labels.items())
    )


# --- the players -------------------------------------------------------------------------------


class Players:
    """Guests talking to the gateway over REST and WebSockets, like the web client."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ws_url = url.replace("http://", "ws://") + "/ws"
        self.http = httpx.AsyncClient(base_url=url, timeout=30)

    async def guest(self) -> User:
        r = await self.http.post("/api/auth/guest")
        assert r.status_code == 201, r.text
        body = r.json()
        return User(body["token"], body["account"]["id"], body["account"]["name"])

    async def computer_table(self, user: User, clock: str | None) -> str:
        """A private one-hand table of ``user`` and three instant computers, started."""
        options = {
            "computers": "normal",
            "pace": "instant",
            "clock": clock,
            "public": False,
        }
        r = await self.http.post("/api/tables", json={"options": options}, headers=user.auth)
        assert r.status_code == 201, r.text
        table_id: str = r.json()["table_id"]
        r = await self.http.post(f"/api/tables/{table_id}/fill", headers=user.auth)
        assert r.status_code == 200 and r.json()["started"], r.text
        return table_id

    async def quick_play(self, users: list[User]) -> str:
        """Four new guests (all 1500) in the Quick Play queue: matched into one table."""
        for u in users:
            r = await self.http.post("/api/quickplay", json={}, headers=u.auth)
            assert r.status_code == 200, r.text
        deadline = time.monotonic() + 30
        tables: set[str | None] = set()
        while time.monotonic() < deadline:
            tables = set()
            for u in users:
                r = await self.http.get("/api/me", headers=u.auth)
                tables.add(r.json().get("table_id"))
            if len(tables) == 1 and None not in tables:
                return str(tables.pop())
            await asyncio.sleep(0.3)
        raise AssertionError(f"Quick Play did not seat the four together: {tables}")

    async def close(self) -> None:
        await self.http.aclose()


def _timed_out(s: Socket) -> bool:
    return any(e.get("type") == "clock_stopped" and e.get("timeout") for e in s.events.values())


def _clock_running(s: Socket) -> bool:
    """The current hand's clocks have started (a hand dealt right after another starts its
    clocks after a pause)."""
    if s.hand_id is None or s.hand_id in s.ended:
        return False
    starts = [e["at_ms"] for e in s.events.values() if e.get("type") == "clock_started"]
    return bool(starts) and time.time() * 1000 >= min(starts) + 200


async def play_timed_hands(s: Socket, hands: int) -> None:
    """Play ``hands`` hands of a timed table, each from when its clocks start.

    Answering during the pause before a following hand's clocks start trips the audit
    (``clock_started`` re-derived at the pause's end): an open defect of multi-hand timed
    tables, reported with this work; people do not answer that fast anyway.
    """
    for n in range(1, hands + 1):
        deadline = time.monotonic() + 60
        while not _clock_running(s):  # polled: the clock starts with no frame to wake us
            assert not s.closed and time.monotonic() < deadline, s.frames[-3:]
            await asyncio.sleep(0.1)
        await play_with_bot(s, hands=n)


async def first_round(url: str) -> list[str]:
    """Quick Play (4 guests, one rated hand: every game is one hand) and a timed computer
    table whose guest waits for a timeout before playing; the table ids."""
    players = Players(url)
    try:
        quick = [await players.guest() for _ in range(4)]
        loner = await players.guest()
        timed = await players.computer_table(loner, clock="bullet")
        quick_table = await players.quick_play(quick)
        sockets = [await connect(players.ws_url, u, quick_table) for u in quick]
        lone = await connect(players.ws_url, loner, timed)

        async def wait_then_play() -> None:
            await lone.until(_timed_out, 60)  # the clock service's timeout, nobody else's
            await play_with_bot(lone, hands=1)

        await asyncio.wait_for(
            asyncio.gather(wait_then_play(), *(play_timed_hands(s, 1) for s in sockets)),
            150,
        )
        for s in [*sockets, lone]:
            await s.close()
        return [quick_table, timed]
    finally:
        await players.close()


async def another_table(url: str) -> str:
    """One more hand, after every service was restarted."""
    players = Players(url)
    try:
        user = await players.guest()
        table_id = await players.computer_table(user, clock=None)
        s = await connect(players.ws_url, user, table_id)
        await asyncio.wait_for(play_with_bot(s, hands=1), 90)
        await s.close()
        return table_id
    finally:
        await players.close()


# --- setup ---------------------------------------------------------------------------------------


async def _projector_in_step(kafka: str, dsn: str) -> bool:
    """Whether the lobby projection's stored position is within lobby.events (a database
    kept from an older broker is ahead of it, and then nothing can be projected)."""
    conn = await asyncpg.connect(dsn)
    try:
        exists = await conn.fetchval("SELECT to_regclass('lobby.position') IS NOT NULL")
        stored = (
            await conn.fetchval(
                "SELECT next_offset FROM lobby.position WHERE topic = $1", LOBBY_EVENTS
            )
            if exists
            else 0
        )
    finally:
        await conn.close()
    log = KafkaLog(kafka)
    await log.start()
    try:
        end = await log.end_offset(LOBBY_EVENTS, 0)
    finally:
        await log.close()
    return int(stored or 0) <= end


async def _drop_schema(dsn: str, schema: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for name in (schema, f"{schema}_recompute"):
            await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    finally:
        await conn.close()


@pytest.fixture
def cluster(kafka_bootstrap: str, postgres_dsn: str, tmp_path: Path) -> Iterator[Any]:
    mod = cluster_module()
    schema = f"rating_cluster_{uuid.uuid4().hex[:8]}"  # its position starts at offset 0
    names = list(mod.SERVICES)
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    cl = mod.Cluster(
        root=tmp_path / "cluster",
        kafka=kafka_bootstrap,
        postgres=postgres_dsn,
        ports=ports,
        extra_args={"bots": ["--pace", "instant"], "rating": ["--pg-schema", schema]},
    )
    # The hand history's positions belong to the broker they were read from: a fresh test
    # broker with an old database would (rightly) stop the projection. Start it empty.
    asyncio.run(_drop_schema(postgres_dsn, "history"))
    cl.create_topics()
    cl.start_all()
    try:
        yield cl
    finally:
        codes = cl.stop_all(STOP_TIMEOUT_S)
        asyncio.run(_drop_schema(postgres_dsn, schema))
        for name in cl.names():
            print(f"--- {name} (exit {codes.get(name)}): {cl.log_file(name)}")


# --- the test ------------------------------------------------------------------------------------


def test_every_service_in_its_own_process_plays_audits_measures_and_restarts(
    cluster: Any, kafka_bootstrap: str, postgres_dsn: str
) -> None:
    began = time.monotonic()
    projector_can_move = asyncio.run(_projector_in_step(kafka_bootstrap, postgres_dsn))
    cluster.wait_ready(timeout=READY_TIMEOUT_S)
    for name in cluster.names():
        status, body = _get(cluster.url(name, "/healthz"))
        assert status == 200, (name, body)
    gateway = cluster.instance("gateway").base

    # 1. Guests and computers play through the gateway; the clock times a guest out.
    tables = asyncio.run(first_round(gateway))
    scraped = {name: cluster.metrics(name) for name in cluster.names()}
    _assert_counters_moved(scraped, projector_can_move)

    # 2. SIGTERM each service: exit code 0, its group left; started again, it is ready.
    for name in cluster.names():
        code = cluster.stop(name, STOP_TIMEOUT_S)
        assert code == 0, f"{name} exited with {code}:\n{_tail(cluster.log_file(name))}"
        lines = _log_lines(cluster.log_file(name))
        assert any(line["msg"] == f"{name} stopped cleanly" for line in lines), name
        if name in CONSUMER_GROUP_SERVICES:
            assert any("LeaveGroup" in line["msg"] for line in lines), f"{name} kept its group"
        cluster.start(name)
        cluster.wait_ready([name], timeout=READY_TIMEOUT_S)

    # 3. Play goes on through the restarted services.
    tables.append(asyncio.run(another_table(gateway)))
    after = {name: cluster.metrics(name) for name in ("table", "bots", "gateway")}
    assert total(after["table"], "mahjong_table_hands_total", stage="ended") >= 1
    assert total(after["bots"], "mahjong_bot_decisions_total") > 0
    assert total(after["gateway"], "mahjong_gateway_ws_connections_opened_total") >= 1

    # 4. The audit re-derives every hand those tables played.
    audit = subprocess.run(
        [sys.executable, "-m", "services.cli", "audit", "--kafka", kafka_bootstrap]
        + [arg for t in tables for arg in ("--table", t)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert audit.returncode == 0, audit.stdout[-3000:] + audit.stderr[-3000:]
    summary = audit.stdout.strip().splitlines()[-1]
    assert "audited 3 hands" in summary and "3 passed, 0 failed, 0 unfinished" in summary, summary

    # Every log line of every service is one JSON object with the fields operators query,
    # and none of the services' own code logged an error on the way.
    for name in cluster.names():
        for line in _log_lines(cluster.log_file(name)):
            assert {"ts", "level", "logger", "msg", "service"} <= line.keys(), (name, line)
            mine = line["logger"].startswith("mahjong.")
            assert not (mine and line["level"] in ("ERROR", "CRITICAL")), (name, line)
    print(f"the distributed mode end to end: {time.monotonic() - began:.0f} s")


def _assert_counters_moved(m: dict[str, str], projector_can_move: bool) -> None:
    table, clock, bots = m["table"], m["clock"], m["bots"]
    assert total(table, "mahjong_table_commands_total", type="start_hand") >= 2
    assert total(table, "mahjong_table_commands_total", type="discard") > 0
    assert total(table, "mahjong_table_commands_total", type="timeout") >= 1
    assert total(table, "mahjong_table_events_total") > 100
    assert total(table, "mahjong_table_hands_total", stage="ended") >= 2
    assert total(table, "mahjong_table_command_latency_seconds_count") > 0
    assert total(table, "mahjong_table_transactions_total", outcome="committed") > 0
    assert total(clock, "mahjong_clock_timeouts_fired_total", attempt="first") >= 1
    assert total(clock, "mahjong_clock_firing_delay_seconds_count") >= 1
    assert total(bots, "mahjong_bot_decisions_total", strength="normal") > 0
    assert total(bots, "mahjong_command_roundtrip_seconds_count", source="bots") > 0
    mm = m["matchmaking"]
    assert total(mm, "mahjong_matchmaking_requests_total") >= 6
    assert total(mm, "mahjong_matchmaking_tables_started_total") >= 2
    assert total(mm, "mahjong_quickplay_wait_seconds_count") >= 4
    assert total(m["rating"], "mahjong_rating_results_applied_total") >= 1
    if projector_can_move:
        assert total(m["lobby-projector"], "mahjong_lobby_projected_events_total") > 0
    gw = m["gateway"]
    assert total(gw, "mahjong_gateway_ws_connections_opened_total") >= 5
    assert total(gw, "mahjong_gateway_ws_frames_total", direction="in") > 0
    assert total(gw, "mahjong_gateway_ws_frames_total", direction="out") > 0
    assert total(gw, "mahjong_gateway_commands_sent_total") > 0
    # Sampled gauges (every few seconds): every service reports its readiness and, where it
    # reads a log, its consumer lag. (Their values are as of the last sample.)
    for name, text in m.items():
        assert _reported(text, "mahjong_ready", name), f"{name} reports no readiness"
    for name in ("table", "clock", "bots", "matchmaking", "rating", "lobby-projector"):
        assert _reported(m[name], "mahjong_consumer_lag", name), f"{name} reports no lag"
    for name in ("table", "clock", "bots", "matchmaking", "gateway"):
        assert _reported(m[name], "mahjong_active_tables", name), f"{name}: no active tables"


def _reported(text: str, metric: str, service: str) -> bool:
    return any(s == metric and labels.get("service") == service for s, labels, _ in scrape(text))


def _get(url: str) -> tuple[int, str]:
    r = httpx.get(url, timeout=5)
    return r.status_code, r.text


def _tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _log_lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for raw in path.read_text(errors="replace").splitlines():
        if raw.strip():
            try:
                out.append(json.loads(raw))
            except ValueError:
                raise AssertionError(f"{path.name}: not a JSON log line: {raw[:300]}") from None
    return out
