"""Prometheus for real: Debian's prometheus scrapes services of the distributed mode
(deploy/cluster.py processes on the test broker) with the shipped alert rules, and a service
that stops is seen firing ``MahjongServiceDown`` through Prometheus's HTTP API within the
rule's ``for`` (shortened to a few seconds here) plus a scrape and an evaluation; when it is
back the alert clears. The rules themselves are unit-tested by promtool
(tests/unit/test_prometheus_rules.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster_support import cluster_module, free_ports

PROMETHEUS = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
FOR_S = 6  # MahjongServiceDown's `for`, shortened from 2 minutes
SCRAPE_S = 1
EVAL_S = 1
WATCHED = ("clock", "bots")


def _api(base: str, path: str, **params: str) -> Any:
    url = f"{base}/api/v1/{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.loads(response.read())
    assert body["status"] == "success", body
    return body["data"]


def _up(base: str) -> dict[str, float]:
    result = _api(base, "query", query="up")["result"]
    return {r["metric"]["job"]: float(r["value"][1]) for r in result}


def _service_down(base: str) -> list[dict[str, Any]]:
    return [
        a
        for a in _api(base, "alerts")["alerts"]
        if a["labels"]["alertname"] == "MahjongServiceDown"
    ]


def _until(what: str, check: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout:.0f} s: {what}")


@pytest.fixture
def prometheus(kafka_bootstrap: str, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    tool = shutil.which("prometheus")
    if tool is None:
        pytest.fail("prometheus is missing: `make prometheus-deps` installs Debian's package")
    mod = cluster_module()
    ports = dict(zip(WATCHED, free_ports(len(WATCHED)), strict=True))
    cluster = mod.Cluster(
        root=tmp_path / "cluster",
        kafka=kafka_bootstrap,
        ports=ports,
        extra_args={"bots": ["--pace", "instant"]},
    )
    cluster.create_topics()
    targets = cluster.write_targets(list(WATCHED))
    # The shipped configuration and rules, with the test's intervals, its targets file and
    # a short `for`: everything else as shipped.
    config = yaml.safe_load((PROMETHEUS / "cluster.yml").read_text())
    config["global"].update(scrape_interval=f"{SCRAPE_S}s", evaluation_interval=f"{EVAL_S}s")
    [job] = config["scrape_configs"]
    job["file_sd_configs"] = [{"files": [str(targets)], "refresh_interval": "1s"}]
    rules = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == "MahjongServiceDown":
                rule["for"] = f"{FOR_S}s"
    (tmp_path / "alerts.yml").write_text(yaml.safe_dump(rules))
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    [port] = free_ports(1)
    base = f"http://127.0.0.1:{port}"
    for name in WATCHED:
        cluster.start(name)
    log = (tmp_path / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [
            tool,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        cluster.wait_ready(list(WATCHED), timeout=120)
        yield base, cluster
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
        cluster.stop_all()


def test_a_stopped_service_fires_its_alert_through_prometheus_and_clears_when_back(
    prometheus: tuple[str, Any],
) -> None:
    base, cluster = prometheus
    # Both services scraped, under their services' jobs, and nothing firing.
    _until(
        "both services are up in Prometheus", lambda: _up(base) == dict.fromkeys(WATCHED, 1.0), 60
    )
    assert _service_down(base) == []
    rules = _api(base, "rules", type="alert")["groups"]
    loaded = {r["name"] for g in rules for r in g["rules"]}
    assert "MahjongServiceDown" in loaded and "MahjongTableClockLate" in loaded

    stopped = time.monotonic()
    cluster.stop("clock")
    firing = _until(
        "MahjongServiceDown fires for the clock",
        lambda: [a for a in _service_down(base) if a["state"] == "firing"],
        FOR_S + 30,
    )
    seconds = time.monotonic() - stopped
    print(f"MahjongServiceDown firing {seconds:.1f} s after the stop (for {FOR_S} s)")
    assert [(a["labels"]["job"], a["labels"]["severity"]) for a in firing] == [
        ("clock", "critical")
    ]
    assert "clock at 127.0.0.1:" in firing[0]["annotations"]["summary"]
    # Not before its `for`, and within it plus a scrape, an evaluation and the stop itself.
    assert FOR_S <= seconds <= FOR_S + 2 * SCRAPE_S + 2 * EVAL_S + 3
    assert _up(base) == {"clock": 0.0, "bots": 1.0}

    cluster.start("clock")
    cluster.wait_ready(["clock"], timeout=120)
    _until("the alert clears when the clock is back", lambda: _service_down(base) == [], 30)
