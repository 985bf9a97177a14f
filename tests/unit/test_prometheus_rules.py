"""The shipped Prometheus configuration and alerts, checked by Prometheus's own ``promtool``
(Debian's prometheus package; ``make prometheus-deps`` installs it): the configurations are
valid, the rules are valid, every alert has a unit test in ``alerts.test.yml`` and those
tests pass. The live test, Prometheus scraping real services, is
tests/integration/test_prometheus_live.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster_support import cluster_module

PROMETHEUS = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"


def _promtool(*args: str) -> str:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.fail("promtool is missing: `make prometheus-deps` installs Debian's prometheus")
    done = subprocess.run(
        [tool, *args], cwd=PROMETHEUS, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _alerts() -> list[dict[str, Any]]:
    rules = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
    return [r for g in rules["groups"] for r in g["rules"] if "alert" in r]


def test_the_cluster_configuration_is_valid_and_loads_the_alerts() -> None:
    out = _promtool("check", "config", "cluster.yml")
    assert f"SUCCESS: {len(_alerts())} rules found" in out


def test_the_compose_configuration_is_valid() -> None:
    # Its rule file is at /etc/prometheus/ inside the container: the syntax is checked here.
    _promtool("check", "config", "--syntax-only", "prometheus.yml")


def test_the_alert_rules_are_valid() -> None:
    assert f"SUCCESS: {len(_alerts())} rules found" in _promtool("check", "rules", "alerts.yml")


def test_every_alert_has_a_unit_test_that_sees_it_fire_and_one_that_sees_it_quiet() -> None:
    tests = yaml.safe_load((PROMETHEUS / "alerts.test.yml").read_text())
    firing: set[str] = set()
    quiet: set[str] = set()
    for case in tests["tests"]:
        for check in case.get("alert_rule_test", []):
            (firing if check.get("exp_alerts") else quiet).add(check["alertname"])
    names = {r["alert"] for r in _alerts()}
    assert names - firing == set(), "alerts no test sees firing"
    assert names - quiet == set(), "alerts no test sees quiet (before their `for`, or healthy)"
    assert firing | quiet <= names, "tests of alerts that do not exist"


def test_the_alerts_unit_tests_pass() -> None:
    assert "SUCCESS" in _promtool("test", "rules", "alerts.test.yml")


def test_the_cluster_names_every_service_process_as_a_target_under_its_services_job(
    tmp_path: Path,
) -> None:
    mod = cluster_module()
    cluster = mod.Cluster(root=tmp_path, scale={"table": 2})
    groups = cluster.scrape_targets()
    assert [g["labels"]["process"] for g in groups] == cluster.names()
    by_process = {g["labels"]["process"]: g for g in groups}
    assert by_process["table-2"]["labels"]["job"] == "table"
    assert by_process["gateway"]["targets"] == [f"127.0.0.1:{mod.GATEWAY_PORT}"]
    assert {g["labels"]["job"] for g in groups} == set(mod.SERVICES)
    path = cluster.write_targets(["clock"])
    assert yaml.safe_load(path.read_text()) == [by_process["clock"]]
    # Where deploy/prometheus/cluster.yml looks for them, for the default cluster folder.
    config = yaml.safe_load((PROMETHEUS / "cluster.yml").read_text())
    [job] = config["scrape_configs"]
    [files] = [sd["files"] for sd in job["file_sd_configs"]]
    default = mod.Cluster().targets_file
    assert [(PROMETHEUS / f).resolve() for f in files] == [default.resolve()]
