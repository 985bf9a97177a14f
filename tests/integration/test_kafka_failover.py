"""A broker dies mid-play on a replicated cluster (issue 22): three KRaft brokers, every topic
at replication factor 3 and ``min.insync.replicas`` 2.

Computer players (``services.simulate``, paced like people) play hands through a table
service process that knows all three brokers. Once play is under way, the broker that leads
the ``table.events`` partition holding the most records is killed with SIGKILL; play goes on
on the other two, and the broker is started again later. Then every hand has ended, the audit
passes on them all, every hand's events are 1..n once each, every command was applied once
(its events one unbroken run in one hand), and nothing the players sent went unanswered.

The failover's figures are printed and recorded (``record_property``, and a JSON file when
``MAHJONG_FAILOVER_JSON`` names one): action→event latency p50/p99/max (from a command's
hand-over to the log to its first event read back by the players) of the commands sent and
answered in the 15 s before the kill, of those out at some moment from the kill to the
restart (the failover window, the ones the kill caught in flight included) and of those sent
after it, and the longest stall
(the longest time no event reached the players while a command of theirs waited).
docs/scaling.md quotes them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import msgspec
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from schemas import events as ev
from schemas.table import decode_event
from services.audit import audit_hands
from services.runtime.kafka import KafkaLog
from services.runtime.log import Outgoing, Record
from services.runtime.topics import TABLE_COMMANDS, TABLE_EVENTS, TABLE_PARTITIONS
from services.simulate import simulate
from tests.cluster_support import free_ports
from tests.service.logs import assert_exactly_once, hand_logs, started

if TYPE_CHECKING:
    from tests.integration.conftest import KafkaCluster

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka3")]

ROOT = Path(__file__).resolve().parents[2]
GROUP = "table-service"

TABLES = 8
HANDS = (
    24  # three rounds of the eight tables (~60 decisions a hand): play goes on after the restart
)
THINK_S = 0.2  # a decision every 0.1-0.3 s: brisk people, not a benchmark's flood
KILL_AFTER_HANDS = 1  # the kill comes once a hand has ended: every table is mid-hand
DOWN_FOR_S = 15.0  # the killed broker stays down past its fencing (6 s) and the failover
DEADLINE_S = 200.0
BASELINE_S = 15.0  # the window before the kill that the failover is compared with


# --- timing what the players see ------------------------------------------------------------


@dataclass
class Timing:
    """When each command was handed to the log and when its first event reached the players."""

    sent: dict[str, float] = field(default_factory=dict)
    answered: dict[str, float] = field(default_factory=dict)
    arrivals: list[float] = field(default_factory=list)  # every table.events record

    def latencies_ms(self, keep: Callable[[float, float], bool]) -> list[float]:
        """Sorted latencies of the answered commands for which ``keep(sent, answered)``."""
        return sorted(
            (self.answered[c] - t) * 1000
            for c, t in self.sent.items()
            if c in self.answered and keep(t, self.answered[c])
        )

    def longest_stall(self) -> tuple[float, float]:
        """(seconds, when it began): the longest time no event reached the players while a
        command of theirs waited for one."""
        moments = sorted(self.arrivals)
        gaps = sorted(itertools.pairwise(moments), key=lambda g: g[0] - g[1])  # widest first
        best, began = 0.0, 0.0
        for previous, arrival in gaps:
            if arrival - previous <= best:
                break
            # Waiting from the gap's start if a command was out then, else from the first
            # command sent into the quiet log.
            out = any(t < previous < self.answered.get(c, math.inf) for c, t in self.sent.items())
            sends = [t for t in self.sent.values() if previous <= t < arrival]
            start = previous if out else min(sends, default=arrival)
            if arrival - start > best:
                best, began = arrival - start, start
        return best, began


class _TimedFollower:
    def __init__(self, inner: Any, timing: Timing) -> None:
        self.inner, self.timing = inner, timing

    async def start(self) -> None:
        await self.inner.start()

    async def stop(self) -> None:
        await self.inner.stop()

    async def poll(self, timeout_s: float) -> list[Record]:
        records: list[Record] = await self.inner.poll(timeout_s)
        now = time.perf_counter()
        for r in records:
            if r.topic != TABLE_EVENTS:
                continue
            self.timing.arrivals.append(now)
            command = decode_event(r.value).command_id
            if command in self.timing.sent and command not in self.timing.answered:
                self.timing.answered[command] = now
        return records


class TimedLog:
    """The players' ``KafkaLog``, timing every command they send and every event they read."""

    def __init__(self, inner: KafkaLog, timing: Timing) -> None:
        self.inner, self.timing = inner, timing

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def produce(self, records: Sequence[Outgoing]) -> None:
        now = time.perf_counter()
        for r in records:
            if r.topic == TABLE_COMMANDS:
                command = msgspec.json.decode(r.value)["command"]["command_id"]
                self.timing.sent[command] = now
        await self.inner.produce(records)

    def follower(self, topics: Sequence[str]) -> _TimedFollower:
        return _TimedFollower(self.inner.follower(topics), self.timing)


# --- the cluster ----------------------------------------------------------------------------


async def _admin(bootstrap: str) -> AIOKafkaAdminClient:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="failover-test")
    await admin.start()
    return admin


async def busiest_partition(log: KafkaLog) -> tuple[int, int, int]:
    """(partition, its records, its leader's broker id) of the fullest table.events partition."""
    ends = {p: await log.end_offset(TABLE_EVENTS, p) for p in range(TABLE_PARTITIONS)}
    partition = max(ends, key=lambda p: ends[p])
    admin = await _admin(log.bootstrap)
    try:
        (topic,) = await admin.describe_topics([TABLE_EVENTS])
    finally:
        await admin.close()
    leader = next(int(p["leader"]) for p in topic["partitions"] if p["partition"] == partition)
    return partition, ends[partition], leader


async def roles(bootstrap: str, broker: int) -> dict[str, Any]:
    """What else ``broker`` did: leaderships, the table group's and transactions' coordinators."""
    admin = await _admin(bootstrap)
    try:
        topics = await admin.describe_topics()
        led = sum(1 for t in topics for p in t["partitions"] if p["leader"] == broker)
        group = await admin.find_coordinator(GROUP)
        txns = [
            await admin.find_coordinator(f"{GROUP}-{TABLE_COMMANDS}-{p}", coordinator_type=1)
            for p in range(TABLE_PARTITIONS)
        ]
    finally:
        await admin.close()
    return {
        "partitions_led": led,
        "group_coordinator": group == broker,
        "transaction_coordinator_of": sum(1 for t in txns if t == broker),
    }


async def replication_of_every_topic(bootstrap: str) -> dict[str, tuple[set[int], str]]:
    """Topic -> (its partitions' replica counts, its effective min.insync.replicas)."""
    admin = await _admin(bootstrap)
    try:
        topics = {t["topic"]: t for t in await admin.describe_topics()}
        names = sorted(topics)
        responses = await admin.describe_configs(
            [
                ConfigResource(ConfigResourceType.TOPIC, n, {"min.insync.replicas": None})
                for n in names
            ]
        )
    finally:
        await admin.close()
    min_isr: dict[str, str] = {}
    for response in responses:
        for resource in response.resources:
            _, _, _, name, entries = resource[:5]
            for entry in entries:
                if entry[0] == "min.insync.replicas":
                    min_isr[name] = entry[1]
    return {
        n: ({len(p["replicas"]) for p in topics[n]["partitions"]}, min_isr.get(n, "?"))
        for n in names
    }


def _table_process(bootstrap: str, metrics_port: int, log_file: Path) -> subprocess.Popen[bytes]:
    out = log_file.open("ab")
    try:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "services.cli",
                "table",
                "--kafka",
                bootstrap,
                "--group",
                GROUP,
                "--metrics-port",
                str(metrics_port),
            ],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    finally:
        out.close()


async def _until_ready(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=2) as http:
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"the table service exited ({proc.returncode})"
            try:
                ready = await http.get(f"http://127.0.0.1:{port}/readyz")
                held = ready.json().get("partitions", [])
                if ready.status_code == 200 and len(held) == TABLE_PARTITIONS:
                    return  # every partition's tables rebuilt: the baseline is steady play
            except (httpx.HTTPError, ValueError):
                pass
            await asyncio.sleep(0.3)
    pytest.fail(f"the table service was not ready within {timeout_s:.0f} s")


# --- the figures ----------------------------------------------------------------------------


def _percentile(sorted_ms: list[float], q: float) -> float:
    if not sorted_ms:
        return float("nan")
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def _window(timing: Timing, keep: Callable[[float, float], bool]) -> dict[str, float]:
    ms = timing.latencies_ms(keep)
    return {
        "commands": len(ms),
        "p50_ms": round(_percentile(ms, 0.50), 1),
        "p99_ms": round(_percentile(ms, 0.99), 1),
        "max_ms": round(ms[-1], 1) if ms else float("nan"),
    }


def _applied_once(hands: dict[tuple[str, str], list[ev.Event]]) -> list[str]:
    """Commands whose events are not one unbroken run in one hand (applied twice)."""
    where: dict[str, tuple[str, str]] = {}
    twice: list[str] = []
    for key, events in hands.items():
        runs = [
            e.command_id
            for i, e in enumerate(events)
            if i == 0 or events[i - 1].command_id != e.command_id
        ]
        for command in filter(None, runs):
            if command in where:
                twice.append(command)
            where[command] = key
    return twice


# --- the test -------------------------------------------------------------------------------


def test_killing_the_busiest_leader_mid_play_loses_and_doubles_nothing(
    kafka_cluster3: KafkaCluster,
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    cluster = kafka_cluster3
    bootstrap = cluster.bootstrap
    began = time.perf_counter()
    timing = Timing()
    figures: dict[str, Any] = {"tables": TABLES, "hands": HANDS, "think_s": THINK_S}

    async def go() -> tuple[Any, dict[tuple[str, str], list[ev.Event]]]:
        async with started(KafkaLog(bootstrap, client_id="failover-players")) as log:
            (metrics_port,) = free_ports(1)
            service_log = tmp_path / "table.log"
            proc = _table_process(bootstrap, metrics_port, service_log)
            hands_done = 0
            kill_at = restart_at = 0.0

            def progress(done: int, _total: int) -> None:
                nonlocal hands_done
                hands_done = done

            async def fault() -> None:
                nonlocal kill_at, restart_at
                while hands_done < KILL_AFTER_HANDS:
                    await asyncio.sleep(0.1)
                partition, records, leader = await busiest_partition(log)
                figures["killed"] = {
                    "broker": leader,
                    "partition": partition,
                    "records": records,
                    **await roles(bootstrap, leader),
                    "active_controller": cluster.controller() == leader,
                }
                kill_at = time.perf_counter()
                figures["killed_at_s"] = round(kill_at - began, 1)
                figures["killed"]["pid"] = await asyncio.to_thread(cluster.kill, leader)
                await asyncio.sleep(DOWN_FOR_S)
                restart_at = time.perf_counter()
                figures["restarted_at_s"] = round(restart_at - began, 1)
                await asyncio.to_thread(cluster.start, leader)
                figures["restart_took_s"] = round(time.perf_counter() - restart_at, 1)

            try:
                await _until_ready(metrics_port, proc)
                player_log = TimedLog(log, timing)
                faults = asyncio.create_task(fault())
                play_began = time.perf_counter()
                result = await simulate(
                    player_log,  # type: ignore[arg-type]
                    hands=HANDS,
                    tables=TABLES,
                    deadline_s=DEADLINE_S,
                    think_s=THINK_S,
                    progress=progress,
                )
                play_ended = time.perf_counter()
                await faults
                assert proc.poll() is None, (
                    f"the table service died ({proc.returncode}); see {service_log}"
                )
            finally:
                proc.terminate()
                proc.wait(timeout=60)
            assert kill_at and restart_at, "the broker was not killed and restarted mid-play"
            after_restart = [t for t in timing.arrivals if t > restart_at]
            assert after_restart, "play had ended before the killed broker came back"
            figures["play_s"] = round(play_ended - play_began, 1)
            # Steady play before the kill: commands sent and answered in the last 15 s before it
            # (the first seconds, three cold JVMs, are only in "overall"). The failover: every
            # command out at some moment between the kill and the restart, those caught in
            # flight by the kill included. After: those sent once the restart began.
            figures["before_kill"] = _window(
                timing, lambda sent, answered: sent >= kill_at - BASELINE_S and answered < kill_at
            )
            figures["failover"] = _window(
                timing, lambda sent, answered: sent < restart_at and answered >= kill_at
            )
            figures["after_restart"] = _window(timing, lambda sent, _: sent >= restart_at)
            figures["overall"] = _window(timing, lambda _s, _a: True)
            stall, stall_began = timing.longest_stall()
            figures["longest_stall_s"] = round(stall, 2)
            figures["longest_stall_began_after_kill_s"] = round(stall_began - kill_at, 2)
            figures["replication"] = {
                name: [sorted(counts), isr]
                for name, (counts, isr) in (await replication_of_every_topic(bootstrap)).items()
            }
            hands = {
                k: v
                for k, v in (await hand_logs(log)).items()
                if k[0].startswith(f"sim-{result.run_id}-")
            }
            return result, hands

    result, hands = asyncio.run(go())
    figures["test_s"] = round(time.perf_counter() - began, 1)
    figures["load_average"] = os.getloadavg()[0]
    report = (
        json.dumps({k: v for k, v in figures.items() if k != "replication"}, indent=1)
        + "\nreplication (replica counts, min.insync.replicas): "
        + json.dumps(figures["replication"])
    )
    print(f"\nfailover figures:\n{report}")
    for key in ("failover", "longest_stall_s", "before_kill", "after_restart", "killed"):
        record_property(f"failover_{key}", figures[key])
    (tmp_path / "failover.json").write_text(json.dumps(figures, indent=1))
    (tmp_path / "latencies.json").write_text(  # for a closer look: send time, latency
        json.dumps(
            [
                [round(t - began, 3), round((timing.answered[c] - t) * 1000, 1)]
                for c, t in sorted(timing.sent.items(), key=lambda kv: kv[1])
                if c in timing.answered
            ]
        )
    )
    if os.environ.get("MAHJONG_FAILOVER_JSON"):
        Path(os.environ["MAHJONG_FAILOVER_JSON"]).write_text(json.dumps(figures, indent=1))

    # Every topic, the internal ones too, has three copies and needs two for a write.
    for name, (counts, min_isr) in figures["replication"].items():
        assert counts == [3], f"{name}: replica counts {counts}"
        if not name.startswith("__"):
            assert min_isr == "2", f"{name}: min.insync.replicas {min_isr}"
    assert "__transaction_state" in figures["replication"]

    # Every hand ended, none lost, none doubled, the audit passes.
    assert result.hands == HANDS and result.rejections == 0, result
    assert len(hands) == HANDS, f"{len(hands)} hand logs for {HANDS} hands"
    assert all(isinstance(events[-1], ev.HandEnded) for events in hands.values())
    assert_exactly_once(hands)
    assert _applied_once(hands) == []
    summary = audit_hands(list(hands.values()))
    assert summary.failed == 0, summary.problems[:3]
    assert summary.passed == HANDS, summary

    # Every command the players sent was applied: none lost in the failover.
    unanswered = set(timing.sent) - set(timing.answered)
    applied = {e.command_id for events in hands.values() for e in events}
    assert not unanswered - applied, f"{len(unanswered - applied)} commands never applied"
