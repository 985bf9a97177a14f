"""deploy/: the compose file, the Prometheus scrape config and alert rules, and the Grafana
dashboard hold together. ``docker compose config`` validates the compose file where Docker's
compose plugin exists; everywhere, a structural check with PyYAML does."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "docker-compose.yml"
PROMETHEUS = DEPLOY / "prometheus" / "prometheus.yml"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "mahjong-planet.json"

SERVICE_MODULES = (
    "services.runtime.ops",
    "services.table.service",
    "services.clock.service",
    "services.bots.service",
    "services.matchmaking.service",
    "services.matchmaking.projection",
    "services.rating.service",
    "services.history.service",
    "services.analysis.service",
    "services.gateway.metrics",
)


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _compose() -> dict[str, Any]:
    data = _yaml(COMPOSE)
    assert isinstance(data, dict) and isinstance(data.get("services"), dict)
    return data


def _app_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services run from this repository's image (deploy/Dockerfile)."""
    return {
        name: svc
        for name, svc in compose["services"].items()
        if (svc.get("build") or {}).get("dockerfile") == "deploy/Dockerfile"
    }


def _cluster_services() -> tuple[str, ...]:
    sys.path.insert(0, str(DEPLOY))
    try:
        module = importlib.import_module("cluster")
    finally:
        sys.path.remove(str(DEPLOY))
    services: tuple[str, ...] = module.SERVICES
    return services


def _metric_names() -> set[str]:
    """Every sample name the services expose (counters with _total, histograms' series)."""
    import prometheus_client

    for module in SERVICE_MODULES:
        importlib.import_module(module)
    names: set[str] = set()
    for family in prometheus_client.REGISTRY.collect():
        if family.type == "counter":
            names |= {family.name, f"{family.name}_total"}
        elif family.type == "histogram":
            names |= {f"{family.name}_{s}" for s in ("bucket", "count", "sum")}
        else:
            names.add(family.name)
    return names


def _referenced(expr: str) -> set[str]:
    return set(re.findall(r"\bmahjong_[a-z_]+\b", expr))


def test_docker_compose_config_where_available() -> None:
    docker = shutil.which("docker")
    if (
        docker is None
        or subprocess.run(
            [docker, "compose", "version"], capture_output=True, check=False
        ).returncode
    ):
        # No compose plugin: the structural tests below are the validation.
        return
    done = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "config", "-q"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_reference_in_the_compose_file_exists() -> None:
    compose = _compose()
    services = compose["services"]
    volumes = set(compose.get("volumes") or {})
    for name, svc in services.items():
        assert "image" in svc or "build" in svc, f"{name}: neither image nor build"
        depends = svc.get("depends_on") or []
        for dep in depends:  # a list, or a mapping of service to condition
            assert dep in services, f"{name} depends on unknown service {dep}"
        for mount in svc.get("volumes") or []:
            source = mount.split(":", 1)[0]
            if source.startswith((".", "/")):
                assert (DEPLOY / source).exists(), f"{name}: {source} does not exist"
            else:
                assert source in volumes, f"{name}: volume {source} is not declared"
        build = svc.get("build")
        if build:
            context = (DEPLOY / build["context"]).resolve()
            assert (context / build["dockerfile"]).is_file(), f"{name}: no Dockerfile"


def test_every_service_has_a_healthcheck_or_a_metrics_port() -> None:
    for name, svc in _compose()["services"].items():
        env = svc.get("environment") or {}
        command = [str(c) for c in svc.get("command") or []]
        has_metrics = "MAHJONG_METRICS_PORT" in env or "--metrics-port" in command
        health = svc.get("healthcheck") or {}
        assert health.get("test") or has_metrics, f"{name}: no healthcheck and no metrics port"


def test_the_compose_file_runs_every_service_of_the_platform() -> None:
    from services.cli import build_parser

    apps = _app_services(_compose())
    assert set(apps) == set(_cluster_services()), "compose and deploy/cluster.py disagree"
    subcommands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name, svc in apps.items():
        command = svc["command"]
        assert command[0] == name and command[0] in subcommands, (name, command)
        env = svc["environment"]
        assert env["KAFKA_BOOTSTRAP_SERVERS"] == "kafka:9092", name
        assert svc.get("stop_signal", "SIGTERM") == "SIGTERM", name
    assert "8000:8000" in apps["gateway"]["ports"]
    kafka = _compose()["services"]["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    assert "controller" in kafka["environment"]["KAFKA_PROCESS_ROLES"]  # KRaft
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["mahjong-planet"]' in dockerfile


def test_prometheus_scrapes_every_service_on_its_metrics_port() -> None:
    config = _yaml(PROMETHEUS)
    targets: dict[str, int] = {}
    for job in config["scrape_configs"]:
        for sd in job.get("dns_sd_configs") or []:
            for host in sd["names"]:
                targets[host] = int(sd["port"])
        for static in job.get("static_configs") or []:
            for target in static["targets"]:
                host, _, port = target.rpartition(":")
                targets[host] = int(port)
    for name, svc in _app_services(_compose()).items():
        assert name in targets, f"Prometheus does not scrape {name}"
        command = [str(c) for c in svc["command"]]
        port = (
            int(command[command.index("--port") + 1])
            if "--port" in command
            else int(svc["environment"]["MAHJONG_METRICS_PORT"])
        )
        assert targets[name] == port, f"{name} is scraped on {targets[name]}, serves on {port}"
    assert "/etc/prometheus/alerts.yml" in config["rule_files"]


def test_alert_rules_cover_lag_errors_and_latency_with_metrics_that_exist() -> None:
    rules = [r for group in _yaml(ALERTS)["groups"] for r in group["rules"]]
    known = _metric_names()
    for rule in rules:
        assert rule["alert"] and rule["expr"] and rule["annotations"]["summary"], rule
        unknown = _referenced(rule["expr"]) - known
        assert not unknown, f"{rule['alert']} uses unknown metrics {unknown}"
    exprs = " ".join(r["expr"] for r in rules)
    for needed in (
        "mahjong_consumer_lag",
        "mahjong_errors_total",
        "mahjong_table_command_latency_seconds_bucket",
        "mahjong_consumer_stalled_seconds",
        "mahjong_dead_letters_total",
    ):
        assert needed in exprs, f"no alert on {needed}"
    assert "histogram_quantile(0.99" in exprs


def test_the_dashboard_is_provisioned_and_queries_metrics_that_exist() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["panels"]
    source = _yaml(DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml")
    uid = source["datasources"][0]["uid"]
    provider = _yaml(DEPLOY / "grafana" / "provisioning" / "dashboards" / "mahjong-planet.yml")
    assert provider["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"
    known = _metric_names()
    used: set[str] = set()
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            assert target["datasource"]["uid"] == uid, panel["title"]
            unknown = _referenced(target["expr"]) - known
            assert not unknown, f"panel {panel['title']!r} uses unknown metrics {unknown}"
            used |= _referenced(target["expr"])
    # Every metric the services define is on the dashboard somewhere.
    families = {re.sub(r"_(total|bucket|count|sum)$", "", n) for n in known if "mahjong_" in n}
    shown = {re.sub(r"_(total|bucket|count|sum)$", "", n) for n in used}
    assert not families - shown, f"not on the dashboard: {sorted(families - shown)}"


@pytest.mark.parametrize("service", _cluster_services())  # every service the cluster runs
def test_every_service_subcommand_explains_itself_and_its_operations(service: str) -> None:
    from services.cli import build_parser

    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[service]  # type: ignore[union-attr]
    text = sub.format_help()
    assert "--log-format" in text and "SIGTERM" in text and "/metrics" in text
    if service != "gateway":
        assert "--metrics-port" in text
