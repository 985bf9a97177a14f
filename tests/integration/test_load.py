"""The load test's fast version (``tests/bench/load.py``, issue 10), on the integration
fixtures' Kafka broker and PostgreSQL database.

A dozen tables of four WebSocket guests play through the gateway of the distributed mode
(every service its own process, ``deploy/cluster.py``; the gateway trusts 127.0.0.1's
``X-Forwarded-For``, each guest its own address), at a quick pace so hands end within the
test, for a short steady window; then the open tables are played to their end. Every action
got its broadcast, nothing was refused or failed, hands and tables finished, latencies were
measured, every process's CPU and memory were read, and the consumers caught up.

Like ``test_cluster.py`` the services join the standard consumer groups of the shared broker
(the integration tests run in one process, one after the other: ``xdist_group("kafka")``);
the rating service gets a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.runtime.topics import ANALYSIS_REQUESTS
from tests.bench import load

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kafka")]

TABLES = 12


@pytest.fixture
def cluster(kafka_bootstrap: str, postgres_dsn: str, tmp_path: Path) -> Iterator[Any]:
    schema = f"rating_load_{uuid.uuid4().hex[:8]}"
    cl = load.make_cluster(kafka_bootstrap, postgres_dsn, tmp_path / "cluster", schema)
    # The hand history's positions belong to the broker they were read from: a fresh test
    # broker with an old database would (rightly) stop the projection. Start it empty.
    load.drop_schema(postgres_dsn, "history")
    cl.create_topics()
    cl.start_all()
    try:
        cl.wait_ready(timeout=120)
        yield cl
    finally:
        codes = cl.stop_all(30)
        load.drop_schema(postgres_dsn, schema)
        for name in cl.names():
            print(f"--- {name} (exit {codes.get(name)}): {cl.log_file(name)}")


def test_tables_played_through_the_gateway_are_measured(cluster: Any) -> None:
    began = time.monotonic()
    cfg = load.LevelConfig(
        tables=TABLES,
        seconds=20,
        ramp_s=4,
        settle_s=2,
        drain_s=90,  # after the window the open tables are played to their end
        seats=4,
        hands=1,
        think_s=(0.05, 0.25),  # quicker than people, so a hand ends in about 20 s
        sample_s=2,
        ramp_timeout_s=60,
    )
    row = load.run_level(cluster, cfg)
    print(load.table({"load_test": row}))

    # Every table played: all in play when the window opened, none cut short.
    assert row["all_playing_at_window"], row
    assert row["tables_opened_total"] >= TABLES
    assert row["tables_finished_total"] == row["tables_opened_total"], row
    assert row["hands_finished_total"] >= TABLES
    assert row["unfinished_tables"] == 0 and row["closed_early"] == 0, row

    # Every action got the broadcast showing it applied; nothing refused, failed or timed out.
    assert row["actions_total"] > 0
    assert row["broadcasts_total"] == row["actions_total"], row
    assert row["unanswered"] == 0 and row["in_flight_at_stop"] == 0, row
    assert row["rejected"] == {} and row["errors"] == {}, row
    assert row["http_failures"] == {} and row["connect_failures"] == 0, row
    assert row["timeouts"] == 0, row

    # Latencies over the window: measured, finite, ordered.
    assert row["actions"] > 0 and row["broadcasts_timed"] > 0, row
    for key in ("p50_ms", "p90_ms", "p99_ms", "max_ms"):
        assert row[key] is not None and math.isfinite(row[key]) and row[key] > 0, (key, row)
    assert row["p50_ms"] <= row["p99_ms"] <= row["max_ms"]
    assert row["actions_per_s"] > 0 and row["frames_in_per_s"] > 0

    # CPU and memory of every service process, the load clients' own CPU.
    for name in cluster.names():
        assert name in row["cpu_pct"] and row["cpu_pct"][name] >= 0, (name, row["cpu_pct"])
        assert row["rss_mb"].get(name, 0) > 10, (name, row["rss_mb"])
    assert row["cpu_pct"]["gateway"] > 0 and row["cpu_pct"]["table"] > 0
    assert row["load_cpu_pct"] > 0 and row["load_rss_mb"] > 0

    # Consumer lag was sampled during the window, and every consumer caught up afterwards.
    for name in ("table", "clock", "bots", "matchmaking", "lobby-projector", "rating"):
        assert name in row["lag_max"], (name, row["lag_max"])
    # Except the review queue: the analysis service reviews each finished hand with a person
    # for seconds, one at a time at a low priority (docs/analysis.md), so a dozen hands ending
    # together are a backlog it works through after the window. Its follower of table.events
    # (which turns finished hands into requests) must have caught up like the others.
    after = load.wait_caught_up(cluster, timeout=30, backlogs=(ANALYSIS_REQUESTS,))
    assert "analysis" in after, after
    assert all(v <= 1 for v in after.values()), after
    assert not cluster.exited(), cluster.exited()
    print(f"load test: {time.monotonic() - began:.0f} s")
